/**
 * Optimisation pass: an entity fetch nothing depends on (a leaf of the fetch graph) joins a
 * fetch to the same subgraph at the same or a deeper level, when neither depends on the other.
 * The plan's depth cannot grow: the leaf has no dependents, and the fetch it joins keeps its
 * level (the leaf's dependencies are all shallower). One subgraph request fewer, the same data,
 * the same number of rounds. A plan that runs as a tree (each fetch right after its last
 * dependency) stays one: a merge that would make a fetch join two independent branches would make
 * the plan run level by level, and a slow branch would hold up the other. Hive's planner merges leaves at one response path only; this pass
 * merges across paths, as `merge_siblings.ts` does within a level.
 *
 * @module
 */
import type { QueryGraph } from "../graph.ts";
import { dependencyLevels, type Group, lastDependency, runsAsTree } from "../_groups.ts";
import { mergeable, mergeCandidate } from "./merge_siblings.ts";

/**
 * Merges leaf entity fetches into deeper fetches to the same subgraph, in place (`groups` loses
 * the merged ones; each survivor lists them in `merged`). A leaf joins the shallowest fetch it
 * can, so its data is not held back further than needed.
 *
 * @param graph The query graph.
 * @param groups The fetch groups, in planning order (edited in place).
 * @returns The number of fetches merged away.
 */
export function mergeLeaves(graph: QueryGraph, groups: Group[]): number {
  const levelOf = dependencyLevels();
  const hasDependents = new Set<Group>();
  for (const g of groups) for (const d of g.deps) hasDependents.add(d);
  const gone = new Set<Group>();
  const tree = runsAsTree(groups);
  // Neither can depend on the other: nothing depends on a leaf, and whatever a leaf depends on
  // is shallower than the leaf, so shallower than its target.
  for (const leaf of groups) {
    if (hasDependents.has(leaf) || !mergeCandidate(leaf)) continue;
    let target: Group | null = null;
    for (const g of groups) {
      if (
        g === leaf || gone.has(g) || !mergeCandidate(g) || g.subgraph !== leaf.subgraph ||
        g.root !== leaf.root || levelOf(g) < levelOf(leaf) ||
        (target !== null && levelOf(g) >= levelOf(target)) || !compatible(graph, g, leaf) ||
        (tree && lastDependency([...g.deps, ...leaf.deps]) === undefined)
      ) {
        continue;
      }
      target = g;
    }
    if (target === null) continue;
    target.merged.push(leaf, ...leaf.merged);
    leaf.merged.length = 0;
    for (const d of leaf.deps) {
      target.deps.add(d);
      hasDependents.add(d);
    }
    gone.add(leaf);
  }
  if (gone.size === 0) return 0;
  const kept = groups.filter((g) => !gone.has(g));
  groups.length = 0;
  groups.push(...kept);
  return gone.size;
}

/** Every fetch already in `a` can share one `_entities` call with every one in `b`. */
function compatible(graph: QueryGraph, a: Group, b: Group): boolean {
  for (const x of [a, ...a.merged]) {
    for (const y of [b, ...b.merged]) if (!mergeable(graph, x, y)) return false;
  }
  return true;
}
