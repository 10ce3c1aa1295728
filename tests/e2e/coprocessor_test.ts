/**
 * Issue 40: the Apollo-compatible coprocessor on a running router (production
 * profile). The coprocessor (`_coprocessor.ts`) is written against Apollo
 * Router's documented JSON only: `RouterRequest` breaks with 401 without an API
 * key, `SupergraphRequest` breaks with 403 for `Blocked*` operations,
 * `SubgraphRequest` adds a header. Checked on GraphQL over HTTP, Connect, MCP
 * and a subscription (SSE); a coprocessor that is down or too slow fails the
 * request closed (502 `COPROCESSOR_FAILED`).
 */
import assert from "node:assert/strict";
import { type Coprocessor, startCoprocessor } from "../../docs/examples/apollo_coprocessor.ts";
import { readUntil, review, type SubscriptionFixture, until } from "./_subscription_fixture.ts";
import {
  connectCall,
  graphqlCall,
  mcpCall,
  sseCall,
  withOperationsRouter,
} from "./_facet_calls.ts";

const OPERATIONS = {
  "UserName.graphql": `query UserName { user(id: "u1") { name } }`,
  "Blocked.graphql": `query Blocked { user(id: "u1") { name } }`,
  "Reviews.graphql": `subscription Reviews { reviewAdded { id author { name } } }`,
};

const KEY = { "x-api-key": "let-me-in" };

/** The coprocessor config: Apollo's shape. */
function coprocessorConfig(url: string) {
  return {
    url,
    timeout: "300ms",
    router: { request: { headers: true, context: true, path: true, method: true } },
    supergraph: { request: { headers: true, body: true, context: true } },
    subgraph: { all: { request: { headers: true, uri: true, service_name: true } } },
  };
}

async function withCoprocessorRouter(
  run: (fixture: SubscriptionFixture, coprocessor: Coprocessor) => Promise<void>,
  options: { readonly url?: string } = {},
) {
  const coprocessor = startCoprocessor();
  try {
    await withOperationsRouter({
      operations: OPERATIONS,
      config: { coprocessor: coprocessorConfig(options.url ?? coprocessor.url) },
      prefix: "gw_coproc_ops_",
    }, (fixture) => run(fixture, coprocessor));
  } finally {
    await coprocessor.close();
  }
}

Deno.test("issue 40: the coprocessor's RouterRequest break 401 ends the request on GraphQL, Connect, MCP and a subscription; nothing is fetched", async () => {
  await withCoprocessorRouter(async (fixture) => {
    const answered = await graphqlCall(fixture, OPERATIONS["UserName.graphql"]);
    assert.equal(answered.status, 401);
    const body = await answered.json();
    assert.equal(body.errors[0].message, "Not authenticated: send x-api-key");
    assert.equal(body.errors[0].extensions.code, "ERR_UNAUTHENTICATED");

    const connect = await connectCall(fixture, "UserName");
    assert.equal(connect.status, 401);
    assert.deepEqual(await connect.json(), {
      code: "unauthenticated",
      message: "Not authenticated: send x-api-key",
    });

    const mcp = await mcpCall(fixture, "execute_operation_user_name");
    assert.equal(mcp.status, 401);
    assert.equal((await mcp.json()).error.message, "Not authenticated: send x-api-key");

    const stream = await sseCall(fixture, OPERATIONS["Reviews.graphql"]);
    assert.equal(stream.status, 401);
    await stream.body?.cancel();

    assert.deepEqual(fixture.entityQueries, []);
    assert.equal(fixture.feed.opened, 0);

    // Counted by stage and outcome (the production profile's Prometheus exposition).
    if (fixture.router.metricsUrl) {
      const metrics = await (await fetch(fixture.router.metricsUrl)).text();
      assert.match(
        metrics,
        /gw_router_coprocessor_calls_total\{stage="RouterRequest",outcome="break"\} [4-9]/,
      );
    }
  });
});

Deno.test("issue 40: the coprocessor's SubgraphRequest header reaches every subgraph request (GraphQL, Connect, MCP, a subscription's fetches)", async () => {
  await withCoprocessorRouter(async (fixture) => {
    const tagged = (from: number, what: string) => {
      const sent = fixture.entityHeaders.slice(from);
      assert.ok(sent.length > 0, `${what}: a subgraph was called`);
      for (const headers of sent) assert.equal(headers.get("x-coprocessor"), "seen", what);
    };
    let from = 0;
    const answered = await graphqlCall(fixture, OPERATIONS["UserName.graphql"], KEY);
    assert.deepEqual(await answered.json(), { data: { user: { name: "Ada" } } });
    tagged(from, "GraphQL");

    from = fixture.entityHeaders.length;
    assert.deepEqual(await (await connectCall(fixture, "UserName", KEY)).json(), {
      user: { name: "Ada" },
    });
    tagged(from, "Connect");

    from = fixture.entityHeaders.length;
    const mcp = await (await mcpCall(fixture, "execute_operation_user_name", KEY)).json();
    assert.equal(mcp.result?.isError, false, JSON.stringify(mcp));
    tagged(from, "MCP");

    from = fixture.entityHeaders.length;
    const stream = await sseCall(fixture, OPERATIONS["Reviews.graphql"], KEY);
    await until(() => fixture.feed.open === 1, "the upstream subscription");
    fixture.feed.publish(review("r1"));
    assert.match(await readUntil(stream, /Ada/), /"name":"Ada"/);
    tagged(from, "subscription event");
  });
});

