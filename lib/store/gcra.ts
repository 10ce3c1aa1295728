/**
 * GCRA (the generic cell rate algorithm), as Cosmo's rate limiter runs it
 * (go-redis/redis_rate): one number per key, the theoretical arrival time
 * (TAT). A request is allowed when, after it, the TAT lies no further than
 * `burst` emission intervals ahead of now. The same arithmetic runs in memory
 * ({@linkcode gcraStep}, pure) and in Redis as one atomic Lua script
 * ({@linkcode GCRA_LUA}), so both stores answer alike. Pure.
 *
 * @module
 */

/** A limit: `rate` requests per `periodMs`, at most `burst` at once. */
export interface GcraLimit {
  /** Requests per period. */
  readonly rate: number;
  /** Requests at once (the bucket's depth). */
  readonly burst: number;
  /** The period, ms. */
  readonly periodMs: number;
}

/** The answer for one request. */
export interface GcraDecision {
  /** Whether the request may run. */
  readonly allowed: boolean;
  /** Requests still allowed right now after this one. */
  readonly remaining: number;
  /** Denied: ms until one request will be allowed; allowed: 0. */
  readonly retryAfterMs: number;
  /** Ms until the bucket is full again (all `burst` allowed). */
  readonly resetAfterMs: number;
}

/**
 * One step of GCRA: the decision and the TAT to store (null: store nothing).
 *
 * @example A burst of 2, then a refusal with the wait until the next slot
 * ```ts
 * import assert from "node:assert/strict";
 * import { gcraStep } from "./gcra.ts";
 * const limit = { rate: 1, burst: 2, periodMs: 1000 };
 * const a = gcraStep(null, 0, limit);
 * const b = gcraStep(a.tat, 0, limit);
 * const c = gcraStep(b.tat, 0, limit);
 * assert.deepEqual([a.decision.allowed, b.decision.allowed, c.decision.allowed], [true, true, false]);
 * assert.equal(c.decision.retryAfterMs, 1000);
 * assert.equal(b.decision.remaining, 0);
 * ```
 * @param tat The stored TAT (ms), or null when the key is new or expired.
 * @param now The clock, ms.
 * @param limit The limit.
 * @returns The decision, and the TAT to store with its time to live.
 */
export function gcraStep(
  tat: number | null,
  now: number,
  limit: GcraLimit,
): { readonly decision: GcraDecision; readonly tat: number | null; readonly ttlMs: number } {
  const emission = limit.periodMs / limit.rate;
  const burstOffset = emission * limit.burst;
  const current = tat === null || tat < now ? now : tat;
  const next = current + emission;
  const allowAt = next - burstOffset;
  const diff = now - allowAt;
  const remaining = Math.floor(diff / emission + 1e-9);
  if (remaining < 0) {
    return {
      decision: {
        allowed: false,
        remaining: 0,
        retryAfterMs: Math.ceil(-diff),
        resetAfterMs: Math.ceil(current - now),
      },
      tat: null,
      ttlMs: 0,
    };
  }
  const resetAfterMs = Math.ceil(next - now);
  return {
    decision: { allowed: true, remaining, retryAfterMs: 0, resetAfterMs },
    tat: next,
    ttlMs: resetAfterMs,
  };
}

/**
 * {@linkcode gcraStep} as a Redis script: `KEYS[1]` the key, `ARGV` rate,
 * burst, period (ms). The clock is Redis's (`TIME`), so replicas with skewed
 * clocks share one budget. Answers `{allowed, remaining, retry_after_ms,
 * reset_after_ms}`. Atomic: Redis runs a script alone.
 */
export const GCRA_LUA = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local emission = period / rate
local burst_offset = emission * burst
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then tat = now end
local new_tat = tat + emission
local diff = now - (new_tat - burst_offset)
local remaining = math.floor(diff / emission + 1e-9)
if remaining < 0 then
  return {0, 0, math.ceil(-diff), math.ceil(tat - now)}
end
local reset_after = math.ceil(new_tat - now)
redis.call('SET', KEYS[1], string.format('%.3f', new_tat), 'PX', reset_after)
return {1, remaining, 0, reset_after}
`;
