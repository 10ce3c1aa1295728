/**
 * Demand control in the pipeline (`demand_control`, Apollo Router's shape): after the plan, the
 * operation's estimated cost (the sum over its planned subgraph operations, `cost/planned.ts`)
 * is compared with `max` — in `enforce` mode an operation over it is refused before any fetch
 * with `COST_ESTIMATED_TOO_EXPENSIVE`, and a subgraph whose share passes its own `max` is not
 * sent its requests (its fields null with `SUBGRAPH_COST_ESTIMATED_TOO_EXPENSIVE`); in `measure`
 * mode everything runs. After the answer its actual cost is measured (`cost/actual.ts`), and
 * refused with `COST_ACTUAL_TOO_EXPENSIVE` when `enforce_actual_cost` says so.
 *
 * The estimate is cached with the plan: per cached plan, by the values of the variables the
 * estimate read (slicing arguments, argument weights), so a cached document with the same
 * slicing values costs a map lookup.
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import { RouterError } from "../../errors.ts";
import { actualCost, CostError, type CostEstimate, estimatePlan } from "../cost/mod.ts";
import type { CostReport, PreparedOperation } from "../types.ts";
import type { CachedPlan, Engine } from "./engine.ts";
import type { DemandControl, DemandControlOptions, PlanCosts } from "./_cost_state.ts";

export type { DemandControl, DemandControlOptions, SubgraphCostOptions } from "./_cost_state.ts";

/** Estimates kept per plan (distinct slicing values); past it the map starts over. */
const MAX_ESTIMATES_PER_PLAN = 64;
/** Variable values longer than this (as JSON) are estimated per request, not kept. */
const MAX_KEY_CHARS = 2048;

function subgraphOption(
  options: DemandControlOptions,
  subgraph: string,
  key: "listSize" | "max",
): number | undefined {
  return options.subgraphs?.get(subgraph)?.[key] ?? options.allSubgraphs?.[key];
}

/** What demand control decided before execution. */
export interface CostAdmission {
  /** The estimate; null when it could not be made (`error`). */
  readonly estimate: CostEstimate | null;
  /** Why it could not be made. */
  readonly error: CostError | null;
  /** Request errors when the operation is refused (enforce mode); null when it runs. */
  readonly refusal: GraphQLFormattedError[] | null;
  /** Subgraphs whose share passed their `max` (enforce mode): their requests are not sent. */
  readonly overBudget: ReadonlyMap<string, { readonly estimated: number; readonly max: number }>;
  /** `COST_OK`, `COST_ESTIMATED_TOO_EXPENSIVE` or `COST_QUERY_PARSE_FAILURE`. */
  readonly result: string;
}

function estimateOf(
  engine: Engine,
  control: DemandControl,
  planned: CachedPlan,
  variables: Readonly<Record<string, unknown>>,
): CostEstimate | CostError {
  let costs: PlanCosts | undefined = control.byPlan.get(planned);
  if (costs === undefined) {
    costs = { variables: null, documents: new Map(), estimates: new Map() };
    control.byPlan.set(planned, costs);
  }
  let key: string | null = "";
  if (costs.variables !== null) {
    key = costs.variables.length === 0
      ? ""
      : JSON.stringify(costs.variables.map((name) => variables[name] ?? null));
    const kept = costs.estimates.get(key);
    if (kept !== undefined) return kept;
  }
  const touched = new Set<string>();
  const options = control.options;
  let estimate: CostEstimate | CostError;
  try {
    estimate = estimatePlan(engine.model.cost, planned.planned.plan, {
      variables,
      listSize: options.listSize,
      subgraphListSize: (subgraph) => subgraphOption(options, subgraph, "listSize"),
      touched,
      documents: costs.documents,
    });
  } catch (error) {
    if (!(error instanceof CostError)) throw error;
    estimate = error;
  }
  if (costs.variables === null) {
    costs.variables = [...touched].sort();
    key = costs.variables.length === 0
      ? ""
      : JSON.stringify(costs.variables.map((name) => variables[name] ?? null));
  }
  if (key !== null && key.length <= MAX_KEY_CHARS) {
    if (costs.estimates.size >= MAX_ESTIMATES_PER_PLAN) costs.estimates.clear();
    costs.estimates.set(key, estimate);
  }
  return estimate;
}

/**
 * The message of a refused estimate: both figures, and what the client can change.
 * @param estimated The estimate.
 * @param max The maximum.
 * @returns The message.
 */
export function estimatedTooExpensiveMessage(estimated: number, max: number): string {
  return `the operation's estimated cost ${estimated} is above the maximum ${max}: ` +
    "ask for fewer items (a smaller page size or slicing argument such as `first`) or fewer nested lists";
}

/**
 * Estimates the planned operation and decides whether it runs.
 *
 * @example Enforce: over `max` is refused, at `max` admitted
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSupergraph } from "../../supergraph/mod.ts";
 * import { createEngine, planOf, prepare } from "../mod.ts";
 * import { admitCost } from "./demand_control.ts";
 * import { planFor } from "./prepare_plan.ts";
 * const sdl = await Deno.readTextFile(new URL("../../../schema/supergraph.graphql", import.meta.url));
 * const engine = createEngine(buildSupergraph(sdl), {
 *   demandControl: { mode: "enforce", listSize: 10, max: 10 },
 * });
 * const prepared = prepare(engine, { query: "{ users { id } }" });
 * assert.ok(prepared.ok);
 * const planned = planFor(engine, prepared.operation, {}, { identity: null });
 * const admitted = admitCost(engine, planned, {});
 * assert.equal(admitted?.estimate?.total, 10);
 * assert.equal(admitted?.refusal, null);
 * ```
 * @param engine The engine.
 * @param planned The cached plan.
 * @param variables The coerced variables.
 * @returns The decision; null when demand control is off.
 */
