/**
 * Issue 45: subscribers that ask alike share one execution of each event and one printed
 * result (the same bytes written to each), and subscribers whose answers differ never share:
 * what an identity may see (`@policy`, scopes), what the subgraphs answer it (a forwarded
 * header, a plugin's subgraph stage) and variables only a later fetch uses. Each test has
 * subscribers that share one upstream stream (so one event object) but must get different
 * results: a sharing key too coarse shows one subscriber another's field. The privileged
 * subscriber subscribes first, so its execution is the one a coarse key would hand on.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { createClient as createWsClient } from "graphql-ws";
import {
  readUntil,
  review,
  socketWithHeaders,
  type SubscriptionFixture,
  until,
  withFixture,
} from "./_subscription_fixture.ts";

const POLICY_PLUGIN = fileURLToPath(new URL("./_policy_plugin.ts", import.meta.url));
const VIEWER_PLUGIN = fileURLToPath(new URL("./_viewer_stage_plugin.ts", import.meta.url));

type Result = {
  data?: unknown;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
};

/** A subscription over GraphQL over SSE or multipart HTTP, with these headers. */
function subscribeHttp(
  fixture: SubscriptionFixture,
  options: {
    readonly transport: "sse" | "multipart";
    readonly query: string;
    readonly headers?: Record<string, string>;
    readonly variables?: Record<string, unknown>;
  },
): Promise<Response> {
  return fetch(fixture.httpUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: options.transport === "sse"
        ? "text/event-stream"
        : 'multipart/mixed;subscriptionSpec="1.0", application/json',
      ...options.headers,
    },
    body: JSON.stringify({ query: options.query, variables: options.variables ?? {} }),
  });
}

