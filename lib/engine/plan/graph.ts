/**
 * The query graph: what the planner may do from a node `(type, subgraph)`, built once per
 * supergraph model (memoized on the model object, which is immutable).
 *
 * - **field edges**: the field is resolved in the subgraph ({@linkcode QueryGraph.field} falls
 *   back to an `@interfaceObject` / entity interface owning the field), maybe under a
 *   `@requires` condition or with a `@provides` shortcut;
 * - **entity moves**: a resolvable `@key` (of the type, or of an interface the subgraph sees as
 *   an `@interfaceObject`) enters another subgraph ({@linkcode QueryGraph.entityMove});
 * - **abstract moves**: a concrete type is a member of an abstract type *in that subgraph*
 *   (`join__implements`, `join__unionMember`; {@linkcode QueryGraph.possibleIn}).
 *
 * Field sets (`@key`, `@requires`, `@provides`) are parsed once per graph.
 *
 * @module
 */
import type { FieldModel, SupergraphModel, TypeModel } from "../../supergraph/mod.ts";
import { type FieldSetItem, parseFieldSet } from "./fieldset.ts";

/** An entity move: the key(s) that enter a subgraph for objects of a type. */
export interface EntityMove {
  /** The type the subgraph is entered as (an interface for an `@interfaceObject`). */
  readonly type: string;
  /** The resolvable key field sets, as written, in supergraph order. */
  readonly keys: readonly string[];
}

/** The query graph of one supergraph (see the module doc). */
export interface QueryGraph {
  readonly model: SupergraphModel;
  /** A named type of the supergraph. */
  type(name: string): TypeModel | undefined;
  /** The field edge of `type.name` (an interface's when the type itself has no resolver). */
  field(type: string, name: string): FieldModel | undefined;
  /** A parsed field set (cached). */
  fieldSet(text: string): readonly FieldSetItem[];
  /** The entity move into `subgraph` for objects of `type`, or null when there is none. */
  entityMove(type: string, subgraph: string): EntityMove | null;
  /** True when `name` is part of a key of `type` declared in `subgraph`. */
  isKeyField(type: string, field: { subgraph: string; name: string }): boolean;
  /** True when `concrete` is a possible type of `abstract` in `subgraph`'s own schema. */
  possibleIn(subgraph: string, types: { abstract: string; concrete: string }): boolean;
  /** Object types implementing an interface (supergraph), in supergraph order. */
  implementations(iface: string): readonly TypeModel[];
}

const graphs = new WeakMap<SupergraphModel, Map<string, QueryGraph>>();

/** Options of {@linkcode queryGraphOf}. */
export interface QueryGraphOptions {
  /**
   * Progressive `@override` labels active for this plan: such a field is resolved in the
   * overriding subgraph only while its label is active, otherwise in the original one only.
   */
  readonly overrideLabels?: ReadonlySet<string>;
}

/**
 * The query graph of a supergraph model, built on first use and reused for the model's life.
 *
 * @example Entity moves follow resolvable keys
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSupergraph } from "../../supergraph/mod.ts";
 * import { queryGraphOf } from "./graph.ts";
 * const sdl = await Deno.readTextFile(new URL("../../../schema/supergraph.graphql", import.meta.url));
 * const graph = queryGraphOf(buildSupergraph(sdl));
 * assert.deepEqual(graph.entityMove("Product", "inventory")?.keys, ["upc sku"]);
 * assert.equal(graph.entityMove("Query", "inventory"), null);
 * ```
 * @param model The supergraph model.
 * @param options The active progressive override labels.
 * @returns Its query graph.
 */
export function queryGraphOf(model: SupergraphModel, options: QueryGraphOptions = {}): QueryGraph {
  const labels = options.overrideLabels ?? new Set<string>();
  const id = [...labels].sort().join("\u0000");
  let byLabels = graphs.get(model);
  if (!byLabels) graphs.set(model, byLabels = new Map());
  let graph = byLabels.get(id);
  if (!graph) {
    graph = buildQueryGraph(model, labels);
    byLabels.set(id, graph);
  }
  return graph;
}

