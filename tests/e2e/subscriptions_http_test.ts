/**
 * Issue 29: subscriptions over HTTP streams (the real `graphql-sse` client; a multipart
 * reader following RFC 2046 and Apollo's multipart subscription protocol), the SSE subgraph
 * transport (the real `graphql-sse` server), authentication at connect and per field, token
 * expiry, and a client that never reads.
 */
import assert from "node:assert/strict";
import { createClient as createSseClient } from "graphql-sse";
import { createClient as createWsClient } from "graphql-ws";
import {
  readUntil,
  review,
  startSubscriptionFixture,
  type SubscriptionFixture,
  until,
  withFixture,
} from "./_subscription_fixture.ts";
import { textWithin, within } from "./_deadline.ts";
import { createLogger } from "../../lib/log/mod.ts";

const FEED = `subscription { reviewAdded { id product { name priceLabel } author { name } } }`;
const EMAIL = `subscription { reviewAdded { id author { name email } } }`;

type Result = {
  data?: unknown;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
};

/** Subscribes with a `graphql-sse` or `graphql-ws` client, collecting the results. */
function subscribeTo(
  client: {
    subscribe(
      payload: { query: string },
      sink: { next(value: never): void; error(error: unknown): void; complete(): void },
    ): () => void;
  },
  query: string,
): { results: Result[]; unsubscribe: () => void } {
  const results: Result[] = [];
  const unsubscribe = client.subscribe({ query }, {
    next: (value: unknown) => void results.push(value as Result),
    error: () => {},
    complete: () => {},
  });
  return { results, unsubscribe };
}

/** Reads `multipart/mixed` parts (RFC 2046 §5.1.1) as they arrive: each part's JSON body. */
async function* multipartParts(response: Response): AsyncGenerator<unknown> {
  const type = response.headers.get("content-type") ?? "";
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1];
  assert.ok(boundary, `a boundary in ${type}`);
  const delimiter = `\r\n--${boundary}`;
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body!) {
    buffer += decoder.decode(chunk, { stream: true });
    while (true) {
      const start = buffer.indexOf(delimiter);
      if (start < 0) break;
      const next = buffer.indexOf(delimiter, start + delimiter.length);
      const closing = buffer.startsWith("--", start + delimiter.length);
      if (closing) return;
      if (next < 0) break;
      const part = buffer.slice(start + delimiter.length, next);
      buffer = buffer.slice(next);
      const body = part.slice(part.indexOf("\r\n\r\n") + 4);
      yield JSON.parse(body);
    }
  }
}

Deno.test("an SSE subscription's access line names its operation and type (production profile)", async () => {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ write: (line) => lines.push(JSON.parse(line)) });
  await withFixture({ log }, async (fixture) => {
    const response = await fetch(fixture.httpUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ query: `subscription Feed ${FEED.slice("subscription ".length)}` }),
    });
    assert.equal(response.status, 200);
    await until(() => fixture.feed.open === 1, "the upstream");
    fixture.feed.publish(review("r1"));
    // Read until the event, then leave (the reader is cancelled): the line is written then.
    await readUntil(response, /"r1"/);
    await until(() => lines.some((l) => l.path === "/graphql" && l.status === 200), "the line");
    const line = lines.find((l) => l.path === "/graphql")!;
    assert.equal(line.operation_name, "Feed");
    assert.equal(line.operation_type, "subscription");
    assert.equal(typeof line.operation_hash, "string");
  });
});

Deno.test("issue 29: a graphql-sse client (distinct connections) gets events with entity data; leaving closes the upstream", async () => {
  await withFixture({}, async (fixture) => {
    const client = createSseClient({ url: fixture.httpUrl, retryAttempts: 0 });
    const { results, unsubscribe } = subscribeTo(client, FEED);
    try {
      await until(() => fixture.feed.open === 1, "the upstream");
      fixture.feed.publish(review("r1"));
      await until(() => results.length === 1, "the event");
      assert.deepEqual(results[0], {
        data: {
          reviewAdded: {
            id: "r1",
            product: { name: "Table", priceLabel: "$120" },
            author: { name: "Ada" },
          },
        },
      });
    } finally {
      unsubscribe();
      client.dispose();
    }
    await until(() => fixture.feed.open === 0, "the subgraph to see the client leave");
  });
});

