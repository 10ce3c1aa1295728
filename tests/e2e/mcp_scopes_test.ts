/**
 * Spec §5.2, §5.3, §7.1–7.3 over HTTP against the real router: every rule
 * asserts the status and the exact `WWW-Authenticate` value.
 */
import assert from "node:assert/strict";
import { initialize, type McpFixture, rpc, withMcpFixture } from "./_mcp_fixture.ts";

const ALL = "mcp:connect mcp:list mcp:call";

function call(id: number, name: string, args: Record<string, unknown> = {}) {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}

function insufficient(f: McpFixture, scope: string, level: string, requires = scope): string {
  return `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${f.metadataUrl}", ` +
    `error_description="Insufficient scope for ${level} level: requires ${requires}"`;
}

/**
 * With a token of {@linkcode ALL}, calling `tool` gets 403 naming `missing` at
 * `level`; on the same session, a token that adds `missing` gets 200.
 */
async function refusedThenGranted(
  f: McpFixture,
  c: { tool: string; args: Record<string, unknown>; missing: string; level: string },
): Promise<void> {
  const token = await f.token(ALL);
  const session = await initialize(f, token);
  const r = await rpc(f, call(1, c.tool, c.args), { token, session });
  assert.equal(r.status, 403);
  assert.equal(r.challenge, insufficient(f, c.missing, c.level));
  const ok = await rpc(f, call(2, c.tool, c.args), {
    token: await f.token(`${ALL} ${c.missing}`),
    session,
  });
  assert.equal(ok.status, 200);
}

Deno.test("spec §7.1: a request without a token gets 401 with the initialize scopes and resource_metadata", async () => {
  await withMcpFixture({}, async (f) => {
    const r = await rpc(f, { jsonrpc: "2.0", id: 1, method: "ping" });
    assert.equal(r.status, 401);
    assert.equal(r.challenge, `Bearer scope="mcp:connect", resource_metadata="${f.metadataUrl}"`);
  });
});

Deno.test('RFC 6750 §3.1: an expired token gets 401 with error="invalid_token"', async () => {
  await withMcpFixture({}, async (f) => {
    const r = await rpc(f, { jsonrpc: "2.0", id: 1, method: "ping" }, {
      token: await f.token(ALL, { expired: true }),
    });
    assert.equal(r.status, 401);
    assert.equal(
      r.challenge,
      `Bearer error="invalid_token", scope="mcp:connect", resource_metadata="${f.metadataUrl}", ` +
        `error_description="The access token expired"`,
    );
  });
});

Deno.test("spec §5.1 / §7.1 initialize level: a token lacking the initialize scopes gets 403 before the body is parsed", async () => {
  await withMcpFixture({}, async (f) => {
    const r = await rpc(f, "this is not JSON", { token: await f.token("mcp:list") });
    assert.equal(r.status, 403);
    assert.equal(r.challenge, insufficient(f, "mcp:connect", "initialize"));
  });
});

Deno.test("DESIGN §4: a scope claim that is not a string means no scopes (403, not 401)", async () => {
  await withMcpFixture({}, async (f) => {
    const r = await rpc(f, { jsonrpc: "2.0", id: 1, method: "ping" }, {
      token: await f.token(["mcp:connect"]),
    });
    assert.equal(r.status, 403);
    assert.equal(r.challenge, insufficient(f, "mcp:connect", "initialize"));
  });
});

Deno.test("spec §5.3 rule 1: with initialize and method scopes configured the token needs all of them", async () => {
  await withMcpFixture({}, async (f) => {
    const weak = await f.token("mcp:connect");
    const session = await initialize(f, weak);
    const denied = await rpc(f, { jsonrpc: "2.0", id: 1, method: "tools/list" }, {
      token: weak,
      session,
    });
    assert.equal(denied.status, 403);
    assert.equal(denied.challenge, insufficient(f, "mcp:list", "method"));
    const ok = await rpc(f, { jsonrpc: "2.0", id: 2, method: "tools/list" }, {
      token: await f.token("mcp:connect mcp:list"),
      session,
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.challenge, null);
  });
});

Deno.test("spec §7.1 method level: tools/call without the tools_call scopes gets 403 naming them", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token("mcp:connect mcp:list D");
    const session = await initialize(f, token);
    const r = await rpc(f, call(1, "execute_operation_get_secret"), { token, session });
    assert.equal(r.status, 403);
    assert.equal(r.challenge, insufficient(f, "mcp:call", "method"));
  });
});

