/**
 * The query planner over a query graph: a normalized operation + the supergraph model → a plain,
 * printable {@linkcode QueryPlan} (Apollo/Hive node names) and its executable twin
 * ({@linkcode PlanStep}). Pure and deterministic: equal inputs give byte-equal JSON.
 *
 * Stages, one module each:
 * 1. `graph.ts` — the query graph of the supergraph (built once per model);
 * 2. `paths.ts` — the ways to resolve a field from a position, with costs;
 * 3. `best.ts` — the best combination across sibling fields (bounded search, look-ahead);
 * 4. `fetch_graph.ts` (+ `requirements.ts`, `abstract.ts`) — fetch groups from the chosen paths;
 * 5. `optimize/*` — small named passes over the fetch graph;
 * 6. `emit.ts` — plan nodes and executable steps.
 *
 * @module
 */
import type { SupergraphModel } from "../../supergraph/mod.ts";
import type { NormalizedOperation } from "../prepare/normalize.ts";
import { queryGraphOf } from "./graph.ts";
import { createSearch, DEFAULT_SEARCH_BUDGET } from "./best.ts";
import { buildFetchGraph } from "./fetch_graph.ts";
import { optimize } from "./optimize/mod.ts";
import { emitPlan } from "./emit.ts";
import type { PlannedOperation } from "./types.ts";

export * from "./types.ts";

/** Options of {@linkcode planOperation}. */
export interface PlanOptions {
  /**
   * Look-ahead steps the search for the best combination may take per operation; past it, the
   * remaining choices take their cheapest candidate and the plan carries `searchTruncated`.
   * @default {20000}
   */
  readonly searchBudget?: number;
  /** Progressive `@override` labels active for this plan (see `graph.ts`). @default none */
  readonly overrideLabels?: ReadonlySet<string>;
}

/**
 * Plans a normalized operation.
 *
 * @example One root field, one fetch
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse } from "graphql";
 * import { normalizeOperation } from "../prepare/normalize.ts";
 * import { planOperation } from "./mod.ts";
 * import { buildSupergraph } from "../../supergraph/mod.ts";
 * const model = buildSupergraph(`
 * schema @link(url: "https://specs.apollo.dev/link/v1.0")
 *   @link(url: "https://specs.apollo.dev/join/v0.3", for: EXECUTION) { query: Query }
 * directive @join__graph(name: String!, url: String!) on ENUM_VALUE
 * directive @join__type(graph: join__Graph!, key: join__FieldSet, extension: Boolean! = false, resolvable: Boolean! = true, isInterfaceObject: Boolean! = false) repeatable on OBJECT | INTERFACE | UNION | ENUM | INPUT_OBJECT | SCALAR
 * directive @link(url: String, as: String, for: link__Purpose, import: [link__Import]) repeatable on SCHEMA
 * scalar join__FieldSet
 * scalar link__Import
 * enum link__Purpose { SECURITY EXECUTION }
 * enum join__Graph { A @join__graph(name: "a", url: "http://a/graphql") }
 * type Query @join__type(graph: A) { hello: String }
 * `);
 * const op = normalizeOperation(model.apiSchema, parse("{ hello }"));
 * const { plan } = planOperation(model, op);
 * assert.deepEqual(plan.node, {
 *   kind: "Fetch", serviceName: "a", variableUsages: [], operation: "query{hello}", operationKind: "query",
 * });
 * ```
 * @param model The supergraph model.
 * @param operation The normalized operation.
 * @param options Search bound.
 * @returns The plan and its executable twin.
 * @throws {PlanningError} When a selected field cannot be reached from the operation's root.
 */
export function planOperation(
  model: SupergraphModel,
  operation: NormalizedOperation,
  options: PlanOptions = {},
): PlannedOperation {
  const graph = queryGraphOf(
    model,
    options.overrideLabels ? { overrideLabels: options.overrideLabels } : {},
  );
  const search = createSearch(options.searchBudget ?? DEFAULT_SEARCH_BUDGET);
  const groups = buildFetchGraph(graph, { operation, search });
  optimize(graph, groups);
  const planned = emitPlan(graph, { operation, groups });
  if (!search.truncated) return planned;
  return { plan: { ...planned.plan, searchTruncated: true }, step: planned.step };
}
export { type KeyTree } from "./sel.ts";
