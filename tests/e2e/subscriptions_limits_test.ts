/**
 * Issue 39: the bounds of the subscription transports, against a real router, with the real
 * `graphql-ws` client and a raw WebSocket: a WebSocket message over
 * `subscriptions.max_message_bytes` closes the connection with 1009 before it is parsed, one
 * at the bound is served; SSE and multipart subscription bodies are bounded as query bodies
 * are; admission by capacity refuses new subscriptions (WebSocket `error`, HTTP 503 with
 * `Retry-After`) and keeps the readers it has. Each runs with a development config and with
 * `config.production.yaml`'s settings (dev_mode off, access logs at info, metrics on).
 */
import assert from "node:assert/strict";
import { type Client, createClient } from "graphql-ws";
import { MIN_ADMITTED } from "../../lib/engine/subscriptions/fanout_capacity.ts";
import type { CpuSource } from "../../lib/state/mod.ts";
import {
  review,
  type SubscriptionFixture,
  type SubscriptionFixtureOptions,
  until,
  withFixture,
} from "./_subscription_fixture.ts";

const FEED = "subscription { reviewAdded { id body product { name } } }";
const MAX = 4096;

/** `config.production.yaml`'s settings that bear on these paths. */
const PRODUCTION = {
  dev_mode: false,
  log_level: "info",
  playground: { enabled: false },
  introspection: { enabled: false },
  telemetry: { metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:0" } } },
};

const PROFILES: readonly [string, Record<string, unknown>][] = [
  ["dev config", { telemetry: PRODUCTION.telemetry }],
  ["production profile", PRODUCTION],
];

/** Rejects after `ms`: every wait on the network has a deadline. */
function deadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The errors a refused graphql-ws subscription ends with. */
type GraphQLErrors = { message: string; extensions: { code: string } }[];

/**
 * Subscribes `query` and settles with what comes first, within `ms`: the
 * error (a refusal), or "an event" / "complete" (not refused).
 */
function firstEnd(client: Client, on: { query: string; ms: number }): Promise<unknown> {
  return deadline(
    new Promise<unknown>((resolve) => {
      client.subscribe({ query: on.query }, {
        next: () => resolve("an event"),
        error: resolve,
        complete: () => resolve("complete"),
      });
    }),
    on.ms,
    "the refusal",
  );
}

/** A raw `graphql-transport-ws` connection: messages received, its close. */
async function rawSocket(fixture: SubscriptionFixture) {
  const socket = new WebSocket(fixture.wsUrl, "graphql-transport-ws");
  const messages: string[] = [];
  const closed = new Promise<CloseEvent>((resolve) => (socket.onclose = resolve));
  socket.onmessage = (event) => void messages.push(String(event.data));
  await deadline(
    new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    }),
    5000,
    "the upgrade",
  );
  socket.send('{"type":"connection_init","payload":{}}');
  await until(() => messages.some((m) => m.includes("connection_ack")), "connection_ack");
  return { socket, messages, closed };
}

/** A subscribe message of exactly `bytes` bytes (the query padded with spaces). */
function subscribeOf(id: string, bytes: number): string {
  const bare = JSON.stringify({ id, type: "subscribe", payload: { query: FEED } });
  const pad = bytes - new TextEncoder().encode(bare).length;
  assert.ok(pad >= 0);
  const text = JSON.stringify({
    id,
    type: "subscribe",
    payload: { query: FEED + " ".repeat(pad) },
  });
  assert.equal(new TextEncoder().encode(text).length, bytes);
  return text;
}

function wsClient(fixture: SubscriptionFixture, closes: CloseEvent[]): Client {
  return createClient({
    url: fixture.wsUrl,
    retryAttempts: 0,
    lazy: false,
    onNonLazyError: () => {},
    on: { closed: (event) => void closes.push(event as CloseEvent) },
  });
}

