/**
 * The estimate of a planned operation, as Apollo Router makes it (`planned`): the sum of the
 * estimates of the subgraph operations its plan sends (sequences, parallel branches and every
 * `@defer` part added up), each scored by the same rules, with `_entities` a list of the
 * `_Entity` union sized by the subgraph's `list_size`. An entity fetch thus pays for the
 * entities it may get back, so a federated estimate is above the one of the client's document.
 *
 * @module
 */
import { type DocumentNode, parse } from "graphql";
import type { CostSchema } from "../../supergraph/mod.ts";
import type { PlanNode, QueryPlan } from "../plan/mod.ts";
import { estimateOperation, fragmentsOf } from "./estimate.ts";

/** An estimate: the total and each subgraph's part of it. */
export interface CostEstimate {
  readonly total: number;
  /** Estimated cost by subgraph name (subgraphs the plan sends nothing to are absent). */
  readonly bySubgraph: ReadonlyMap<string, number>;
}

/** Options of {@linkcode estimatePlan}. */
export interface PlanEstimateOptions {
  /** The default list size (`static_estimated.list_size`). */
  readonly listSize: number;
  /** List sizes by subgraph (`static_estimated.subgraph`), when one is configured. */
  readonly subgraphListSize?: (subgraph: string) => number | undefined;
  /** Told every variable the estimate read. */
  readonly touched?: Set<string>;
  /**
   * Parsed subgraph operations, kept between estimates of one plan (a later request with
   * other slicing values parses nothing).
   */
  readonly documents?: Map<string, DocumentNode>;
}

function fetchesOf(node: PlanNode | null, out: { serviceName: string; operation: string }[]): void {
  if (node === null) return;
  switch (node.kind) {
    case "Fetch":
      out.push(node);
      return;
    case "Flatten":
      out.push(node.node);
      return;
    case "Sequence":
    case "Parallel":
      for (const n of node.nodes) fetchesOf(n, out);
      return;
    case "Defer":
      fetchesOf(node.primary.node, out);
      for (const d of node.deferred) fetchesOf(d.node, out);
      return;
  }
}

/**
 * Estimates a plan: every subgraph operation it sends, scored and summed.
 *
 * @example An entity fetch pays for a list of entities
 * ```ts
 * import assert from "node:assert/strict";
 * import { parse } from "graphql";
 * import { buildCostSchema } from "../../supergraph/mod.ts";
 * import { estimatePlan } from "./planned.ts";
 * const schema = buildCostSchema(parse("type Query { me: User } type User { id: ID name: String }"));
 * const estimate = estimatePlan(schema, {
 *   kind: "QueryPlan",
 *   node: { kind: "Sequence", nodes: [
 *     { kind: "Fetch", serviceName: "a", variableUsages: [], operation: "{me{__typename id}}", operationKind: "query" },
 *     { kind: "Flatten", path: ["me"], node: { kind: "Fetch", serviceName: "b", variableUsages: [], operationKind: "query",
 *       operation: "query($representations:[_Any!]!){_entities(representations:$representations){...on User{name}}}" } },
 *   ] },
 * }, { variables: {}, listSize: 10 });
 * assert.equal(estimate.total, 11);
 * assert.deepEqual([...estimate.bySubgraph], [["a", 1], ["b", 10]]);
 * ```
 * @param schema The supergraph's cost schema.
 * @param plan The query plan.
 * @param options Variables, list sizes, a cache of parsed subgraph operations.
 * @returns The total and per-subgraph estimate.
 * @throws {CostError} As {@linkcode estimateOperation}.
 */
export function estimatePlan(
  schema: CostSchema,
  plan: QueryPlan,
  options: PlanEstimateOptions & { readonly variables: Readonly<Record<string, unknown>> },
): CostEstimate {
  const fetches: { serviceName: string; operation: string }[] = [];
  fetchesOf(plan.node, fetches);
  const bySubgraph = new Map<string, number>();
  let total = 0;
  for (const fetch of fetches) {
    let document = options.documents?.get(fetch.operation);
    if (document === undefined) {
      document = parse(fetch.operation, { noLocation: true });
      options.documents?.set(fetch.operation, document);
    }
    const cost = estimateOperation(schema, document, {
      variables: options.variables,
      listSize: options.subgraphListSize?.(fetch.serviceName) ?? options.listSize,
      fragments: fragmentsOf(document),
      subgraphOperation: true,
      ...(options.touched ? { touched: options.touched } : {}),
    });
    total += cost;
    bySubgraph.set(fetch.serviceName, (bySubgraph.get(fetch.serviceName) ?? 0) + cost);
  }
  return { total, bySubgraph };
}
