/**
 * Issue 29: federated subscriptions over GraphQL over WebSocket, with the real `graphql-ws`
 * client against a real router whose subgraph streams with the real `graphql-ws` server.
 */
import assert from "node:assert/strict";
import { type Client, createClient } from "graphql-ws";
import { prepare, subscribe } from "../../lib/engine/mod.ts";
import {
  review,
  socketWithHeaders,
  type SubscriptionFixture,
  type SubscriptionFixtureOptions,
  until,
  withFixture,
} from "./_subscription_fixture.ts";
import { within } from "./_deadline.ts";

const FEED = `subscription Feed($min: Int) {
  reviewAdded(minStars: $min) {
    id body
    product { upc name price priceLabel }
    author { name }
  }
}`;

type Result = {
  data?: unknown;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
};

/**
 * Collects a subscription's results; `done` resolves when it completes or fails, and rejects
 * past the streams' deadline (from when it is awaited).
 */
function collect(client: Client, query: string, variables: Record<string, unknown> = {}) {
  const results: Result[] = [];
  let failure: unknown = null;
  let finished = false;
  let stop = () => {};
  const done = new Promise<void>((resolve) => {
    const unsubscribe = client.subscribe({ query, variables }, {
      next: (value) => void results.push(value as Result),
      error: (error) => {
        failure = error;
        finished = true;
        resolve();
      },
      complete: () => {
        finished = true;
        resolve();
      },
    });
    stop = unsubscribe;
  });
  return {
    results,
    get done() {
      return within(done, "the subscription's end");
    },
    get finished() {
      return finished;
    },
    get failure() {
      return failure;
    },
    stop: () => stop(),
  };
}

function wsClient(fixture: SubscriptionFixture, params?: Record<string, unknown>): Client {
  return createClient({
    url: fixture.wsUrl,
    retryAttempts: 0,
    lazy: false,
    // The connection closing at the end of a test is expected.
    onNonLazyError: () => {},
    ...(params ? { connectionParams: params } : {}),
  });
}

/** A fixture and one graphql-ws client, both closed after `run`. */
function withWsClient(
  options: SubscriptionFixtureOptions,
  run: (fixture: SubscriptionFixture, client: Client) => Promise<void>,
): Promise<void> {
  return withFixture(options, async (fixture) => {
    const client = wsClient(fixture);
    try {
      await run(fixture, client);
    } finally {
      await client.dispose();
    }
  });
}

Deno.test("issue 29: a graphql-ws client gets events carrying entity data of two other subgraphs (@requires included)", async () => {
  await withWsClient({}, async (fixture, client) => {
    const sub = collect(client, FEED, { min: 3 });
    await until(() => fixture.feed.open === 1, "the upstream subscription");
    fixture.feed.publish(review("r1", { product: { upc: "p2" }, author: { id: "u2" } }));
    fixture.feed.publish(review("r2", { stars: 1 }));
    fixture.feed.publish(review("r3"));
    await until(() => sub.results.length === 2, "two events");
    assert.deepEqual(sub.results, [
      {
        data: {
          reviewAdded: {
            id: "r1",
            body: "Review r1",
            product: { upc: "p2", name: "Chair", price: 45, priceLabel: "$45" },
            author: { name: "Grace" },
          },
        },
      },
      {
        data: {
          reviewAdded: {
            id: "r3",
            body: "Review r3",
            product: { upc: "p1", name: "Table", price: 120, priceLabel: "$120" },
            author: { name: "Ada" },
          },
        },
      },
    ]);
    assert.ok(
      fixture.entityQueries.some((q) => q.includes("_entities") && q.includes("priceLabel")),
      "the @requires field came from an entity fetch",
    );
    sub.stop();
    await until(() => fixture.feed.open === 0, "the subgraph to see the client leave");
  });
});

Deno.test("issue 29: 100 identical graphql-ws subscribers share one upstream stream; it closes when the last leaves", async () => {
  await withFixture({}, async (fixture) => {
    const clients = Array.from({ length: 10 }, () => wsClient(fixture));
    try {
      const subs = clients.flatMap((client) =>
        Array.from({ length: 10 }, () => collect(client, FEED, { min: 1 }))
      );
      await until(
        () => fixture.router.state().engine.subscriptions.active.size === 100,
        "100 subscriptions",
      );
      await until(() => fixture.feed.open === 1, "the upstream");
      assert.equal(fixture.feed.opened, 1, "one upstream stream for 100 subscribers");
      assert.equal(fixture.router.state().engine.subscriptions.hub.upstreams, 1);
      fixture.feed.publish(review("r1"));
      const before = fixture.entityQueries.length;
      await until(() => subs.every((s) => s.results.length === 1), "every subscriber's event");
      // The event reaches the 100 listeners in one turn: their identical entity fetches are
      // shared (single flight), one per subgraph.
      assert.equal(fixture.entityQueries.length - before, 2);
      for (const s of subs) {
        assert.equal(
          (s.results[0]!.data as { reviewAdded: { author: { name: string } } }).reviewAdded.author
            .name,
          "Ada",
        );
      }
      for (const s of subs.slice(0, 99)) s.stop();
      await until(
        () => fixture.router.state().engine.subscriptions.active.size === 1,
        "99 to leave",
      );
      assert.equal(fixture.feed.open, 1, "one listener left keeps the upstream open");
      subs[99]!.stop();
      await until(() => fixture.feed.open === 0, "the upstream to close");
      assert.equal(fixture.router.state().engine.subscriptions.hub.upstreams, 0);
    } finally {
      await Promise.all(clients.map((c) => c.dispose()));
    }
  });
});

