/**
 * Header propagation (DESIGN §4, Cosmo's shape): rules compiled once per
 * subgraph; nothing is forwarded unless a rule says so.
 *
 * @module
 */
import type { HeaderRule, HeadersConfig } from "../../config/mod.ts";

/** Where a propagator writes: a `Headers`, or the plain list of {@linkcode headerPairs}. */
export interface HeaderSink {
  /** Sets a header (its name case-insensitive), replacing one of the same name. */
  set(name: string, value: string): void;
}

/** Compiled rules: client headers → the headers one subgraph gets. */
export type HeaderPropagator = (client: Headers | undefined, out: HeaderSink) => void;

/** A header name (an RFC 9110 token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What a header value may not hold (as `Headers` checks: NUL, CR, LF, past U+00FF). */
const NOT_IN_VALUE = /[\0\r\n]|[^\0-\xff]/;
/** The whitespace `Headers` strips from a value's ends. */
const ENDS = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * The headers a propagator makes, after `base`, as a plain list of lower-case
 * names and values: what `new Headers(base)` then `[...headers]` gave, without
 * building a `Headers` per subgraph and request (names and values are checked
 * as `Headers` checks them; the order is the rules', not sorted).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileHeaderRules, headerPairs } from "./headers.ts";
 * const propagate = compileHeaderRules(
 *   { all: { request: [{ op: "propagate", named: "X-Tenant" }] }, subgraphs: {} },
 *   "accounts",
 * )!;
 * const pairs = headerPairs(propagate, new Headers({ "x-tenant": " t1 " }), [["accept", "*\/*"]]);
 * assert.deepEqual(pairs, [["accept", "*\/*"], ["x-tenant", "t1"]]);
 * ```
 * @param propagate The compiled rules.
 * @param client The client's headers.
 * @param base The headers every subgraph request carries (lower-case names).
 * @returns The pairs.
 */
export function headerPairs(
  propagate: HeaderPropagator,
  client: Headers | undefined,
  base: readonly (readonly [string, string])[],
): [string, string][] {
  const pairs: [string, string][] = base.map(([name, value]) => [name, value]);
  propagate(client, {
    set(name, value) {
      const lower = name.toLowerCase();
      const trimmed = value.replace(ENDS, "");
      if (!TOKEN.test(lower)) throw new TypeError(`Invalid header name: "${name}"`);
      if (NOT_IN_VALUE.test(trimmed)) throw new TypeError(`Invalid header value of "${name}"`);
      for (const pair of pairs) {
        if (pair[0] === lower) {
          pair[1] = trimmed;
          return;
        }
      }
      pairs.push([lower, trimmed]);
    },
  });
  return pairs;
}

/** Hop-by-hop and body headers never propagated by a `matching` rule. */
const NEVER = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "content-type",
  "content-encoding",
  "accept",
  "accept-encoding",
  "host",
]);

/**
 * Credentials a `matching` rule never forwards: only a `named` rule does, so a
 * broad pattern (`^x-`, `.*`) cannot hand a client's token, cookies or the
 * trace token (`X-GW-Token`) to every subgraph.
 */
const CREDENTIALS = new Set(["authorization", "cookie", "x-gw-token"]);

/** Options of {@linkcode compileHeaderRules}. */
export interface HeaderRuleOptions {
  /**
   * More credential headers a pattern never forwards (lower-case), such as a
   * token header other than `Authorization` (`authentication.jwt.header_name`).
   */
  readonly credentials?: readonly string[];
}

function compileRule(rule: HeaderRule, credentials: ReadonlySet<string>): HeaderPropagator {
  if (rule.op === "set") {
    const { name, value } = rule;
    return (_client, out) => out.set(name, value);
  }
  if (rule.named !== undefined) {
    const named = rule.named.toLowerCase();
    const target = rule.rename ?? rule.named;
    const fallback = rule.default;
    return (client, out) => {
      const value = client?.get(named) ?? null;
      if (value !== null) out.set(target, value);
      else if (fallback !== undefined) out.set(target, fallback);
    };
  }
  if (rule.matching !== undefined) {
    const pattern = new RegExp(rule.matching, "i");
    return (client, out) => {
      if (!client) return;
      for (const [name, value] of client) {
        if (!NEVER.has(name) && !credentials.has(name) && pattern.test(name)) out.set(name, value);
      }
    };
  }
  return () => {};
}

/**
 * Compiles the header rules for one subgraph (`headers.all` first, then the subgraph's own).
 *
 * @example Only named headers are forwarded
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileHeaderRules } from "./headers.ts";
 * const propagate = compileHeaderRules(
 *   { all: { request: [{ op: "propagate", named: "X-Tenant" }] }, subgraphs: {} },
 *   "accounts",
 * );
 * const out = new Headers();
 * propagate?.(new Headers({ "x-tenant": "t1", cookie: "secret" }), out);
 * assert.deepEqual([...out], [["x-tenant", "t1"]]);
 * ```
 * @param config The `headers` config.
 * @param subgraph The subgraph name.
 * @param options More credential headers patterns never forward.
 * @returns The propagator, or null when no rule applies.
 */
export function compileHeaderRules(
  config: HeadersConfig | undefined,
  subgraph: string,
  options: HeaderRuleOptions = {},
): HeaderPropagator | null {
  const rules = [...(config?.all.request ?? []), ...(config?.subgraphs[subgraph]?.request ?? [])];
  if (rules.length === 0) return null;
  const credentials = new Set([
    ...CREDENTIALS,
    ...(options.credentials ?? []).map((name) => name.toLowerCase()),
  ]);
  const compiled = rules.map((rule) => compileRule(rule, credentials));
  return (client, out) => {
    for (const rule of compiled) rule(client, out);
  };
}