Deno.test("spec §5.3 rule 2 / §7.1 built-in level: built-in scopes are additive to tools_call", async () => {
  await withMcpFixture({}, (f) =>
    refusedThenGranted(f, {
      tool: "get_operation_info",
      args: { operationName: "GetHello" },
      missing: "mcp:info",
      level: "built-in",
    }));
});

Deno.test("spec §5.3 rule 2: with tools_call empty only the built-in tool scope is checked", async () => {
  await withMcpFixture({ scopes: { tools_call: [] } }, async (f) => {
    const token = await f.token("mcp:connect mcp:info");
    const session = await initialize(f, token);
    const r = await rpc(f, call(1, "get_operation_info", { operationName: "GetHello" }), {
      token,
      session,
    });
    assert.equal(r.status, 200);
    const text = (r.json as { result: { content: { text: string }[] } }).result.content[0]!.text;
    assert.ok(text.startsWith("Operation: GetHello\nType: query\n"));
    const denied = await rpc(f, call(2, "get_schema"), { token, session });
    assert.equal(denied.status, 403);
    assert.equal(denied.challenge, insufficient(f, "mcp:schema", "built-in"));
  });
});

Deno.test('spec §7.2 example / §5.3 rule 7: (A AND B AND C) OR (D) with a token holding A and B gives scope="A B C"', async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(`${ALL} A B`);
    const session = await initialize(f, token);
    const before = f.subgraphQueries.length;
    const r = await rpc(f, call(1, "execute_operation_get_secret"), { token, session });
    assert.equal(r.status, 403);
    assert.equal(r.challenge, insufficient(f, "A B C", "tool"));
    assert.equal(f.subgraphQueries.length, before);
  });
});

Deno.test("spec §7.2 best group: the group with the fewest missing scopes wins (token A → D)", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(`${ALL} A`);
    const session = await initialize(f, token);
    const r = await rpc(f, call(1, "execute_operation_get_secret"), { token, session });
    assert.equal(r.status, 403);
    assert.equal(r.challenge, insufficient(f, "D", "tool"));
  });
});

Deno.test("spec §7.2 best group: ties go to the first group, which is sent whole", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(`${ALL} z:read`);
    const session = await initialize(f, token);
    const r = await rpc(f, call(1, "execute_operation_get_three"), { token, session });
    assert.equal(r.status, 403);
    assert.equal(r.challenge, insufficient(f, "x:read", "tool"));
    const t2 = await f.token(`${ALL} x:write y:read`);
    const r2 = await rpc(f, call(2, "execute_operation_get_three"), { token: t2, session });
    assert.equal(r2.challenge, insufficient(f, "x:read", "tool"));
  });
});

Deno.test("spec §5.3 rule 3: per-tool scopes come from @requiresScopes of fields reached through fragments", async () => {
  await withMcpFixture({}, (f) =>
    refusedThenGranted(f, {
      tool: "execute_operation_get_profile",
      args: { id: "1" },
      missing: "read:email",
      level: "tool",
    }));
});

Deno.test("spec §5.3 rule 4: execute_graphql is not checked at the per-tool level", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(`${ALL} mcp:exec`);
    const session = await initialize(f, token);
    const r = await rpc(f, call(1, "execute_graphql", { query: "{ hello }" }), { token, session });
    assert.equal(r.status, 200);
    assert.equal(r.challenge, null);
    assert.equal(
      (r.json as { result: { content: { text: string }[] } }).result.content[0]!.text,
      '{"data":{"hello":"Hello!"}}',
    );
  });
});

