/**
 * Media types of GraphQL over HTTP: `Accept` negotiation and `Content-Type` checks.
 *
 * @module
 */

/** The GraphQL-over-HTTP response media type. */
export const GRAPHQL_RESPONSE_JSON = "application/graphql-response+json";
/** The legacy JSON media type. */
export const APPLICATION_JSON = "application/json";

/** A response media type the GraphQL facet can produce. */
export type GraphQLMediaType = typeof GRAPHQL_RESPONSE_JSON | typeof APPLICATION_JSON;

interface Range {
  readonly type: string;
  readonly subtype: string;
  readonly q: number;
}

function parseAccept(accept: string): Range[] {
  const ranges: Range[] = [];
  for (const part of accept.split(",")) {
    const [mediaRange = "", ...params] = part.split(";");
    const [type = "", subtype = ""] = mediaRange.trim().toLowerCase().split("/");
    if (type === "" || subtype === "") continue;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split("=").map((s) => s.trim());
      if (name?.toLowerCase() === "q" && value !== undefined) {
        const parsed = Number(value);
        q = Number.isFinite(parsed) ? Math.min(Math.max(parsed, 0), 1) : 1;
      }
    }
    ranges.push({ type, subtype, q });
  }
  return ranges;
}

function match(ranges: readonly Range[], mediaType: string): { q: number; specificity: number } {
  const [type, subtype] = mediaType.split("/");
  let best = { q: 0, specificity: -1 };
  for (const range of ranges) {
    const specificity = range.type === type && range.subtype === subtype
      ? 2
      : range.type === type && range.subtype === "*"
      ? 1
      : range.type === "*" && range.subtype === "*"
      ? 0
      : -1;
    if (specificity > best.specificity) best = { q: range.q, specificity };
  }
  return best;
}

/**
 * Picks the response media type: `application/graphql-response+json` when
 * asked for by name (and not ranked lower), `application/json` for
 * `application/json`, wildcards or no `Accept` header; null when neither is
 * acceptable (406).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { negotiateMediaType } from "./_media.ts";
 * assert.equal(negotiateMediaType(null), "application/json");
 * assert.equal(negotiateMediaType("*\/*"), "application/json");
 * assert.equal(
 *   negotiateMediaType("application/graphql-response+json, application/json;q=0.9"),
 *   "application/graphql-response+json",
 * );
 * assert.equal(negotiateMediaType("text/html"), null);
 * ```
 * @param accept The `Accept` header value.
 * @returns The media type, or null.
 */
export function negotiateMediaType(accept: string | null): GraphQLMediaType | null {
  if (accept === null || accept.trim() === "") return APPLICATION_JSON;
  const ranges = parseAccept(accept);
  const graphql = match(ranges, GRAPHQL_RESPONSE_JSON);
  const json = match(ranges, APPLICATION_JSON);
  if (graphql.q <= 0 && json.q <= 0) return null;
  if (graphql.q !== json.q) return graphql.q > json.q ? GRAPHQL_RESPONSE_JSON : APPLICATION_JSON;
  return graphql.specificity === 2 && graphql.specificity >= json.specificity
    ? GRAPHQL_RESPONSE_JSON
    : APPLICATION_JSON;
}

/**
 * Checks a request `Content-Type` for JSON in UTF-8 (parameters other than
 * `charset` are ignored).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isJsonContentType } from "./_media.ts";
 * assert.equal(isJsonContentType("application/json; charset=utf-8"), true);
 * assert.equal(isJsonContentType("text/plain"), false);
 * assert.equal(isJsonContentType("application/json; charset=latin1"), false);
 * ```
 * @param contentType The header value.
 * @returns True for `application/json` (UTF-8).
 */
export function isJsonContentType(contentType: string | null): boolean {
  if (contentType === null) return false;
  const [mediaType = "", ...params] = contentType.split(";").map((s) => s.trim().toLowerCase());
  if (mediaType !== APPLICATION_JSON) return false;
  for (const param of params) {
    const [name, value = ""] = param.split("=").map((s) => s.trim());
    if (
      name === "charset" && value.replace(/"/g, "") !== "utf-8" &&
      value.replace(/"/g, "") !== "utf8"
    ) {
      return false;
    }
  }
  return true;
}

/** The incremental delivery format GW speaks (Apollo's `deferSpec`). */
export const DEFER_SPEC = "20220824";

/**
 * True when `Accept` allows a `multipart/mixed` answer in Apollo's incremental format:
 * a `multipart/mixed` range with `q` above 0 whose `deferSpec`, when given, is
 * {@linkcode DEFER_SPEC} (`multipart/mixed;deferSpec=20220824`, as Apollo Client sends).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { acceptsIncremental } from "./_media.ts";
 * assert.equal(acceptsIncremental("multipart/mixed;deferSpec=20220824,application/json"), true);
 * assert.equal(acceptsIncremental("application/json"), false);
 * assert.equal(acceptsIncremental("multipart/mixed;deferSpec=20220824;q=0"), false);
 * ```
 * @param accept The `Accept` header value.
 * @returns Whether deferred parts may be sent.
 */
export function acceptsIncremental(accept: string | null): boolean {
  if (accept === null) return false;
  for (const part of accept.split(",")) {
    const [range = "", ...params] = part.split(";").map((s) => s.trim());
    if (range.toLowerCase() !== "multipart/mixed") continue;
    let q = 1;
    let spec: string | null = null;
    for (const param of params) {
      const [name = "", value = ""] = param.split("=").map((s) => s.trim());
      if (name.toLowerCase() === "q") q = Number(value);
      if (name.toLowerCase() === "deferspec") spec = value.replace(/"/g, "");
    }
    if (q > 0 && (spec === null || spec === DEFER_SPEC)) return true;
  }
  return false;
}
