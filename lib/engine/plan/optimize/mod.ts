/**
 * The fetch graph's optimisation passes, in the order they run.
 *
 * @module
 */
import type { QueryGraph } from "../graph.ts";
import type { Group } from "../_groups.ts";
import { mergeSiblings } from "./merge_siblings.ts";
import { mergeLeaves } from "./merge_leaves.ts";

/**
 * Runs every pass over the fetch groups (edited in place).
 *
 * @param graph The query graph.
 * @param groups The fetch groups in planning order.
 */
export function optimize(graph: QueryGraph, groups: Group[]): void {
  mergeSiblings(graph, groups);
  mergeLeaves(graph, groups);
}