Deno.test("issue 40: the coprocessor's SupergraphRequest break 403 refuses an operation by name on every facet", async () => {
  await withCoprocessorRouter(async (fixture) => {
    const answered = await graphqlCall(fixture, OPERATIONS["Blocked.graphql"], KEY);
    assert.equal(answered.status, 403);
    const body = await answered.json();
    assert.equal(body.errors[0].message, "The coprocessor refuses Blocked");
    assert.equal(body.errors[0].extensions.code, "ERR_BLOCKED");

    const connect = await connectCall(fixture, "Blocked", KEY);
    assert.equal(connect.status, 403);
    assert.equal((await connect.json()).code, "permission_denied");

    const mcp = await (await mcpCall(fixture, "execute_operation_blocked", KEY)).json();
    assert.equal(mcp.result?.isError, true);
    assert.match(mcp.result.content[0].text, /The coprocessor refuses Blocked/);

    const stream = await sseCall(
      fixture,
      "subscription BlockedReviews { reviewAdded { id } }",
      KEY,
    );
    assert.match(await readUntil(stream, /complete/), /ERR_BLOCKED/);

    assert.deepEqual(fixture.entityQueries, []);
    assert.equal(fixture.feed.opened, 0);
  });
});

Deno.test("issue 40: the router speaks Apollo's coprocessor JSON (version, stage, control, id, headers as lists, body, context, path, method, uri, serviceName)", async () => {
  await withCoprocessorRouter(async (fixture, coprocessor) => {
    const answered = await graphqlCall(fixture, OPERATIONS["UserName.graphql"], {
      ...KEY,
      "x-request-id": "req-protocol-1",
    });
    assert.equal(answered.status, 200);
    await answered.body?.cancel();
    const [router, supergraph, subgraph] = coprocessor.received;
    assert.equal(router?.stage, "RouterRequest");
    assert.equal(router.version, 1);
    assert.equal(router.control, "continue");
    assert.equal(router.id, "req-protocol-1");
    assert.deepEqual(router.headers?.["x-api-key"], ["let-me-in"]);
    assert.equal(router.path, "/graphql");
    assert.equal(router.method, "POST");
    assert.deepEqual(router.context, { entries: {} });
    assert.equal(router.body, undefined, "the body switch is off");
    assert.equal(supergraph?.stage, "SupergraphRequest");
    assert.equal(supergraph.id, "req-protocol-1");
    assert.deepEqual(supergraph.body, {
      query: 'query UserName {\n  user(id: "u1") {\n    name\n  }\n}',
      operationName: "UserName",
      variables: {},
    });
    assert.equal(subgraph?.stage, "SubgraphRequest");
    assert.equal(subgraph.serviceName, "users");
    assert.equal(typeof subgraph.subgraphRequestId, "string");
    assert.match(String(subgraph.uri), /^http:\/\/127\.0\.0\.1:\d+\/graphql$/);
  });
});

Deno.test("issue 40: a coprocessor that is down or past its timeout fails the request closed (502 COPROCESSOR_FAILED)", async () => {
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = closed.addr.port;
  closed.close();
  await withCoprocessorRouter(async (fixture) => {
    const answered = await graphqlCall(fixture, OPERATIONS["UserName.graphql"], KEY);
    assert.equal(answered.status, 502);
    const body = await answered.json();
    assert.equal(body.errors[0].extensions.code, "COPROCESSOR_FAILED");
    assert.equal(
      body.errors[0].message,
      "The coprocessor failed at RouterRequest: it could not be reached",
    );
    assert.doesNotMatch(JSON.stringify(body), new RegExp(String(port)), "its URL is not told");
    assert.deepEqual(fixture.entityQueries, []);
  }, { url: `http://127.0.0.1:${port}/` });
  await withCoprocessorRouter(async (fixture) => {
    const answered = await graphqlCall(fixture, OPERATIONS["UserName.graphql"], {
      ...KEY,
      "x-slow": "1",
    });
    assert.equal(answered.status, 502);
    const body = await answered.json();
    assert.equal(
      body.errors[0].message,
      "The coprocessor failed at RouterRequest: it did not answer within 300 ms (coprocessor.timeout)",
    );
  });
});
