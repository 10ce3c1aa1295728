/**
 * Issue 14: the nesting of variable values is bounded before anything walks
 * them (graphql-js's coercion and Connect's message decoding recurse per
 * level): a recursive input type or a custom scalar nested thousands deep is
 * a 400 `MAX_DEPTH_EXCEEDED` on /graphql, `invalid_argument` on Connect and a
 * tool error on MCP, never a 500, and never reaches a subgraph.
 */
import assert from "node:assert/strict";
import { composeSupergraph } from "../../../lib/compose/mod.ts";
import { parseConfig } from "../../../lib/config/mod.ts";
import { createHandler } from "../../../lib/http/mod.ts";
import { silentLogger } from "../../../lib/log/mod.ts";
import { buildState } from "../../../lib/state/mod.ts";
import { mcpPost } from "../_edge_fixture.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';
const composed = composeSupergraph([{
  name: "a",
  url: "http://a.invalid/graphql",
  sdl: `${LINK}
scalar JSON
input Filter { and: [Filter!] x: Int }
type Query { items(filter: Filter): [Int] raw(v: JSON): Int }`,
}]);
if (!composed.ok) throw new Error("the test supergraph does not compose");

async function router() {
  const seen: string[] = [];
  const state = await buildState({
    config: parseConfig({
      connect_rpc: { enabled: true },
      mcp: { enabled: true, enable_arbitrary_operations: true },
    }),
    log: silentLogger,
    supergraphSdl: composed.ok ? composed.supergraphSdl : "",
    operationFiles: [{
      path: "Items.graphql",
      text: "query Items($filter: Filter, $v: JSON) { items(filter: $filter) raw(v: $v) }",
    }],
    traceKeyPem: null,
    fetch: async (request: Request) => {
      seen.push(await request.text());
      return Response.json({ data: { items: [1], raw: 1 } });
    },
  });
  return { handle: createHandler(() => state), seen };
}

/** `{"and":[…{"x":1}…]}` wrapped `levels` times (two levels of nesting each). */
function nestedFilter(levels: number): string {
  let value = '{"x":1}';
  for (let i = 0; i < levels; i++) value = `{"and":[${value}]}`;
  return value;
}

const deepList = (levels: number) => "[".repeat(levels) + "]".repeat(levels);

function graphqlPost(body: string): Request {
  return new Request("http://router.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
}

Deno.test("issue 14: deeply nested variables are refused with 400 MAX_DEPTH_EXCEEDED on /graphql, never a 500", async () => {
  const { handle, seen } = await router();
  const cases = [
    `{"query":"query($f: Filter) { items(filter: $f) }","variables":{"f":${nestedFilter(5000)}}}`,
    `{"query":"query($v: JSON) { raw(v: $v) }","variables":{"v":${deepList(100_000)}}}`,
  ];
  for (const body of cases) {
    const response = await handle(graphqlPost(body));
    assert.equal(response.status, 400);
    const error = (await response.json()).errors[0];
    assert.equal(error.extensions.code, "MAX_DEPTH_EXCEEDED");
    assert.match(error.message, /security\.parser_limits\.approximate_depth_limit/);
  }
  assert.deepEqual(seen, [], "no subgraph saw the nested value");
});

Deno.test("edge: JSON nested past the limit is refused before it is parsed (body, GET parameters, extensions)", async () => {
  const { handle, seen } = await router();
  // Unterminated after the nesting: only a check before parsing names the depth
  // (parsing 2.4 million levels first took half a second of CPU).
  const cut = (json: string) => json.slice(0, -2);
  const gets = [
    `variables=${encodeURIComponent(`{"v":${deepList(5_000)}`)}`,
    `extensions=${encodeURIComponent(deepList(5_000))}`,
  ].map((param) =>
    new Request(
      `http://router.test/graphql?query=${
        encodeURIComponent("query($v: JSON) { raw(v: $v) }")
      }&${param}`,
      { headers: { "graphql-preflight": "1" } },
    )
  );
  const requests = [
    graphqlPost(
      cut(`{"query":"query($v: JSON) { raw(v: $v) }","variables":{"v":${deepList(1_000_000)}}}`),
    ),
    graphqlPost(`{"query":"{ items }","extensions":{"x":${deepList(5_000)}}}`),
    ...gets,
  ];
  for (const request of requests) {
    const response = await handle(request);
    const body = await response.json();
    assert.equal(response.status, 400, JSON.stringify(body).slice(0, 200));
    assert.equal(body.errors[0].extensions.code, "MAX_DEPTH_EXCEEDED");
    assert.match(body.errors[0].message, /nesting depth of JSON values.*limit of 200/);
  }
  // The limit is the variables' own: 200 levels below the variables object run.
  const within = await handle(graphqlPost(
    `{"query":"query($v: JSON) { raw(v: $v) }","variables":{"v":${deepList(199)}}}`,
  ));
  assert.equal(within.status, 200);
  assert.equal(seen.length, 1);
});

Deno.test("issue 14: variables within the depth limit run (recursive input and custom scalar)", async () => {
  const { handle, seen } = await router();
  const response = await handle(graphqlPost(
    `{"query":"query($f: Filter, $v: JSON) { items(filter: $f) raw(v: $v) }","variables":{"f":${
      nestedFilter(20)
    },"v":${deepList(50)}}}`,
  ));
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { data: { items: [1], raw: 1 } });
  assert.equal(seen.length, 1);
});

Deno.test("issue 14: a deeply nested Connect message is invalid_argument before it is decoded", async () => {
  const { handle, seen } = await router();
  for (
    const message of [
      `{"filter":${nestedFilter(5000)}}`,
      `{"v":${deepList(100_000)}}`,
      // Cut off after the nesting: refused for its depth before it is parsed.
      `{"v":${deepList(1_000_000)}`.slice(0, -1),
    ]
  ) {
    const response = await handle(
      new Request("http://router.test/service.v1.GraphService/Items", {
        method: "POST",
        headers: { "content-type": "application/json", "connect-protocol-version": "1" },
        body: message,
      }),
    );
    assert.equal(response.status, 400);
    const body = await response.json();
    assert.equal(body.code, "invalid_argument");
    assert.match(body.message, /nesting depth of variable values exceeds the limit of 200/);
  }
  assert.deepEqual(seen, []);
});

Deno.test("issue 14: MCP tools refuse deeply nested arguments as a tool error", async () => {
  const { handle, seen } = await router();
  const calls = [
    {
      name: "execute_graphql",
      args: `{"query":"query($f: Filter) { items(filter: $f) }","variables":{"f":${
        nestedFilter(5000)
      }}}`,
    },
    { name: "execute_operation_items", args: `{"filter":${nestedFilter(5000)}}` },
  ];
  for (const { name, args } of calls) {
    const response = await handle(mcpPost(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`,
    ));
    assert.equal(response.status, 200);
    const { result } = await response.json();
    assert.equal(result.isError, true, name);
    assert.match(result.content[0].text, /nesting depth of variable values exceeds the limit/);
  }
  assert.deepEqual(seen, []);
});
