/**
 * The pipeline: what ties the stages together, as Hive Router's pipeline does:
 *
 * - `engine.ts` — the engine object: options, caches, admission, memory
 *   budgets, subgraph client, subscriptions;
 * - `prepare_plan.ts` — the cached front: prepare (parse, validate, select)
 *   and the plan cache;
 * - `run.ts` — an operation run through execute, fetch and admission: whole,
 *   incremental (`@defer`) or as a subscription.
 *
 * @module
 */
export {
  createEngine,
  type Engine,
  type EngineEntityCache,
  type EngineOptions,
  responseTooLarge,
  type SubgraphFetch,
} from "./engine.ts";
export { planOf, prepare, type PrepareCallOptions, prepareUncached } from "./prepare_plan.ts";
export { execute, executeIncremental, subscribe } from "./run.ts";
export {
  admitCost,
  type CostAdmission,
  type DemandControlOptions,
  type SubgraphCostOptions,
} from "./demand_control.ts";
