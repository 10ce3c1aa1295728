/**
 * Progressive `@override` labels: which ones a supergraph uses, and which are active for one
 * request. A `percent(n)` label is active for about n % of requests (drawn per request with the
 * injected random source); any other label is inactive (nothing activates it yet).
 *
 * @module
 */
import type { SupergraphModel } from "../../supergraph/mod.ts";

/** A progressive override label of the supergraph. */
export interface OverrideLabel {
  readonly label: string;
  /** The share of requests it is active for, 0–100; null for a label that is not `percent(n)`. */
  readonly percent: number | null;
}

/**
 * The progressive override labels of a supergraph, sorted by label.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSupergraph } from "../../supergraph/mod.ts";
 * import { overrideLabelsOf } from "./override_labels.ts";
 * const sdl = await Deno.readTextFile(new URL("../../../schema/supergraph.graphql", import.meta.url));
 * assert.deepEqual(overrideLabelsOf(buildSupergraph(sdl)), []);
 * ```
 * @param model The supergraph model.
 * @returns Its labels.
 */
export function overrideLabelsOf(model: SupergraphModel): readonly OverrideLabel[] {
  const labels = new Map<string, OverrideLabel>();
  for (const type of model.types.values()) {
    for (const field of type.fields.values()) {
      const label = field.progressiveOverride?.label;
      if (label === undefined || labels.has(label)) continue;
      const match = /^percent\((\d+(?:\.\d+)?)\)$/.exec(label);
      labels.set(label, { label, percent: match ? Math.min(100, Number(match[1])) : null });
    }
  }
  return [...labels.values()].sort((a, b) => (a.label < b.label ? -1 : 1));
}

/** Labels set on or off by name, by the request and by the configuration. */
export interface OverrideLabelSettings {
  /** The request's (a plugin or request context); wins over `configured`. */
  readonly requested?: Readonly<Record<string, boolean>> | undefined;
  /** The configuration's (`override_labels`). */
  readonly configured?: Readonly<Record<string, boolean>> | undefined;
}

/**
 * The labels active for one request: a label the request or the configuration
 * sets is on or off as set (the request's first); any other `percent(n)` label
 * is drawn, and any other named label is off.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { drawOverrideLabels } from "./override_labels.ts";
 * const labels = [
 *   { label: "beta", percent: null },
 *   { label: "percent(0)", percent: 0 },
 *   { label: "percent(100)", percent: 100 },
 * ];
 * assert.deepEqual([...drawOverrideLabels(labels, () => 0)], ["percent(100)"]);
 * const configured = { beta: true, "percent(100)": false };
 * assert.deepEqual([...drawOverrideLabels(labels, () => 0, { configured })], ["beta"]);
 * const requested = { beta: false };
 * assert.deepEqual([...drawOverrideLabels(labels, () => 0, { configured, requested })], []);
 * ```
 * @param labels The supergraph's labels.
 * @param random Uniform random numbers in [0, 1).
 * @param settings Labels the request and the configuration set.
 * @returns The active labels, in label order.
 */
export function drawOverrideLabels(
  labels: readonly OverrideLabel[],
  random: () => number,
  settings: OverrideLabelSettings = {},
): Set<string> {
  const { requested, configured } = settings;
  const active = new Set<string>();
  for (const { label, percent } of labels) {
    const set = requested?.[label] ?? configured?.[label];
    if (set !== undefined) {
      if (set) active.add(label);
    } else if (percent !== null && random() * 100 < percent) active.add(label);
  }
  return active;
}
