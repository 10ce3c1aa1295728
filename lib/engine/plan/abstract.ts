/**
 * Abstract positions (interfaces, unions) in one subgraph's selection: type conditions only for
 * types that are possible *in that subgraph's schema* (the field's type there may differ from the
 * supergraph's: `join__field(type:)`, fewer `join__unionMember`s or `join__implements`), the
 * interface level when every member selects the same leaves, and `@interfaceObject` positions
 * (interface fields locally; `__typename` and member fields from the interface's owner).
 *
 * @module
 */
import type { FieldSetItem } from "./fieldset.ts";
import type { NField, NSelection } from "../prepare/mod.ts";
import type { Sel } from "./sel.ts";
import type { Builder, Walk } from "./_builder.ts";
import { keysOf, type Pos } from "./_groups.ts";
import { PlanningError } from "./types.ts";

/** Where an abstract field's sub-selection is planned. */
export interface AbstractAt {
  /** The position holding the field. */
  readonly pos: Pos;
  readonly field: NField;
  /** The field's sub-selection in the subgraph operation. */
  readonly child: Sel;
  readonly path: readonly string[];
  readonly provided: readonly FieldSetItem[] | null;
  /** The field's type in the position's subgraph, printed (`[Media!]!`). */
  readonly subgraphType: string;
}

/**
 * Plans an abstract field's sub-selection.
 *
 * @param b The builder.
 * @param at The field and where it goes.
 * @param walk The builder's recursive steps.
 */
export function abstractFields(b: Builder, at: AbstractAt, walk: Walk): void {
  const { pos, field, child, path, provided } = at;
  const selection = field.selection!;
  const subgraph = pos.group.subgraph;
  const named = at.subgraphType.replace(/[[\]!]/g, "");
  child.typename();
  const abstractModel = b.graph.type(selection.typeName);
  if (named === selection.typeName && abstractModel?.interfaceObjectIn.includes(subgraph)) {
    interfaceObject(b, { child, path, provided, selection, pos }, walk);
    return;
  }
  // An interface without implementations (no member to split by) plans its fields on the
  // interface too: a field no path reaches is then refused here, not dropped from the fetch.
  const memberless = selection.byType.size === 0;
  if (named === selection.typeName && (memberless || atInterfaceLevel(b, subgraph, selection))) {
    // Same leaf fields for every member (or no member), planned on the interface: no type
    // conditions.
    walk.planFields(b, {
      pos: {
        group: pos.group,
        sel: child,
        type: selection.typeName,
        path,
        provided: null,
        parent: null,
        clientKeys: keysOf(selection.interfaceFields),
      },
      fields: selection.interfaceFields,
    });
    return;
  }
  for (const [concrete, fields] of selection.byType) {
    // `__typename` alone needs no type condition: the abstract field always fetches it.
    if (!fields.some((f) => f.name !== "__typename")) continue;
    // A type the subgraph cannot return here: its schema may not even know it.
    if (!b.graph.possibleIn(subgraph, { abstract: named, concrete })) continue;
    walk.planFields(b, {
      pos: {
        group: pos.group,
        sel: child.fragment(concrete),
        type: concrete,
        path,
        provided,
        parent: null,
        clientKeys: keysOf(fields),
        up: { pos, field, fragment: concrete },
      },
      fields: fields,
    });
  }
}

/**
 * True when an interface selection can be sent without type conditions: every member the
 * subgraph can return selects exactly the interface's own leaf fields, and the subgraph
 * resolves each of them on the interface and on every such member.
 */