/** The first result of an SSE or multipart stream (read within the stream deadline). */
async function firstResult(response: Response): Promise<Result> {
  if ((response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    const text = await readUntil(response, /event: next\ndata: [^\n]+\n/);
    return JSON.parse(/event: next\ndata: ([^\n]+)\n/.exec(text)![1]!);
  }
  const text = await readUntil(response, /\{"payload":\{.*\}\}\r\n--/s);
  return JSON.parse(/(\{"payload":\{.*\}\})\r\n--/s.exec(text)![1]!).payload;
}

/** A graphql-ws subscriber whose upgrade carries these headers. */
function subscribeWs(
  fixture: SubscriptionFixture,
  options: {
    readonly query: string;
    readonly headers: Record<string, string>;
    readonly variables?: Record<string, unknown>;
  },
) {
  const client = createWsClient({
    url: fixture.wsUrl,
    retryAttempts: 0,
    webSocketImpl: socketWithHeaders(options.headers),
  });
  const results: Result[] = [];
  client.subscribe({ query: options.query, variables: options.variables ?? {} }, {
    next: (value) => void results.push(value as unknown as Result),
    error: () => {},
    complete: () => {},
  });
  return { client, results };
}

/** Waits until `count` subscriptions are active on one upstream stream. */
async function sharingOneUpstream(fixture: SubscriptionFixture, count: number): Promise<void> {
  const subs = fixture.router.state().engine.subscriptions;
  await until(() => subs.active.size === count, `${count} active subscriptions`);
  await until(() => fixture.feed.open === 1, "one shared upstream stream");
}

Deno.test("issue 45: @policy decided per subscriber: a denied subscriber never gets the field a granted one on the same event gets", async () => {
  const query = "subscription { reviewAdded { id author { name note } } }";
  await withFixture({ config: { plugins: [{ path: POLICY_PLUGIN }] } }, async (fixture) => {
    const granted = await subscribeHttp(fixture, {
      transport: "sse",
      query,
      headers: { "x-grant": "staff" },
    });
    const denied = await subscribeHttp(fixture, { transport: "multipart", query });
    const deniedWs = subscribeWs(fixture, { query, headers: { "x-grant": "auditor" } });
    try {
      await sharingOneUpstream(fixture, 3);
      fixture.feed.publish(review("r1"));
      assert.deepEqual(await firstResult(granted), {
        data: { reviewAdded: { id: "r1", author: { name: "Ada", note: "Likes tea" } } },
      });
      const deniedResult = await firstResult(denied);
      assert.deepEqual(deniedResult.data, {
        reviewAdded: { id: "r1", author: { name: "Ada", note: null } },
      });
      assert.equal(deniedResult.errors?.[0]?.extensions?.code, "UNAUTHORIZED_FIELD_OR_TYPE");
      await until(() => deniedWs.results.length === 1, "the WebSocket subscriber's event");
      assert.deepEqual(deniedWs.results[0]!.data, deniedResult.data);
      assert.ok(!JSON.stringify(deniedWs.results).includes("Likes tea"));
    } finally {
      await deniedWs.client.dispose();
    }
  });
});

Deno.test("issue 45: private data by a forwarded header: each viewer gets its own, one execution per distinct viewer, shared across transports", async () => {
  const query = "subscription { reviewAdded { id author { viewerNote } } }";
  // Forwarded to the users subgraph only: the upstream stream (reviews) is one for all.
  const headers = { subgraphs: { users: { request: [{ op: "propagate", named: "x-viewer" }] } } };
  await withFixture({ headers }, async (fixture) => {
    const alice = await subscribeHttp(fixture, {
      transport: "sse",
      query,
      headers: { "x-viewer": "alice" },
    });
    const bob = await subscribeHttp(fixture, {
      transport: "multipart",
      query,
      headers: { "x-viewer": "bob" },
    });
    const aliceWs = subscribeWs(fixture, { query, headers: { "x-viewer": "alice" } });
    try {
      await sharingOneUpstream(fixture, 3);
      const from = fixture.entityQueries.length;
      fixture.feed.publish(review("r1"));
      const note = (viewer: string) => ({
        reviewAdded: { id: "r1", author: { viewerNote: `Ada, as ${viewer} sees them` } },
      });
      assert.deepEqual(await firstResult(alice), { data: note("alice") });
      assert.deepEqual(await firstResult(bob), { data: note("bob") });
      await until(() => aliceWs.results.length === 1, "the WebSocket subscriber's event");
      assert.deepEqual(aliceWs.results[0], { data: note("alice") });
      const fetched = fixture.entityQueries.slice(from).filter((q) => q.includes("viewerNote"));
      assert.equal(fetched.length, 2, "one entity fetch per distinct viewer, not per subscriber");
    } finally {
      await aliceWs.client.dispose();
    }
  });
});

Deno.test("issue 45: a variable only an entity fetch uses: subscribers on one upstream stream get their own answers", async () => {
  const query =
    "subscription Labelled($p: String!) { reviewAdded { id product { label(prefix: $p) } } }";
  await withFixture({}, async (fixture) => {
    const a = await subscribeHttp(fixture, { transport: "sse", query, variables: { p: "A" } });
    const b = await subscribeHttp(fixture, {
      transport: "multipart",
      query,
      variables: { p: "B" },
    });
    const aWs = subscribeWs(fixture, { query, headers: {}, variables: { p: "A" } });
    try {
      await sharingOneUpstream(fixture, 3);
      const from = fixture.entityQueries.length;
      fixture.feed.publish(review("r1"));
      const label = (text: string) => ({
        data: { reviewAdded: { id: "r1", product: { label: text } } },
      });
      assert.deepEqual(await firstResult(a), label("A Table"));
      assert.deepEqual(await firstResult(b), label("B Table"));
      await until(() => aWs.results.length === 1, "the WebSocket subscriber's event");
      assert.deepEqual(aWs.results[0], label("A Table"));
      const fetched = fixture.entityQueries.slice(from).filter((q) => q.includes("label"));
      assert.equal(fetched.length, 2, "one entity fetch per distinct variables");
    } finally {
      await aWs.client.dispose();
    }
  });
});

Deno.test("issue 45: a plugin's subgraph stage runs for every subscriber: what it makes of one client's request never reaches another", async () => {
  const query = "subscription { reviewAdded { id author { viewerNote } } }";
  await withFixture({ config: { plugins: [{ path: VIEWER_PLUGIN }] } }, async (fixture) => {
    const alice = await subscribeHttp(fixture, {
      transport: "sse",
      query,
      headers: { "x-user": "alice" },
    });
    const bob = await subscribeHttp(fixture, {
      transport: "multipart",
      query,
      headers: { "x-user": "bob" },
    });
    await sharingOneUpstream(fixture, 2);
    fixture.feed.publish(review("r1"));
    const note = (viewer: string) => ({
      data: { reviewAdded: { id: "r1", author: { viewerNote: `Ada, as ${viewer} sees them` } } },
    });
    assert.deepEqual(await firstResult(alice), note("alice"));
    assert.deepEqual(await firstResult(bob), note("bob"));
  });
});