Deno.test("issue 29: different variables are different upstream streams", async () => {
  await withWsClient({}, async (fixture, client) => {
    collect(client, FEED, { min: 1 });
    collect(client, FEED, { min: 4 });
    await until(() => fixture.feed.open === 2, "two upstream streams");
  });
});

Deno.test("issue 29: an upstream error ends the client's subscription with SUBSCRIPTION_UPSTREAM_ERROR", async () => {
  await withWsClient({}, async (fixture, client) => {
    const sub = collect(client, FEED);
    await until(() => fixture.feed.open === 1, "the upstream");
    fixture.feed.fail("feed broke");
    await sub.done;
    const last = sub.results.at(-1)!;
    assert.equal(last.errors?.at(-1)?.extensions?.code, "SUBSCRIPTION_UPSTREAM_ERROR");
    assert.match(last.errors!.at(-1)!.message, /The subgraph "reviews" ended the subscription/);
  });
});

Deno.test("issue 29: a reload ends subscriptions with SUBSCRIPTION_SCHEMA_RELOAD, closes their upstream and the connection (1012); a new connection subscribes on the new state", async () => {
  await withFixture({}, async (fixture) => {
    let closedWith = 0;
    const client = createClient({
      url: fixture.wsUrl,
      retryAttempts: 0,
      // Not lazy: the client keeps the connection when its subscription completes.
      lazy: false,
      onNonLazyError: () => {},
      on: { closed: (event) => void (closedWith = (event as CloseEvent).code) },
    });
    let again: Client | null = null;
    try {
      const sub = collect(client, FEED);
      await until(() => fixture.feed.open === 1, "the upstream");
      const before = fixture.router.state();
      assert.equal(await fixture.router.reload(), true);
      await sub.done;
      assert.equal(sub.results.at(-1)?.errors?.[0]?.extensions?.code, "SUBSCRIPTION_SCHEMA_RELOAD");
      await until(() => fixture.feed.open === 0, "the upstream to close");
      await until(() => closedWith === 1012, "the connection to close with 1012");
      assert.notEqual(fixture.router.state(), before);
      // The replaced state refuses new subscriptions (a connection opened on it reconnects).
      const prepared = prepare(before.engine, { query: FEED });
      assert.ok(prepared.ok);
      const refused = subscribe(before.engine, prepared.operation);
      assert.equal(refused.ok, false);
      assert.equal(
        !refused.ok && refused.result.errors?.[0]?.extensions?.code,
        "SUBSCRIPTION_SCHEMA_RELOAD",
      );
      again = wsClient(fixture);
      const resubscribed = collect(again, FEED);
      await until(() => fixture.feed.open === 1, "the new upstream");
      fixture.feed.publish(review("after"));
      await until(() => resubscribed.results.length === 1, "the event on the new state");
    } finally {
      await Promise.all([client.dispose(), again?.dispose()]);
    }
  });
});

Deno.test("issue 29: subscriptions.max_per_connection refuses one more on the connection with a clear error", async () => {
  await withWsClient({ subscriptions: { max_per_connection: 2 } }, async (_fixture, client) => {
    collect(client, FEED);
    collect(client, FEED);
    const third = collect(client, FEED);
    await third.done;
    const errors = third.failure as { message: string; extensions: { code: string } }[];
    assert.equal(errors[0]!.extensions.code, "SUBSCRIPTION_LIMIT_REACHED");
    assert.match(errors[0]!.message, /subscriptions\.max_per_connection/);
  });
});

