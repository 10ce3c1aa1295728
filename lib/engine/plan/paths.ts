/**
 * Path finding: the ways the query graph offers to resolve one field from a position
 * `(type, subgraph)` of the fetch graph, each with its cost (fetches added, then depth).
 *
 * - `local`: the field edge in the position's subgraph (or a `@provides` shortcut);
 * - `entity`: an entity move by a resolvable key into a subgraph resolving the field (the
 *   position's own subgraph when the field `@requires` fields of the object there);
 * - `up`: re-enter the nearest enclosing object that a subgraph resolving the whole path down to
 *   the field can be entered at (a value type's field, or an entity no key of which the other
 *   subgraph resolves), or a shared root field asked again from another subgraph.
 *
 * @module
 */
import type { FieldModel } from "../../supergraph/mod.ts";
import type { FieldSetItem } from "./fieldset.ts";
import type { QueryGraph } from "./graph.ts";
import { type Pos, topOf } from "./_groups.ts";

/** Cost of a path: subgraph fetches it adds, then how deep the chain of fetches gets. */
export interface Cost {
  readonly fetches: number;
  readonly depth: number;
}

/** One way to resolve a field. */
export type Resolution =
  | { readonly kind: "local" }
  | { readonly kind: "entity"; readonly subgraph: string }
  | {
    readonly kind: "up";
    readonly subgraph: string;
    /** The ancestor positions, outermost first (the first is re-entered). */
    readonly chain: readonly Pos[];
    /** True when the ancestor is the operation root (a shared root field asked again). */
    readonly atRoot: boolean;
  };

/** A resolution and its own cost (sub-selections not included). */
export interface Candidate {
  readonly resolution: Resolution;
  readonly cost: Cost;
}

/** The `@provides` item of a field at a position, or null. */
export function providedItem(
  graph: QueryGraph,
  provided: readonly FieldSetItem[] | null,
  options: { type: string; name: string },
): FieldSetItem | null {
  if (!provided) return null;
  const { type, name } = options;
  const interfaces = graph.type(type)?.interfaces ?? [];
  for (const item of provided) {
    if (item.name === name) return item;
    if (
      item.name === null &&
      (item.typeCondition === null || item.typeCondition === type ||
        interfaces.includes(item.typeCondition))
    ) {
      const found = providedItem(graph, item.selection, options);
      if (found) return found;
    }
  }
  return null;
}

/**
 * True when the position's subgraph returns the field: it resolves it, `@provides` it here, or
 * lists it in a key without resolving it (Federation 1 `extend type` keys; a field it marks
 * `@external` in Federation 2 is only ever received, never returned).
 */
export function resolvableAt(
  graph: QueryGraph,
  at: Pick<Pos, "type" | "provided"> & { readonly subgraph: string; readonly name: string },
): boolean {
  const { type, subgraph, name } = at;
  const field = graph.field(type, name);
  if (!field) return false;
  if (field.resolvableIn.includes(subgraph)) return true;
  if (providedItem(graph, at.provided, { type, name })) return true;
  return !field.externalIn.includes(subgraph) && graph.isKeyField(type, { subgraph, name });
}

/** True when a key of the position's type is resolved at the position without further fetches. */
export function keyIsLocal(graph: QueryGraph, at: { top: Pos; key: string }): boolean {
  const { top } = at;
  const subgraph = top.group.subgraph;
  return graph.fieldSet(at.key).every((item) =>
    item.name === null ||
    resolvableAt(graph, { type: top.type, provided: top.provided, subgraph, name: item.name })
  );
}

/**
 * The candidates for one field at a position, cheapest kinds first; ties keep this order:
 * local, then subgraphs that already have an entity fetch at the position's path, then those
 * entered by a key resolved here, then supergraph order.
 *
 * @param graph The query graph.
 * @param pos The position.
 * @param options The field's model, its name, the type@subgraph moves being planned (a key
 *   never needs itself), and the subgraphs with an entity fetch at this path already.
 * @returns The candidates (empty when the field cannot be reached from here).
 */
