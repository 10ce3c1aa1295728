/**
 * Issue 17, one consent per call: `mcp.oauth.scope_challenge_all_levels`.
 * With it, a `tools/call` lacking method and tool scopes gets one 403 naming
 * both and one new token completes the call; without it (default), the
 * per-level challenges of spec §5 are unchanged (two round trips).
 */
import assert from "node:assert/strict";
import { initialize, type McpFixture, rpc, withMcpFixture } from "./_mcp_fixture.ts";

function challengedScopes(challenge: string | null): string[] {
  const match = /scope="([^"]*)"/.exec(challenge ?? "");
  assert.ok(match, `a scope challenge: ${challenge}`);
  return match[1]!.split(" ");
}

function call(f: McpFixture, session: string, token: string, name: string) {
  return rpc(f, {
    jsonrpc: "2.0",
    id: 9,
    method: "tools/call",
    params: { name, arguments: {} },
  }, { token, session, headers: { "mcp-protocol-version": "2025-11-25" } });
}

Deno.test("issue 17: scope_challenge_all_levels: one 403 names the method scopes and the tool's best group; one new token completes the call", async () => {
  await withMcpFixture({ challengeAllLevels: true }, async (f) => {
    const session = await initialize(f, await f.token("mcp:connect"));
    const denied = await call(
      f,
      session,
      await f.token("mcp:connect"),
      "execute_operation_get_secret",
    );
    assert.equal(denied.status, 403);
    assert.match(denied.challenge!, /error="insufficient_scope"/);
    const scopes = challengedScopes(denied.challenge);
    assert.deepEqual(scopes.slice(0, 1), ["mcp:call"]);
    assert.ok(
      ["A B C", "D"].includes(scopes.slice(1).join(" ")),
      `the tool's best group: ${scopes}`,
    );
    assert.match(
      (denied.json as { error: { message: string } }).error.message,
      /^Insufficient scope for method and tool levels: requires mcp:call /,
    );
    const before = f.subgraphQueries.length;
    const token = await f.token(["mcp:connect", ...scopes].join(" "));
    const done = await call(f, session, token, "execute_operation_get_secret");
    assert.equal(done.status, 200);
    assert.deepEqual(
      (done.json as { result: { structuredContent: unknown } }).result.structuredContent,
      { secret: "s3cret" },
    );
    assert.equal(f.subgraphQueries.length, before + 1);
  });
});

Deno.test("issue 17: scope_challenge_all_levels: a built-in tool's scopes join the method's; include_token_scopes applies on top", async () => {
  await withMcpFixture({ challengeAllLevels: true, includeTokenScopes: true }, async (f) => {
    const token = await f.token("mcp:connect extra");
    const session = await initialize(f, token);
    const denied = await call(f, session, token, "get_schema");
    assert.equal(denied.status, 403);
    assert.deepEqual(challengedScopes(denied.challenge), [
      "mcp:connect",
      "extra",
      "mcp:call",
      "mcp:schema",
    ]);
  });
});

Deno.test("issue 17: scope_challenge_all_levels leaves initialize and tools/list challenges as they were", async () => {
  await withMcpFixture({ challengeAllLevels: true }, async (f) => {
    const none = await rpc(f, { jsonrpc: "2.0", id: 1, method: "initialize", params: {} }, {
      token: await f.token("other"),
    });
    assert.equal(none.status, 403);
    assert.deepEqual(challengedScopes(none.challenge), ["mcp:connect"]);
    const token = await f.token("mcp:connect");
    const session = await initialize(f, token);
    const list = await rpc(f, { jsonrpc: "2.0", id: 2, method: "tools/list" }, { token, session });
    assert.equal(list.status, 403);
    assert.deepEqual(challengedScopes(list.challenge), ["mcp:list"]);
  });
});

Deno.test("issue 17: by default (scope_challenge_all_levels: false) the method gate answers first, then the tool gate: two challenges", async () => {
  await withMcpFixture({}, async (f) => {
    const session = await initialize(f, await f.token("mcp:connect"));
    const first = await call(
      f,
      session,
      await f.token("mcp:connect"),
      "execute_operation_get_secret",
    );
    assert.equal(first.status, 403);
    assert.deepEqual(challengedScopes(first.challenge), ["mcp:call"]);
    const second = await call(
      f,
      session,
      await f.token("mcp:connect mcp:call"),
      "execute_operation_get_secret",
    );
    assert.equal(second.status, 403);
    const group = challengedScopes(second.challenge);
    assert.ok(!group.includes("mcp:call"));
    const done = await call(
      f,
      session,
      await f.token(["mcp:connect", "mcp:call", ...group].join(" ")),
      "execute_operation_get_secret",
    );
    assert.equal(done.status, 200);
  });
});