Deno.test("subscriptions.max_per_connection counts queries in flight on the socket too", async () => {
  const gate = Promise.withResolvers<void>();
  const options = { subscriptions: { max_per_connection: 2 }, productGate: gate.promise };
  await withWsClient(options, async (fixture, client) => {
    // Two different queries (identical ones would share one subgraph fetch).
    const query = (upc: string) => `{ product(upc: "${upc}") { name } }`;
    try {
      const held = [collect(client, query("p1")), collect(client, query("p2"))];
      await until(() => fixture.entityQueries.length >= 2, "two queries at the subgraph");
      const third = collect(client, query("p1"));
      const subscription = collect(client, FEED);
      await Promise.all([third.done, subscription.done]);
      for (const refused of [third, subscription]) {
        const errors = refused.failure as { message: string; extensions: { code: string } }[];
        assert.equal(errors?.[0]?.extensions.code, "SUBSCRIPTION_LIMIT_REACHED");
        assert.match(
          errors[0]!.message,
          /2 operations already \(subscriptions\.max_per_connection\)/,
        );
      }
      gate.resolve();
      await Promise.all(held.map((q) => q.done));
      assert.deepEqual(held.map((q) => [q.failure, q.results]), [
        [null, [{ data: { product: { name: "Table" } } }]],
        [null, [{ data: { product: { name: "Chair" } } }]],
      ]);
      // Their slots are free again.
      const after = collect(client, query("p1"));
      await after.done;
      assert.equal(after.failure, null);
    } finally {
      gate.resolve();
    }
  });
});

Deno.test("issue 29: subscriptions.max_total refuses one more on the router with a clear error", async () => {
  await withFixture({ subscriptions: { max_total: 1 } }, async (fixture) => {
    const a = wsClient(fixture);
    const b = wsClient(fixture);
    try {
      collect(a, FEED);
      await until(() => fixture.feed.open === 1, "the first");
      const second = collect(b, FEED);
      await second.done;
      const errors = second.failure as { message: string; extensions: { code: string } }[];
      assert.equal(errors[0]!.extensions.code, "SUBSCRIPTION_LIMIT_REACHED");
      assert.match(errors[0]!.message, /subscriptions\.max_total/);
    } finally {
      await Promise.all([a.dispose(), b.dispose()]);
    }
  });
});

Deno.test("issue 29: subscriptions.enabled false refuses subscriptions with SUBSCRIPTIONS_DISABLED", async () => {
  await withWsClient({ subscriptions: { enabled: false } }, async (_fixture, client) => {
    const sub = collect(client, FEED);
    await sub.done;
    const errors = sub.failure as { extensions: { code: string } }[];
    assert.equal(errors[0]!.extensions.code, "SUBSCRIPTIONS_DISABLED");
  });
});

Deno.test("issue 29: the upstream connect carries the headers the rules forward, and no others", async () => {
  await withFixture({
    headers: { all: { request: [{ op: "propagate", named: "x-tenant" }] } },
  }, async (fixture) => {
    const client = createClient({
      url: fixture.wsUrl,
      retryAttempts: 0,
      webSocketImpl: socketWithHeaders({ "x-tenant": "t1", "x-other": "no" }),
    });
    try {
      collect(client, FEED);
      await until(() => fixture.feed.open === 1, "the upstream");
      const headers = fixture.feed.connectHeaders.at(-1)!;
      assert.equal(headers.get("x-tenant"), "t1");
      assert.equal(headers.get("x-other"), null);
    } finally {
      await client.dispose();
    }
  });
});