Deno.test("issue 29: multipart subscriptions (Accept multipart/mixed;subscriptionSpec=1.0): payload parts, a heartbeat, and the reload error at top level", async () => {
  await withFixture({ subscriptions: { heartbeat_interval: "50ms" } }, async (fixture) => {
    const response = await fetch(fixture.httpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: 'multipart/mixed;subscriptionSpec="1.0", application/json',
      },
      body: JSON.stringify({ query: FEED }),
    });
    assert.equal(response.status, 200);
    assert.match(
      response.headers.get("content-type")!,
      /^multipart\/mixed; ?boundary="graphql"; ?subscriptionSpec="1.0"/,
    );
    const parts: unknown[] = [];
    const reading = (async () => {
      for await (const part of multipartParts(response)) parts.push(part);
    })();
    await until(() => fixture.feed.open === 1, "the upstream");
    fixture.feed.publish(review("r1", { author: { id: "u2" } }));
    await until(() => parts.some((p) => JSON.stringify(p).includes("r1")), "the event");
    await until(() => parts.filter((p) => JSON.stringify(p) === "{}").length >= 2, "heartbeats");
    await fixture.router.reload();
    await within(reading, "the multipart stream's end at the reload");
    assert.deepEqual(parts.find((p) => JSON.stringify(p).includes("r1")), {
      payload: {
        data: {
          reviewAdded: {
            id: "r1",
            product: { name: "Table", priceLabel: "$120" },
            author: { name: "Grace" },
          },
        },
      },
    });
    const last = parts.at(-1) as { payload: null; errors: { extensions: { code: string } }[] };
    assert.equal(last.payload, null);
    assert.equal(last.errors[0]!.extensions.code, "SUBSCRIPTION_SCHEMA_RELOAD");
    await until(() => fixture.feed.open === 0, "the upstream to close");
  });
});

Deno.test("issue 29: subgraphs streaming over SSE (subscriptions.subgraphs.<name>.protocol: sse) with the graphql-sse server", async () => {
  let fixture: SubscriptionFixture | null = null;
  fixture = await startSubscriptionFixture({
    subscriptions: { subgraphs: { reviews: { protocol: "sse" } } },
  });
  try {
    const target = fixture.router.state().engine.subscriptions.targets.get("reviews")!;
    assert.equal(target.protocol, "sse");
    assert.match(target.url, /^http:\/\//);
    const client = createWsClient({ url: fixture.wsUrl, retryAttempts: 0 });
    const { results, unsubscribe } = subscribeTo(client, FEED);
    try {
      await until(() => fixture!.feed.open === 1, "the SSE upstream");
      assert.match(fixture.feed.connectHeaders.at(-1)!.get("accept")!, /text\/event-stream/);
      fixture.feed.publish(review("r9", { product: { upc: "p2" } }));
      await until(() => results.length === 1, "the event");
      assert.deepEqual(results[0], {
        data: {
          reviewAdded: {
            id: "r9",
            product: { name: "Chair", priceLabel: "$45" },
            author: { name: "Ada" },
          },
        },
      });
      unsubscribe();
      await until(() => fixture!.feed.open === 0, "the SSE upstream to close");
    } finally {
      await client.dispose();
    }
  } finally {
    await fixture.close();
  }
});

Deno.test("issue 29: a token in connection_init authorizes per field like a query; without the scope the field is null + UNAUTHORIZED_FIELD_OR_TYPE", async () => {
  await withFixture({ authentication: true }, async (fixture) => {
    const run = (params: Record<string, unknown> | undefined) => {
      const client = createWsClient({
        url: fixture.wsUrl,
        retryAttempts: 0,
        ...(params ? { connectionParams: params } : {}),
      });
      const results: Result[] = [];
      client.subscribe({ query: EMAIL }, {
        next: (value) => void results.push(value as unknown as Result),
        error: () => {},
        complete: () => {},
      });
      return { client, results };
    };
    const strong = run({ Authorization: `Bearer ${await fixture.token("read:email")}` });
    const anonymous = run(undefined);
    try {
      await until(() => fixture.router.state().engine.subscriptions.active.size === 2, "two");
      // Both identities subscribe to the same subgraph stream (the root fetch is the same).
      await until(() => fixture.feed.open === 1, "the shared upstream");
      fixture.feed.publish(review("r1"));
      await until(() => strong.results.length === 1 && anonymous.results.length === 1, "events");
      assert.deepEqual(strong.results[0], {
        data: { reviewAdded: { id: "r1", author: { name: "Ada", email: "ada@example.com" } } },
      });
      assert.deepEqual(anonymous.results[0]!.data as Record<string, unknown>, {
        reviewAdded: { id: "r1", author: { name: "Ada", email: null } },
      });
      assert.equal(
        anonymous.results[0]!.errors?.[0]?.extensions?.code,
        "UNAUTHORIZED_FIELD_OR_TYPE",
      );
      const users = fixture.entityQueries.filter((q) => q.includes("User"));
      assert.equal(users.length, 2, "one entity fetch per identity's plan");
      assert.equal(
        users.filter((q) => q.includes("email")).length,
        1,
        "the anonymous plan has no email",
      );
    } finally {
      await Promise.all([strong.client.dispose(), anonymous.client.dispose()]);
    }
  });
});

for (
  const [name, authorization] of [
    ["a bad token at connect closes the WebSocket with 4403 Forbidden", "Bearer not-a-token"],
    [
      "a connect authorization that is no header value closes with 4403, not 1011",
      "Bearer a\r\nx-injected: 1",
    ],
  ]
) {
  Deno.test(`issue 29: ${name}`, async () => {
    await withFixture({ authentication: true }, async (fixture) => {
      let code = 0;
      const client = createWsClient({
        url: fixture.wsUrl,
        retryAttempts: 0,
        connectionParams: { authorization },
        on: { closed: (event) => void (code = (event as CloseEvent).code) },
      });
      const failed = new Promise<void>((resolve) => {
        client.subscribe({ query: FEED }, {
          next() {},
          error: () => resolve(),
          complete: () => resolve(),
        });
      });
      await within(failed, "the refused client's end");
      assert.equal(code, 4403);
      await client.dispose();
    });
  });
}

Deno.test("issue 29: a token that expires ends the subscription with SUBSCRIPTION_TOKEN_EXPIRED", async () => {
  await withFixture({ authentication: true }, async (fixture) => {
    const token = await fixture.token("read:email", 2);
    const response = await fetch(fixture.httpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "text/event-stream",
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ query: FEED }),
    });
    assert.equal(response.status, 200);
    const text = await textWithin(response, "the stream's end at the token's expiry");
    assert.match(text, /SUBSCRIPTION_TOKEN_EXPIRED/);
    assert.match(text, /event: complete/);
    await until(() => fixture.feed.open === 0, "the upstream to close");
  });
});

