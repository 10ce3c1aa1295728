/**
 * Issue 34: identity defaults on real requests (a router, a JWKS server,
 * ES256 tokens). A token in the URL is refused unless
 * `authentication.jwt.allow_query_token` (GET only, never on MCP); MCP key
 * sources without `issuer` take `mcp.oauth.authorization_server_urls`;
 * `mcp.exclude_mutations` covers `execute_graphql`.
 */
import assert from "node:assert/strict";
import { initialize, ISSUER, type McpFixture, rpc, withMcpFixture } from "./_mcp_fixture.ts";

const ALL = "mcp:connect mcp:list mcp:call";

async function graphql(
  f: McpFixture,
  options: { method: "GET" | "POST"; query: string },
): Promise<Response> {
  const url = `${f.router.url}/graphql?${options.query}`;
  const response = options.method === "GET"
    ? await fetch(`${url}&query=${encodeURIComponent("{ hello }")}`, {
      headers: { accept: "application/json", "graphql-preflight": "1" },
    })
    : await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: "{ hello }" }),
    });
  await response.body?.cancel();
  return response;
}

Deno.test("issue 34: a token in the URL is refused by default (400 invalid_request), on GraphQL and MCP", async () => {
  await withMcpFixture({ authentication: true }, async (f) => {
    const token = await f.token(ALL);
    for (const method of ["GET", "POST"] as const) {
      const response = await graphql(f, { method, query: `access_token=${token}` });
      assert.equal(response.status, 400, method);
      const challenge = response.headers.get("www-authenticate") ?? "";
      assert.match(challenge, /error="invalid_request"/);
      assert.match(challenge, /not in the URL/);
    }
    const mcp = await fetch(`${f.mcpUrl}?access_token=${token}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    await mcp.body?.cancel();
    assert.equal(mcp.status, 400);
  });
});

Deno.test("issue 34: allow_query_token reads ?access_token= on GET only (never on MCP)", async () => {
  await withMcpFixture({ authentication: true, jwt: { allow_query_token: true } }, async (f) => {
    const token = await f.token(ALL);
    assert.equal((await graphql(f, { method: "GET", query: `access_token=${token}` })).status, 200);
    const expired = await f.token(ALL, { expired: true });
    const read = await graphql(f, { method: "GET", query: `access_token=${expired}` });
    assert.equal(read.status, 401, "the token in the URL was read and verified");
    assert.match(read.headers.get("www-authenticate") ?? "", /invalid_token/);
    const post = await graphql(f, { method: "POST", query: `access_token=${token}` });
    assert.equal(post.status, 400, "a POST carries its token in the header");
    const mcp = await fetch(`${f.mcpUrl}?access_token=${token}`, {
      headers: { accept: "text/event-stream" },
    });
    await mcp.body?.cancel();
    assert.equal(mcp.status, 400);
  });
});

Deno.test("issue 34: an MCP key source without issuer accepts only tokens of mcp.oauth.authorization_server_urls", async () => {
  await withMcpFixture({}, async (f) => {
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const foreign = await rpc(f, list, {
      token: await f.token(ALL, { claims: { iss: "https://evil.test" } }),
    });
    assert.equal(foreign.status, 401);
    assert.match(foreign.challenge ?? "", /invalid_token/);
    const own = await rpc(f, list, { token: await f.token(ALL) });
    assert.notEqual(own.status, 401);
    const slash = await rpc(f, list, {
      token: await f.token(ALL, { claims: { iss: `${ISSUER}/` } }),
    });
    assert.notEqual(slash.status, 401, "a trailing slash is the same server");
  });
});

Deno.test("issue 34: exclude_mutations refuses a mutation through execute_graphql; queries still run", async () => {
  await withMcpFixture({ mcp: { exclude_mutations: true } }, async (f) => {
    const token = await f.token(`${ALL} mcp:exec write:profile`);
    const session = await initialize(f, token);
    const call = (id: number, query: string) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "execute_graphql", arguments: { query } },
    });
    const before = f.subgraphQueries.length;
    const refused = await rpc(f, call(1, 'mutation { rename(id: "1", name: "x") { id } }'), {
      token,
      session,
    });
    const result = (refused.json as { result: { isError: boolean; content: { text: string }[] } })
      .result;
    assert.equal(result.isError, true);
    assert.match(result.content[0]!.text, /mcp\.exclude_mutations/);
    assert.equal(f.subgraphQueries.length, before, "nothing reached the subgraph");
    const query = await rpc(f, call(2, "{ hello }"), { token, session });
    assert.equal(
      (query.json as { result: { content: { text: string }[] } }).result.content[0]!.text,
      '{"data":{"hello":"Hello!"}}',
    );
  });
});
