import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import {
  authenticate,
  buildAuthState,
  JwksSource as JwksUrlSource,
  KeySources,
  operationAccess,
  verifyToken,
} from "../../lib/auth/mod.ts";
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

/** Timers driven by the test: nothing runs unless `run()` is called. */
function manualTimers() {
  const pending = new Map<number, { callback: () => void; ms: number }>();
  let next = 1;
  return {
    timers: {
      set(callback: () => void, ms: number) {
        pending.set(next, { callback, ms });
        return next++;
      },
      clear(id: number) {
        pending.delete(id);
      },
    },
    /** Runs every due timer once. */
    run() {
      const due = [...pending.entries()];
      pending.clear();
      for (const [, t] of due) t.callback();
    },
    get size() {
      return pending.size;
    },
  };
}

async function urlState(
  fetchImpl: typeof fetch,
  options: { now?: () => number; source?: Partial<JwksSource> } = {},
) {
  const manual = manualTimers();
  const keySources = new KeySources({
    fetch: fetchImpl,
    timers: manual.timers,
    ...(options.now ? { now: options.now } : {}),
  });
  const state = await buildAuthState(
    config([{ url: "http://idp/jwks", algorithms: ["ES256"], ...options.source }]),
    { keySources, ...(options.now ? { now: options.now } : {}) },
  );
  return { state, keySources, manual, source: keySources.sources[0]! };
}

