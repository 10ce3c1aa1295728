/**
 * Headers as ART prints them (Go's `http.Header`: canonical names, value
 * lists), with credentials masked.
 *
 * @module
 */
import { MASK } from "../mask_url.ts";

/** Headers masked in every trace, whatever the configuration says. */
export const ALWAYS_MASKED_HEADERS: readonly string[] = Object.freeze([
  "authorization",
  "cookie",
  "set-cookie",
  "proxy-authorization",
  "www-authenticate",
  "x-gw-token",
]);

/** The text that replaces a masked header value (the one mask of URLs too). */
export { MASK };

/**
 * Builds the set of masked header names (lower case): the fixed list plus
 * configured extras.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { maskedHeaderSet } from "./headers.ts";
 * const masked = maskedHeaderSet(["X-Api-Key"]);
 * assert.ok(masked.has("x-api-key"));
 * assert.ok(masked.has("authorization"));
 * ```
 *
 * @param extras Further header names to mask (any case).
 * @returns The lower-cased set.
 */
export function maskedHeaderSet(extras: Iterable<string> = []): ReadonlySet<string> {
  const set = new Set(ALWAYS_MASKED_HEADERS);
  for (const name of extras) {
    const trimmed = name.trim().toLowerCase();
    if (trimmed !== "") set.add(trimmed);
  }
  return set;
}

/**
 * Builds the set of header names (lower case) whose values traces show
 * (`engine.request_tracing_unmasked_headers`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unmaskedHeaderSet } from "./headers.ts";
 * assert.ok(unmaskedHeaderSet(["Content-Type"]).has("content-type"));
 * ```
 * @param names Header names (any case).
 * @returns The lower-cased set.
 */
export function unmaskedHeaderSet(names: Iterable<string>): ReadonlySet<string> {
  const set = new Set<string>();
  for (const name of names) {
    const trimmed = name.trim().toLowerCase();
    if (trimmed !== "") set.add(trimmed);
  }
  return set;
}

/** Options for {@linkcode traceHeaders}. */
export interface TraceHeadersOptions {
  /** Lower-case names whose values become `****` even when allowed. */
  readonly masked: ReadonlySet<string>;
  /** Lower-case names whose values are shown; every other value becomes `****`. */
  readonly unmasked: ReadonlySet<string>;
  /** Drop `Date` (predictable timings). @default {false} */
  readonly dropDate?: boolean;
  /** Remove the port from `Host` (predictable timings). @default {false} */
  readonly blankPorts?: boolean;
}

/**
 * Converts headers to Go's `http.Header` JSON shape: canonical names
 * (`Content-Type`), each with a list of values. A value is shown only when
 * its name is allowed (`unmasked`) and not masked; names always stay.
 * `Headers` iterates in sorted order, so equal headers give equal JSON.
 *
 * @example Masking
 * ```ts
 * import assert from "node:assert/strict";
 * import { maskedHeaderSet, traceHeaders, unmaskedHeaderSet } from "./headers.ts";
 * const headers = new Headers({
 *   authorization: "Bearer secret", "content-type": "application/json", "x-api-key": "k",
 * });
 * const unmasked = unmaskedHeaderSet(["Content-Type", "Authorization"]);
 * assert.deepEqual(traceHeaders(headers, { masked: maskedHeaderSet(), unmasked }), {
 *   Authorization: ["****"],
 *   "Content-Type": ["application/json"],
 *   "X-Api-Key": ["****"],
 * });
 * ```
 *
 * @param headers The headers.
 * @param options Masked and shown names, and whether to drop `Date`.
 * @returns Canonical name → values.
 */
export function traceHeaders(
  headers: Headers,
  options: TraceHeadersOptions,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of headers) {
    if (options.dropDate === true && name === "date") continue;
    const key = canonicalHeaderName(name);
    const shown = options.masked.has(name) || !options.unmasked.has(name)
      ? MASK
      : options.blankPorts === true && name === "host"
      ? value.replace(/:\d+$/, "")
      : value;
    const list = out[key];
    if (list === undefined) out[key] = [shown];
    else if (shown !== MASK) list.push(shown);
  }
  return out;
}

/**
 * Go's `CanonicalMIMEHeaderKey`: `x-gw-trace` → `X-Gw-Trace`.
 * @param name A header name.
 * @returns The canonical form.
 */
export function canonicalHeaderName(name: string): string {
  return name.toLowerCase().replace(
    /(^|-)([a-z])/g,
    (_, dash: string, letter: string) => dash + letter.toUpperCase(),
  );
}