for (const [profile, config] of PROFILES) {
  const options: SubscriptionFixtureOptions = {
    subscriptions: { max_message_bytes: MAX },
    config,
  };

  Deno.test(`issue 39 (${profile}): a graphql-ws subscribe over subscriptions.max_message_bytes closes the connection with 1009, unparsed`, async () => {
    await withFixture(options, async (fixture) => {
      const closes: CloseEvent[] = [];
      const client = wsClient(fixture, closes);
      try {
        const failure = firstEnd(client, { query: FEED + " ".repeat(MAX), ms: 5000 });
        const error = await failure as CloseEvent;
        assert.equal(error.code, 1009);
        assert.match(error.reason, /^message too big: over subscriptions\.max_message_bytes/);
        assert.equal(closes[0]?.code, 1009);
        assert.equal(fixture.feed.opened, 0, "nothing was served");
        assert.equal(fixture.router.state().engine.subscriptions.active.size, 0);
      } finally {
        await client.dispose();
      }
    });
  });

  Deno.test(`issue 39 (${profile}): a raw subscribe of exactly subscriptions.max_message_bytes is served; one byte more closes with 1009`, async () => {
    await withFixture(options, async (fixture) => {
      const at = await rawSocket(fixture);
      const over = await rawSocket(fixture);
      try {
        at.socket.send(subscribeOf("a", MAX));
        await until(() => fixture.feed.open === 1, "the upstream of the subscription at the bound");
        fixture.feed.publish(review("r1"));
        await until(() => at.messages.some((m) => m.includes('"type":"next"')), "its event");
        over.socket.send(subscribeOf("b", MAX + 1));
        const close = await deadline(over.closed, 5000, "the close");
        assert.equal(close.code, 1009);
        assert.match(close.reason, /message too big/);
        assert.equal(fixture.router.state().engine.subscriptions.active.size, 1);
      } finally {
        at.socket.close();
        over.socket.close();
        await deadline(Promise.all([at.closed, over.closed]), 5000, "the sockets' close");
      }
    });
  });

  Deno.test(`issue 39 (${profile}): SSE and multipart subscription bodies over max_request_body_bytes get 413 as a query's, and open nothing`, async () => {
    await withFixture({ config: { ...config, max_request_body_bytes: 2048 } }, async (fixture) => {
      for (const accept of ["text/event-stream", 'multipart/mixed;subscriptionSpec="1.0"']) {
        const body = JSON.stringify({ query: FEED + " ".repeat(4096) });
        const response = await deadline(
          fetch(fixture.httpUrl, {
            method: "POST",
            headers: { "content-type": "application/json", accept },
            body,
          }),
          5000,
          accept,
        );
        const text = await deadline(response.text(), 5000, "the body");
        assert.equal(response.status, 413, `${accept}: ${text}`);
        assert.match(text, /PAYLOAD_TOO_LARGE/);
      }
      assert.equal(fixture.feed.opened, 0);
    });
  });

  Deno.test(`issue 39 (${profile}): at capacity, new subscriptions are refused (WebSocket error, SSE and multipart 503 + Retry-After) and every reader keeps its events`, async () => {
    await withFixture({
      // The capacity set at a sliver of the thread: the fan-out of a few events passes it.
      subscriptions: { admission: { max_cpu_share: 0.001 } },
      config,
    }, async (fixture) => {
      const closes: CloseEvent[] = [];
      const client = wsClient(fixture, closes);
      try {
        const readers = Array.from({ length: MIN_ADMITTED + 1 }, () => {
          const got: unknown[] = [];
          let failed: unknown = null;
          client.subscribe({ query: FEED }, {
            next: (value) => void got.push(value),
            error: (error) => void (failed = error),
            complete: () => void (failed = "complete"),
          });
          return { got, failed: () => failed };
        });
        const subs = fixture.router.state().engine.subscriptions;
        await until(() => subs.active.size === MIN_ADMITTED + 1, "the first subscribers");
        await until(() => fixture.feed.open === 1, "the shared upstream");
        // Events flow for a few sample windows (0.1 s each): the fan-out is measured.
        let n = 0;
        await until(() => {
          fixture.feed.publish(review(`r${++n}`));
          return n >= 40;
        }, "events published");
        await until(() => readers.every((r) => r.got.length === n), "every event delivered");
        const refused = await firstEnd(client, { query: FEED, ms: 5000 }) as GraphQLErrors;
        assert.equal(refused[0]?.extensions.code, "SUBSCRIPTION_LIMIT_REACHED");
        // Over the share, or (on a loaded machine) the thread saturated: both are capacity.
        assert.match(refused[0]!.message, /subscriptions\.admission\.max_cpu_share|saturated/);
        for (const accept of ["text/event-stream", 'multipart/mixed;subscriptionSpec="1.0"']) {
          const response = await deadline(
            fetch(fixture.httpUrl, {
              method: "POST",
              headers: { "content-type": "application/json", accept },
              body: JSON.stringify({ query: FEED }),
            }),
            5000,
            accept,
          );
          const body = await deadline(response.json(), 5000, "the body");
          assert.equal(response.status, 503, accept);
          assert.equal(response.headers.get("retry-after"), "1");
          assert.equal(body.errors[0].extensions.code, "SUBSCRIPTION_LIMIT_REACHED");
          assert.match(body.errors[0].message, /max_cpu_share|saturated/);
        }
        // The readers admitted before are all still served.
        fixture.feed.publish(review("last"));
        await until(() => readers.every((r) => r.got.length === n + 1), "the next event");
        assert.ok(readers.every((r) => r.failed() === null), "no reader was ended");
        assert.equal(closes.length, 0);
        const metrics = await deadline(
          fetch(fixture.router.metricsUrl!).then((r) => r.text()),
          5000,
          "metrics",
        );
        const refusals = (reason: string) =>
          Number(
            new RegExp(
              `^gw_router_subscriptions_refused_total\\{reason="${reason}"\\} (\\d+)$`,
              "m",
            )
              .exec(metrics)?.[1],
          );
        assert.equal(refusals("capacity") + refusals("behind"), 3);
        assert.match(
          metrics,
          /^gw_router_subscriptions_dropped_total\{reason="client_too_slow"\} 0$/m,
        );
        assert.match(metrics, /^gw_router_subscription_cpu_share [0-9.e-]+$/m);
      } finally {
        await client.dispose();
      }
    });
  });
}

