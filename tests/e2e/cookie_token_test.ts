/**
 * Issue 34: `authentication.jwt.cookie_name` on real requests (a router, a JWKS
 * server, ES256 tokens). A signed token in the cookie authenticates; the header
 * wins over it; a bad cookie is a 401 `invalid_token`; a token in the URL is
 * still refused; a cookie is never read from a request a cross-site page can
 * forge (a GET or a CORS-simple POST without a preflight header), even with
 * `csrf_prevention` off; MCP never reads it.
 */
import assert from "node:assert/strict";
import { type McpFixture, rpc, withMcpFixture } from "./_mcp_fixture.ts";

const ALL = "mcp:connect mcp:list mcp:call";
const COOKIE = "gw_token";
const OPTIONS = {
  authentication: true,
  jwt: { cookie_name: COOKIE },
  authorization: { require_authentication: true },
} as const;

/** A JSON POST to /graphql (needs a preflight in a browser) with the given headers. */
async function post(
  f: McpFixture,
  headers: Record<string, string>,
  options: { readonly path?: string; readonly contentType?: string } = {},
): Promise<{ status: number; challenge: string | null; body: string }> {
  const response = await fetch(`${f.router.url}/graphql${options.path ?? ""}`, {
    method: "POST",
    headers: {
      "content-type": options.contentType ?? "application/json",
      accept: "application/json",
      ...headers,
    },
    body: JSON.stringify({ query: "{ hello }" }),
  });
  return {
    status: response.status,
    challenge: response.headers.get("www-authenticate"),
    body: await response.text(),
  };
}

Deno.test("issue 34: a signed token in the cookie_name cookie authenticates; the header wins", async () => {
  await withMcpFixture(OPTIONS, async (f) => {
    const token = await f.token(ALL);
    const anonymous = await post(f, {});
    assert.equal(anonymous.status, 401, "require_authentication holds without the cookie");
    const ok = await post(f, { cookie: `theme=dark; ${COOKIE}=${token}; lang=en` });
    assert.equal(ok.status, 200, ok.body);
    assert.equal(JSON.parse(ok.body).data.hello, "Hello!");
    const quoted = await post(f, { cookie: `${COOKIE}="${token}"` });
    assert.equal(quoted.status, 200, "a quoted cookie value (RFC 6265)");
    const headerWins = await post(f, {
      authorization: `Bearer ${token}`,
      cookie: `${COOKIE}=not-a-token`,
    });
    assert.equal(headerWins.status, 200, "the header's token is used, the cookie ignored");
    const otherName = await post(f, { cookie: `other=${token}` });
    assert.equal(otherName.status, 401, "only the configured cookie is read");
  });
});

Deno.test("issue 34: a bad token cookie is 401 invalid_token; two of them 400; a URL token still refused", async () => {
  await withMcpFixture(OPTIONS, async (f) => {
    const garbage = await post(f, { cookie: `${COOKIE}=garbage` });
    assert.equal(garbage.status, 401);
    assert.match(garbage.challenge ?? "", /^Bearer error="invalid_token"/);
    const expired = await post(f, { cookie: `${COOKIE}=${await f.token(ALL, { expired: true })}` });
    assert.equal(expired.status, 401);
    assert.match(expired.challenge ?? "", /invalid_token/);
    const token = await f.token(ALL);
    const two = await post(f, { cookie: `${COOKIE}=${token}; ${COOKIE}=${token}` });
    assert.equal(two.status, 400);
    assert.match(two.challenge ?? "", /error="invalid_request"/);
    const url = await post(f, {}, { path: `?access_token=${token}` });
    assert.equal(url.status, 400);
    assert.match(url.challenge ?? "", /not in the URL/);
    const both = await post(f, { cookie: `${COOKIE}=${token}` }, {
      path: `?access_token=${token}`,
    });
    assert.equal(both.status, 400, "cookie and query: one place only (RFC 6750 §2)");
  });
});

for (const enabled of [true, false]) {
  Deno.test(`issue 34: a cookie token is never read from a forgeable request (csrf_prevention.enabled: ${enabled})`, async () => {
    await withMcpFixture({ ...OPTIONS, csrfPrevention: { enabled } }, async (f) => {
      const token = await f.token(ALL);
      const cookie = `${COOKIE}=${token}`;
      // A cross-site form: a CORS-simple POST carrying the victim's cookie.
      const form = await post(f, { cookie }, { contentType: "text/plain" });
      assert.equal(form.status, 400, form.body);
      assert.match(form.body, /Cross-Site Request Forgery/);
      // A cross-site link or image: a GET carrying the cookie.
      const get = await fetch(
        `${f.router.url}/graphql?query=${encodeURIComponent("{ hello }")}`,
        { headers: { accept: "application/json", cookie } },
      );
      const getBody = await get.text();
      assert.equal(get.status, 400, getBody);
      assert.match(getBody, /Cross-Site Request Forgery/);
      // The same GET with a preflight header (a browser needs CORS to send it) runs.
      const marked = await fetch(
        `${f.router.url}/graphql?query=${encodeURIComponent("{ hello }")}`,
        { headers: { accept: "application/json", cookie, "graphql-preflight": "1" } },
      );
      assert.equal(marked.status, 200, await marked.text());
    });
  });
}

Deno.test("issue 34: MCP never reads the token cookie (bearer header only)", async () => {
  await withMcpFixture(OPTIONS, async (f) => {
    const token = await f.token(ALL);
    const response = await fetch(f.mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        cookie: `${COOKIE}=${token}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    await response.body?.cancel();
    assert.equal(response.status, 401, "no bearer token in the header: unauthenticated");
    const bearer = await rpc(f, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { token });
    assert.notEqual(bearer.status, 401);
  });
});
