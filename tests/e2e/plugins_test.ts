/**
 * Issue 40: a TypeScript plugin on a running router (production profile): the
 * worked example of docs/extending.md (`docs/examples/tag_and_block.ts`) adds a
 * header to every subgraph request and refuses operations by name, the same on
 * GraphQL over HTTP, Connect, MCP and a subscription (SSE and WebSocket, the
 * real `graphql-ws` client); a refused operation fetches nothing.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { createClient } from "graphql-ws";
import {
  readUntil,
  review,
  type SubscriptionFixture,
  until,
  withFixture,
} from "./_subscription_fixture.ts";
import {
  connectCall,
  graphqlCall,
  mcpCall,
  sseCall,
  withOperationsRouter,
} from "./_facet_calls.ts";

const PLUGIN = fileURLToPath(new URL("../../docs/examples/tag_and_block.ts", import.meta.url));

const OPERATIONS = {
  "UserName.graphql": `query UserName { user(id: "u1") { name } }`,
  "Blocked.graphql": `query Blocked { user(id: "u1") { name } }`,
  "Reviews.graphql": `subscription Reviews { reviewAdded { id author { name } } }`,
  "BlockedReviews.graphql": `subscription BlockedReviews { reviewAdded { id } }`,
};

/** A deadline for every stream read: a regression fails, never hangs. */
const DEADLINE_MS = 10_000;

const JSON_HEADERS = { "content-type": "application/json" };

function withPluginRouter(run: (fixture: SubscriptionFixture) => Promise<void>) {
  return withOperationsRouter({
    operations: OPERATIONS,
    config: {
      batching: { enabled: true },
      plugins: [{
        path: PLUGIN,
        config: { header: "x-gateway", value: "gw", blocked: ["Blocked", "BlockedReviews"] },
      }],
    },
    prefix: "gw_plugin_ops_",
  }, run);
}

/** Every subgraph request since `from` carried the plugin's header. */
function assertTagged(fixture: SubscriptionFixture, from: number, what: string): void {
  const sent = fixture.entityHeaders.slice(from);
  assert.ok(sent.length > 0, `${what}: a subgraph was called`);
  for (const headers of sent) assert.equal(headers.get("x-gateway"), "gw", what);
}

Deno.test("issue 40: a plugin tags every subgraph request (GraphQL, Connect, MCP, a subscription's fetches)", async () => {
  await withPluginRouter(async (fixture) => {
    let from = fixture.entityHeaders.length;
    const graphql = await graphqlCall(fixture, OPERATIONS["UserName.graphql"]);
    assert.deepEqual(await graphql.json(), { data: { user: { name: "Ada" } } });
    assertTagged(fixture, from, "GraphQL");

    // A batch: each operation meets the stages (one tagged, one refused by name).
    from = fixture.entityHeaders.length;
    const batch = await fetch(fixture.httpUrl, {
      method: "POST",
      headers: JSON_HEADERS,
      body: JSON.stringify([
        { query: OPERATIONS["UserName.graphql"] },
        { query: OPERATIONS["Blocked.graphql"] },
      ]),
    });
    const [tagged, blocked] = await batch.json();
    assert.deepEqual(tagged, { data: { user: { name: "Ada" } } });
    assert.equal(blocked.errors[0].extensions.code, "OPERATION_NOT_ALLOWED");
    assertTagged(fixture, from, "batch");

    from = fixture.entityHeaders.length;
    const connect = await connectCall(fixture, "UserName");
    assert.deepEqual(await connect.json(), { user: { name: "Ada" } });
    assertTagged(fixture, from, "Connect");

    from = fixture.entityHeaders.length;
    const mcp = await (await mcpCall(fixture, "execute_operation_user_name")).json();
    assert.equal(mcp.result?.isError, false, JSON.stringify(mcp));
    assertTagged(fixture, from, "MCP");

    from = fixture.entityHeaders.length;
    const sse = await sseCall(fixture, OPERATIONS["Reviews.graphql"]);
    await until(() => fixture.feed.open === 1, "the upstream subscription");
    fixture.feed.publish(review("r1"));
    const events = await readUntil(sse, /Ada/);
    assert.match(events, /"name":"Ada"/);
    assertTagged(fixture, from, "subscription event");
  });
});

