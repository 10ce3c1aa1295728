import assert from "node:assert/strict";
import { decodeJwt, decodeProtectedHeader, importPKCS8, SignJWT } from "jose";
import { parseTtl } from "../../lib/cli/trace_token.ts";
import {
  generateTraceKeyPair,
  importTraceVerificationKey,
  mintTraceToken,
  verifyTraceToken,
} from "../../lib/trace/mod.ts";

const pair = await generateTraceKeyPair();
const other = await generateTraceKeyPair();
const key = await importTraceVerificationKey(pair.publicKeyPem);
const NOW = new Date("2026-06-01T12:00:00Z");

Deno.test("DESIGN §4: trace-token mints an ES256 JWT with exp = iat + ttl", async () => {
  const token = await mintTraceToken(pair.privateKeyPem, { ttlSeconds: 600, now: NOW });
  assert.equal(decodeProtectedHeader(token).alg, "ES256");
  const claims = decodeJwt(token);
  assert.equal(claims.iat, NOW.getTime() / 1000);
  assert.equal(claims.exp, NOW.getTime() / 1000 + 600);
  assert.deepEqual(await verifyTraceToken(token, key, { currentDate: NOW }), { ok: true });
});

Deno.test("DESIGN §4: a token signed by another key is refused with a reason", async () => {
  const token = await mintTraceToken(other.privateKeyPem, { now: NOW });
  const verdict = await verifyTraceToken(token, key, { currentDate: NOW });
  assert.deepEqual(verdict, {
    ok: false,
    reason: "Trace token (X-GW-Token) signature does not match the configured key",
  });
});

Deno.test("DESIGN §4: an expired token is refused", async () => {
  const token = await mintTraceToken(pair.privateKeyPem, { ttlSeconds: 60, now: NOW });
  const later = new Date(NOW.getTime() + 120_000);
  assert.deepEqual(await verifyTraceToken(token, key, { currentDate: later }), {
    ok: false,
    reason: "Trace token (X-GW-Token) has expired",
  });
});

Deno.test("DESIGN §4: exp is required", async () => {
  const signer = await importPKCS8(pair.privateKeyPem, "ES256");
  const token = await new SignJWT({}).setProtectedHeader({ alg: "ES256" }).setIssuedAt().sign(
    signer,
  );
  assert.deepEqual(await verifyTraceToken(token, key), {
    ok: false,
    reason: 'Trace token (X-GW-Token) lacks the required "exp" claim',
  });
});

Deno.test("DESIGN §4: iss and aud are checked when configured", async () => {
  const token = await mintTraceToken(pair.privateKeyPem, {
    issuer: "me",
    audience: "router",
    now: NOW,
  });
  const base = { currentDate: NOW };
  assert.deepEqual(
    await verifyTraceToken(token, key, { ...base, issuer: "me", audience: "router" }),
    {
      ok: true,
    },
  );
  assert.deepEqual(await verifyTraceToken(token, key, { ...base, issuer: "someone-else" }), {
    ok: false,
    reason: 'Trace token (X-GW-Token) has an unexpected "iss" claim',
  });
  assert.deepEqual(await verifyTraceToken(token, key, { ...base, audience: "other" }), {
    ok: false,
    reason: 'Trace token (X-GW-Token) has an unexpected "aud" claim',
  });
  // Not configured: not checked.
  assert.deepEqual(await verifyTraceToken(token, key, base), { ok: true });
});

Deno.test("DESIGN §4: garbage and non-ES256 tokens are refused without echoing them", async () => {
  const garbage = "not-a-jwt-SECRETVALUE";
  const verdict = await verifyTraceToken(garbage, key);
  assert.equal(verdict.ok, false);
  assert.ok(!verdict.ok && !verdict.reason.includes("SECRETVALUE"));
  const hs = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setExpirationTime("1h")
    .sign(new TextEncoder().encode("x".repeat(32)));
  assert.deepEqual(await verifyTraceToken(hs, key), {
    ok: false,
    reason: "Trace token (X-GW-Token) must be signed with ES256",
  });
});

