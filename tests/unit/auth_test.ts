import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { authenticate, buildAuthState, operationAccess, verifyToken } from "../../lib/auth/mod.ts";
import type { Config, JwksSource } from "../../lib/config/types.ts";
import { buildSchema, parse } from "graphql";

const SECRET = "0123456789abcdef0123456789abcdef";

function config(jwks: Partial<JwksSource>[]): Config {
  return {
    authentication: {
      jwt: {
        header_name: "Authorization",
        header_value_prefix: "Bearer ",
        jwks: jwks.map((s) => ({
          algorithms: [],
          audiences: [],
          refresh_interval_ms: 60_000,
          ...s,
        })),
      },
    },
  } as unknown as Config;
}

async function rsaSetup() {
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256" };
  return { jwk, privateKey };
}

Deno.test("DESIGN §2: a URL key source verifies ES256 tokens and reads iss, sub and scope", async () => {
  const { jwk, privateKey } = await rsaSetup();
  let fetches = 0;
  const fakeFetch = (() => {
    fetches++;
    return Promise.resolve(Response.json({ keys: [jwk] }));
  }) as typeof fetch;
  const state = await buildAuthState(config([{ url: "http://idp/jwks", algorithms: ["ES256"] }]), {
    fetch: fakeFetch,
  });
  const jwt = await new SignJWT({ scope: "a b" }).setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setIssuer("idp").setSubject("u1").setExpirationTime("5m").sign(privateKey);
  const result = await authenticate(
    new Request("http://x/", { headers: { authorization: `Bearer ${jwt}` } }),
    state,
  );
  assert.ok(result.ok && result.token);
  assert.equal(result.token.issuer, "idp");
  assert.equal(result.token.subject, "u1");
  assert.deepEqual(result.token.scopes, ["a", "b"]);
  assert.equal(fetches, 1);
});

Deno.test("issue 4: the key cache serves the last good keys while the IdP is down", async () => {
  const { jwk, privateKey } = await rsaSetup();
  let now = 0;
  let up = true;
  const fakeFetch =
    (() =>
      up
        ? Promise.resolve(Response.json({ keys: [jwk] }))
        : Promise.reject(new TypeError("down"))) as typeof fetch;
  const state = await buildAuthState(
    config([{ url: "http://idp/jwks", algorithms: ["ES256"], refresh_interval_ms: 1000 }]),
    { fetch: fakeFetch, now: () => now },
  );
  // A fresh token each time, so the verified-token cache cannot answer.
  const fresh = () =>
    new SignJWT({ jti: crypto.randomUUID() }).setProtectedHeader({ alg: "ES256", kid: "k1" })
      .sign(privateKey);
  assert.equal((await verifyToken(await fresh(), state)).ok, true);
  up = false;
  now = 10_000; // stale: a background refresh fails, the old keys keep serving
  assert.equal((await verifyToken(await fresh(), state)).ok, true);
  await assert.rejects(() => state.sources[0]!.remote!.refresh());
  assert.equal((await verifyToken(await fresh(), state)).ok, true);
});

Deno.test("issue 4: refetches for an unknown kid are rate-limited", async () => {
  const { jwk, privateKey } = await rsaSetup();
  let fetches = 0;
  let now = 0;
  const fakeFetch = (() => {
    fetches++;
    return Promise.resolve(Response.json({ keys: [jwk] }));
  }) as typeof fetch;
  const state = await buildAuthState(config([{ url: "http://idp/jwks", algorithms: ["ES256"] }]), {
    fetch: fakeFetch,
    now: () => now,
    cooldownMs: 10_000,
  });
  const unknown = await new SignJWT({}).setProtectedHeader({ alg: "ES256", kid: "other" }).sign(
    privateKey,
  );
  for (let i = 0; i < 5; i++) {
    const result = await verifyToken(unknown, state);
    assert.equal(result.ok, false);
    now += 100;
  }
  assert.equal(fetches, 1, "one fetch for five unknown-kid tokens inside the cooldown");
  now += 20_000;
  await verifyToken(unknown, state);
  assert.equal(fetches, 2);
});

Deno.test("issue 4: algorithms are pinned per source: HS/RS confusion and alg none are refused", async () => {
  await assert.rejects(
    () => buildAuthState(config([{ url: "http://idp/jwks", algorithms: ["HS256"] }])),
    { code: "CONFIG_INVALID" },
  );
  await assert.rejects(
    () =>
      buildAuthState(
        config([{ secret: SECRET, symmetric_algorithm: "HS256", algorithms: ["RS256"] }]),
      ),
    { code: "CONFIG_INVALID" },
  );
  const state = await buildAuthState(config([{ secret: SECRET, symmetric_algorithm: "HS256" }]));
  const unsigned = `${btoa('{"alg":"none"}').replace(/=+$/, "")}.${
    btoa('{"sub":"x"}').replace(/=+$/, "")
  }.`;
  const result = await verifyToken(unsigned, state);
  assert.equal(result.ok, false);
  const hs512 = await new SignJWT({}).setProtectedHeader({ alg: "HS512" })
    .sign(new TextEncoder().encode(SECRET));
  assert.equal((await verifyToken(hs512, state)).ok, false);
});