export function fieldCandidates(
  graph: QueryGraph,
  pos: Pos,
  options: {
    readonly model: FieldModel;
    readonly name: string;
    readonly entering: readonly string[];
    /** Subgraphs with an entity fetch at the position's path already (asked only when needed). */
    readonly existing: () => ReadonlySet<string>;
  },
): Candidate[] {
  const { model, name } = options;
  const subgraph = pos.group.subgraph;
  const local = resolvableAt(graph, { ...pos, subgraph, name });
  const provided = providedItem(graph, pos.provided, { type: pos.type, name }) !== null;
  if (local && (provided || !model.requires.has(subgraph))) {
    return [{ resolution: { kind: "local" }, cost: { fetches: 0, depth: 0 } }];
  }
  const top = topOf(pos);
  const requiresCost = (s: string) => {
    const text = model.requires.get(s);
    if (text === undefined) return 0;
    return graph.fieldSet(text).every((i) =>
        i.name === null || resolvableAt(graph, { ...pos, subgraph, name: i.name })
      )
      ? 0
      : 1;
  };
  if (local) {
    // `@requires` in the position's own subgraph: enter it again with the required fields.
    return [{
      resolution: { kind: "entity", subgraph },
      cost: { fetches: 1 + requiresCost(subgraph), depth: 1 },
    }];
  }
  const out: Candidate[] = [];
  for (const s of model.resolvableIn) {
    const move = graph.entityMove(pos.type, s);
    if (!move || options.entering.includes(`${pos.type}@${s}`)) continue;
    const direct = move.keys.some((key) => keyIsLocal(graph, { top, key }));
    out.push({
      resolution: { kind: "entity", subgraph: s },
      cost: { fetches: 1 + (direct ? 0 : 1) + requiresCost(s), depth: direct ? 1 : 2 },
    });
  }
  if (out.length > 1) {
    const existing = options.existing();
    const rank = (c: Candidate) => {
      const s = c.resolution.kind === "entity" ? c.resolution.subgraph : "";
      return existing.has(s) ? 0 : c.cost.fetches === 1 ? 1 : 2;
    };
    out.sort((a, b) => rank(a) - rank(b));
  }
  if (out.length === 0) out.push(...upCandidates(graph, pos, model));
  return out;
}

/**
 * Re-entering an ancestor: the nearest enclosing position (of this fetch's selection) that a
 * subgraph resolving every field of the path down to this one can be entered at by a key (or
 * the query root, whose fields any subgraph may be asked for).
 */
function upCandidates(graph: QueryGraph, pos: Pos, model: FieldModel): Candidate[] {
  const out: Candidate[] = [];
  const chain: Pos[] = [pos];
  let crossedEntity = false;
  for (let cur = pos; cur.up; cur = cur.up.pos) {
    const anc = cur.up.pos;
    chain.unshift(anc);
    // Past an entity, only a key re-enters an object: a shared root field asked again from
    // another subgraph is the same value only for value types.
    if ((graph.type(cur.type)?.keys.length ?? 0) > 0) crossedEntity = true;
    const atRoot = !anc.group.entity && anc.path.length === 0 && anc.parent === null &&
      isQueryRoot(graph, anc.type);
    if (atRoot && crossedEntity) break;
    for (const target of model.resolvableIn) {
      if (target === pos.group.subgraph) continue;
      if (!atRoot && !graph.entityMove(anc.type, target)) continue;
      let ok = true;
      for (let i = 1; i < chain.length; i++) {
        const link = chain[i]!.up!;
        if (!graph.field(link.pos.type, link.field.name)?.resolvableIn.includes(target)) ok = false;
      }
      if (!ok) continue;
      out.push({
        resolution: { kind: "up", subgraph: target, chain: [...chain], atRoot },
        cost: { fetches: 1, depth: atRoot ? 0 : 1 },
      });
    }
    if (out.length > 0) return out;
  }
  return out;
}

function isQueryRoot(graph: QueryGraph, type: string): boolean {
  const root = graph.model.apiSchema.getQueryType()?.name ?? "Query";
  return type === root;
}
