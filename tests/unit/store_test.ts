/**
 * Issue 30, the pure parts of shared state: GCRA (the same arithmetic as
 * Cosmo's limiter), the memory store's bounds, and the client address behind
 * trusted proxies.
 */
import assert from "node:assert/strict";
import { gcraStep, MemoryStore } from "../../lib/store/mod.ts";
import { clientIp, inCidr, parseCidr, parseIp } from "../../lib/request/client_ip.ts";

Deno.test("GCRA: burst at once, then one per emission interval; Retry-After is the wait for the next", () => {
  const limit = { rate: 10, burst: 5, periodMs: 1000 }; // one per 100 ms, 5 at once
  let tat: number | null = null;
  const allowed: boolean[] = [];
  for (let i = 0; i < 7; i++) {
    const step = gcraStep(tat, 0, limit);
    allowed.push(step.decision.allowed);
    if (step.tat !== null) tat = step.tat;
  }
  assert.deepEqual(allowed, [true, true, true, true, true, false, false]);
  const denied = gcraStep(tat, 0, limit);
  assert.equal(denied.decision.retryAfterMs, 100);
  assert.equal(denied.decision.resetAfterMs, 500);
  // 100 ms later exactly one more.
  const later = gcraStep(tat, 100, limit);
  assert.equal(later.decision.allowed, true);
  assert.equal(later.decision.remaining, 0);
  assert.equal(gcraStep(later.tat, 100, limit).decision.allowed, false);
  // After a full period the bucket is full again.
  assert.equal(gcraStep(tat, 10_000, limit).decision.remaining, 4);
});

Deno.test("GCRA: a refused request spends nothing (no new TAT stored)", () => {
  const limit = { rate: 1, burst: 1, periodMs: 1000 };
  const first = gcraStep(null, 0, limit);
  const refused = gcraStep(first.tat, 500, limit);
  assert.equal(refused.decision.allowed, false);
  assert.equal(refused.tat, null);
  assert.equal(refused.decision.retryAfterMs, 500);
});

Deno.test("memory store: values are bounded in bytes and expire; rate-limit keys are bounded in count", async () => {
  let now = 0;
  const store = new MemoryStore({ maxBytes: 400, maxKeys: 2, now: () => now });
  await store.set("a", "x".repeat(50), 1000);
  await store.set("b", "y".repeat(50), 1000);
  // 64 + 2 × 51 = 166 bytes each: a third pushes the oldest out.
  await store.set("c", "z".repeat(50), 1000);
  assert.equal(await store.get("a"), null);
  assert.equal(await store.get("c"), "z".repeat(50));
  now = 1000;
  assert.equal(await store.get("c"), null);
  const limit = { rate: 1, burst: 1, periodMs: 60_000 };
  assert.equal((await store.rateLimit("k1", limit)).allowed, true);
  assert.equal((await store.rateLimit("k1", limit)).allowed, false);
  await store.rateLimit("k2", limit);
  await store.rateLimit("k3", limit);
  // k1 fell out of the two kept keys: it starts again with a full bucket.
  assert.equal((await store.rateLimit("k1", limit)).allowed, true);
});

Deno.test("client IP: X-Forwarded-For is walked right to left, only from trusted proxies", () => {
  const trusted = [parseCidr("10.0.0.0/8")!, parseCidr("::1")!];
  // Untrusted peer: the header is anyone's.
  assert.equal(clientIp("203.0.113.1", "198.51.100.2", trusted), "203.0.113.1");
  // No trusted proxies configured: the peer, whatever the header says.
  assert.equal(clientIp("10.0.0.1", "198.51.100.2", []), "10.0.0.1");
  // Trusted peer: the right-most hop that is not a trusted proxy.
  assert.equal(clientIp("10.1.2.3", "6.6.6.6, 198.51.100.2, 10.9.9.9", trusted), "198.51.100.2");
  assert.equal(clientIp("::1", "198.51.100.2", trusted), "198.51.100.2");
  // An unreadable hop ends the walk at the last readable one.
  assert.equal(clientIp("10.1.2.3", "6.6.6.6, garbage, 198.51.100.2", trusted), "198.51.100.2");
  assert.equal(clientIp("10.1.2.3", "garbage", trusted), "10.1.2.3");
  assert.equal(clientIp(null, "198.51.100.2", trusted), null);
});

Deno.test("client IP: only the last 16 X-Forwarded-For entries are read, however many a client sends", () => {
  const trusted = [parseCidr("10.0.0.0/8")!];
  const many = [..."6.6.6.6, ".repeat(1), ...Array(5000).fill("10.0.0.1").join(", ")].join("");
  // Every entry read is trusted: the left-most one read, never the client's 6.6.6.6 far left.
  assert.equal(clientIp("10.0.0.9", many, trusted), "10.0.0.1");
  const fifteen = ["198.51.100.3", ...Array(15).fill("10.0.0.1")].join(", ");
  assert.equal(clientIp("10.0.0.9", fifteen, trusted), "198.51.100.3");
});

Deno.test("client IP: CIDR blocks of both families; mapped IPv4 reads as IPv4", () => {
  assert.deepEqual([...parseIp("::ffff:10.1.2.3")!], [10, 1, 2, 3]);
  assert.equal(parseIp("1.2.3.256"), null);
  assert.equal(parseIp("1::2::3"), null);
  assert.equal(parseCidr("10.0.0.0/33"), null);
  assert.ok(inCidr(parseIp("2001:db8::1")!, parseCidr("2001:db8::/32")!));
  assert.ok(!inCidr(parseIp("2001:db9::1")!, parseCidr("2001:db8::/32")!));
  assert.ok(inCidr(parseIp("172.31.255.255")!, parseCidr("172.16.0.0/12")!));
  assert.ok(!inCidr(parseIp("172.32.0.0")!, parseCidr("172.16.0.0/12")!));
  assert.ok(!inCidr(parseIp("10.0.0.1")!, parseCidr("::/0")!));
});
