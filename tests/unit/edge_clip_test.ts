/**
 * Error messages quote a client's own text (a path, a header value, a query
 * parameter, an argument name) up to 100 characters and an ellipsis, never
 * whole (`clipForMessage`), on every facet.
 */
import assert from "node:assert/strict";
import { BASE, edgeState, graphqlPost, handlerOf, mcpPost } from "./_edge_fixture.ts";

const LONG = "x".repeat(20_000);
const CONNECT = `${BASE}/service.v1.GraphService/`;
const JSON_POST = { "content-type": "application/json", "connect-protocol-version": "1" };

async function handler() {
  return handlerOf(
    await edgeState({ mcp: { enabled: true, enable_arbitrary_operations: true } }, {
      operations: [{ path: "GetTypename.graphql", text: "query GetTypename { __typename }" }],
    }),
  );
}

/** The answer's text: bounded, the quote clipped to 100 characters (its prefix included) and an ellipsis. */
async function assertClipped(label: string, response: Response): Promise<void> {
  const text = await response.text();
  assert.ok(text.length < 1000, `${label}: ${text.length} characters answered`);
  assert.match(text, /x{80,100}…/, label);
}

Deno.test("Connect errors quote the method name, header values and GET parameters clipped", async () => {
  const handle = await handler();
  const post = (path: string, headers: Record<string, string> = {}) =>
    new Request(CONNECT + path, {
      method: "POST",
      headers: { ...JSON_POST, ...headers },
      body: "{}",
    });
  await assertClipped("method", await handle(post(LONG)));
  await assertClipped("timeout", await handle(post("GetTypename", { "connect-timeout-ms": LONG })));
  await assertClipped(
    "content-type",
    await handle(post("GetTypename", { "content-type": `application/${LONG}` })),
  );
  await assertClipped(
    "protocol version",
    await handle(post("GetTypename", { "connect-protocol-version": LONG })),
  );
  await assertClipped(
    "content-encoding",
    await handle(post("GetTypename", { "content-encoding": LONG })),
  );
  const get = (query: string) => new Request(`${CONNECT}GetTypename?${query}`);
  await assertClipped("connect", await handle(get(`connect=${LONG}`)));
  await assertClipped("encoding", await handle(get(`connect=v1&encoding=${LONG}`)));
  await assertClipped(
    "compression",
    await handle(get(`connect=v1&encoding=json&message=%7B%7D&compression=${LONG}`)),
  );
});

Deno.test("MCP errors quote the session protocol version, the Origin and argument names clipped", async () => {
  const handle = await handler();
  const session = { "mcp-protocol-version": LONG, "mcp-session-id": "v1.a.b.c" };
  await assertClipped(
    "protocol version",
    await handle(mcpPost('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', session)),
  );
  await assertClipped(
    "GET protocol version",
    await handle(
      new Request(`${BASE}/mcp`, {
        headers: { accept: "text/event-stream", "mcp-protocol-version": LONG },
      }),
    ),
  );
  await assertClipped(
    "origin",
    await handle(mcpPost("{}", { origin: `https://${LONG}.example` })),
  );
  const call = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "execute_graphql", arguments: { query: "{ __typename }", [LONG]: 1 } },
  });
  await assertClipped("argument", await handle(mcpPost(call)));
});

Deno.test("GraphQL over HTTP errors quote the path and the Content-Type clipped", async () => {
  const handle = await handler();
  await assertClipped("path", await handle(new Request(`${BASE}/${LONG}`)));
  await assertClipped(
    "content-type",
    await handle(
      graphqlPost('{"query":"{ __typename }"}', { "content-type": `application/${LONG}` }),
    ),
  );
});