Deno.test("spec §5.3 rule 5 / §7.1 runtime level: an inline query's shortfall is a 403 with the best group, before execution", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(`${ALL} mcp:exec A B`);
    const session = await initialize(f, token);
    const before = f.subgraphQueries.length;
    const r = await rpc(f, call(1, "execute_graphql", { query: "query Q { hello secret }" }), {
      token,
      session,
    });
    assert.equal(r.status, 403);
    assert.equal(r.challenge, insufficient(f, "A B C", "runtime"));
    // Again (the requirement is now cached per prepared query), and for a query
    // that parses but fails validation: still refused by the runtime gate.
    for (const query of ["query Q { hello secret }", "{ secret nosuchfield }"]) {
      const again = await rpc(f, call(2, "execute_graphql", { query }), { token, session });
      assert.equal(again.status, 403, query);
      assert.equal(again.challenge, insufficient(f, "A B C", "runtime"), query);
    }
    assert.equal(f.subgraphQueries.length, before, "a runtime shortfall never reaches a subgraph");
  });
});

Deno.test("spec §5.3 rule 6: an inline query that does not parse passes the gate and the engine reports it", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(`${ALL} mcp:exec`);
    const session = await initialize(f, token);
    const r = await rpc(f, call(1, "execute_graphql", { query: "{ secret " }), { token, session });
    assert.equal(r.status, 200);
    const result = (r.json as { result: { isError: boolean; content: { text: string }[] } }).result;
    assert.equal(result.isError, true);
    assert.match(result.content[0]!.text, /^GraphQL errors:\n- /);
  });
});

Deno.test("spec §7.3: scope_challenge_include_token_scopes sends token scopes first, then the required ones", async () => {
  await withMcpFixture({ includeTokenScopes: true }, async (f) => {
    const token = await f.token(`${ALL} A B`);
    const session = await initialize(f, token);
    const r = await rpc(f, call(1, "execute_operation_get_secret"), { token, session });
    assert.equal(r.status, 403);
    assert.equal(
      r.challenge,
      insufficient(f, "mcp:connect mcp:list mcp:call A B C", "tool", "A B C"),
    );
  });
});

Deno.test("spec §7.3: with the default (false) only the required scopes are sent", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(`${ALL} A B`);
    const session = await initialize(f, token);
    const r = await rpc(f, call(1, "execute_operation_get_secret"), { token, session });
    assert.equal(r.challenge, insufficient(f, "A B C", "tool"));
  });
});

Deno.test("RFC 6749 §3.3: a token scope with a quote never reaches the challenge", async () => {
  await withMcpFixture({ includeTokenScopes: true }, async (f) => {
    const token = await f.token(`${ALL} A a"b, x="y B`);
    const session = await initialize(f, token);
    const r = await rpc(f, call(1, "execute_operation_get_secret"), { token, session });
    assert.equal(r.status, 403);
    assert.equal(
      r.challenge,
      insufficient(f, "mcp:connect mcp:list mcp:call A B C", "tool", "A B C"),
    );
  });
});

