/**
 * MCP Streamable HTTP details over the real router: revisions, sessions,
 * header forwarding and reload.
 */
import assert from "node:assert/strict";
import { initialize, rpc, withMcpFixture } from "./_mcp_fixture.ts";

const ALL = "mcp:connect mcp:list mcp:call";
const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

Deno.test("MCP 2026-07-28: server/discover lists the revisions and capabilities; results carry resultType", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const r = await rpc(f, {
      jsonrpc: "2.0",
      id: "d1",
      method: "server/discover",
      params: { _meta: MODERN_META },
    }, {
      token,
      headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" },
    });
    assert.equal(r.status, 200);
    assert.equal(r.session, null);
    const result = (r.json as { result: Record<string, unknown> }).result;
    assert.equal(result.resultType, "complete");
    assert.deepEqual(result.supportedVersions, [
      "2026-07-28",
      "2025-11-25",
      "2025-06-18",
      "2025-03-26",
    ]);
    assert.deepEqual(result.capabilities, { tools: { listChanged: true } });
    const list = await rpc(f, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/list",
      params: { _meta: MODERN_META },
    }, { token, headers: { "mcp-protocol-version": "2026-07-28" } });
    assert.equal(list.status, 200);
    assert.equal((list.json as { result: { resultType: string } }).result.resultType, "complete");
  });
});

Deno.test("MCP 2026-07-28: an unsupported modern revision is -32022 naming the supported ones; header mismatch is -32020", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const r = await rpc(f, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: {
        _meta: { ...MODERN_META, "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
      },
    }, { token });
    assert.equal(r.status, 400);
    assert.deepEqual((r.json as { error: unknown }).error, {
      code: -32022,
      message: "Unsupported protocol version: 2099-01-01",
      data: {
        supported: ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"],
        requested: "2099-01-01",
      },
    });
    const mismatch = await rpc(f, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/list",
      params: { _meta: MODERN_META },
    }, { token, headers: { "mcp-method": "tools/call" } });
    assert.equal(mismatch.status, 400);
    assert.equal((mismatch.json as { error: { code: number } }).error.code, -32020);
  });
});

Deno.test("MCP 2025-11-25: initialize negotiates the revision and issues a signed session; later requests need it", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const init = await rpc(f, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    }, { token });
    assert.equal(init.status, 200);
    assert.equal(
      (init.json as { result: { protocolVersion: string } }).result.protocolVersion,
      "2025-06-18",
    );
    assert.match(init.session ?? "", /^v1\.[0-9a-z]+\.[\w-]+\.[\w-]+$/);
    const unknown = await rpc(f, {
      jsonrpc: "2.0",
      id: 2,
      method: "initialize",
      params: {
        protocolVersion: "1999-01-01",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    }, { token });
    assert.equal(
      (unknown.json as { result: { protocolVersion: string } }).result.protocolVersion,
      "2025-11-25",
    );
    const missing = await rpc(f, { jsonrpc: "2.0", id: 3, method: "tools/list" }, { token });
    assert.equal(missing.status, 400);
    const forged = await rpc(f, { jsonrpc: "2.0", id: 4, method: "tools/list" }, {
      token,
      session: `${init.session!.slice(0, -2)}xx`,
    });
    assert.equal(forged.status, 404);
    const note = await rpc(f, { jsonrpc: "2.0", method: "notifications/initialized" }, {
      token,
      session: init.session,
    });
    assert.equal(note.status, 202);
  });
});

Deno.test("MCP Streamable HTTP: GET without Accept: text/event-stream is 406 (issue 17: GET opens the stream), bad JSON is -32700, unknown methods -32601", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const get = await fetch(f.mcpUrl, { headers: { authorization: `Bearer ${token}` } });
    await get.body?.cancel();
    assert.equal(get.status, 406);
    const put = await fetch(f.mcpUrl, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}` },
    });
    await put.body?.cancel();
    assert.equal(put.status, 405);
    assert.equal(put.headers.get("allow"), "POST, GET, DELETE");
    const bad = await rpc(f, "{", { token });
    assert.equal(bad.status, 400);
    assert.equal((bad.json as { error: { code: number } }).error.code, -32700);
    const session = await initialize(f, token);
    const unknown = await rpc(f, { jsonrpc: "2.0", id: 9, method: "resources/list" }, {
      token,
      session,
    });
    assert.equal(unknown.status, 200);
    assert.equal((unknown.json as { error: { code: number } }).error.code, -32601);
  });
});

Deno.test("issue 4: tools execute in-process and forward the caller's headers as a GraphQL request would", async () => {
  await withMcpFixture({
    headers: { all: { request: [{ op: "propagate", named: "x-tenant" }] } },
  }, async (f) => {
    const token = await f.token(ALL);
    const session = await initialize(f, token);
    const r = await rpc(f, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "execute_operation_get_hello", arguments: {} },
    }, { token, session, headers: { "x-tenant": "acme" } });
    assert.equal(r.status, 200);
    assert.equal(f.subgraphHeaders.length, 1);
    assert.equal(f.subgraphHeaders[0]!.get("x-tenant"), "acme");
    assert.equal(
      f.subgraphHeaders[0]!.get("authorization"),
      null,
      "nothing forwarded without a rule",
    );
  });
});

Deno.test("DESIGN §4: reload recomputes tools and per-tool scopes; signed sessions survive", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(`${ALL} D`);
    const session = await initialize(f, token);
    await Deno.writeTextFile(
      `${f.operationsDir}/GetBoth.graphql`,
      "query GetBoth { secret three }\n",
    );
    assert.equal(await f.router.reload(), true);
    const list = await rpc(f, { jsonrpc: "2.0", id: 1, method: "tools/list" }, {
      token: await f.token(`${ALL} mcp:list`),
      session,
    });
    assert.equal(list.status, 200);
    const names = (list.json as { result: { tools: { name: string }[] } }).result.tools.map((t) =>
      t.name
    );
    assert.ok(names.includes("execute_operation_get_both"));
    const denied = await rpc(f, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "execute_operation_get_both", arguments: {} },
    }, { token, session });
    assert.equal(denied.status, 403);
    // (A B C | D) × (x:read | y:read z:read | admin) with token D → best group "D x:read".
    assert.match(denied.challenge ?? "", /scope="D x:read"/);
  });
});

Deno.test("DESIGN §3: JSON responses to POSTs; SSE only when the client accepts nothing else", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const session = await initialize(f, token);
    const response = await fetch(f.mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "text/event-stream",
        authorization: `Bearer ${token}`,
        "mcp-session-id": session,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" }),
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    assert.equal(
      await response.text(),
      'event: message\ndata: {"jsonrpc":"2.0","id":7,"result":{}}\n\n',
    );
    const json = await rpc(f, { jsonrpc: "2.0", id: 8, method: "ping" }, { token, session });
    assert.deepEqual(json.json, { jsonrpc: "2.0", id: 8, result: {} });
  });
});

Deno.test("issue 4: a body over max_request_body_bytes is refused with 413 before parsing", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const limit = f.router.state().config.max_request_body_bytes;
    const r = await rpc(
      f,
      `{"jsonrpc":"2.0","id":1,"method":"ping","pad":"${"x".repeat(limit)}"}`,
      {
        token,
      },
    );
    assert.equal(r.status, 413);
  });
});
