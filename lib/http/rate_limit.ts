/**
 * Rate limits at the edge (`rate_limit`, issue 30): one GCRA budget per
 * client key and facet, checked before a request's body is read or a slot
 * taken. Over the limit: 429 `RATE_LIMITED` with `Retry-After` (seconds,
 * rounded up) in the facet's own error shape (GraphQL errors, Connect
 * `resource_exhausted`, MCP's JSON-RPC error before any JSON-RPC is read).
 * Every limited response carries the IETF draft's three fields
 * (draft-ietf-httpapi-ratelimit-headers, the form clients and proxies read
 * today): `RateLimit-Limit` (the burst), `RateLimit-Remaining`,
 * `RateLimit-Reset` (seconds until the budget is full again).
 *
 * The key: `client_ip` (the connection's peer, or behind a trusted proxy the
 * right-most untrusted `X-Forwarded-For` entry), `token_subject` (the
 * verified token's issuer and subject; anonymous requests by client IP) or
 * `header:<Name>` (that header's value; requests without it by client IP).
 *
 * @module
 */
import { resolveIdentity } from "../auth/mod.ts";
import type { RateLimitConfig } from "../config/mod.ts";
import { RouterError } from "../errors.ts";
import type { Logger } from "../log/mod.ts";
import { type Cidr, clientIp, parseCidr } from "../request/mod.ts";
import type { RouterState } from "../state/mod.ts";
import type { GcraLimit } from "../store/mod.ts";

/** The facets a limit applies to. */
export type LimitedFacet = "graphql" | "mcp" | "connect";

/** A check's verdict: a refusal to answer with, and headers for the response. */
export interface RateLimitVerdict {
  /** The error to answer with (429, or 503 when failing closed); null: go on. */
  readonly refusal: RouterError | null;
  /** `RateLimit-*` fields for the response (empty when the store could not answer). */
  readonly headers: Readonly<Record<string, string>>;
}

/** Checks one request of a facet; `peer` is the connection's remote address (null: unknown). */
export type RateLimitCheck = (
  facet: LimitedFacet,
  request: Request,
  peer: string | null,
) => Promise<RateLimitVerdict>;

/**
 * A facet's limit: its own numbers where set, else `rate_limit`'s; null when off.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "../config/mod.ts";
 * import { facetLimit } from "./rate_limit.ts";
 * const config = parseConfig({ rate_limit: { enabled: true, rate: 5, mcp: { rate: 1 } } }, { env: {}, baseDir: "." });
 * assert.deepEqual(facetLimit(config.rate_limit, "mcp"), { rate: 1, burst: 10, periodMs: 1000 });
 * assert.deepEqual(facetLimit(config.rate_limit, "graphql"), { rate: 5, burst: 10, periodMs: 1000 });
 * ```
 * @param config `rate_limit`.
 * @param facet The facet.
 * @returns The limit, or null.
 */
export function facetLimit(config: RateLimitConfig, facet: LimitedFacet): GcraLimit | null {
  const own = config[facet];
  if (!config.enabled || !own.enabled) return null;
  return {
    rate: own.rate || config.rate,
    burst: own.burst || config.burst,
    periodMs: own.period_ms || config.period_ms,
  };
}

/**
 * Compiles the state's rate limit (null when `rate_limit.enabled` is false).
 * @param state The router state.
 * @param options Metrics hook.
 * @returns The check.
 */
export function compileRateLimit(
  state: RouterState,
  options: { readonly counted?: (facet: LimitedFacet, outcome: string) => void } = {},
): RateLimitCheck | null {
  const config = state.config.rate_limit;
  if (!config.enabled) return null;
  const limits: Record<LimitedFacet, GcraLimit | null> = {
    graphql: facetLimit(config, "graphql"),
    mcp: facetLimit(config, "mcp"),
    connect: facetLimit(config, "connect"),
  };
  // Validated at load (lib/config/_validate.ts): every entry parses.
  const trusted = config.trusted_proxies.map((cidr) => parseCidr(cidr)!);
  const keyOf = keyFunction(config.key, { state, trusted });
  const limiter = state.stores.rateLimiter;
  const counted = options.counted ?? (() => {});
  const log: Logger = state.log;
  return async (facet, request, peer) => {
    const limit = limits[facet];
    if (limit === null) return { refusal: null, headers: NO_HEADERS };
    const key = await keyOf(request, peer);
    const outcome = await limiter.check(`${facet}:${key}`, limit);
    if (outcome.kind === "fail_open") {
      counted(facet, "fail_open");
      return { refusal: null, headers: NO_HEADERS };
    }
    if (outcome.kind !== "decided") {
      counted(facet, "fail_closed");
      return {
        refusal: new RouterError(
          "SERVICE_OVERLOADED",
          "The rate limit cannot be checked (its store is unavailable; rate_limit.fail_open is false); try again",
          { details: { retry_after: 1 } },
        ),
        headers: NO_HEADERS,
      };
    }
    const { decision } = outcome;
    const headers = {
      "ratelimit-limit": String(limit.burst),
      "ratelimit-remaining": String(decision.remaining),
      "ratelimit-reset": String(Math.ceil(decision.resetAfterMs / 1000)),
    };
    if (decision.allowed) return { refusal: null, headers };
    if (!config.reject_exceeding_requests) {
      counted(facet, "logged");
      log.info("Request over its rate limit (reject_exceeding_requests is false)", {
        facet,
        key,
      });
      return { refusal: null, headers };
    }
    counted(facet, "rejected");
    const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    return {
      refusal: new RouterError(
        "RATE_LIMITED",
        `Too many requests: over the rate limit of ${limit.rate} per ${limit.periodMs} ms (burst ${limit.burst}); retry in ${seconds} s`,
        { details: { retry_after: seconds } },
      ),
      headers,
    };
  };
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** The key of a request by `rate_limit.key`. */
function keyFunction(
  key: string,
  context: { readonly state: RouterState; readonly trusted: readonly Cidr[] },
): (request: Request, peer: string | null) => Promise<string> {
  const { state, trusted } = context;
  const ipOf = (request: Request, peer: string | null): string =>
    "ip:" + (clientIp(peer, request.headers.get("x-forwarded-for"), trusted) ?? "unknown");
  if (key === "client_ip") return (request, peer) => Promise.resolve(ipOf(request, peer));
  if (key.startsWith("header:")) {
    const name = key.slice("header:".length).toLowerCase();
    return (request, peer) => {
      const value = request.headers.get(name);
      return Promise.resolve(value === null ? ipOf(request, peer) : `h:${value.slice(0, 256)}`);
    };
  }
  // token_subject: a verified token's issuer and subject, never an unverified claim.
  return async (request, peer) => {
    const identity = await resolveIdentity(request, { authorization: state.authorization });
    if (identity.ok && identity.token !== null) {
      return `sub:${identity.token.issuer}|${identity.token.subject}`;
    }
    return ipOf(request, peer);
  };
}