Deno.test("spec §5.4: step-up on the same session: 403, new token, same Mcp-Session-Id, success, no re-initialize", async () => {
  await withMcpFixture({}, async (f) => {
    const first = await f.token(`${ALL} A B`);
    const session = await initialize(f, first);
    const denied = await rpc(f, call(1, "execute_operation_get_secret"), { token: first, session });
    assert.equal(denied.status, 403);
    assert.equal(denied.challenge, insufficient(f, "A B C", "tool"));
    assert.equal(f.subgraphQueries.length, 0, "the denied call never reached the subgraph");
    const ok = await rpc(f, call(2, "execute_operation_get_secret"), {
      token: await f.token(`${ALL} D`),
      session,
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.challenge, null);
    assert.deepEqual(ok.json, {
      jsonrpc: "2.0",
      id: 2,
      result: { content: [{ type: "text", text: '{"data":{"secret":"s3cret"}}' }], isError: false },
    });
    assert.equal(f.subgraphQueries.length, 1);
  });
});

Deno.test("DESIGN §4: a session used with another subject's token is not found (404); DELETE ends it", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const session = await initialize(f, token);
    const other = await rpc(f, { jsonrpc: "2.0", id: 1, method: "ping" }, {
      token: await f.token(ALL, { sub: "user-2" }),
      session,
    });
    assert.equal(other.status, 404);
    const ping = await rpc(f, { jsonrpc: "2.0", id: 2, method: "ping" }, { token, session });
    assert.equal(ping.status, 200);
    const del = await fetch(f.mcpUrl, {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}`, "mcp-session-id": session },
    });
    await del.body?.cancel();
    assert.equal(del.status, 204);
    const after = await rpc(f, { jsonrpc: "2.0", id: 3, method: "ping" }, { token, session });
    assert.equal(after.status, 404);
  });
});

Deno.test("DESIGN §4: protected-resource metadata lists sorted scopes_supported and resource <base_url>/mcp", async () => {
  await withMcpFixture({}, async (f) => {
    for (
      const path of [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
      ]
    ) {
      const response = await fetch(`${f.router.url}${path}`);
      assert.equal(response.status, 200);
      const doc = await response.json();
      assert.equal(doc.resource, `${f.router.state().config.mcp.server.base_url}/mcp`);
      assert.deepEqual(doc.authorization_servers, ["https://idp.test"]);
      assert.deepEqual(doc.bearer_methods_supported, ["header"]);
      assert.deepEqual(doc.scopes_supported, [
        "A",
        "B",
        "C",
        "D",
        "admin",
        "mcp:call",
        "mcp:connect",
        "mcp:exec",
        "mcp:info",
        "mcp:list",
        "mcp:schema",
        "read:email",
        "write:profile",
        "x:read",
        "y:read",
        "z:read",
      ]);
    }
  });
});

Deno.test("MCP transport security: a request from a foreign Origin is refused (DNS rebinding)", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const evil = await rpc(f, { jsonrpc: "2.0", id: 1, method: "ping" }, {
      token,
      headers: { origin: "http://evil.example" },
    });
    assert.equal(evil.status, 403);
    const own = new URL(f.router.state().config.mcp.server.base_url).origin;
    const session = await initialize(f, token);
    const ok = await rpc(f, { jsonrpc: "2.0", id: 2, method: "ping" }, {
      token,
      session,
      headers: { origin: own },
    });
    assert.equal(ok.status, 200);
  });
});

Deno.test("DESIGN §4: over max_scope_combinations a tool is refused at load and an inline query fails closed", async () => {
  await withMcpFixture({ maxScopeCombinations: 2 }, async (f) => {
    const token = await f.token(`${ALL} mcp:exec D x:read admin`);
    const session = await initialize(f, token);
    const list = await rpc(f, { jsonrpc: "2.0", id: 1, method: "tools/list" }, {
      token: await f.token(`${ALL} mcp:list`),
      session,
    });
    const names = (list.json as { result: { tools: { name: string }[] } }).result.tools.map((t) =>
      t.name
    );
    assert.equal(names.includes("execute_operation_get_three"), false, "3 groups > 2");
    assert.equal(names.includes("execute_operation_get_secret"), true);
    const r = await rpc(f, call(2, "execute_graphql", { query: "{ secret three }" }), {
      token,
      session,
    });
    assert.equal(r.status, 403);
    assert.equal(
      r.challenge,
      `Bearer error="insufficient_scope", resource_metadata="${f.metadataUrl}", ` +
        `error_description="The query cannot be authorized (fails closed): The scope requirement exceeds 2 combinations"`,
    );
    assert.equal(f.subgraphQueries.length, 0);
  });
});

Deno.test("issue 4: a fragment bomb in an inline query fails closed fast", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(`${ALL} mcp:exec`);
    const session = await initialize(f, token);
    const query = `{ ${"... on Query { ".repeat(80)} hello ${"} ".repeat(80)}}`;
    const started = performance.now();
    const r = await rpc(f, call(1, "execute_graphql", { query }), { token, session });
    assert.equal(r.status, 403);
    assert.match(r.challenge ?? "", /fails closed\): Selection depth exceeds 64/);
    assert.ok(performance.now() - started < 1000);
    assert.equal(f.subgraphQueries.length, 0);
  });
});
