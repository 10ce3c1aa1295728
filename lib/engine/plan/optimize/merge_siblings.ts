/**
 * Optimisation pass: entity fetches to one subgraph at one level of the fetch graph (the same
 * longest chain of dependencies, so neither depends on the other) become one `_entities` call
 * serving several paths (`Flatten.paths`), as Apollo's and Hive's planners do: fewer subgraph
 * requests, the same data.
 *
 * @module
 */
import type { QueryGraph } from "../graph.ts";
import { dependencyLevels, type Group } from "../_groups.ts";
import type { Sel, SelField } from "../sel.ts";
import type { RepField, RepSelection } from "../rep.ts";

/**
 * Merges sibling entity fetches in place (`groups` loses the merged ones; each survivor lists
 * them in `merged`). Only fetches whose selections cannot interfere merge: a type is either
 * selected by one of them only (with response shapes that cannot conflict), or selected
 * identically (selection, representation, `__typename` sent).
 *
 * @param graph The query graph.
 * @param groups The fetch groups, in planning order (edited in place).
 * @returns The number of fetches merged away.
 */
export function mergeSiblings(graph: QueryGraph, groups: Group[]): number {
  const levelOf = dependencyLevels();
  const into = new Map<Group, Group>();
  const candidate = (g: Group) => !into.has(g) && mergeCandidate(g);
  for (let i = 0; i < groups.length; i++) {
    const a = groups[i]!;
    if (!candidate(a)) continue;
    for (let j = i + 1; j < groups.length; j++) {
      const b = groups[j]!;
      if (
        !candidate(b) || b.subgraph !== a.subgraph || b.root !== a.root ||
        levelOf(b) !== levelOf(a)
      ) {
        continue;
      }
      if (!mergeable(graph, a, b) || !a.merged.every((m) => mergeable(graph, m, b))) continue;
      a.merged.push(b);
      into.set(b, a);
    }
  }
  if (into.size === 0) return 0;
  for (const g of groups) {
    for (const d of [...g.deps]) {
      const to = into.get(d);
      if (!to) continue;
      g.deps.delete(d);
      if (to !== g) g.deps.add(to);
    }
  }
  for (const [b, a] of into) for (const d of b.deps) if (d !== a) a.deps.add(d);
  const kept = groups.filter((g) => !into.has(g));
  groups.length = 0;
  groups.push(...kept);
  return into.size;
}

/**
 * True when a fetch may share its request with another: an entity fetch with no root fields,
 * no internal aliases to rename back and no `@fromContext` variables.
 *
 * @param g The fetch group.
 * @returns Whether merge passes may take it.
 */
export function mergeCandidate(g: Group): boolean {
  return g.entity && g.sel.fields.size === 0 && g.rewrites.length === 0 && g.contexts.length === 0;
}

/**
 * True when two entity fetches can share one `_entities` call: a type is either selected by
 * one of them only (with response shapes that cannot conflict), or selected identically.
 *
 * @param graph The query graph.
 * @param a One fetch group.
 * @param b The other.
 * @returns Whether one request can serve both.
 */
export function mergeable(graph: QueryGraph, a: Group, b: Group): boolean {
  // Interface representations expand to their implementations at build time: keep them alone.
  for (const type of [...a.reqs.keys(), ...b.reqs.keys()]) {
    if (graph.type(type)?.kind !== "object") return false;
  }
  for (const [type, sel] of b.sel.fragments) {
    const same = a.sel.fragments.get(type);
    if (same) {
      if (same.print() !== sel.print()) return false;
      continue;
    }
    for (const other of a.sel.fragments.values()) if (!sameShape(other, sel)) return false;
  }
  for (const [type, rep] of b.reqs) {
    const same = a.reqs.get(type);
    if (same && repText(same) !== repText(rep)) return false;
    if (!same && a.sel.fragments.has(type)) return false;
  }
  for (const type of a.reqs.keys()) {
    if (!b.reqs.has(type) && b.sel.fragments.has(type)) return false;
  }
  for (const [type, sent] of b.sendTypename) {
    const same = a.sendTypename.get(type);
    if (same !== undefined && same !== sent) return false;
  }
  return true;
}

/** All fields of a selection level (its own and its type conditions'), by response key. */
function levelFields(sel: Sel, out: SelField[] = []): SelField[] {
  for (const f of sel.fields.values()) out.push(f);
  for (const fragment of sel.fragments.values()) levelFields(fragment, out);
  return out;
}

/**
 * True when two selections under different object types can be sent in one operation: every
 * response key both select has one known type, recursively (GraphQL's "same response shape").
 */
function sameShape(a: Sel, b: Sel): boolean {
  const mine = new Map<string, SelField[]>();
  for (const f of levelFields(a)) {
    const list = mine.get(f.key);
    if (list) list.push(f);
    else mine.set(f.key, [f]);
  }
  for (const f of levelFields(b)) {
    for (const o of mine.get(f.key) ?? []) {
      if (f.name === "__typename" && o.name === "__typename") continue;
      if (f.type === "" || f.type !== o.type) return false;
      if ((f.child === null) !== (o.child === null)) return false;
      if (f.child && o.child && !sameShape(o.child, f.child)) return false;
    }
  }
  return true;
}

/** A representation selection as comparable text (keys, data keys, nesting). */
function repText(rep: RepSelection): string {
  const fields = (list: readonly RepField[]): string =>
    list.map((f) =>
      `${f.key}:${f.dataKey}${f.isKey ? "!" : ""}${f.selection ? `{${repText(f.selection)}}` : ""}`
    ).join(",");
  const typed = [...rep.byType].map(([t, list]) => `...${t}{${fields(list)}}`).join(",");
  return `${fields(rep.fields)}${typed === "" ? "" : `;${typed}`}`;
}