function buildQueryGraph(model: SupergraphModel, labels: ReadonlySet<string>): QueryGraph {
  const fieldSets = new Map<string, FieldSetItem[]>();
  const fieldSet = (text: string): FieldSetItem[] => {
    let items = fieldSets.get(text);
    if (!items) {
      items = parseFieldSet(text);
      fieldSets.set(text, items);
    }
    return items;
  };
  const type = (name: string) => model.types.get(name);
  const moves = new Map<string, Map<string, EntityMove | null>>();
  const implementations = new Map<string, TypeModel[]>();
  for (const t of model.types.values()) {
    if (t.kind !== "object") continue;
    for (const i of t.interfaces) {
      const list = implementations.get(i);
      if (list) list.push(t);
      else implementations.set(i, [t]);
    }
  }
  const entityMove = (typeName: string, subgraph: string): EntityMove | null => {
    let bySubgraph = moves.get(typeName);
    if (!bySubgraph) moves.set(typeName, bySubgraph = new Map());
    const known = bySubgraph.get(subgraph);
    if (known !== undefined) return known;
    let move: EntityMove | null = null;
    const t = type(typeName);
    const keys = (t?.keys ?? []).filter((k) => k.graph === subgraph && k.resolvable);
    if (keys.length > 0) move = { type: typeName, keys: keys.map((k) => k.fields) };
    else {
      for (const i of t?.interfaces ?? []) {
        const iface = type(i);
        if (!iface?.interfaceObjectIn.includes(subgraph)) continue;
        const ikeys = iface.keys.filter((k) => k.graph === subgraph && k.resolvable);
        if (ikeys.length > 0) {
          move = { type: i, keys: ikeys.map((k) => k.fields) };
          break;
        }
      }
    }
    bySubgraph.set(subgraph, move);
    return move;
  };
  const overridden = new Map<FieldModel, FieldModel>();
  const edges = new Map<string, Map<string, FieldModel | undefined>>();
  /** The field edge as the active labels route it. */
  const routed = (field: FieldModel | undefined): FieldModel | undefined => {
    const progressive = field?.progressiveOverride;
    if (!field || !progressive) return field;
    let edge = overridden.get(field);
    if (!edge) {
      const away = labels.has(progressive.label) ? progressive.from : progressive.to;
      edge = { ...field, resolvableIn: field.resolvableIn.filter((g) => g !== away) };
      overridden.set(field, edge);
    }
    return edge;
  };
  return {
    model,
    type,
    field(typeName, name) {
      let byName = edges.get(typeName);
      if (!byName) edges.set(typeName, byName = new Map());
      if (byName.has(name)) return byName.get(name);
      const t = type(typeName);
      let edge = routed(t?.fields.get(name));
      if (!edge || edge.resolvableIn.length === 0) {
        for (const i of t?.interfaces ?? []) {
          const f = routed(type(i)?.fields.get(name));
          if (f && f.resolvableIn.length > 0) {
            edge = f;
            break;
          }
        }
      }
      byName.set(name, edge);
      return edge;
    },
    fieldSet,
    entityMove,
    isKeyField(typeName, { subgraph, name }) {
      for (const key of type(typeName)?.keys ?? []) {
        if (key.graph !== subgraph) continue;
        if (fieldSet(key.fields).some((item) => item.name === name)) return true;
      }
      return false;
    },
    possibleIn(subgraph, { abstract, concrete }) {
      const c = type(concrete);
      if (!c || !c.graphs.includes(subgraph)) return false;
      if (abstract === concrete) return true;
      const a = type(abstract);
      if (!a) return false;
      if (a.kind === "union") return (a.membersIn.get(subgraph) ?? []).includes(concrete);
      return (c.implementsIn.get(subgraph) ?? []).includes(abstract);
    },
    implementations: (iface) => implementations.get(iface) ?? [],
  };
}
