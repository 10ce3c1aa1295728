/**
 * Planner unit-test fixture: compose small Federation v2 subgraphs and plan operations on them.
 *
 * @module
 */
import { parse } from "graphql";
import { composeSupergraph, formatCompositionError } from "../../../lib/compose/mod.ts";
import { buildSupergraph, type SupergraphModel } from "../../../lib/supergraph/mod.ts";
import { normalizeOperation } from "../../../lib/engine/prepare/normalize.ts";
import {
  type PlannedOperation,
  type PlanNode,
  planOperation,
  type PlanOptions,
} from "../../../lib/engine/plan/mod.ts";

/** The `@link` line of a Federation v2 subgraph importing `directives`. */
export function fed2(...directives: string[]): string {
  return `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: [${
    directives.map((d) => JSON.stringify(d)).join(", ")
  }])\n`;
}

/** Composes subgraphs (name → SDL) into a supergraph model; throws on composition errors. */
export function compose(subgraphs: Readonly<Record<string, string>>): SupergraphModel {
  const outcome = composeSupergraph(
    Object.entries(subgraphs).map(([name, sdl]) => ({ name, url: `http://${name}/graphql`, sdl })),
  );
  if (!outcome.ok) throw new Error(outcome.errors.map(formatCompositionError).join("\n"));
  return buildSupergraph(outcome.supergraphSdl);
}

/** Plans a query on a model. */
export function planQuery(
  model: SupergraphModel,
  query: string,
  options: PlanOptions = {},
): PlannedOperation {
  return planOperation(model, normalizeOperation(model.apiSchema, parse(query)), options);
}

/** The fetches of a plan, in plan order, as `subgraph operation`. */
export function fetchesOf(node: PlanNode | null): string[] {
  if (!node) return [];
  if (node.kind === "Fetch") return [`${node.serviceName} ${node.operation}`];
  if (node.kind === "Flatten") return fetchesOf(node.node);
  if (node.kind === "Defer") {
    return [node.primary.node, ...node.deferred.map((d) => d.node)].flatMap(fetchesOf);
  }
  return node.nodes.flatMap(fetchesOf);
}