Deno.test("issue 4: a verified token is cached until its exp (no second signature check)", async () => {
  const { jwk, privateKey } = await rsaSetup();
  let now = 0;
  let fetches = 0;
  const fakeFetch = (() => {
    fetches++;
    return Promise.resolve(Response.json({ keys: fetches === 1 ? [jwk] : [] }));
  }) as typeof fetch;
  const state = await buildAuthState(
    config([{ url: "http://idp/jwks", algorithms: ["ES256"], refresh_interval_ms: 1 }]),
    { fetch: fakeFetch, now: () => now },
  );
  const jwt = await new SignJWT({}).setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setExpirationTime(Math.floor(Date.now() / 1000) + 3600).sign(privateKey);
  assert.equal((await verifyToken(jwt, state)).ok, true);
  await state.sources[0]!.remote!.refresh(); // the key is gone from the JWKS now
  now = 30_000;
  assert.equal((await verifyToken(jwt, state)).ok, true, "served from the cache");
  now = 61_000;
  assert.equal((await verifyToken(jwt, state)).ok, false, "cache entries live at most 60 s");
});

Deno.test("RFC 6750 §3.1: an expired token is invalid_token with a description from the jose code", async () => {
  const state = await buildAuthState(config([{ secret: SECRET, symmetric_algorithm: "HS256" }]));
  const jwt = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setExpirationTime(0)
    .sign(new TextEncoder().encode(SECRET));
  const result = await verifyToken(jwt, state);
  assert.equal(result.ok, false);
  assert.ok(!result.ok);
  assert.equal(result.error.code, "UNAUTHENTICATED");
  assert.equal(
    result.error.challenge,
    'Bearer error="invalid_token", error_description="The access token expired"',
  );
});

const SCHEMA = buildSchema(`
  type Query { a: String, b: String, me: User, node: Node }
  type User { id: ID, email: String, secret: Secret }
  enum Secret { X }
  interface Node { id: ID }
`);
const ACCESS = new Map([
  ["Query.a", { authenticated: false, requiresScopes: [["x"], ["y"]] }],
  ["Query.b", { authenticated: false, requiresScopes: [["z"]] }],
  ["User", { authenticated: true, requiresScopes: null }],
  ["User.email", { authenticated: false, requiresScopes: [["read:email"]] }],
  ["Secret", { authenticated: false, requiresScopes: [["s"]] }],
]);

Deno.test("DESIGN §4: fields combine in document order, fragments inlined, each Type.field once", () => {
  const doc = parse("query Q { b ...F a ...F } fragment F on Query { b a }");
  const result = operationAccess(doc, SCHEMA, ACCESS);
  assert.deepEqual(result, {
    ok: true,
    requirement: { authenticated: true, scopes: [["z", "x"], ["z", "y"]] },
  });
});

Deno.test("DESIGN §4: type-level requirements apply to the type's fields and to leaf return types", () => {
  const result = operationAccess(parse("{ me { email secret } }"), SCHEMA, ACCESS);
  assert.deepEqual(result, {
    ok: true,
    requirement: { authenticated: true, scopes: [["read:email", "s"]] },
  });
});

Deno.test("issue 4: the runtime walk guards itself: fragment cycles visit once, depth bombs fail closed", () => {
  const cycle = parse("{ ...A } fragment A on Query { a ...B } fragment B on Query { b ...A }");
  assert.deepEqual(operationAccess(cycle, SCHEMA, ACCESS), {
    ok: true,
    requirement: { authenticated: true, scopes: [["x", "z"], ["y", "z"]] },
  });
  const deep = parse(`{ ${"... on Query { ".repeat(100)} a ${"}".repeat(100)} }`, {
    maxTokens: 10_000,
  });
  const result = operationAccess(deep, SCHEMA, ACCESS, { maxDepth: 64 });
  assert.equal(result.ok, false);
});

Deno.test("issue 4: a requirement over max_scope_combinations fails closed", () => {
  const result = operationAccess(parse("{ a b }"), SCHEMA, ACCESS, { maxCombinations: 1 });
  assert.equal(result.ok, false);
});
