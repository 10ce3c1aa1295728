/**
 * The fetch graph's data: fetch groups (one subgraph request each, with their dependencies) and
 * the positions the builder walks. Shared by the fetch graph builder, the optimisation passes
 * and the emitter.
 *
 * @module
 */
import type { FieldSetItem } from "./fieldset.ts";
import type { NField } from "../prepare/mod.ts";
import type { RepSelection } from "./rep.ts";
import { Sel } from "./sel.ts";
import type { ContextVariable, Rewrite } from "./types.ts";

/** One subgraph request being built. */
export interface Group {
  readonly id: number;
  readonly subgraph: string;
  readonly entity: boolean;
  readonly path: readonly string[];
  /** Where the group's objects come from (`<parent group path>|<path>`): entity groups only merge there. */
  pathKey: string;
  readonly sel: Sel;
  readonly reqs: Map<string, RepSelection>;
  readonly sendTypename: Map<string, string>;
  readonly deps: Set<Group>;
  readonly variables: Set<string>;
  /** Internal aliases renamed back after the fetch. */
  readonly rewrites: Rewrite[];
  /** Index of the root group it descends from (mutations run roots in order). */
  readonly root: number;
  /** Entity fetches merged into this one (same subgraph, same level), in planning order. */
  readonly merged: Group[];
  /** `@fromContext` arguments: variables whose values are read from an ancestor per object. */
  readonly contexts: ContextVariable[];
  /** Incremental operations: the deliveries (`NField.defer`) of the client fields it selects. */
  readonly defers: Set<number>;
}

/** A place in a group's selection where fields are added. */
export interface Pos {
  readonly group: Group;
  readonly sel: Sel;
  /** Type of the position in the group's subgraph (a concrete object type or interface object). */
  readonly type: string;
  readonly path: readonly string[];
  readonly provided: readonly FieldSetItem[] | null;
  /** Position in the parent group when this is an entity fetch's root. */
  readonly parent: Pos | null;
  /** Client fields at this object (response keys the planner must not reuse). */
  readonly clientKeys: ReadonlyMap<string, NField>;
  /** The position and field this position is the sub-selection of (same group). */
  readonly up?: { readonly pos: Pos; readonly field: NField; readonly fragment: string | null };
}

/** A new, empty group. */
export function createGroup(
  id: number,
  options: { subgraph: string; entity: boolean; path: readonly string[]; root: number },
): Group {
  return {
    id,
    subgraph: options.subgraph,
    entity: options.entity,
    path: options.path,
    pathKey: options.path.join("."),
    sel: new Sel(),
    reqs: new Map(),
    sendTypename: new Map(),
    deps: new Set(),
    variables: new Set(),
    rewrites: [],
    root: options.root,
    merged: [],
    contexts: [],
    defers: new Set(),
  };
}

/** The entity root of a position (the position itself when it is not in an entity's selection). */
export function topOf(pos: Pos): Pos {
  let top = pos;
  while (top.parent) top = top.parent;
  return top;
}

/** True when `group` (transitively) depends on `target` (or is it). */
export function dependsOn(group: Group, target: Group): boolean {
  const seen = new Set<Group>();
  const walk = (g: Group): boolean => {
    if (g === target) return true;
    if (seen.has(g)) return false;
    seen.add(g);
    for (const d of g.deps) if (walk(d)) return true;
    return false;
  };
  return walk(group);
}

/**
 * The one dependency all the others come before (the fetch can start right after it), or
 * undefined when two of them are independent (the fetch joins two branches).
 *
 * @param deps A fetch group's dependencies.
 * @returns The last of them, if there is one.
 */
export function lastDependency(deps: readonly Group[]): Group | undefined {
  return deps.find((d) => deps.every((o) => o === d || dependsOn(d, o)));
}

/**
 * True when every fetch joins no two independent branches, so the plan runs as a tree (each
 * fetch right after its last dependency) rather than level by level.
 *
 * @param groups The fetch groups.
 * @returns Whether the emitter can plan them as a tree.
 */
export function runsAsTree(groups: readonly Group[]): boolean {
  return groups.every((g) => {
    if (g.deps.size === 0) return true;
    const last = lastDependency([...g.deps]);
    return last !== undefined && last.root === g.root;
  });
}

/**
 * The level of each fetch group in the dependency graph: the length of its
 * longest chain of dependencies (memoized; a cycle counts as level 0).
 */
export function dependencyLevels(): (group: Group) => number {
  const level = new Map<Group, number>();
  const levelOf = (g: Group, seen = new Set<Group>()): number => {
    const known = level.get(g);
    if (known !== undefined) return known;
    if (seen.has(g)) return 0;
    seen.add(g);
    let l = 0;
    for (const d of g.deps) l = Math.max(l, levelOf(d, seen) + 1);
    level.set(g, l);
    return l;
  };
  return levelOf;
}

/** Client fields by response key. */
export function keysOf(fields: readonly NField[]): Map<string, NField> {
  const map = new Map<string, NField>();
  for (const f of fields) map.set(f.key, f);
  return map;
}
