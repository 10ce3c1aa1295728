/**
 * CORS, compiled once per config: origin matcher and fixed header values are
 * built here, so a request costs a lookup.
 *
 * @module
 */
import type { CorsConfig } from "../config/mod.ts";

/**
 * Headers browsers may always read from our responses (MCP sessions, auth
 * challenges, the request id every answer carries); `cors.expose_headers` adds to them.
 */
export const ALWAYS_EXPOSED: readonly string[] = [
  "Mcp-Session-Id",
  "WWW-Authenticate",
  "X-Request-Id",
];

const METHODS = "GET, POST, DELETE, OPTIONS";

/** A compiled CORS policy. */
export interface CorsPolicy {
  /** The answer to a preflight request, or null when the request is not one. */
  preflight(request: Request): Response | null;
  /** Adds the CORS headers a request's origin may see to a response. */
  apply(request: Request, response: Response): Response;
}

/**
 * Compiles a CORS policy. `allow_origins` entries are exact origins, `*`, or
 * patterns with `*` (`https://*.example.com`).
 *
 * @example Preflight and exposed headers
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileCors } from "./cors.ts";
 * const cors = compileCors({
 *   enabled: true,
 *   allow_origins: ["https://app.example"],
 *   allow_headers: ["Content-Type", "Authorization"],
 *   expose_headers: [],
 *   allow_credentials: false,
 *   max_age_seconds: 600,
 * });
 * const preflight = cors.preflight(new Request("http://r/graphql", {
 *   method: "OPTIONS",
 *   headers: { origin: "https://app.example", "access-control-request-method": "POST" },
 * }));
 * assert.equal(preflight?.status, 204);
 * assert.equal(preflight?.headers.get("access-control-allow-origin"), "https://app.example");
 * const response = cors.apply(
 *   new Request("http://r/mcp", { headers: { origin: "https://app.example" } }),
 *   new Response("{}"),
 * );
 * assert.equal(
 *   response.headers.get("access-control-expose-headers"),
 *   "Mcp-Session-Id, WWW-Authenticate, X-Request-Id",
 * );
 * ```
 * @param config The `cors` section.
 * @returns The policy.
 */
export function compileCors(config: CorsConfig): CorsPolicy {
  if (!config.enabled) {
    return { preflight: () => null, apply: (_request, response) => response };
  }
  const any = config.allow_origins.includes("*");
  const exact = new Set(config.allow_origins.filter((origin) => !origin.includes("*")));
  const patterns = config.allow_origins
    .filter((origin) => origin.includes("*") && origin !== "*")
    .map((origin) => originGlob(origin));
  const exposed = [...new Set([...ALWAYS_EXPOSED, ...config.expose_headers])].join(", ");
  const allowHeaders = config.allow_headers.join(", ");
  const maxAge = String(config.max_age_seconds);

  function allowedOrigin(origin: string | null): string | null {
    if (origin === null) return null;
    if (any) return config.allow_credentials ? origin : "*";
    if (exact.has(origin) || patterns.some((matches) => matches(origin))) return origin;
    return null;
  }

  function common(headers: Headers, origin: string): void {
    headers.set("access-control-allow-origin", origin);
    if (origin !== "*") headers.append("vary", "Origin");
    if (config.allow_credentials) headers.set("access-control-allow-credentials", "true");
  }

  return {
    preflight(request) {
      if (
        request.method !== "OPTIONS" || !request.headers.has("access-control-request-method")
      ) {
        return null;
      }
      const origin = allowedOrigin(request.headers.get("origin"));
      const headers = new Headers();
      if (origin !== null) {
        common(headers, origin);
        headers.set("access-control-allow-methods", METHODS);
        headers.set(
          "access-control-allow-headers",
          allowHeaders === ""
            ? request.headers.get("access-control-request-headers") ?? ""
            : allowHeaders,
        );
        headers.set("access-control-max-age", maxAge);
      }
      return new Response(null, { status: 204, headers });
    },
    apply(request, response) {
      const origin = allowedOrigin(request.headers.get("origin"));
      if (origin === null) return response;
      const result = mutable(response);
      common(result.headers, origin);
      result.headers.set("access-control-expose-headers", exposed);
      return result;
    },
  };
}

/**
 * A response whose headers can be set (responses from `fetch` have immutable headers).
 * @param response The response.
 * @returns It, or a copy with mutable headers.
 */
function mutable(response: Response): Response {
  try {
    response.headers.set("x-gw-probe", "1");
    response.headers.delete("x-gw-probe");
    return response;
  } catch {
    return new Response(response.body, response);
  }
}

/**
 * A wildcard origin (`https://*.example.com`: `*` is any run of characters
 * but `/`) as a matcher that runs in time linear in the origin for a given
 * pattern: the pattern's positions are simulated as a set of states, one
 * character at a time. A regular expression with several `[^/]*` would
 * backtrack: three wildcards and a 2 000-character `Origin` held the event
 * loop for seconds.
 */
function originGlob(pattern: string): (origin: string) => boolean {
  const size = pattern.length;
  // Positions reachable without reading a character: a `*` may match nothing.
  const close = (states: Uint8Array): void => {
    for (let i = 0; i < size; i++) if (states[i] === 1 && pattern[i] === "*") states[i + 1] = 1;
  };
  return (origin) => {
    let current = new Uint8Array(size + 1);
    let next = new Uint8Array(size + 1);
    current[0] = 1;
    close(current);
    for (let at = 0; at < origin.length; at++) {
      const char = origin[at];
      next.fill(0);
      for (let i = 0; i < size; i++) {
        if (current[i] !== 1) continue;
        const expected = pattern[i];
        if (expected === "*") {
          if (char !== "/") next[i] = 1;
        } else if (expected === char) {
          next[i + 1] = 1;
        }
      }
      close(next);
      if (!next.includes(1)) return false;
      [current, next] = [next, current];
    }
    return current[size] === 1;
  };
}
