/**
 * `demand_control` (config) → the engine's demand control options: `0` (not set) dropped, the
 * per-subgraph entries checked against the supergraph's subgraphs (an unknown name is logged
 * and ignored, as Apollo Router does).
 *
 * @module
 */
import type { Config } from "../config/mod.ts";
import type { DemandControlOptions, SubgraphCostOptions } from "../engine/mod.ts";
import type { Logger } from "../log/mod.ts";

function subgraphCost(
  entry: { readonly list_size: number; readonly max: number },
): SubgraphCostOptions {
  return {
    ...(entry.list_size > 0 ? { listSize: entry.list_size } : {}),
    ...(entry.max > 0 ? { max: entry.max } : {}),
  };
}

/**
 * The engine's demand control options of a config.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "../config/mod.ts";
 * import { demandControlOf } from "./demand_control.ts";
 * const config = parseConfig({ demand_control: { enabled: true, mode: "enforce",
 *   strategy: { static_estimated: { max: 50, subgraph: { subgraphs: { users: { max: 20 } } } } } } });
 * const options = demandControlOf(config, new Map([["users", {}]]), { warn: () => {} });
 * assert.equal(options.max, 50);
 * assert.deepEqual(options.subgraphs?.get("users"), { max: 20 });
 * ```
 * @param config The config.
 * @param subgraphs The supergraph's subgraphs by name.
 * @param log Where an unknown subgraph name is reported.
 * @returns The options.
 */
export function demandControlOf(
  config: Config,
  subgraphs: ReadonlyMap<string, unknown>,
  log: Pick<Logger, "warn">,
): DemandControlOptions {
  const strategy = config.demand_control.strategy.static_estimated;
  const bySubgraph = new Map<string, SubgraphCostOptions>();
  for (const [name, entry] of Object.entries(strategy.subgraph.subgraphs)) {
    if (!subgraphs.has(name)) {
      log.warn("demand_control names a subgraph the supergraph lacks; ignored", { subgraph: name });
      continue;
    }
    bySubgraph.set(name, subgraphCost(entry));
  }
  return {
    mode: config.demand_control.mode,
    listSize: strategy.list_size,
    max: strategy.max,
    enforceActual: strategy.enforce_actual_cost,
    exposeInExtensions: config.demand_control.expose_in_extensions,
    allSubgraphs: subgraphCost(strategy.subgraph.all),
    ...(bySubgraph.size > 0 ? { subgraphs: bySubgraph } : {}),
  };
}
