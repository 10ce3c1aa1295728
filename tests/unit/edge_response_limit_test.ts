/**
 * A response over `engine.max_response_bytes` is the same answer on every
 * facet: a clear error naming the key, never a 500 or an "internal" error.
 */
import assert from "node:assert/strict";
import { BASE, edgeState, graphqlPost, handlerOf, mcpExecute } from "./_edge_fixture.ts";

const QUERY = "query ListNames { topProducts { name } }";

async function handler() {
  return handlerOf(
    await edgeState({ engine: { max_response_bytes: 200 } }, {
      operations: [{ path: "ListNames.graphql", text: QUERY }],
      answer: () => ({
        data: {
          topProducts: Array.from(
            { length: 50 },
            (_, i) => ({ __typename: "Product", upc: `${i}`, name: `Product ${i}` }),
          ),
        },
      }),
    }),
  );
}

Deno.test("edge: a response over engine.max_response_bytes is RESPONSE_TOO_LARGE on /graphql, Connect and MCP", async () => {
  const handle = await handler();
  const graphql = await handle(graphqlPost({ query: QUERY }));
  const body = await graphql.json();
  assert.equal(graphql.status, 502, JSON.stringify(body));
  assert.equal(body.errors[0].extensions.code, "RESPONSE_TOO_LARGE");
  assert.match(body.errors[0].message, /200 bytes \(engine\.max_response_bytes\)/);

  const connect = await handle(
    new Request(`${BASE}/service.v1.GraphService/ListNames`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1" },
      body: "{}",
    }),
  );
  const failure = await connect.json();
  assert.notEqual(connect.status, 500, JSON.stringify(failure));
  assert.equal(failure.code, "resource_exhausted");
  assert.match(failure.message, /engine\.max_response_bytes/);

  const mcp = await handle(mcpExecute(QUERY));
  const rpc = await mcp.json();
  assert.equal(mcp.status, 200, JSON.stringify(rpc));
  assert.equal(rpc.result?.isError, true, JSON.stringify(rpc));
  assert.match(JSON.stringify(rpc.result), /RESPONSE_TOO_LARGE|engine\.max_response_bytes/);
});