export function admitCost(
  engine: Engine,
  planned: CachedPlan,
  variables: Readonly<Record<string, unknown>>,
): CostAdmission | null {
  const control = engine.demandControl;
  if (control === null) return null;
  const options = control.options;
  const enforce = options.mode === "enforce";
  const outcome = estimateOf(engine, control, planned, variables);
  if (outcome instanceof CostError) {
    const refusal = enforce
      ? [{
        message: `the operation cannot be costed: ${outcome.message}`,
        extensions: { code: outcome.code },
      }]
      : null;
    return { estimate: null, error: outcome, refusal, overBudget: NONE, result: outcome.code };
  }
  const overBudget = new Map<string, { estimated: number; max: number }>();
  if (enforce && (options.subgraphs !== undefined || options.allSubgraphs?.max !== undefined)) {
    for (const [subgraph, estimated] of outcome.bySubgraph) {
      const max = subgraphOption(options, subgraph, "max");
      if (max !== undefined && estimated > max) overBudget.set(subgraph, { estimated, max });
    }
  }
  if (outcome.total > options.max) {
    const code = "COST_ESTIMATED_TOO_EXPENSIVE";
    const refusal = enforce
      ? [{
        message: estimatedTooExpensiveMessage(outcome.total, options.max),
        extensions: { code, "cost.estimated": outcome.total, "cost.max": options.max },
      }]
      : null;
    return { estimate: outcome, error: null, refusal, overBudget, result: code };
  }
  return { estimate: outcome, error: null, refusal: null, overBudget, result: "COST_OK" };
}

const NONE: ReadonlyMap<string, { readonly estimated: number; readonly max: number }> = new Map();

/**
 * The refusal of a subgraph request over its share of the budget (thrown by the sender, so the
 * executor answers that subgraph's fields null with this error).
 * @param subgraph The subgraph.
 * @param budget Its estimated share and its maximum.
 * @returns The error.
 */
export function subgraphTooExpensive(
  subgraph: string,
  budget: { readonly estimated: number; readonly max: number },
): RouterError {
  return new RouterError(
    "SUBGRAPH_COST_ESTIMATED_TOO_EXPENSIVE",
    `subgraph ${subgraph}: its part of the estimated cost, ${budget.estimated}, is above its maximum ${budget.max}`,
    {
      details: {
        "cost.subgraph": subgraph,
        "cost.subgraph.estimated": budget.estimated,
        "cost.subgraph.max": budget.max,
      },
    },
  );
}

/**
 * Measures an answer's actual cost and applies the rest of demand control: the report (metrics,
 * access log, trace), `enforce_actual_cost`, `extensions.cost`.
 * @param engine The engine.
 * @param admission What {@linkcode admitCost} decided.
 * @param at The operation, its variables, its answer and where to report.
 * @returns The answer to send (the same object when nothing changes).
 */
export function measureCost<
  T extends {
    data?: Record<string, unknown> | null;
    errors?: GraphQLFormattedError[];
    extensions?: Record<string, unknown>;
  },
>(
  engine: Engine,
  admission: CostAdmission,
  at: {
    readonly operation: PreparedOperation;
    readonly variables: Readonly<Record<string, unknown>>;
    readonly result: T;
    readonly report?: ((report: CostReport) => void) | undefined;
  },
): T {
  const options = engine.demandControl!.options;
  const { operation, result } = at;
  const actual = result.data === undefined || result.data === null
    ? null
    : actualCost(engine.model.cost, operation.document, {
      data: result.data,
      variables: at.variables,
      operation: operation.operation,
    });
  const refuseActual = options.mode === "enforce" && options.enforceActual === true &&
    actual !== null && actual > options.max;
  const report: CostReport = {
    estimated: admission.estimate?.total ?? null,
    actual,
    result: refuseActual ? "COST_ACTUAL_TOO_EXPENSIVE" : admission.result,
  };
  engine.events?.cost?.(report);
  at.report?.(report);
  let answer: T = result;
  if (refuseActual) {
    answer = {
      ...result,
      data: null,
      errors: [{
        message: `the answer's actual cost ${actual} is above the maximum ${options.max}`,
        extensions: {
          code: "COST_ACTUAL_TOO_EXPENSIVE",
          "cost.actual": actual,
          "cost.max": options.max,
        },
      }],
    };
  }
  if (options.exposeInExtensions) {
    const cost = {
      estimated: report.estimated,
      actual: report.actual,
      max: options.max,
      result: report.result,
      strategy: "static_estimated",
    };
    answer = { ...answer, extensions: { ...answer.extensions, cost } };
  }
  return answer;
}

/**
 * Reports an operation refused before execution (its estimate, no actual cost).
 * @param engine The engine.
 * @param admission The refusal.
 * @param report Where the request's own report goes.
 */
export function reportRefusal(
  engine: Engine,
  admission: CostAdmission,
  report?: (report: CostReport) => void,
): void {
  const record: CostReport = {
    estimated: admission.estimate?.total ?? null,
    actual: null,
    result: admission.result,
  };
  engine.events?.cost?.(record);
  report?.(record);
}