Deno.test("issue 29: metrics count active subscriptions, upstream streams and events in and out", async () => {
  await withFixture({
    config: {
      telemetry: { metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:0" } } },
    },
  }, async (fixture) => {
    const client = wsClient(fixture);
    try {
      const a = collect(client, FEED);
      const b = collect(client, FEED);
      await until(
        () => fixture.router.state().engine.subscriptions.active.size === 2,
        "both subscriptions",
      );
      await until(() => fixture.feed.open === 1, "the shared upstream");
      fixture.feed.publish(review("r1"));
      await until(() => a.results.length === 1 && b.results.length === 1, "both events");
      const text = await (await fetch(fixture.router.metricsUrl!)).text();
      assert.match(text, /^gw_router_subscriptions_active 2$/m);
      assert.match(text, /^gw_router_subscription_upstreams 1$/m);
      assert.match(text, /^gw_router_subscription_upstreams_opened_total 1$/m);
      assert.match(text, /^gw_router_subscription_events_total\{direction="in"\} 1$/m);
      assert.match(text, /^gw_router_subscription_events_total\{direction="out"\} 2$/m);
    } finally {
      await client.dispose();
    }
  });
});

Deno.test("issue 29: the connection gets a protocol ping every subscriptions.keep_alive_interval", async () => {
  await withFixture({ subscriptions: { keep_alive_interval: "30ms" } }, async (fixture) => {
    let pings = 0;
    const client = createClient({
      url: fixture.wsUrl,
      retryAttempts: 0,
      lazy: false,
      on: { ping: (received) => void (received && pings++) },
    });
    try {
      await until(() => pings >= 2, "two pings");
    } finally {
      await client.dispose();
    }
  });
});

Deno.test("issue 29: queries over the WebSocket are executed like GraphQL over HTTP", async () => {
  await withWsClient({}, async (_fixture, client) => {
    const sub = collect(client, `{ product(upc: "p2") { name priceLabel } }`);
    await sub.done;
    assert.deepEqual(sub.results, [{ data: { product: { name: "Chair", priceLabel: "$45" } } }]);
  });
});

/** A masked client text frame (RFC 6455 §5.2). */
function clientFrame(text: string): Uint8Array {
  const payload = new TextEncoder().encode(text);
  const head = payload.length < 126 ? [0x81, 0x80 | payload.length] : [
    0x81,
    0x80 | 126,
    payload.length >> 8,
    payload.length & 0xff,
  ];
  const mask = [1, 2, 3, 4];
  const frame = new Uint8Array(head.length + 4 + payload.length);
  frame.set(head, 0);
  frame.set(mask, head.length);
  for (let i = 0; i < payload.length; i++) {
    frame[head.length + 4 + i] = payload[i]! ^ mask[i % 4]!;
  }
  return frame;
}

Deno.test("issue 29: a WebSocket client that never reads is dropped once its unsent bytes pass subscriptions.max_unsent_bytes; the upstream closes", async () => {
  await withFixture({ subscriptions: { max_unsent_bytes: "256KB" } }, async (fixture) => {
    const url = new URL(fixture.wsUrl);
    const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
    try {
      const write = (bytes: Uint8Array) => conn.write(bytes);
      await write(new TextEncoder().encode(
        `GET /graphql HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n` +
          `Sec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n`,
      ));
      await write(clientFrame('{"type":"connection_init"}'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      await write(clientFrame(JSON.stringify({
        id: "1",
        type: "subscribe",
        payload: { query: "subscription { reviewAdded { id body } }" },
      })));
      await until(() => fixture.feed.open === 1, "the upstream");
      // Never read: the events pile up in the socket's buffers, then in the router's.
      const body = "x".repeat(64_000);
      for (let i = 0; i < 2000 && fixture.feed.open === 1; i++) {
        fixture.feed.publish(review(`r${i}`, { body }));
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await until(() => fixture.feed.open === 0, "the slow client's upstream to close");
      assert.equal(fixture.router.state().engine.subscriptions.active.size, 0);
    } finally {
      conn.close();
    }
  });
});

Deno.test("issue 29: a shutdown (SIGTERM) ends subscriptions with SUBSCRIPTION_SERVER_SHUTDOWN inside grace_period, and closes their upstream", async () => {
  await withWsClient({ config: { grace_period: "2s" } }, async (fixture, client) => {
    const sub = collect(client, FEED);
    await until(() => fixture.feed.open === 1, "the upstream");
    const started = performance.now();
    await fixture.router.shutdown();
    await sub.done;
    assert.ok(performance.now() - started < 2_000, "within grace_period");
    assert.equal(
      sub.results.at(-1)?.errors?.[0]?.extensions?.code,
      "SUBSCRIPTION_SERVER_SHUTDOWN",
    );
    await until(() => fixture.feed.open === 0, "the upstream to close");
  });
});

Deno.test("issue 29: a browser's WebSocket (with an Origin header, CORS on) is upgraded and served", async () => {
  await withFixture({}, async (fixture) => {
    const client = createClient({
      url: fixture.wsUrl,
      retryAttempts: 0,
      webSocketImpl: socketWithHeaders({ origin: "https://app.example" }),
    });
    try {
      const sub = collect(client, FEED);
      await until(() => fixture.feed.open === 1, "the upstream");
      fixture.feed.publish(review("r1"));
      await until(() => sub.results.length === 1, "the event");
    } finally {
      await client.dispose();
    }
  });
});

Deno.test("issue 29: a subgraph that never acknowledges the connection fails the subscription within engine.subgraph_request_timeout", async () => {
  // Accepts the upgrade, then never answers `connection_init`.
  const silent = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, (request) => {
    const { response } = Deno.upgradeWebSocket(request, { protocol: "graphql-transport-ws" });
    return response;
  });
  try {
    await withWsClient({
      subscriptions: {
        subgraphs: { reviews: { url: `ws://127.0.0.1:${silent.addr.port}/graphql` } },
      },
      config: { engine: { subgraph_request_timeout: "300ms" } },
    }, async (_fixture, client) => {
      const sub = collect(client, FEED);
      await sub.done;
      const last = sub.results.at(-1)!;
      assert.equal(last.errors?.[0]?.extensions?.code, "SUBSCRIPTION_UPSTREAM_ERROR");
      assert.match(last.errors![0]!.message, /4504/);
    });
  } finally {
    await silent.shutdown();
  }
});
