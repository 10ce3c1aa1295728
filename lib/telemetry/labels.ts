/**
 * Bounded label values: every value a client controls (operation names,
 * client names and versions) is cleaned, capped in length, and admitted only
 * while the label has fewer than a fixed number of distinct values, so a
 * client cannot grow the metrics registry without bound.
 *
 * @module
 */

/** The value of a label whose real value is absent or not allowed. */
export const UNKNOWN_LABEL = "unknown";
/** The value of a label whose distinct values are used up. */
export const OTHER_LABEL = "other";

/** Longest label value kept (longer ones are cut). */
export const MAX_LABEL_LENGTH = 64;

/** Characters kept in a client-controlled label value; others become `_`. */
const UNSAFE = /[^A-Za-z0-9_.:\-/@+ ]/g;

/**
 * A client-controlled value made safe for a label or a log field: cut to
 * {@linkcode MAX_LABEL_LENGTH}, unsafe characters replaced by `_`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cleanLabelValue } from "./labels.ts";
 * assert.equal(cleanLabelValue('web"\n'), "web__");
 * ```
 * @param raw The raw value.
 * @returns The cleaned value.
 */
export function cleanLabelValue(raw: string): string {
  return (raw.length > MAX_LABEL_LENGTH ? raw.slice(0, MAX_LABEL_LENGTH) : raw).replace(
    UNSAFE,
    "_",
  );
}

/** A label that admits at most `max` distinct values (then {@linkcode OTHER_LABEL}). */
export interface BoundedLabel {
  /**
   * The label value for a raw value: cleaned and capped; null or empty gives
   * {@linkcode UNKNOWN_LABEL}; a new value past the limit gives {@linkcode OTHER_LABEL}.
   */
  value(raw: string | null | undefined): string;
  /** Distinct values admitted so far. */
  readonly size: number;
}

/**
 * Creates a bounded label.
 *
 * @example The third distinct client name is "other"
 * ```ts
 * import assert from "node:assert/strict";
 * import { createBoundedLabel } from "./labels.ts";
 * const label = createBoundedLabel(2);
 * assert.equal(label.value("web"), "web");
 * assert.equal(label.value("ios"), "ios");
 * assert.equal(label.value("android"), "other");
 * assert.equal(label.value("web"), "web");
 * assert.equal(label.value(null), "unknown");
 * ```
 * @param max Distinct values admitted.
 * @returns The label.
 */
export function createBoundedLabel(max: number): BoundedLabel {
  const seen = new Set<string>();
  // Raw values already admitted, so a repeat (every request of a known
  // client) skips the cleaning regex. Bounded too: several raw values can
  // clean to one label, and a client picks them.
  const known = new Map<string, string>();
  const maxKnown = 4 * max;
  return {
    value(raw) {
      if (raw === null || raw === undefined || raw === "") return UNKNOWN_LABEL;
      const hit = known.get(raw);
      if (hit !== undefined) return hit;
      const clean = cleanLabelValue(raw);
      if (!seen.has(clean)) {
        if (seen.size >= max) return OTHER_LABEL;
        seen.add(clean);
      }
      if (known.size < maxKnown) known.set(raw, clean);
      return clean;
    },
    get size() {
      return seen.size;
    },
  };
}

/** Client identity headers, first present wins (Cosmo's and Apollo's names). */
const CLIENT_NAME_HEADERS = ["graphql-client-name", "apollographql-client-name"] as const;
const CLIENT_VERSION_HEADERS = ["graphql-client-version", "apollographql-client-version"] as const;

/**
 * The raw client name and version a request announces (`graphql-client-name`
 * / `apollographql-client-name` and their `-version` twins), or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clientOf } from "./labels.ts";
 * const headers = new Headers({ "apollographql-client-name": "web", "graphql-client-version": "2" });
 * assert.deepEqual(clientOf(headers), { name: "web", version: "2" });
 * ```
 * @param headers The request headers.
 * @returns Name and version (each null when absent).
 */
export function clientOf(headers: Headers): { name: string | null; version: string | null } {
  return {
    name: first(headers, CLIENT_NAME_HEADERS),
    version: first(headers, CLIENT_VERSION_HEADERS),
  };
}

function first(headers: Headers, names: readonly string[]): string | null {
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null) return value;
  }
  return null;
}

/** OpenTelemetry's advised buckets for `http.*.request.duration`, seconds. */
export const DURATION_BUCKETS: readonly number[] = [
  0.005,
  0.01,
  0.025,
  0.05,
  0.075,
  0.1,
  0.25,
  0.5,
  0.75,
  1,
  2.5,
  5,
  7.5,
  10,
];
