import assert from "node:assert/strict";
import { BASE, edgeState, graphqlPost, handlerOf, mcpPost } from "./_edge_fixture.ts";

const CONNECT = `${BASE}/service.v1.GraphService/GetTypename`;

async function handler(raw: Record<string, unknown> = {}) {
  return handlerOf(
    await edgeState(raw, {
      operations: [{ path: "GetTypename.graphql", text: "query GetTypename { __typename }" }],
    }),
  );
}

async function gzip(text: string | Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function connectPost(body: BodyInit, headers: Record<string, string> = {}): Request {
  return new Request(CONNECT, {
    method: "POST",
    headers: { "content-type": "application/json", "connect-protocol-version": "1", ...headers },
    body,
  });
}

const MCP_CALL = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "execute_graphql", arguments: { query: "{ __typename }" } },
});

Deno.test("issue 14: a gzip body is inflated on /graphql, MCP and Connect", async () => {
  const handle = await handler();
  const graphql = await handle(
    graphqlPost(await gzip('{"query":"{ __typename }"}'), { "content-encoding": "gzip" }),
  );
  assert.equal(graphql.status, 200);
  assert.deepEqual(await graphql.json(), { data: { __typename: "Query" } });
  const mcp = await handle(mcpPost(await gzip(MCP_CALL), { "content-encoding": "gzip" }));
  assert.equal(mcp.status, 200);
  assert.match(JSON.stringify(await mcp.json()), /__typename.*Query/);
  const connect = await handle(connectPost(await gzip("{}"), { "content-encoding": "gzip" }));
  assert.equal(connect.status, 200);
  assert.deepEqual(await connect.json(), { typename: "Query" });
});

Deno.test("issue 14: any other Content-Encoding is a 415 on /graphql and MCP, and unimplemented on Connect", async () => {
  const handle = await handler();
  const graphql = await handle(
    graphqlPost('{"query":"{ __typename }"}', { "content-encoding": "br" }),
  );
  assert.equal(graphql.status, 415);
  const error = (await graphql.json()).errors[0];
  assert.equal(error.extensions.code, "UNSUPPORTED_MEDIA_TYPE");
  assert.match(
    error.message,
    /Unsupported Content-Encoding "br"; send the body as gzip or identity/,
  );
  const mcp = await handle(mcpPost(MCP_CALL, { "content-encoding": "deflate" }));
  assert.equal(mcp.status, 415);
  await mcp.body?.cancel();
  const connect = await handle(connectPost("{}", { "content-encoding": "br" }));
  assert.equal(connect.status, 501);
  const body = await connect.json();
  assert.equal(body.code, "unimplemented");
  assert.match(body.message, /gzip/);
  assert.equal(connect.headers.get("accept-encoding"), "gzip");
});

Deno.test("issue 14: max_request_body_bytes is counted after decompression; malformed gzip is a 400", async () => {
  const handle = await handler({ max_request_body_bytes: 1000 });
  const padded = JSON.stringify({ query: `{ __typename }${" ".repeat(2000)}` });
  const compressed = await gzip(padded);
  assert.ok(compressed.length < 1000);
  const big = await handle(graphqlPost(compressed, { "content-encoding": "gzip" }));
  assert.equal(big.status, 413);
  assert.match((await big.json()).errors[0].message, /larger than 1000 bytes/);
  const broken = await handle(graphqlPost("not gzip at all", { "content-encoding": "gzip" }));
  assert.equal(broken.status, 400);
  assert.match((await broken.json()).errors[0].message, /Malformed gzip/);
});

Deno.test("edge refusals keep the facet's error shape: a body over max_request_body_bytes is a Connect error on Connect and a JSON-RPC error on MCP", async () => {
  const handle = await handler({ max_request_body_bytes: 1000 });
  const big = JSON.stringify({ pad: "x".repeat(2000) });
  const connect = await handle(connectPost(big));
  assert.equal(connect.status, 413);
  assert.equal(connect.headers.get("content-type"), "application/json");
  assert.deepEqual(await connect.json(), {
    code: "resource_exhausted",
    message: "Request body is larger than 1000 bytes (max_request_body_bytes)",
  });
  const mcp = await handle(mcpPost(big));
  assert.equal(mcp.status, 413);
  assert.deepEqual(await mcp.json(), {
    jsonrpc: "2.0",
    id: null,
    error: {
      code: -32600,
      message: "Request body is larger than 1000 bytes (max_request_body_bytes)",
    },
  });
  const deflate = await handle(mcpPost(MCP_CALL, { "content-encoding": "deflate" }));
  assert.equal(deflate.status, 415);
  assert.equal((await deflate.json()).error.code, -32600);
});

