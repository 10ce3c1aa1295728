/**
 * Requirements (`@key` and `@requires` field sets) as the planner needs them: the items that
 * apply to a concrete type (inline fragments on the type, an interface it implements or a union
 * it belongs to are flattened in, so representations carry them), the internal fields that
 * select them, and the representation selection that reads them back.
 *
 * @module
 */
import type { FieldModel } from "../../supergraph/mod.ts";
import type { FieldSetItem } from "./fieldset.ts";
import type { NField, NSelection, TypeRef } from "../prepare/mod.ts";
import type { RepField, RepSelection } from "./rep.ts";
import type { QueryGraph } from "./graph.ts";
import type { Pos } from "./_groups.ts";
import type { Sel } from "./sel.ts";

/**
 * The items of a field set that apply to objects of `type`: fields as they are, inline fragments
 * flattened when their condition is the type, an interface it implements or a union it is in.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSupergraph } from "../../supergraph/mod.ts";
 * import { parseFieldSet } from "./fieldset.ts";
 * import { queryGraphOf } from "./graph.ts";
 * import { itemsFor } from "./requirements.ts";
 * const sdl = await Deno.readTextFile(new URL("../../../schema/supergraph.graphql", import.meta.url));
 * const graph = queryGraphOf(buildSupergraph(sdl));
 * const items = itemsFor(graph, {
 *   type: "Product",
 *   items: parseFieldSet("upc ... on Product { sku } ... on User { id }"),
 * });
 * assert.deepEqual(items.map((i) => i.name), ["upc", "sku"]);
 * ```
 * @param graph The query graph.
 * @param at A concrete (or interface object) type and the field set items.
 * @returns The applicable field items.
 */
export function itemsFor(
  graph: QueryGraph,
  at: { readonly type: string; readonly items: readonly FieldSetItem[] },
): FieldSetItem[] {
  const { type, items } = at;
  const out: FieldSetItem[] = [];
  for (const item of items) {
    if (item.name !== null) {
      const same = out.find((o) => o.name === item.name && o.args === item.args);
      if (same && item.selection.length > 0) {
        out[out.indexOf(same)] = { ...same, selection: [...same.selection, ...item.selection] };
      } else if (!same) out.push(item);
      continue;
    }
    if (item.typeCondition !== null && !appliesTo(graph, { condition: item.typeCondition, type })) {
      continue;
    }
    for (const inner of itemsFor(graph, { type, items: item.selection })) {
      const same = out.find((o) => o.name === inner.name && o.args === inner.args);
      if (!same) out.push(inner);
      else if (inner.selection.length > 0) {
        out[out.indexOf(same)] = { ...same, selection: [...same.selection, ...inner.selection] };
      }
    }
  }
  return out;
}

function appliesTo(graph: QueryGraph, at: { condition: string; type: string }): boolean {
  const { condition, type } = at;
  if (condition === type) return true;
  const t = graph.type(type);
  if (t?.interfaces.includes(condition)) return true;
  return graph.type(condition)?.members.includes(type) ?? false;
}

/**
 * The representation selection reading one requirement item (null for a leaf). `planned` is the
 * sub-selection the item was planned as: its response keys (aliases where the client selects the
 * same key otherwise) are where the values are read from.
 */
export function repSelection(
  graph: QueryGraph,
  of: {
    readonly item: FieldSetItem;
    readonly model: FieldModel;
    readonly planned?: NSelection | null | undefined;
  },
): RepSelection | null {
  const { item, model } = of;
  if (item.selection.length === 0) return null;
  const planned = of.planned ?? null;
  const rep: RepSelection = { fields: [], byType: new Map() };
  const named = graph.type(model.namedType);
  const abstract = named?.kind === "interface" || named?.kind === "union";
  if (abstract) rep.fields.push({ key: "__typename", dataKey: "__typename", selection: null });
  const read = (type: string, s: FieldSetItem, among: readonly NField[] | undefined): RepField => {
    const m = graph.field(type, s.name ?? "");
    const nf = among?.find((f) => f.name === s.name && f.args === s.args);
    const dataKey = nf?.key ?? s.name ?? "";
    return repField(graph, s, { dataKey, model: m, planned: nf?.selection ?? null });
  };
  for (const sub of item.selection) {
    if (sub.name === null) {
      if (!sub.typeCondition) continue;
      const conditions = graph.type(sub.typeCondition)?.kind === "object"
        ? [sub.typeCondition]
        : possibleTypes(graph, sub.typeCondition);
      for (const condition of conditions) {
        const list = rep.byType.get(condition) ?? [];
        const among = planned?.byType.get(condition) ?? planned?.fields;
        for (const s of itemsFor(graph, { type: condition, items: sub.selection })) {
          if (s.name === null || list.some((l) => l.key === s.name)) continue;
          list.push(read(condition, s, among));
        }
        rep.byType.set(condition, list);
      }
      continue;
    }
    if (sub.name === "__typename") {
      if (!abstract) rep.fields.push({ key: "__typename", dataKey: "__typename", selection: null });
      continue;
    }
    const among = abstract ? planned?.interfaceFields : planned?.fields;
    rep.fields.push(read(model.namedType, sub, among));
  }
  return rep;
}

/** Object types of an abstract type (supergraph). */
function possibleTypes(graph: QueryGraph, abstract: string): string[] {
  const t = graph.type(abstract);
  if (t?.kind === "union") return [...t.members];
  return graph.implementations(abstract).map((i) => i.name);
}

