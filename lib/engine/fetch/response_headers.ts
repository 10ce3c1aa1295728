/**
 * Response header rules (`headers.all.response`, `headers.subgraphs.<name>.response`;
 * issue 43): which headers of the subgraphs' answers reach the client, in the
 * request rules' shape. Nothing reaches the client unless a rule names it.
 *
 * Each rule runs on each answer of its subgraphs; the values of one client
 * response's answers merge by header: `Set-Cookie` values are all appended,
 * `Cache-Control` values merge to the most restrictive
 * ({@linkcode mergeCacheControl}), any other header keeps the first value an
 * answer gave (a rule's `default` only where no answer gave one).
 *
 * @module
 */
import type { HeaderRule, HeadersConfig } from "../../config/mod.ts";

/** Headers of the router's own response that no rule may set from a subgraph's. */
const NEVER = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "content-type",
  "content-encoding",
  "date",
  "server",
  "x-request-id",
]);

/** True for a header the router answers itself (CORS, rate limits), never a subgraph's. */
function routerOwned(name: string): boolean {
  return NEVER.has(name) || name.startsWith("access-control-") || name.startsWith("ratelimit-");
}

/** `Set-Cookie` (and `WWW-Authenticate`) reach the client only by a `named` rule. */
const CREDENTIALS = new Set(["set-cookie", "www-authenticate"]);

const SET_COOKIE = "set-cookie";
const CACHE_CONTROL = "cache-control";

/** Where one answer's propagated headers go. */
interface Sink {
  /** A value an answer gave (merged by header). */
  value(name: string, value: string): void;
  /** A rule's default for a header (used where no answer gave one). */
  fallback(name: string, value: string): void;
}

/** One compiled rule: reads one subgraph answer's headers into the sink. */
type CompiledRule = (answer: Headers, sink: Sink) => void;

function compileRule(rule: HeaderRule): CompiledRule {
  if (rule.op === "set") {
    const { name, value } = rule;
    return routerOwned(name.toLowerCase()) ? () => {} : (_answer, sink) => sink.value(name, value);
  }
  if (rule.named !== undefined) {
    const named = rule.named.toLowerCase();
    const target = rule.rename ?? rule.named;
    const fallback = rule.default;
    if (routerOwned(named) || routerOwned(target.toLowerCase())) return () => {};
    if (named === SET_COOKIE) {
      return (answer, sink) => {
        for (const value of answer.getSetCookie()) sink.value(target, value);
      };
    }
    return (answer, sink) => {
      const value = answer.get(named);
      if (value !== null) sink.value(target, value);
      else if (fallback !== undefined) sink.fallback(target, fallback);
    };
  }
  if (rule.matching !== undefined) {
    const pattern = new RegExp(rule.matching, "i");
    return (answer, sink) => {
      for (const [name, value] of answer) {
        if (!routerOwned(name) && !CREDENTIALS.has(name) && pattern.test(name)) {
          sink.value(name, value);
        }
      }
    };
  }
  return () => {};
}

/** The headers of one client response, gathered from its subgraph answers. */
export interface ResponseHeaderCollector {
  /** Takes one subgraph answer's headers (each fetch, as it answers). */
  readonly add: (subgraph: string, headers: Headers) => void;
  /** Writes the merged headers into the client response's headers. */
  apply(out: Headers): void;
}

/** Response header rules compiled for every subgraph. */
export interface ResponseHeaderRules {
  /** A collector for one client response. */
  collect(): ResponseHeaderCollector;
}

/**
 * Compiles the response header rules (`headers.all.response` first, then each
 * subgraph's own).
 *
 * @example A Set-Cookie by a named rule; another header no rule names stays out
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileResponseHeaderRules } from "./response_headers.ts";
 * const rules = compileResponseHeaderRules(
 *   { all: { request: [], response: [{ op: "propagate", named: "Set-Cookie" }] }, subgraphs: {} },
 *   ["accounts", "products"],
 * );
 * const collector = rules!.collect();
 * const answer = new Headers({ "x-internal": "1" });
 * answer.append("set-cookie", "a=1");
 * collector.add("accounts", answer);
 * collector.add("products", new Headers([["set-cookie", "b=2"]]));
 * const out = new Headers();
 * collector.apply(out);
 * assert.deepEqual(out.getSetCookie(), ["a=1", "b=2"]);
 * assert.equal(out.get("x-internal"), null);
 * ```
 * @param config The `headers` config.
 * @param subgraphs The subgraph names.
 * @returns The rules, or null when no response rule applies to any subgraph.
 */
