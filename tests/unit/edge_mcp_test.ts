import assert from "node:assert/strict";
import { SignJWT } from "jose";
import { edgeState, handlerOf, mcpExecute, mcpPost, mcpToolText } from "./_edge_fixture.ts";

function listen(id: string, headers: Record<string, string> = {}): Request {
  return mcpPost(
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true } },
    }),
    headers,
  );
}

Deno.test("an MCP request id longer than 1024 characters is a 400 before any stream keeps it", async () => {
  const state = await edgeState();
  const handle = handlerOf(state);
  // A listen stream kept its 4 MB id three times over (id, farewell, acknowledgement): 1000 streams, 12 GB.
  const refused = await handle(listen("x".repeat(4_000_000)));
  assert.equal(refused.status, 400);
  const body = await refused.json();
  assert.equal(body.error.code, -32600);
  assert.equal(body.id, null);
  assert.match(body.error.message, /id is longer than 1024 characters/);
  assert.equal(state.mcp!.streams.openStreams, 0, "no stream was opened");
  const fine = await handle(listen("x".repeat(1024)));
  assert.equal(fine.status, 200);
  assert.equal(state.mcp!.streams.openStreams, 1);
  await fine.body!.cancel();
});

Deno.test("an MCP request id that JSON cannot write back (1e400) is a 400, not an answer with id null", async () => {
  const handle = handlerOf(await edgeState());
  const ping = (id: string) => mcpPost(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`);
  for (const id of ["1e400", "-1e400"]) {
    const refused = await handle(ping(id));
    assert.equal(refused.status, 400, id);
    const body = await refused.json();
    assert.equal(body.error.code, -32600);
    assert.equal(body.id, null);
  }
  const fine = await handle(ping("1.5e3"));
  assert.equal(fine.status, 200);
  assert.equal((await fine.json()).id, 1500);
});

Deno.test("an MCP error quotes a client's tool name or protocol version up to 100 characters, never whole", async () => {
  const handle = handlerOf(await edgeState());
  const long = "x".repeat(100_000);
  const call = await handle(mcpPost(JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: long, arguments: {} },
  })));
  const text = await call.text();
  assert.match(text, /Unknown tool: x{100}…/);
  assert.ok(text.length < 1000, `${text.length} characters answered`);
  const version = "9".repeat(100_000);
  const ping = await handle(mcpPost(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "ping",
      params: { _meta: { "io.modelcontextprotocol/protocolVersion": version } },
    }),
    { "mcp-protocol-version": version },
  ));
  const answered = await ping.text();
  assert.equal(ping.status, 400);
  assert.match(answered, /Unsupported protocol version: 9{100}…/);
  assert.ok(answered.length < 1000, `${answered.length} characters answered`);
});

Deno.test("JSON-RPC: a message that is neither a request, a notification nor a response is a 400 -32600, not a silent 202", async () => {
  const handle = handlerOf(await edgeState());
  // A client waiting for the answer to these would wait forever behind a 202.
  for (
    const body of [
      '{"jsonrpc":"2.0","id":1}',
      '{"jsonrpc":"2.0","id":1,"method":5}',
      '{"jsonrpc":"2.0","id":1,"method":null}',
      '{"jsonrpc":"2.0","method":["ping"]}',
      '{"jsonrpc":"2.0","result":{}}',
      '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}',
    ]
  ) {
    const refused = await handle(mcpPost(body));
    assert.equal(refused.status, 400, body);
    const answer = await refused.json();
    assert.equal(answer.error.code, -32600, body);
    assert.match(answer.error.message, /^Invalid request: /, body);
  }
  // Responses and notifications from the client are still accepted.
  for (
    const body of [
      '{"jsonrpc":"2.0","id":1,"result":{}}',
      '{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"no"}}',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    ]
  ) {
    const accepted = await handle(mcpPost(body));
    assert.equal(accepted.status, 202, body);
  }
});

Deno.test("MCP: a request id must be a string or an integer JSON can write back exactly (1.5, 2^53 + 1 are 400)", async () => {
  const handle = handlerOf(await edgeState());
  const ping = (id: string) => mcpPost(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`);
  // 123456789012345678901234567890 was answered as 1.2345678901234568e+29: the client never matched it.
  for (const id of ["1.5", "-0.25", "9007199254740993", "123456789012345678901234567890"]) {
    const refused = await handle(ping(id));
    assert.equal(refused.status, 400, id);
    const body = await refused.json();
    assert.equal(body.id, null);
    assert.equal(body.error.code, -32600);
    assert.match(body.error.message, /id must be a string or an integer/);
  }
  for (const [id, echoed] of [["9007199254740991", 9007199254740991], ["-7", -7], ['"7"', "7"]]) {
    const fine = await handle(ping(String(id)));
    assert.equal(fine.status, 200, String(id));
    assert.equal((await fine.json()).id, echoed);
  }
});

Deno.test("MCP POST: the media type must be application/json itself, not one that starts with it", async () => {
  const handle = handlerOf(await edgeState());
  const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
  for (
    const type of ["application/json-seq", "application/json-patch+json", "application/json.x"]
  ) {
    const refused = await handle(mcpPost(ping, { "content-type": type }));
    assert.equal(refused.status, 415, type);
    assert.equal((await refused.json()).error.code, -32600);
  }
  for (
    const type of [
      "application/json",
      "Application/JSON; charset=utf-8",
      "application/json;charset=UTF-8",
    ]
  ) {
    const fine = await handle(mcpPost(ping, { "content-type": type }));
    assert.equal(fine.status, 200, type);
    await fine.body?.cancel();
  }
});