Deno.test("issue 29: an SSE client that never reads is dropped (SUBSCRIPTION_CLIENT_TOO_SLOW), its upstream closed", async () => {
  await withFixture({ subscriptions: { max_buffered_events: 4 } }, async (fixture) => {
    const response = await fetch(fixture.httpUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ query: "subscription { reviewAdded { id body } }" }),
    });
    assert.equal(response.status, 200);
    await until(() => fixture.feed.open === 1, "the upstream");
    // Never read: large events fill the socket's buffers, then the subscription's own bound.
    const body = "x".repeat(64_000);
    for (let i = 0; i < 400 && fixture.feed.open === 1; i++) {
      fixture.feed.publish(review(`r${i}`, { body }));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await until(() => fixture.feed.open === 0, "the slow client's upstream to close");
    assert.equal(fixture.router.state().engine.subscriptions.active.size, 0);
    const text = await textWithin(response, "the slow client's stream end");
    assert.match(text, /SUBSCRIPTION_CLIENT_TOO_SLOW/);
  });
});

Deno.test("issue 29: a subscription without a stream Accept is refused with a message naming the transports", async () => {
  await withFixture({}, async (fixture) => {
    const response = await fetch(fixture.httpUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: FEED }),
    });
    const body = await within(response.json(), "the refusal's body");
    assert.equal(body.errors[0].extensions.code, "BAD_REQUEST");
    assert.match(body.errors[0].message, /text\/event-stream/);
  });
});

Deno.test("issue 29: a traced subscription (ART) carries a trace on its first 3 events: the plan's fetches, the event's entity fetch", async () => {
  await withFixture({ config: { dev_mode: true } }, async (fixture) => {
    const response = await fetch(fixture.httpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "text/event-stream",
        "x-gw-trace": "true",
      },
      body: JSON.stringify({ query: FEED }),
    });
    assert.equal(response.status, 200);
    await until(() => fixture.feed.open === 1, "the upstream");
    for (let i = 0; i < 4; i++) fixture.feed.publish(review(`r${i}`));
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    await within(
      (async () => {
        while ((text.match(/event: next/g) ?? []).length < 4) {
          const { value, done } = await reader.read();
          if (done) break;
          text += value;
        }
      })(),
      "4 traced events",
    ).finally(() => reader.cancel());
    const results = [...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1]!));
    assert.equal(results.length, 4);
    for (const result of results.slice(0, 3)) {
      const trace = JSON.stringify(result.extensions?.trace);
      assert.match(trace, /"fetches"/);
      assert.match(trace, /products/, "the event's entity fetch is traced");
      assert.match(trace, /subscription\{reviewAdded/, "the root fetch (the event) is traced");
    }
    assert.equal(results[3].extensions, undefined, "only the first events are traced");
    assert.equal(results[3].data.reviewAdded.id, "r3");
  });
});

Deno.test("issue 29: a subscription outlives traffic_shaping.router.request_timeout (the deadline bounds answering, not the stream)", async () => {
  await withFixture({
    config: { traffic_shaping: { router: { request_timeout: "300ms" } } },
  }, async (fixture) => {
    const response = await fetch(fixture.httpUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ query: "subscription { reviewAdded { id } }" }),
    });
    await until(() => fixture.feed.open === 1, "the upstream");
    await new Promise((resolve) => setTimeout(resolve, 700));
    fixture.feed.publish(review("late"));
    const text = await readUntil(response, "late");
    assert.match(text, /"id":"late"/);
  });
});

Deno.test("issue 29: GraphQL over SSE also takes a GET (with a CSRF preflight header)", async () => {
  await withFixture({}, async (fixture) => {
    const url = new URL(fixture.httpUrl);
    url.searchParams.set("query", "subscription { reviewAdded { id } }");
    const response = await fetch(url, {
      headers: { accept: "text/event-stream", "apollo-require-preflight": "true" },
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type")!, /^text\/event-stream/);
    await until(() => fixture.feed.open === 1, "the upstream");
    fixture.feed.publish(review("g1"));
    const text = await readUntil(response, "g1");
    assert.match(text, /event: next\ndata: \{"data":\{"reviewAdded":\{"id":"g1"\}\}\}/);
  });
});