export function compileResponseHeaderRules(
  config: HeadersConfig | undefined,
  subgraphs: Iterable<string>,
): ResponseHeaderRules | null {
  const bySubgraph = new Map<string, readonly CompiledRule[]>();
  for (const subgraph of subgraphs) {
    const rules = [
      ...(config?.all.response ?? []),
      ...(config?.subgraphs[subgraph]?.response ?? []),
    ];
    if (rules.length > 0) bySubgraph.set(subgraph, rules.map(compileRule));
  }
  if (bySubgraph.size === 0) return null;
  return {
    collect() {
      /** Lower-case name → the name as the rule spelled it and the answers' values. */
      const values = new Map<string, { name: string; values: string[] }>();
      const fallbacks = new Map<string, { name: string; value: string }>();
      const sink: Sink = {
        value(name, value) {
          const key = name.toLowerCase();
          const entry = values.get(key);
          if (entry === undefined) values.set(key, { name, values: [value] });
          else entry.values.push(value);
        },
        fallback(name, value) {
          const key = name.toLowerCase();
          if (!fallbacks.has(key)) fallbacks.set(key, { name, value });
        },
      };
      return {
        add(subgraph, headers) {
          const rules = bySubgraph.get(subgraph);
          if (rules === undefined) return;
          for (const rule of rules) rule(headers, sink);
        },
        apply(out) {
          for (const [key, entry] of values) {
            if (key === SET_COOKIE) {
              for (const value of entry.values) out.append(entry.name, value);
            } else if (key === CACHE_CONTROL) {
              const merged = mergeCacheControl(entry.values);
              if (merged !== null) out.set(entry.name, merged);
            } else {
              out.set(entry.name, entry.values[0]!);
            }
          }
          for (const [key, { name, value }] of fallbacks) {
            if (!values.has(key)) out.set(name, value);
          }
        },
      };
    },
  };
}

/**
 * Merges `Cache-Control` values to the most restrictive: `no-store` if any says
 * so; else `no-cache` if any, `private` if any (`public` only if all), the
 * smallest `max-age` and `s-maxage`, and `must-revalidate` if any.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mergeCacheControl } from "./response_headers.ts";
 * assert.equal(mergeCacheControl(["public, max-age=60", "private, max-age=30"]), "private, max-age=30");
 * assert.equal(mergeCacheControl(["public, max-age=60", "public, max-age=120, s-maxage=90"]), "public, max-age=60, s-maxage=90");
 * assert.equal(mergeCacheControl(["max-age=60", "no-store"]), "no-store");
 * ```
 * @param values The answers' values.
 * @returns The merged value, or null when none says anything.
 */
export function mergeCacheControl(values: readonly string[]): string | null {
  let noStore = false;
  let noCache = false;
  let isPrivate = false;
  let allPublic = values.length > 0;
  let mustRevalidate = false;
  let maxAge: number | null = null;
  let sMaxAge: number | null = null;
  for (const value of values) {
    let isPublic = false;
    for (const part of value.split(",")) {
      const [rawName, rawArg] = part.split("=", 2);
      const name = (rawName ?? "").trim().toLowerCase();
      const arg = rawArg === undefined ? null : Number(rawArg.trim().replace(/^"|"$/g, ""));
      if (name === "no-store") noStore = true;
      else if (name === "no-cache") noCache = true;
      else if (name === "private") isPrivate = true;
      else if (name === "public") isPublic = true;
      else if (name === "must-revalidate") mustRevalidate = true;
      else if (name === "max-age" && arg !== null && Number.isInteger(arg) && arg >= 0) {
        maxAge = maxAge === null ? arg : Math.min(maxAge, arg);
      } else if (name === "s-maxage" && arg !== null && Number.isInteger(arg) && arg >= 0) {
        sMaxAge = sMaxAge === null ? arg : Math.min(sMaxAge, arg);
      }
    }
    if (!isPublic) allPublic = false;
  }
  if (noStore) return "no-store";
  const parts: string[] = [];
  if (noCache) parts.push("no-cache");
  if (isPrivate) parts.push("private");
  else if (allPublic) parts.push("public");
  if (mustRevalidate) parts.push("must-revalidate");
  if (maxAge !== null) parts.push(`max-age=${maxAge}`);
  if (sMaxAge !== null && !isPrivate) parts.push(`s-maxage=${sMaxAge}`);
  return parts.length === 0 ? null : parts.join(", ");
}