Deno.test("issue 39 (production profile): a router whose thread is saturated (a busy loop on it) refuses a new subscription as saturated and keeps its readers", async () => {
  await withFixture({ config: PRODUCTION }, async (fixture) => {
    const closes: CloseEvent[] = [];
    const client = wsClient(fixture, closes);
    const late = wsClient(fixture, closes);
    let spinning = true;
    try {
      // As many as are admitted whatever the reading: past them, the router's own fan-out counts.
      const readers = Array.from({ length: MIN_ADMITTED }, () => {
        const got: unknown[] = [];
        let failed: unknown = null;
        client.subscribe({ query: FEED }, {
          next: (value) => void got.push(value),
          error: (error) => void (failed = error),
          complete: () => void (failed = "complete"),
        });
        return { got, failed: () => failed };
      });
      const subs = fixture.router.state().engine.subscriptions;
      await until(
        () => subs.active.size === MIN_ADMITTED && fixture.feed.open === 1,
        "the readers",
      );
      // The router's thread (this test's) is kept busy 45 ms of every ~46 while events flow,
      // for at most 5 s: its demand reads saturated whatever the machine's load.
      const stopAt = performance.now() + 5_000;
      let n = 0;
      const spin = () => {
        const end = performance.now() + 45;
        while (performance.now() < end) {
          // Busy.
        }
        fixture.feed.publish(review(`s${++n}`));
        if (spinning && performance.now() < stopAt) setTimeout(spin, 0);
        else spinning = false;
      };
      setTimeout(spin, 0);
      await until(() => subs.capacity?.behind === true || !spinning, "the saturation");
      assert.equal(subs.capacity?.behind, true, "the sampler saw the thread saturated");
      const refused = await firstEnd(late, { query: FEED, ms: 8000 }) as GraphQLErrors;
      spinning = false;
      assert.equal(refused[0]?.extensions.code, "SUBSCRIPTION_LIMIT_REACHED");
      assert.match(refused[0]!.message, /saturated/);
      await until(() => readers.every((r) => r.got.length === n), "the events of the busy spell");
      fixture.feed.publish(review("after"));
      await until(() => readers.every((r) => r.got.length === n + 1), "the next event");
      assert.ok(readers.every((r) => r.failed() === null), "no reader was ended");
      assert.equal(subs.limits.endedClientTooSlow + subs.limits.endedRouterBehind, 0);
      assert.equal(closes.length, 0);
    } finally {
      spinning = false;
      await Promise.all([client.dispose(), late.dispose()]);
    }
  });
});

/** A serving thread that reads more than saturated: 545 % of every window (other processes' load). */
const OVERLOADED_CPU: CpuSource = { time: () => performance.now() * 1000 * 5.45, cores: 1 };

for (const [profile, config] of PROFILES) {
  Deno.test(`admission (${profile}): on a machine whose load makes the serving thread read saturated, one subscription at a time is served over SSE (no 503)`, async () => {
    await withFixture({ config, cpu: OVERLOADED_CPU }, async (fixture) => {
      const subs = fixture.router.state().engine.subscriptions;
      for (let round = 0; round < 3; round++) {
        const response = await deadline(
          fetch(fixture.httpUrl, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "text/event-stream" },
            body: JSON.stringify({ query: FEED }),
          }),
          5000,
          `subscription ${round + 1}`,
        );
        assert.equal(response.status, 200, `subscription ${round + 1}`);
        await until(() => fixture.feed.open === 1, "the upstream subscription");
        fixture.feed.publish(review(`o${round}`));
        const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
        let text = "";
        while (!text.includes("event: next")) {
          const chunk = await deadline(reader.read(), 5000, "the event");
          if (chunk.done) break;
          text += chunk.value;
        }
        assert.match(text, new RegExp(`"id":"o${round}"`));
        // Events flowed on a thread that reads saturated: the router counts as behind, and still
        // the next lone subscription is admitted.
        await until(() => subs.capacity?.behind === true, "the sampler's reading");
        await reader.cancel();
        await until(() => fixture.feed.open === 0, "the subscription's end");
      }
      assert.equal(subs.limits.refusedBehind + subs.limits.refusedCapacity, 0);
    });
  });
}

Deno.test("admission: the subscriptions' CPU share is divided by its source's cores (a process figure over two serving isolates)", async () => {
  // A process clock that advances one core-second a second, over 2 cores: half busy, not saturated.
  const processClock: CpuSource = { time: () => performance.now() * 1000, cores: 2 };
  await withFixture({ config: PRODUCTION, cpu: processClock }, async (fixture) => {
    const subs = fixture.router.state().engine.subscriptions;
    const response = await deadline(
      fetch(fixture.httpUrl, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ query: FEED }),
      }),
      5000,
      "the subscription",
    );
    assert.equal(response.status, 200);
    await until(() => (subs.capacity?.busy ?? 0) > 0, "a sample");
    const busy = subs.capacity!.busy;
    await response.body?.cancel();
    assert.ok(busy > 0.45 && busy < 0.55, `half of two cores, read ${busy}`);
  });
});