Deno.test("issue 40: a plugin refuses an operation by name before any fetch, on every facet", async () => {
  await withPluginRouter(async (fixture) => {
    const graphql = await graphqlCall(fixture, OPERATIONS["Blocked.graphql"]);
    assert.equal(graphql.status, 403);
    const body = await graphql.json();
    assert.equal(body.errors[0].message, "The operation Blocked is not allowed here");
    assert.equal(body.errors[0].extensions.code, "OPERATION_NOT_ALLOWED");
    assert.equal(typeof body.errors[0].extensions.request_id, "string");

    const connect = await connectCall(fixture, "Blocked");
    assert.equal(connect.status, 403);
    const connectBody = await connect.json();
    assert.equal(connectBody.code, "permission_denied");
    assert.equal(connectBody.message, "The operation Blocked is not allowed here");

    const mcp = await (await mcpCall(fixture, "execute_operation_blocked")).json();
    assert.equal(mcp.result?.isError, true, JSON.stringify(mcp));
    assert.match(mcp.result.content[0].text, /The operation Blocked is not allowed here/);

    const sse = await sseCall(fixture, OPERATIONS["BlockedReviews.graphql"]);
    assert.match(await readUntil(sse, /complete/), /OPERATION_NOT_ALLOWED/);

    const client = createClient({ url: fixture.wsUrl, retryAttempts: 0 });
    try {
      const error = await new Promise<unknown>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no WebSocket answer")), DEADLINE_MS);
        client.subscribe({ query: OPERATIONS["BlockedReviews.graphql"] }, {
          next: () => {},
          error: (e) => {
            clearTimeout(timer);
            resolve(e);
          },
          complete: () => {
            clearTimeout(timer);
            resolve(null);
          },
        });
      });
      assert.match(JSON.stringify(error), /The operation BlockedReviews is not allowed here/);
      // A query over the socket meets the same operation stage.
      const queryError = await new Promise<unknown>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no WebSocket answer")), DEADLINE_MS);
        client.subscribe({ query: OPERATIONS["Blocked.graphql"] }, {
          next: (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          error: (e) => {
            clearTimeout(timer);
            resolve(e);
          },
          complete: () => {},
        });
      });
      assert.match(JSON.stringify(queryError), /The operation Blocked is not allowed here/);
    } finally {
      await client.dispose();
    }

    assert.deepEqual(fixture.entityQueries, [], "a refused operation fetches nothing");
    if (fixture.router.metricsUrl) {
      const metrics = await (await fetch(fixture.router.metricsUrl)).text();
      assert.match(
        metrics,
        /gw_router_plugin_hooks_total\{plugin="tag-and-block",hook="onOperation",outcome="refused"\} [4-9]/,
      );
    }
    assert.equal(fixture.feed.opened, 0, "a refused subscription opens no upstream");
  });
});

Deno.test("issue 40: a plugin whose config its schema refuses stops the start, naming the entry", async () => {
  await assert.rejects(
    withFixture({ config: { plugins: [{ path: PLUGIN, config: { header: "" } }] } }, () => {
      throw new Error("the router started");
    }),
    (error: Error) => {
      assert.match(error.message, /^plugins\[0\]\.config: invalid for the plugin "tag-and-block"/);
      assert.match(error.message, /header: a header name/);
      return true;
    },
  );
});

Deno.test("issue 40: onPlan sees the plan's subgraphs and refuses before any fetch (GraphQL, MCP)", async () => {
  const plan = fileURLToPath(new URL("./_plan_plugin.ts", import.meta.url));
  const dir = await Deno.makeTempDir({ prefix: "gw_plan_ops_" });
  try {
    await Deno.writeTextFile(
      `${dir}/ProductName.graphql`,
      `query ProductName { product(upc: "p1") { name } }`,
    );
    await withFixture({
      config: { operations_dir: dir, plugins: [{ path: plan, config: { forbidden: "products" } }] },
    }, async (fixture) => {
      const refused = await graphqlCall(fixture, `{ product(upc: "p1") { name } }`);
      assert.equal(refused.status, 403);
      const body = await refused.json();
      assert.equal(body.errors[0].message, "The plan fetches from products (products)");
      assert.equal(body.errors[0].extensions.code, "PLAN_REFUSED");
      const mcp = await (await mcpCall(fixture, "execute_operation_product_name")).json();
      assert.equal(mcp.result?.isError, true);
      assert.match(mcp.result.content[0].text, /The plan fetches from products/);
      assert.deepEqual(fixture.entityQueries, [], "nothing fetched");
      const allowed = await graphqlCall(fixture, OPERATIONS["UserName.graphql"]);
      assert.deepEqual(await allowed.json(), { data: { user: { name: "Ada" } } });
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