Deno.test("issue 14: invalid UTF-8 is a 400 on /graphql and MCP and invalid_argument on Connect, never executed", async () => {
  const seen: string[] = [];
  const handle = handlerOf(
    await edgeState({}, {
      seen,
      operations: [{ path: "GetTypename.graphql", text: "query GetTypename { __typename }" }],
    }),
  );
  const prefix = new TextEncoder().encode('{"query":"{ user(id: \\"');
  const suffix = new TextEncoder().encode('\\") { id } }"}');
  const invalid = new Uint8Array([...prefix, 0xff, 0x28, ...suffix]);
  const graphql = await handle(graphqlPost(invalid));
  assert.equal(graphql.status, 400);
  assert.match((await graphql.json()).errors[0].message, /not valid UTF-8/);
  const mcp = await handle(mcpPost(new Uint8Array([...new TextEncoder().encode(MCP_CALL), 0xc3])));
  assert.equal(mcp.status, 400);
  assert.match(JSON.stringify(await mcp.json()), /not valid UTF-8/);
  const connect = await handle(connectPost(new Uint8Array([0x7b, 0xff, 0x7d])));
  assert.equal((await connect.json()).code, "invalid_argument");
  assert.deepEqual(seen, [], "no subgraph was called");
});

interface BombProbe {
  readonly status: number;
  readonly text: string;
  readonly produced: number;
  readonly rssGrowth: number;
}

/** Runs `_gzip_bomb_probe.ts` in its own process: its RSS is the bomb's alone. */
async function probe(facet: string): Promise<BombProbe> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./_gzip_bomb_probe.ts", import.meta.url).pathname, facet],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as BombProbe;
}

for (const facet of ["graphql", "mcp", "connect"]) {
  Deno.test(`issue 14: a 1 GB gzip bomb on ${facet} is refused once its inflated output passes the limit, RSS sampled`, async () => {
    const result = await probe(facet);
    if (facet === "connect") {
      // Connect inflates its own messages (connect_rpc.max_message_bytes, 5 MB): the
      // ~1 MB compressed body is read whole, its inflation stops at the limit.
      assert.equal(result.status, 429);
      assert.equal(JSON.parse(result.text).code, "resource_exhausted");
    } else {
      assert.equal(result.status, 413);
      // The default limit is 5 MB: inflation stopped long before 1 GB was produced.
      assert.ok(result.produced < 64 << 20, `${result.produced} bytes of zeros were produced`);
    }
    // Memory never held the inflated gigabyte.
    assert.ok(result.rssGrowth < 200 << 20, `RSS grew by ${result.rssGrowth >> 20} MiB`);
  });
}

Deno.test("a GET whose query string percent-decodes to invalid UTF-8 is a 400, never run with U+FFFD in its variables", async () => {
  const seen: string[] = [];
  const handle = handlerOf(
    await edgeState({}, {
      seen,
      operations: [{ path: "GetTypename.graphql", text: "query GetTypename { __typename }" }],
    }),
  );
  const query = encodeURIComponent("query($u: ID!) { product(upc: $u) { upc } }");
  const get = (variables: string) =>
    handle(
      new Request(`${BASE}/graphql?query=${query}&variables=${variables}`, {
        headers: { "apollo-require-preflight": "1" },
      }),
    );
  for (const invalid of ["%7B%22u%22%3A%22%FF%22%7D", "%7B%22u%22%3A%22%C3%22%7D"]) {
    const response = await get(invalid);
    assert.equal(response.status, 400);
    const body = await response.json();
    assert.equal(body.errors[0].extensions.code, "BAD_REQUEST");
    assert.equal(
      body.errors[0].message,
      "The query string is not valid UTF-8 once percent-decoded",
    );
  }
  const connect = await handle(
    new Request(`${CONNECT}?connect=v1&encoding=json&message=%7B%22x%22%3A%22%FF%22%7D`),
  );
  assert.equal(connect.status, 400);
  assert.deepEqual(await connect.json(), {
    code: "invalid_argument",
    message: "The query string is not valid UTF-8 once percent-decoded",
  });
  assert.deepEqual(seen, [], "no subgraph was called");
  const valid = await get("%7B%22u%22%3A%22%C3%A9%22%7D");
  assert.equal(valid.status, 200);
  assert.equal(seen.length, 1);
});

Deno.test("header and path values a request is refused for are quoted up to 100 characters, never whole", async () => {
  const handle = await handler();
  const long = "x".repeat(20_000);
  const refusals = [
    await handle(graphqlPost({ query: "{ __typename }" }, { accept: `text/${long}` })),
    await handle(graphqlPost({ query: "{ __typename }" }, { "content-type": `text/${long}` })),
    await handle(graphqlPost({ query: "{ __typename }" }, { "content-encoding": long })),
    await handle(new Request(`${BASE}/${long}`)),
    await handle(connectPost("{}", { "connect-protocol-version": long })),
    await handle(connectPost("{}", { "content-type": `application/${long}` })),
    await handle(new Request(`${CONNECT}?connect=${long}`)),
    await handle(new Request(`${BASE}/service.v1.GraphService/${long}`, { method: "POST" })),
  ];
  for (const [i, response] of refusals.entries()) {
    const text = await response.text();
    assert.ok(response.status >= 400, `${i}: ${response.status}`);
    assert.ok(text.length < 1_000, `${i}: ${text.length} bytes: ${text.slice(0, 200)}`);
  }
});