Deno.test("MCP without mcp.oauth authenticates as /graphql does: require_authentication needs a token, a sent token must verify, a valid one is the identity", async () => {
  const secret = new TextEncoder().encode("0123456789abcdef0123456789abcdef");
  const handle = handlerOf(
    await edgeState({
      authentication: {
        jwt: {
          jwks: [{ secret: "0123456789abcdef0123456789abcdef", symmetric_algorithm: "HS256" }],
        },
      },
      authorization: { require_authentication: true },
      mcp: { enabled: true, enable_arbitrary_operations: true },
    }, { answer: () => ({ data: { __typename: "Query" } }) }),
  );
  // Before: both ran the query anonymously, bypassing require_authentication.
  const anonymous = await handle(mcpExecute("{ __typename }"));
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.headers.get("www-authenticate"), "Bearer");
  const body = await anonymous.json();
  assert.equal(body.error.code, -32001);
  assert.match(body.error.message, /needs authentication/);
  const forged = await handle(mcpExecute("{ __typename }", { authorization: "Bearer x.y.z" }));
  assert.equal(forged.status, 401);
  assert.match(forged.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
  await forged.body?.cancel();
  const jwt = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("u1")
    .setExpirationTime("5m").sign(secret);
  const valid = await handle(mcpExecute("{ __typename }", { authorization: `Bearer ${jwt}` }));
  assert.equal(valid.status, 200);
  assert.equal(await mcpToolText(valid), '{"data":{"__typename":"Query"}}');
});

Deno.test("MCP without mcp.oauth never reads authentication.jwt.cookie_name: a token in the cookie is no identity (401), in the header it is", async () => {
  const secret = new TextEncoder().encode("0123456789abcdef0123456789abcdef");
  const handle = handlerOf(
    await edgeState({
      authentication: {
        jwt: {
          jwks: [{ secret: "0123456789abcdef0123456789abcdef", symmetric_algorithm: "HS256" }],
          cookie_name: "gw_token",
        },
      },
      authorization: { require_authentication: true },
      mcp: { enabled: true, enable_arbitrary_operations: true },
    }, { answer: () => ({ data: { __typename: "Query" } }) }),
  );
  const jwt = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("u1")
    .setExpirationTime("5m").sign(secret);
  // A JSON POST: a browser would preflight it, so /graphql would read this cookie.
  const cookie = await handle(mcpExecute("{ __typename }", { cookie: `gw_token=${jwt}` }));
  assert.equal(cookie.status, 401);
  assert.equal((await cookie.json()).error.code, -32001);
  const header = await handle(mcpExecute("{ __typename }", { authorization: `Bearer ${jwt}` }));
  assert.equal(header.status, 200);
  await header.body?.cancel();
});

Deno.test("subscriptions/listen refuses a client that does not accept an event stream (406) and opens none", async () => {
  const state = await edgeState();
  const handle = handlerOf(state);
  const refused = await handle(listen("1", { accept: "application/json" }));
  assert.equal(refused.status, 406);
  const body = await refused.json();
  assert.equal(body.id, "1");
  assert.equal(body.error.code, -32600);
  assert.match(body.error.message, /Accept must include text\/event-stream/);
  assert.equal(state.mcp!.streams.openStreams, 0);
  for (const accept of ["text/event-stream", "*/*"]) {
    const fine = await handle(listen("2", { accept }));
    assert.equal(fine.status, 200, accept);
    assert.equal(fine.headers.get("content-type"), "text/event-stream");
    await fine.body!.cancel();
  }
});

Deno.test("an MCP message naming a member twice is a 400: JSON.parse would keep the last, a proxy may read the first", async () => {
  const handle = handlerOf(await edgeState());
  const refused = await handle(
    mcpPost('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":1,"a":2}}'),
  );
  assert.equal(refused.status, 400);
  const body = await refused.json();
  assert.equal(body.error.code, -32600);
  assert.match(body.error.message, /duplicate key "a" \(at \$\.params\)/);
  const twice = await handle(mcpPost('{"jsonrpc":"2.0","id":1,"method":"ping","method":"x"}'));
  assert.equal(twice.status, 400);
  await twice.body?.cancel();
  const fine = await handle(mcpPost('{"jsonrpc":"2.0","id":1,"method":"ping"}'));
  assert.equal(fine.status, 200);
  await fine.body?.cancel();
});

Deno.test("MCP: a nesting bomb in a message is refused on its text (400 -32600), before JSON.parse; arguments just past the limit still get the tool's error", async () => {
  const handle = handlerOf(await edgeState());
  const call = (depth: number) =>
    mcpPost(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_graphql","arguments":{"query":"{ __typename }","variables":{"v":${
        "[".repeat(depth)
      }${"]".repeat(depth)}}}}}`,
    );
  for (const depth of [200_000, 2_400_000]) {
    const refused = await handle(call(depth));
    assert.equal(refused.status, 400, String(depth));
    const body = await refused.json();
    assert.equal(body.error.code, -32600);
    assert.match(body.error.message, /nesting depth of the message/);
  }
  // 250 and 5 000 levels: past the 200 of approximate_depth_limit, within the message's bound.
  for (const depth of [250, 5_000]) {
    const text = await mcpToolText(await handle(call(depth)));
    assert.match(text, /nesting depth of variable values exceeds the limit of 200/);
  }
});
