/**
 * Issue 18: claim rules on real requests (a router, a JWKS server, ES256
 * tokens): issuer, MCP's default audience, clock skew both sides, future
 * `iat`, `typ` (RFC 8725 §3.11, RFC 9068) and a token sent twice (RFC 6750 §2).
 */
import assert from "node:assert/strict";
import { ISSUER, type McpFixture, rpc, withMcpFixture } from "./_mcp_fixture.ts";

const ALL = "mcp:init mcp:list mcp:call";

async function hello(fixture: McpFixture, token: string, query = ""): Promise<Response> {
  const response = await fetch(`${fixture.router.url}/graphql${query}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query: "{ hello }" }),
  });
  await response.body?.cancel();
  return response;
}

const now = () => Math.floor(Date.now() / 1000);

Deno.test("issue 18: jwks[].issuer is checked when set (a list or one string)", async () => {
  await withMcpFixture(
    { authentication: true, source: { issuer: [ISSUER, "https://other.test"] } },
    async (f) => {
      assert.equal((await hello(f, await f.token(""))).status, 200);
      const foreign = await hello(f, await f.token("", { claims: { iss: "https://evil.test" } }));
      assert.equal(foreign.status, 401);
      assert.match(foreign.headers.get("www-authenticate") ?? "", /iss claim is invalid/);
    },
  );
  await withMcpFixture({ authentication: true, source: { issuer: ISSUER } }, async (f) => {
    assert.equal((await hello(f, await f.token(""))).status, 200);
    assert.equal((await hello(f, await f.token("", { claims: { iss: "x" } }))).status, 401);
  });
});

Deno.test("issue 18: MCP's audience defaults to its own resource URL: no aud or another API's aud is 401", async () => {
  await withMcpFixture({}, async (f) => {
    const init = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const missing = await rpc(f, init, { token: await f.token(ALL, { audience: null }) });
    assert.equal(missing.status, 401);
    assert.match(missing.challenge ?? "", /invalid_token/);
    const other = await rpc(f, init, {
      token: await f.token(ALL, { audience: "https://other-api.test" }),
    });
    assert.equal(other.status, 401);
    const own = await rpc(f, init, { token: await f.token(ALL) });
    assert.notEqual(own.status, 401);
  });
});

Deno.test("issue 18: clock_skew (60 s default) is allowed on exp and nbf, and no more", async () => {
  await withMcpFixture({ authentication: true }, async (f) => {
    const at = now();
    const token = (claims: Record<string, unknown>) => f.token("", { claims });
    assert.equal((await hello(f, await token({ exp: at - 30 }))).status, 200);
    assert.equal((await hello(f, await token({ exp: at - 120 }))).status, 401);
    assert.equal((await hello(f, await token({ nbf: at + 30 }))).status, 200);
    assert.equal((await hello(f, await token({ nbf: at + 120 }))).status, 401);
  });
  await withMcpFixture({ authentication: true, jwt: { clock_skew: "0s" } }, async (f) => {
    assert.equal((await hello(f, await f.token("", { claims: { exp: now() - 5 } }))).status, 401);
  });
});

Deno.test("issue 18: an iat in the future beyond the clock skew is refused", async () => {
  await withMcpFixture({ authentication: true }, async (f) => {
    assert.equal((await hello(f, await f.token("", { claims: { iat: now() + 30 } }))).status, 200);
    const future = await hello(f, await f.token("", { claims: { iat: now() + 600 } }));
    assert.equal(future.status, 401);
    assert.match(future.headers.get("www-authenticate") ?? "", /in the future/);
  });
});

Deno.test("issue 18: a typ naming another kind of JWT is always refused; at+jwt and JWT pass (RFC 8725 §3.11)", async () => {
  await withMcpFixture({ authentication: true }, async (f) => {
    for (const typ of ["id_token+jwt", "logout+jwt", "secevent+jwt", "application/dpop+jwt"]) {
      const response = await hello(f, await f.token("", { header: { typ } }));
      assert.equal(response.status, 401, typ);
      assert.match(response.headers.get("www-authenticate") ?? "", /not an access token/);
    }
    assert.equal((await hello(f, await f.token("", { header: { typ: "at+jwt" } }))).status, 200);
    assert.equal((await hello(f, await f.token("", { header: { typ: "JWT" } }))).status, 200);
  });
});

Deno.test("issue 18: jwks[].required_typ: at+jwt refuses a plain JWT and accepts application/at+jwt", async () => {
  await withMcpFixture({ authentication: true, source: { required_typ: "at+jwt" } }, async (f) => {
    assert.equal((await hello(f, await f.token("", { header: { typ: "JWT" } }))).status, 401);
    assert.equal((await hello(f, await f.token(""))).status, 401);
    const typed = await f.token("", { header: { typ: "application/at+jwt" } });
    assert.equal((await hello(f, typed)).status, 200);
  });
});

Deno.test("issue 18: a token in both the header and ?access_token= is 400 invalid_request (RFC 6750 §2), on GraphQL and MCP", async () => {
  await withMcpFixture({ authentication: true }, async (f) => {
    const token = await f.token(ALL);
    const response = await hello(f, token, `?access_token=${token}`);
    assert.equal(response.status, 400);
    assert.match(response.headers.get("www-authenticate") ?? "", /error="invalid_request"/);
    const mcp = await fetch(`${f.mcpUrl}?access_token=${token}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    await mcp.body?.cancel();
    assert.equal(mcp.status, 400);
    assert.match(mcp.headers.get("www-authenticate") ?? "", /error="invalid_request"/);
  });
});
