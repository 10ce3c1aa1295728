/**
 * Demand control's options and its state in the engine (estimates cached per plan), apart from
 * `demand_control.ts` so the engine object can hold it without an import circle.
 *
 * @module
 */
import type { DocumentNode } from "graphql";
import type { CostError, CostEstimate } from "../cost/mod.ts";

/** A subgraph's own settings (`strategy.static_estimated.subgraph`). */
export interface SubgraphCostOptions {
  /** Its list size; absent: the router's. */
  readonly listSize?: number;
  /** Its share's maximum; absent: none. */
  readonly max?: number;
}

/** Options of demand control ({@linkcode EngineOptions.demandControl}). */
export interface DemandControlOptions {
  /** `enforce`: refuse over `max`; `measure`: record only. */
  readonly mode: "measure" | "enforce";
  /** The size of a list nothing else sizes. */
  readonly listSize: number;
  /** The largest estimated cost admitted (enforce mode). */
  readonly max: number;
  /** Enforce mode: an answer whose actual cost passes `max` is refused too. @default false */
  readonly enforceActual?: boolean;
  /** Add `extensions.cost` to answers. @default false */
  readonly exposeInExtensions?: boolean;
  /** Every subgraph's settings (`subgraph.all`), overridden by `subgraphs`. */
  readonly allSubgraphs?: SubgraphCostOptions;
  /** Per subgraph name (`subgraph.subgraphs`). */
  readonly subgraphs?: ReadonlyMap<string, SubgraphCostOptions>;
}

/** Estimates of one cached plan. */
export interface PlanCosts {
  /** The variables the estimate reads (null until the first estimate). */
  variables: readonly string[] | null;
  readonly documents: Map<string, DocumentNode>;
  readonly estimates: Map<string, CostEstimate | CostError>;
}

/** Demand control's state in the engine. */
export interface DemandControl {
  readonly options: DemandControlOptions;
  /** @internal Estimates by cached plan (dropped with the plan). */
  readonly byPlan: WeakMap<object, PlanCosts>;
}

/**
 * Builds demand control's state.
 * @param options The options (validated by the config reader).
 * @returns The state.
 */
export function createDemandControl(options: DemandControlOptions): DemandControl {
  return { options, byPlan: new WeakMap() };
}