function atInterfaceLevel(b: Builder, subgraph: string, selection: NSelection): boolean {
  const iface = b.graph.type(selection.typeName);
  if (iface?.kind !== "interface" || !iface.graphs.includes(subgraph)) return false;
  const own = selection.interfaceFields;
  for (const f of own) {
    if (f.selection !== null || f.introspection) return false;
    if (f.name === "__typename") continue;
    if (!b.graph.field(selection.typeName, f.name)?.resolvableIn.includes(subgraph)) return false;
  }
  for (const [concrete, fields] of selection.byType) {
    if (!b.graph.possibleIn(subgraph, { abstract: selection.typeName, concrete })) continue;
    if (fields.length !== own.length) return false;
    for (let i = 0; i < fields.length; i++) {
      const a = fields[i]!;
      const c = own[i]!;
      if (a.key !== c.key || a.name !== c.name || a.args !== c.args) return false;
      if (a.name === "__typename") continue;
      const f = b.graph.field(concrete, a.name);
      if (!f?.resolvableIn.includes(subgraph) || f.requires.has(subgraph)) return false;
    }
  }
  return true;
}

/**
 * An abstract position whose subgraph sees the interface as an object (`@interfaceObject`):
 * interface fields plan on the interface; `__typename` and member-only fields need the
 * interface's owner, entered by the interface key.
 */
function interfaceObject(
  b: Builder,
  at: {
    child: Sel;
    path: readonly string[];
    provided: readonly FieldSetItem[] | null;
    selection: NSelection;
    pos: Pos;
  },
  walk: Walk,
): void {
  const { child, path, provided, selection } = at;
  const iface = selection.typeName;
  const subgraph = at.pos.group.subgraph;
  // Fields planned on the interface here: its own, and a member's fields this subgraph resolves
  // on the interface (an extra key in the data of other members is never shaped into the
  // response); the rest, and the real `__typename`, come from the interface's owner.
  const local = [...selection.interfaceFields];
  const localKeys = keysOf(local);
  let concrete = local.some((f) => f.name === "__typename");
  // Incremental operations: the deliveries that need the concrete type (their `__typename`s
  // and member selections) wait for the owner's fetch.
  const typed = new Set<number>();
  for (const f of local) if (f.name === "__typename" && f.defer !== undefined) typed.add(f.defer);
  const remote = new Map<string, NField[]>();
  for (const [type, fields] of selection.byType) {
    for (const f of fields) {
      const same = localKeys.get(f.key);
      if (f.name !== "__typename" && same?.name === f.name && same.args === f.args) continue;
      const here = f.name !== "__typename" && !same &&
        b.graph.field(iface, f.name)?.resolvableIn.includes(subgraph) &&
        !conflicts(selection, f);
      // A member's own selection needs the real `__typename` to be shaped.
      concrete = true;
      if (here) {
        local.push(f);
        localKeys.set(f.key, f);
        continue;
      }
      if (f.name === "__typename") continue;
      const list = remote.get(type);
      if (list) list.push(f);
      else remote.set(type, [f]);
    }
  }
  const pos: Pos = {
    group: at.pos.group,
    sel: child,
    type: iface,
    path,
    provided,
    parent: null,
    clientKeys: localKeys,
  };
  walk.planFields(b, { pos, fields: local });
  if (!concrete) return;
  const model = b.graph.type(iface);
  const owner = model?.keys.find((k) => k.resolvable && !model.interfaceObjectIn.includes(k.graph))
    ?.graph;
  if (!owner) throw new PlanningError(`No subgraph resolves the concrete type of "${iface}"`);
  const epos = walk.enter(b, pos, { target: owner, requires: undefined });
  epos.sel.typename();
  // Every member field is shaped under its member type once that is known.
  for (const fields of selection.byType.values()) {
    for (const f of fields) if (f.defer !== undefined) typed.add(f.defer);
  }
  for (const d of typed) epos.group.defers.add(d);
  for (const [type, extra] of remote) {
    walk.planFields(b, {
      pos: {
        group: epos.group,
        sel: epos.sel.fragment(type),
        type,
        path,
        provided: null,
        parent: null,
        clientKeys: keysOf(selection.byType.get(type) ?? []),
      },
      fields: extra,
    });
  }
}

/** True when another member selects the field's response key as a different field. */
function conflicts(selection: NSelection, field: NField): boolean {
  for (const fields of selection.byType.values()) {
    for (const f of fields) {
      if (f.key === field.key && (f.name !== field.name || f.args !== field.args)) return true;
    }
  }
  return false;
}