Deno.test("DESIGN §4: with no public key configured every token is refused", async () => {
  const token = await mintTraceToken(pair.privateKeyPem);
  const verdict = await verifyTraceToken(token, null);
  assert.equal(verdict.ok, false);
  assert.match(!verdict.ok ? verdict.reason : "", /request_tracing_public_key_file is not set/);
});

Deno.test("DESIGN §4: a public key file that is not ES256 SPKI stops start-up naming the key", async () => {
  await assert.rejects(() => importTraceVerificationKey(pair.privateKeyPem), {
    code: "CONFIG_INVALID",
    details: { path: "engine.request_tracing_public_key_file" },
  });
});

Deno.test("DESIGN §2: trace-token --key takes PKCS8 only", async () => {
  await assert.rejects(() => mintTraceToken(pair.publicKeyPem), { code: "BAD_REQUEST" });
});

Deno.test("DESIGN §2: trace-token --ttl reads s/m/h/d durations", () => {
  assert.equal(parseTtl("90s"), 90);
  assert.equal(parseTtl("15m"), 900);
  assert.equal(parseTtl("1h"), 3600);
  assert.equal(parseTtl("2d"), 172800);
  assert.equal(parseTtl("1h30m"), 5400);
  assert.throws(() => parseTtl("0"), RangeError);
  assert.throws(() => parseTtl("-5m"), RangeError);
  assert.throws(() => parseTtl("1w"), RangeError);
});

Deno.test("issue 18: a trace token without iat is refused", async () => {
  const signing = await importPKCS8(pair.privateKeyPem, "ES256");
  const at = NOW.getTime() / 1000;
  const token = await new SignJWT({}).setProtectedHeader({ alg: "ES256" })
    .setExpirationTime(at + 60).sign(signing);
  const verdict = await verifyTraceToken(token, key, { currentDate: NOW });
  assert.deepEqual(verdict, {
    ok: false,
    reason: 'Trace token (X-GW-Token) lacks the required "iat" claim',
  });
});

Deno.test("issue 18: a trace token living longer than request_tracing_max_token_age (1 h) is refused, 1 h exactly passes", async () => {
  for (const [ttlSeconds, ok] of [[3600, true], [3601, false], [365 * 86400, false]] as const) {
    const token = await mintTraceToken(pair.privateKeyPem, { ttlSeconds, now: NOW });
    const verdict = await verifyTraceToken(token, key, { currentDate: NOW });
    assert.equal(verdict.ok, ok, `${ttlSeconds} s`);
    if (!verdict.ok) assert.match(verdict.reason, /request_tracing_max_token_age \(3600 s\)/);
  }
  const day = await mintTraceToken(pair.privateKeyPem, { ttlSeconds: 86400, now: NOW });
  const allowed = await verifyTraceToken(day, key, { currentDate: NOW, maxTokenAgeSec: 86400 });
  assert.equal(allowed.ok, true);
});

Deno.test("issue 18: a trace token issued in the future is refused: exp − iat within the cap, yet valid for years from now", async () => {
  const year = 365 * 86400;
  const future = new Date(NOW.getTime() + year * 1000);
  // Minted "a year from now" with a 1 h lifetime: without an iat check it works today and all year.
  const token = await mintTraceToken(pair.privateKeyPem, { ttlSeconds: 3600, now: future });
  assert.deepEqual(await verifyTraceToken(token, key, { currentDate: NOW }), {
    ok: false,
    reason: 'Trace token (X-GW-Token) has an unexpected "iat" claim: it is in the future',
  });
  // A minting clock a few seconds ahead of the router's still passes (60 s leeway).
  const ahead = await mintTraceToken(pair.privateKeyPem, {
    now: new Date(NOW.getTime() + 30_000),
  });
  assert.deepEqual(await verifyTraceToken(ahead, key, { currentDate: NOW }), { ok: true });
});