Deno.test("DESIGN §2: a URL key source verifies ES256 tokens and reads iss, sub and scope", async () => {
  const { jwk, privateKey } = await rsaSetup();
  let fetches = 0;
  const fakeFetch = (() => {
    fetches++;
    return Promise.resolve(Response.json({ keys: [jwk] }));
  }) as typeof fetch;
  const { state, source } = await urlState(fakeFetch);
  await source.refresh();
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

Deno.test("issue 18: verification never fetches: before the first load a token gets KEYS_UNAVAILABLE (503 + retry_after), not invalid_token", async () => {
  const { privateKey } = await rsaSetup();
  let fetches = 0;
  const fakeFetch = (() => {
    fetches++;
    return Promise.reject(new TypeError("down"));
  }) as typeof fetch;
  const { state } = await urlState(fakeFetch);
  const jwt = await new SignJWT({}).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(
    privateKey,
  );
  for (let i = 0; i < 30; i++) {
    const result = await verifyToken(`${jwt}`, state);
    assert.ok(!result.ok);
    assert.equal(result.error.code, "KEYS_UNAVAILABLE");
    assert.equal(typeof result.error.details.retry_after, "number");
  }
  assert.equal(fetches, 0, "30 token requests caused no fetch");
});

Deno.test("issue 18: the last good keys serve while the IdP is down (stale-if-error), with backoff", async () => {
  const { jwk, privateKey } = await rsaSetup();
  let now = 0;
  let up = true;
  const fakeFetch =
    (() =>
      up
        ? Promise.resolve(Response.json({ keys: [jwk] }))
        : Promise.reject(new TypeError("down"))) as typeof fetch;
  const { state, source } = await urlState(fakeFetch, {
    now: () => now,
    source: { refresh_interval_ms: 1000 },
  });
  assert.equal(await source.refresh(), true);
  // A fresh token each time, so the verified-token cache cannot answer.
  const fresh = () =>
    new SignJWT({ jti: crypto.randomUUID() }).setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setExpirationTime("5m").sign(privateKey);
  up = false;
  now = 10_000;
  assert.equal(await source.refresh(), false);
  assert.equal(source.state.status, "failing");
  assert.equal((await verifyToken(await fresh(), state)).ok, true);
  assert.equal(await source.refresh(), false);
  assert.equal(
    source.state.nextFetchAt - now,
    1000,
    "second failure: backoff capped at the interval",
  );
});

Deno.test("issue 18: unknown-kid refetches draw from the refresh_unknown_kid bucket (burst, then denied)", async () => {
  const { jwk, privateKey } = await rsaSetup();
  let fetches = 0;
  let now = 0;
  const fakeFetch = (() => {
    fetches++;
    return Promise.resolve(Response.json({ keys: [jwk] }));
  }) as typeof fetch;
  const { keySources, source } = await urlState(fakeFetch, {
    now: () => now,
    source: {
      refresh_unknown_kid: { enabled: true, interval_ms: 10_000, burst: 2, max_wait_ms: 0 },
    },
  });
  await source.refresh();
  const unknown = await new SignJWT({}).setProtectedHeader({ alg: "ES256", kid: "other" }).sign(
    privateKey,
  );
  const request = new Request("http://x/", { headers: { authorization: `Bearer ${unknown}` } });
  for (let i = 0; i < 1000; i++) await keySources.beforeAdmission(request);
  assert.equal(fetches, 1 + 2, "the initial load + the burst, for 1000 unknown-kid tokens");
  now += 10_000;
  await keySources.beforeAdmission(request);
  assert.equal(fetches, 4, "one more credit after one interval");
  const known = await new SignJWT({}).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(
    privateKey,
  );
  const anonymous = new Request("http://x/");
  assert.equal(keySources.beforeAdmission(anonymous), null, "anonymous: nothing to wait for");
  const knownRequest = new Request("http://x/", { headers: { authorization: `Bearer ${known}` } });
  assert.equal(keySources.beforeAdmission(knownRequest), null, "known kid: nothing to wait for");
});

Deno.test("two key sources (GraphQL's IdP and mcp.oauth.jwks'): a token whose kid one source holds refetches neither and waits for nothing", async () => {
  const { jwk, privateKey } = await rsaSetup();
  const fetches = new Map<string, number>();
  const fakeFetch = ((url: string) => {
    fetches.set(url, (fetches.get(url) ?? 0) + 1);
    // The second provider serves another key (kid "m1").
    const keys = url.endsWith("/a") ? [jwk] : [{ ...jwk, kid: "m1" }];
    return Promise.resolve(Response.json({ keys }));
  }) as typeof fetch;
  const keySources = new KeySources({ fetch: fakeFetch, timers: manualTimers().timers });
  const unknownKid = { enabled: true, interval_ms: 30_000, burst: 2, max_wait_ms: 5_000 };
  for (const url of ["http://idp/a", "http://idp/b"]) {
    const source = keySources.source(
      {
        url,
        algorithms: ["ES256"],
        audiences: [],
        refresh_interval_ms: 60_000,
        refresh_unknown_kid: unknownKid,
      } as unknown as Parameters<typeof keySources.source>[0],
    );
    await source.refresh();
  }
  const token = await new SignJWT({}).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(
    privateKey,
  );
  const request = new Request("http://x/", { headers: { authorization: `Bearer ${token}` } });
  for (let i = 0; i < 10; i++) {
    assert.equal(keySources.beforeAdmission(request), null, "a kid source a holds: no wait");
  }
  assert.deepEqual(Object.fromEntries(fetches), { "http://idp/a": 1, "http://idp/b": 1 });
  keySources.close();
});

Deno.test("JWKS status log lines never carry the URL's credentials or query values (a provider key in the URL reached every log sink)", async () => {
  const { jwk } = await rsaSetup();
  let ok = false;
  const fakeFetch = (() =>
    Promise.resolve(
      ok ? Response.json({ keys: [jwk] }) : new Response("down", { status: 500 }),
    )) as typeof fetch;
  const lines: string[] = [];
  const record = (msg: string, fields?: Record<string, unknown>) =>
    lines.push(JSON.stringify({ msg, ...fields }));
  const log = { debug: record, info: record, warn: record, error: record };
  const source = new JwksUrlSource(
    "https://user:SECRET-PASSWORD@idp.test/jwks?api_key=SECRET-KEY",
    {
      policy: {
        refreshIntervalMs: 60_000,
        unknownKid: { enabled: true, intervalMs: 30_000, burst: 2, maxWaitMs: 0 },
      },
      maxResponseBytes: 1_000_000,
      timeoutMs: 1_000,
      fetch: fakeFetch,
      timers: manualTimers().timers,
      log,
    },
  );
  await source.refresh(); // unavailable
  ok = true;
  await source.refresh(); // loaded
  ok = false;
  await source.refresh(); // failing
  assert.equal(lines.length, 3);
  for (const line of lines) {
    assert.doesNotMatch(line, /SECRET/, line);
    assert.match(line, /idp\.test\/jwks\?api_key=\*\*\*\*/, line);
  }
});

Deno.test("issue 18: the background loop refreshes on refresh_interval and readiness waits for the first load", async () => {
  const { jwk } = await rsaSetup();
  let fetches = 0;
  let now = 0;
  const fakeFetch = (() => {
    fetches++;
    return Promise.resolve(Response.json({ keys: [jwk] }));
  }) as typeof fetch;
  const { keySources, manual, source } = await urlState(fakeFetch, {
    now: () => now,
    source: { refresh_interval_ms: 60_000 },
  });
  assert.equal(keySources.ready, false);
  assert.equal(manual.size, 1, "the first fetch is scheduled at once");
  manual.run();
  await source.refresh(); // joins the in-flight fetch
  assert.equal(keySources.ready, true);
  assert.equal(fetches, 1);
  now = 60_000;
  manual.run();
  await source.refresh();
  assert.equal(fetches, 2);
  keySources.close();
  assert.equal(manual.size, 0, "close stops the loop");
});

Deno.test("issue 18: a JWKS body over max_response_bytes, invalid JSON or a 500 is a failed fetch, never a key set", async () => {
  const { jwk } = await rsaSetup();
  const bodies: (() => Response)[] = [
    () => new Response("x".repeat(2000), { headers: { "content-type": "application/json" } }),
    () => new Response("{not json"),
    () => new Response("oops", { status: 500 }),
    () =>
      new Response(JSON.stringify({ keys: [jwk], pad: "x".repeat(5000) }), {
        headers: { "content-length": "9999999" },
      }),
  ];
  for (const body of bodies) {
    const { source } = await urlState((() => Promise.resolve(body())) as typeof fetch, {
      source: { max_response_bytes: 1000 },
    });
    assert.equal(await source.refresh(), false);
    assert.equal(source.ready, false);
    assert.equal(source.counters.failures, 1);
  }
});

Deno.test("a JWKS whose keys array is empty or holds a non-object is a failed fetch: the loop goes on, the last good keys serve, an unknown-kid wait ends", async () => {
  const { jwk, privateKey } = await rsaSetup();
  let body: unknown = { keys: [jwk] };
  const fakeFetch = (() => Promise.resolve(Response.json(body))) as typeof fetch;
  const { state, keySources, manual, source } = await urlState(fakeFetch);
  assert.equal(await source.refresh(), true);
  for (const bad of [[null], [1], ["k"], [jwk, []], []]) {
    body = { keys: bad };
    // It rejected (createLocalJWKSet threw outside the try): an unhandled rejection ended the process.
    assert.equal(await source.refresh(), false);
    manual.run(); // the background loop: its refresh must not reject either
    await source.refresh();
  }
  assert.equal(source.counters.failures, 10);
  assert.equal(manual.size, 1, "the loop is still scheduled");
  const token = await new SignJWT({}).setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setExpirationTime("5m").sign(privateKey);
  assert.equal((await verifyToken(token, state)).ok, true, "the last good keys still verify");
  const unknown = await new SignJWT({}).setProtectedHeader({ alg: "ES256", kid: "other" })
    .sign(privateKey);
  const request = new Request("http://x/", { headers: { authorization: `Bearer ${unknown}` } });
  await keySources.beforeAdmission(request); // settles (it rejected)
  keySources.close();
});

Deno.test("a JWKS URL that redirects is a failed fetch: the keys of the host it names are never loaded", async () => {
  const { jwk } = await rsaSetup();
  let elsewhereHits = 0;
  const elsewhere = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () => {
    elsewhereHits++;
    return Response.json({ keys: [jwk] });
  });
  const idp = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () =>
      new Response(null, {
        status: 302,
        headers: { location: `http://localhost:${elsewhere.addr.port}/jwks` },
      }),
  );
  const keySources = new KeySources({ timers: manualTimers().timers });
  try {
    const source = keySources.source(
      {
        url: `http://127.0.0.1:${idp.addr.port}/jwks`,
        algorithms: ["ES256"],
        audiences: [],
        refresh_interval_ms: 60_000,
      } as unknown as Parameters<KeySources["source"]>[0],
    );
    assert.equal(await source.refresh(), false);
    assert.equal(source.ready, false);
    assert.equal(elsewhereHits, 0, "the redirect was not followed");
  } finally {
    keySources.close();
    await idp.shutdown();
    await elsewhere.shutdown();
  }
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
  const rotated = { ...(await rsaSetup()).jwk, kid: "k2" };
  let now = 0;
  let fetches = 0;
  const fakeFetch = (() => {
    fetches++;
    return Promise.resolve(Response.json({ keys: fetches === 1 ? [jwk] : [rotated] }));
  }) as typeof fetch;
  const { state, source } = await urlState(fakeFetch, {
    now: () => now,
    source: { refresh_interval_ms: 1 },
  });
  await source.refresh();
  const jwt = await new SignJWT({}).setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setExpirationTime(Math.floor(Date.now() / 1000) + 3600).sign(privateKey);
  assert.equal((await verifyToken(jwt, state)).ok, true);
  await source.refresh(); // the key is gone from the JWKS now
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

Deno.test("issue 18: a provider outage is logged once when it starts and once when it ends, not per failed fetch", async () => {
  const { jwk } = await rsaSetup();
  let up = true;
  const lines: { level: string; msg: string }[] = [];
  const log = {
    debug() {},
    info: (msg: string) => lines.push({ level: "info", msg }),
    warn: (msg: string) => lines.push({ level: "warn", msg }),
    error: (msg: string) => lines.push({ level: "error", msg }),
  };
  const manual = manualTimers();
  const keySources = new KeySources({
    fetch: (() =>
      up
        ? Promise.resolve(Response.json({ keys: [jwk] }))
        : Promise.reject(new TypeError("down"))) as typeof fetch,
    timers: manual.timers,
    log,
  });
  const source = keySources.source(
    {
      url: "http://idp/jwks",
      algorithms: ["ES256"],
      audiences: [],
      refresh_interval_ms: 1000,
    } as unknown as Parameters<KeySources["source"]>[0],
  );
  await source.refresh();
  up = false;
  for (let i = 0; i < 5; i++) await source.refresh();
  up = true;
  await source.refresh();
  assert.deepEqual(lines, [
    { level: "info", msg: "JWKS loaded" },
    { level: "warn", msg: "JWKS fetch failing; the last good keys keep serving" },
    { level: "info", msg: "JWKS recovered" },
  ]);
  keySources.close();
});

Deno.test("issue 15 secure default: a token without exp is refused (it would never expire) unless the source's required_claims is emptied", async () => {
  const key = new TextEncoder().encode(SECRET);
  const forever = await new SignJWT({ scope: "a" }).setProtectedHeader({ alg: "HS256" })
    .setSubject("u1").sign(key);
  const strict = await buildAuthState(config([{ secret: SECRET, symmetric_algorithm: "HS256" }]));
  const refused = await verifyToken(forever, strict);
  assert.ok(!refused.ok);
  assert.equal(refused.error.message, 'The access token has no "exp" claim');
  const expiring = await new SignJWT({ scope: "a" }).setProtectedHeader({ alg: "HS256" })
    .setSubject("u1").setExpirationTime("5m").sign(key);
  assert.equal((await verifyToken(expiring, strict)).ok, true);
  const lax = await buildAuthState(
    config([{ secret: SECRET, symmetric_algorithm: "HS256", required_claims: [] }]),
  );
  assert.equal((await verifyToken(forever, lax)).ok, true);
  const withSub = await buildAuthState(
    config([{ secret: SECRET, symmetric_algorithm: "HS256", required_claims: ["exp", "jti"] }]),
  );
  const noJti = await verifyToken(expiring, withSub);
  assert.ok(!noJti.ok);
  assert.equal(noJti.error.message, 'The access token has no "jti" claim');
});

Deno.test("key rotation without kids: a token without kid verifies against whichever of the set's keys signed it (jose's multiple-matching-keys candidates, at most 8 tried)", async () => {
  const pairs = await Promise.all(
    Array.from({ length: 10 }, () => generateKeyPair("ES256", { extractable: true })),
  );
  // An identity provider mid-rotation: old and new keys, neither with a kid.
  const keys = await Promise.all(
    pairs.map(async (p) => ({ ...(await exportJWK(p.publicKey)), alg: "ES256" })),
  );
  const fakeFetch = (() => Promise.resolve(Response.json({ keys }))) as typeof fetch;
  const { state, source } = await urlState(fakeFetch);
  await source.refresh();
  const sign = (key: CryptoKey) =>
    new SignJWT({ scope: "a" }).setProtectedHeader({ alg: "ES256" }).setSubject("u1")
      .setExpirationTime("5m").sign(key);
  for (const i of [0, 1, 7]) {
    const result = await verifyToken(await sign(pairs[i]!.privateKey), state);
    assert.equal(result.ok && result.token?.subject, "u1", `key ${i}`);
  }
  // Beyond the first 8 candidates no key is tried: a kid-less token costs at most 8 verifications.
  const ninth = await verifyToken(await sign(pairs[8]!.privateKey), state);
  assert.equal(ninth.ok, false);
  const forged = await verifyToken(await sign((await generateKeyPair("ES256")).privateKey), state);
  assert.equal(forged.ok, false);
  if (!forged.ok) assert.equal(forged.error.message, "The access token signature is invalid");
});

Deno.test("key rotation without kids: a key jose cannot use (a legacy 1024-bit RSA key) is skipped, not fatal: the token signed by its 2048-bit sibling verifies", async () => {
  // jose refuses RSA keys under 2048 bits with a TypeError, not a signature failure.
  const legacy = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 1024,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  ) as CryptoKeyPair;
  const current = await generateKeyPair("RS256", { extractable: true });
  const keys = [
    { ...(await exportJWK(legacy.publicKey)), alg: "RS256" },
    { ...(await exportJWK(current.publicKey)), alg: "RS256" },
  ];
  const fakeFetch = (() => Promise.resolve(Response.json({ keys }))) as typeof fetch;
  const { state, source } = await urlState(fakeFetch, { source: { algorithms: ["RS256"] } });
  await source.refresh();
  const jwt = await new SignJWT({ scope: "a" }).setProtectedHeader({ alg: "RS256" })
    .setSubject("u1").setExpirationTime("5m").sign(current.privateKey);
  const result = await verifyToken(jwt, state);
  assert.equal(result.ok && result.token?.subject, "u1");
  // Claims are still checked on the key that verified: an expired token stays refused as such.
  const expired = await new SignJWT({ scope: "a" }).setProtectedHeader({ alg: "RS256" })
    .setSubject("u1").setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
    .sign(current.privateKey);
  const refused = await verifyToken(expired, state);
  assert.ok(!refused.ok);
  assert.equal(refused.error.message, "The access token expired");
  const forged = await new SignJWT({}).setProtectedHeader({ alg: "RS256" }).setSubject("u1")
    .setExpirationTime("5m").sign((await generateKeyPair("RS256")).privateKey);
  const bad = await verifyToken(forged, state);
  assert.ok(!bad.ok);
  assert.equal(bad.error.message, "The access token signature is invalid");
});

Deno.test("RFC 6750 §3.1: two Authorization headers (joined as 'Bearer a, Bearer b') are 400 invalid_request, not a malformed token", async () => {
  const state = await buildAuthState(
    config([{ secret: SECRET, symmetric_algorithm: "HS256", algorithms: ["HS256"] }]),
  );
  const jwt = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("u1")
    .setExpirationTime("5m").sign(new TextEncoder().encode(SECRET));
  const headers = new Headers();
  headers.append("authorization", `Bearer ${jwt}`);
  headers.append("authorization", `Bearer ${jwt}`);
  for (
    const request of [
      new Request("http://x/", { headers }),
      new Request("http://x/", { headers: { authorization: `Bearer ${jwt} ${jwt}` } }),
    ]
  ) {
    const result = await authenticate(request, state);
    assert.equal(result.ok, false);
    if (result.ok) continue;
    assert.equal(result.error.code, "BAD_REQUEST");
    assert.match(result.error.challenge, /^Bearer error="invalid_request", error_description="/);
  }
  const one = await authenticate(
    new Request("http://x/", { headers: { authorization: `Bearer  ${jwt} ` } }),
    state,
  );
  assert.equal(one.ok && one.token?.subject, "u1");
});
