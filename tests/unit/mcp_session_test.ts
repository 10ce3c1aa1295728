import assert from "node:assert/strict";
import {
  importSessionKey,
  issueSessionId,
  SESSION_MAX_AGE_MS,
  SessionRevocations,
  verifySessionId,
} from "../../lib/mcp/mod.ts";

const ALICE = { issuer: "https://idp", subject: "alice" };

Deno.test("issue 4: a signed session id verifies on any replica holding the same secret", async () => {
  const a = await importSessionKey("replica-shared-secret-0123456789");
  const b = await importSessionKey("replica-shared-secret-0123456789");
  const id = await issueSessionId(a, ALICE, { now: 1_000 });
  assert.match(id, /^[\x21-\x7e]+$/, "visible ASCII only (MCP transport rule)");
  assert.equal(await verifySessionId(b, id, ALICE, { now: 2_000 }), true);
});

Deno.test("DESIGN §4: a session is bound to issuer and subject", async () => {
  const key = await importSessionKey("secret-0123456789abcdef0123456789");
  const id = await issueSessionId(key, ALICE, { now: 0 });
  assert.equal(
    await verifySessionId(key, id, { issuer: "https://idp", subject: "bob" }, { now: 1 }),
    false,
  );
  assert.equal(
    await verifySessionId(key, id, { issuer: "https://other", subject: "alice" }, { now: 1 }),
    false,
  );
});

Deno.test("issue 4: forged, malformed, foreign-secret and expired ids are refused", async () => {
  const key = await importSessionKey("secret-0123456789abcdef0123456789");
  const other = await importSessionKey("another-secret-0123456789abcdef01");
  const id = await issueSessionId(key, ALICE, { now: 0 });
  const [v, issued, nonce] = id.split(".");
  assert.equal(
    await verifySessionId(key, `${v}.${issued}.${nonce}x.${id.split(".")[3]}`, ALICE, { now: 1 }),
    false,
  );
  assert.equal(await verifySessionId(key, "v1.garbage", ALICE, { now: 1 }), false);
  assert.equal(await verifySessionId(other, id, ALICE, { now: 1 }), false);
  assert.equal(await verifySessionId(key, id, ALICE, { now: SESSION_MAX_AGE_MS + 1 }), false);
});

Deno.test("issue 4: DELETE's revocation set forgets an id once it would have expired anyway", () => {
  const revoked = new SessionRevocations({ maxEntries: 2 });
  revoked.add("a", { now: 0 });
  assert.equal(revoked.has("a", { now: 1 }), true);
  assert.equal(revoked.has("a", { now: SESSION_MAX_AGE_MS }), false);
  revoked.add("b", { now: 1 });
  revoked.add("c", { now: 2 });
  revoked.add("d", { now: 3 });
  assert.equal(revoked.has("d", { now: 4 }), true);
});