/** A response key for an internal field at a position that collides with no client field. */
export function internalKey(pos: Pos, field: { name: string; args: string }): string {
  const { name, args } = field;
  const free = (key: string) => {
    const client = pos.clientKeys.get(key);
    if (client && (client.name !== name || client.args !== args)) return false;
    const existing = pos.sel.fields.get(key);
    return !existing || (existing.name === name && existing.args === args);
  };
  if (free(name)) return name;
  for (let i = 1;; i++) {
    const key = `${name}__gw${i}`;
    if (free(key)) return key;
  }
}

/**
 * What a requirement's sub-fields must not collide with at one level: the client's fields there
 * and what the fetch already selects there (another requirement's fields).
 */
export interface Taken {
  readonly client: readonly NField[];
  readonly sels: readonly Sel[];
}

/** The {@linkcode Taken} below a requirement item planned at `pos` under the response key `key`. */
export function takenBelow(pos: Pos, of: { key: string; item: FieldSetItem }): Taken {
  const { key, item } = of;
  const same = (f: { name: string; args: string } | undefined) =>
    f !== undefined && f.name === item.name && f.args === item.args;
  const client = pos.clientKeys.get(key);
  const sf = pos.sel.fields.get(key);
  return {
    client: same(client) ? fieldsOf(client!.selection) : [],
    sels: same(sf) && sf!.child ? levelOf(sf!.child) : [],
  };
}

/**
 * A field set item as a normalized field (so requirements plan like client fields). `taken`
 * says what its sub-fields must not collide with: a sub-field whose response key the client (or
 * another requirement in the fetch) uses for another field or arguments gets its own alias
 * (`mean__gw1: mean(currency: "USD")` beside the client's `mean(currency: "EUR")`), so both
 * travel in one fetch.
 */
export function internalField(
  graph: QueryGraph,
  of: {
    key: string;
    item: FieldSetItem;
    type: string;
    model: FieldModel;
    taken?: Taken | undefined;
  },
): NField {
  const { key, item, type, model } = of;
  return {
    key,
    name: item.name ?? "",
    args: item.args,
    variables: [],
    parentType: type,
    namedType: model.namedType,
    type: typeRefOf(model.type),
    selection: item.selection.length > 0
      ? selectionOf(graph, {
        typeName: model.namedType,
        items: item.selection,
        taken: of.taken ?? { client: [], sels: [] },
      })
      : null,
    introspection: false,
  };
}

/** Every field of a client selection, whatever its type condition. */
function fieldsOf(selection: NSelection | null): NField[] {
  if (!selection) return [];
  return [
    ...selection.fields,
    ...selection.interfaceFields,
    ...[...selection.byType.values()].flat(),
  ];
}

/** A selection and its type conditions: the fields of one level of a fetch. */
function levelOf(sel: Sel): Sel[] {
  return [sel, ...sel.fragments.values()];
}

/** A response key for a requirement sub-field that nothing taken at its level uses otherwise. */
function nestedKey(taken: Taken, item: FieldSetItem): string {
  const name = item.name ?? "";
  const same = (f: { name: string; args: string }) => f.name === name && f.args === item.args;
  const free = (key: string) =>
    taken.client.every((c) => c.key !== key || same(c)) &&
    taken.sels.every((s) => {
      const f = s.fields.get(key);
      return f === undefined || same(f);
    });
  if (free(name)) return name;
  for (let i = 1;; i++) if (free(`${name}__gw${i}`)) return `${name}__gw${i}`;
}

/** What is taken below the sub-field at `key` (same field and arguments by {@linkcode nestedKey}). */
function below(taken: Taken, key: string): Taken {
  const client = taken.client.filter((c) => c.key === key).flatMap((c) => fieldsOf(c.selection));
  const sels: Sel[] = [];
  for (const s of taken.sels) {
    const child = s.fields.get(key)?.child;
    if (child) sels.push(...levelOf(child));
  }
  return { client, sels };
}

function selectionOf(
  graph: QueryGraph,
  of: { typeName: string; items: readonly FieldSetItem[]; taken: Taken },
): NSelection {
  const { typeName, items, taken } = of;
  const type = graph.type(typeName);
  const toFields = (t: string, list: readonly FieldSetItem[]): NField[] => {
    const out: NField[] = [];
    for (const item of list) {
      if (item.name === null || item.name === "__typename") continue;
      const m = graph.field(t, item.name);
      if (!m) continue;
      const key = nestedKey(taken, item);
      out.push(internalField(graph, { key, item, type: t, model: m, taken: below(taken, key) }));
    }
    return out;
  };
  if (type?.kind === "interface" || type?.kind === "union") {
    const byType = new Map<string, NField[]>();
    for (const p of possibleTypes(graph, typeName)) {
      byType.set(p, toFields(p, itemsFor(graph, { type: p, items })));
    }
    const interfaceFields = toFields(typeName, items.filter((i) => i.name !== null));
    return { typeName, abstract: true, fields: [], byType, interfaceFields };
  }
  return {
    typeName,
    abstract: false,
    fields: toFields(typeName, itemsFor(graph, { type: typeName, items })),
    byType: new Map(),
    interfaceFields: [],
  };
}

/** The representation field reading an internal field (planned as `planned`, when known). */
export function repField(
  graph: QueryGraph,
  item: FieldSetItem,
  options: {
    dataKey: string;
    model: FieldModel | undefined;
    planned?: NSelection | null | undefined;
  },
): RepField {
  const { dataKey, model, planned } = options;
  return {
    key: item.name ?? "",
    dataKey,
    selection: model ? repSelection(graph, { item, model, planned }) : null,
  };
}

function typeRefOf(printed: string): TypeRef {
  if (printed.endsWith("!")) return { kind: "nonNull", of: typeRefOf(printed.slice(0, -1)) };
  if (printed.startsWith("[")) return { kind: "list", of: typeRefOf(printed.slice(1, -1)) };
  return { kind: "composite", name: printed };
}
