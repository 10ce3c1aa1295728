/**
 * The distinct representations of one entity request, deduplicated by their
 * JSON (the bytes sent) and numbered in the order first met: `_entities`
 * answers them in that order. Many objects of a request are one entity (the
 * benchmark's ~70 product positions are ≤ 9 products), so an object whose
 * selection reads only leaf fields is first looked up by those values (per
 * type, then field by field): an object with the values of one already met
 * has its representation, and only a new combination of values renders and
 * prints one. Equal values render equal JSON, so the values only shortcut
 * the lookup by JSON and never decide alone: a combination met for the
 * first time still finds its number by its JSON.
 *
 * A new combination of leaf fields with names of their own (the planner's
 * `__typename` and `@key` fields) is printed from its values directly, the
 * members' names printed once per selection: no object is built for it and
 * none is kept on shared objects (on `plans` every entity is met once per
 * fetch: such a memo was never read). The lookup by values skips a
 * `__typename` field: the type sent replaces its value.
 *
 * @module
 */
import type { Layers } from "./_layers.ts";
import { memoizable, renderFields, repMemoOf } from "./_data.ts";
import type { RepField, RepSelection } from "../plan/mod.ts";

type Json = Record<string, unknown>;

/** A node of the lookup by values: the next field's values, or (after the last) the number. */
type ValueNode = Map<unknown, ValueNode | number>;

/**
 * How the representations of one selection print for one sent `__typename`,
 * when every field is a leaf with a name of its own.
 */
interface Form {
  /**
   * What precedes each field's value (`{"upc":`, then `,"price":` …); at a
   * `__typename` field, the whole member (its value is the type sent, not read).
   */
  readonly parts: readonly string[];
  /** The position of the `__typename` field; -1: none (it is added last). */
  readonly typenameAt: number;
  /** What follows the last value: the `__typename` member unless among the fields, and `}`. */
  readonly tail: string;
}

/** How a selection's representations print (made once per selection: plans are cached). */
interface Printer {
  /** Leaves with distinct names: the forms by `__typename` sent; null: the JSON is rendered. */
  readonly forms: Map<string, Form> | null;
  /**
   * Leaves: the positions of the fields an object is looked up by (all but a
   * `__typename` that is not a `@key` field: its value is never sent); else empty.
   */
  readonly lookup: readonly number[];
}

const PRINTERS = new WeakMap<RepSelection, Printer>();

function printerOf(selection: RepSelection): Printer {
  let printer = PRINTERS.get(selection);
  if (printer !== undefined) return printer;
  const fields = selection.fields;
  const leaves = fields.length > 0 && fields.every((f) => f.selection === null);
  // `renderFields` writes the members in field order and `__typename` (the type sent)
  // over its own or last; a name met twice keeps its first place there: rendered.
  const distinct = new Set(fields.map((f) => f.key)).size === fields.length;
  const lookup: number[] = [];
  if (leaves) {
    fields.forEach((f, i) => {
      if (f.key !== "__typename" || f.isKey) lookup.push(i);
    });
  }
  printer = { forms: leaves && distinct ? new Map() : null, lookup };
  PRINTERS.set(selection, printer);
  return printer;
}

function formOf(selection: RepSelection, forms: Map<string, Form>, sendTypename: string): Form {
  let form = forms.get(sendTypename);
  if (form !== undefined) return form;
  const typename = `"__typename":${JSON.stringify(sendTypename)}`;
  const fields = selection.fields;
  const typenameAt = fields.findIndex((f) => f.key === "__typename");
  form = {
    parts: fields.map((f, i) =>
      `${i === 0 ? "{" : ","}${i === typenameAt ? typename : `${JSON.stringify(f.key)}:`}`
    ),
    typenameAt,
    tail: typenameAt === -1 ? `,${typename}}` : "}",
  };
  forms.set(sendTypename, form);
  return form;
}

/** {@linkcode print}: a `@key` field is missing (nothing is sent). */
const MISSING: unique symbol = Symbol("missing");

/**
 * A representation of scalars printed as `JSON.stringify` prints the rendered
 * object; null when a value is an object (then it is rendered).
 */
function print(
  object: Json,
  layer: Json | undefined,
  fields: readonly RepField[],
  form: Form,
): string | null | typeof MISSING {
  const parts = form.parts;
  let json = "";
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const value = layer !== undefined && f.dataKey in layer ? layer[f.dataKey] : object[f.dataKey];
    if (f.isKey && (value === null || value === undefined)) return MISSING;
    if (i === form.typenameAt) json += parts[i];
    else if (value === undefined) json += parts[i] + "null";
    else if (typeof value === "object" && value !== null) return null;
    else json += parts[i] + JSON.stringify(value);
  }
  return json + form.tail;
}

/** Representations of one request found by a scan of their list before a map is made. */
const SCAN_UP_TO = 8;

/** What a fetch sends of one type, and the lookup by values of its objects. */
interface TypeEntry {
  readonly selection: RepSelection;
  /** The `__typename` sent for it. */
  readonly sendTypename: string;
  /** Null where it is not used (selections with objects, or of `__typename` alone). */
  readonly byValues: ValueNode | null;
  /** The fields looked up by values, by position (not `__typename`: the type sent replaces it). */
  readonly lookup: readonly number[];
  /** How its representations print; null: they are rendered. */
  readonly form: Form | null;
}

/** Options of {@linkcode RepresentationIndex}. */
export interface RepresentationIndexOptions {
  /** The representation selection per concrete type (a type not in it is not sent). */
  readonly selections: ReadonlyMap<string, RepSelection>;
  /** The `__typename` sent for a type, where it is another. */
  readonly sendTypename: ReadonlyMap<string, string>;
  /**
   * Objects may be shared with other requests (and never change): the JSON
   * of an object's representation is kept on it for them (`repMemoOf`).
   */
  readonly shared: boolean;
}

/** The representations of one entity request. */
export class RepresentationIndex {
  /** The distinct representations' JSON, by number. */
  readonly json: string[] = [];
  /** Made past {@linkcode SCAN_UP_TO} representations (most fetches send a few). */
  #byJson: Map<string, number> | null = null;
  /** The first type met, and its entry (most fetches start from objects of one type). */
  #firstType: string | null = null;
  #firstEntry: TypeEntry | null = null;
  /** The other types met, by name; null: the fetch sends nothing for the type. */
  #types: Map<string, TypeEntry | null> | null = null;
  readonly #layers: Layers;
  readonly #options: RepresentationIndexOptions;

  /**
   * @param layers The request's layers (fields are read through them).
   * @param options The fetch's selections, sent type names, sharing.
   */
  constructor(layers: Layers, options: RepresentationIndexOptions) {
    this.#layers = layers;
    this.#options = options;
  }

  #entry(typename: string): TypeEntry | null {
    if (typename === this.#firstType) return this.#firstEntry;
    let entry = this.#types?.get(typename);
    if (entry !== undefined) return entry;
    const selection = this.#options.selections.get(typename);
    if (selection === undefined) entry = null;
    else {
      const sendTypename = this.#options.sendTypename.get(typename) ?? typename;
      const printer = printerOf(selection);
      entry = {
        selection,
        sendTypename,
        byValues: printer.lookup.length > 0 ? new Map() : null,
        lookup: printer.lookup,
        form: printer.forms === null ? null : formOf(selection, printer.forms, sendTypename),
      };
    }
    if (this.#firstType === null) {
      this.#firstType = typename;
      this.#firstEntry = entry;
    } else (this.#types ??= new Map()).set(typename, entry);
    return entry;
  }

  /**
   * The number of an object's representation, added when new; null when the
   * object is not sent (no selection for its type, or a `@key` field is missing).
   *
   * @example Objects of one entity share a number; a new entity gets the next one
   * ```ts
   * import assert from "node:assert/strict";
   * import { Layers } from "./_layers.ts";
   * import { RepresentationIndex } from "./_rep_index.ts";
   * const layers = new Layers({}, { inPlace: true });
   * const upc = { fields: [{ key: "upc", dataKey: "upc", selection: null, isKey: true }], byType: new Map() };
   * const index = new RepresentationIndex(layers, {
   *   selections: new Map([["Product", upc]]),
   *   sendTypename: new Map(),
   *   shared: false,
   * });
   * assert.equal(index.indexOf({ upc: "1" }, "Product", undefined), 0);
   * assert.equal(index.indexOf({ upc: "2" }, "Product", undefined), 1);
   * assert.equal(index.indexOf({ upc: "1", name: "Desk" }, "Product", undefined), 0);
   * assert.equal(index.indexOf({ name: "Lamp" }, "Product", undefined), null);
   * assert.equal(index.indexOf({ id: "1" }, "User", undefined), null);
   * assert.deepEqual(index.json, ['{"upc":"1","__typename":"Product"}', '{"upc":"2","__typename":"Product"}']);
   * ```
   * @param object The object (read through the layers).
   * @param typename Its concrete type.
   * @param layer Its layer (`layers.layerOf(object)`).
   * @returns The representation's number, or null.
   */
  indexOf(object: Json, typename: string, layer: Json | undefined): number | null {
    const entry = this.#entry(typename);
    if (entry === null) return null;
    const fields = entry.selection.fields;
    // The node and the value under which a new combination of leaf values is noted.
    let node: ValueNode | undefined;
    let last: unknown;
    if (entry.byValues !== null) {
      node = entry.byValues;
      const lookup = entry.lookup;
      const end = lookup.length - 1;
      for (let i = 0; i <= end; i++) {
        const f = fields[lookup[i]!]!;
        const value = layer !== undefined && f.dataKey in layer
          ? layer[f.dataKey]
          : object[f.dataKey];
        if (f.isKey && (value === null || value === undefined)) return null;
        // Objects (a JSON scalar, an exact big integer) are compared by their JSON only.
        if (typeof value === "object" && value !== null) {
          node = undefined;
          break;
        }
        const next = node.get(value);
        if (i === end) {
          if (next !== undefined) return next as number;
          last = value;
        } else if (next === undefined) {
          const child: ValueNode = new Map();
          node.set(value, child);
          node = child;
        } else node = next as ValueNode;
      }
      // A new combination of scalars: printed, and found by its JSON.
      const form = entry.form;
      if (node !== undefined && form !== null) {
        const json = print(object, layer, fields, form);
        if (json === MISSING) return null;
        if (json !== null) return this.#number(json, node, last);
      }
    }
    // Shared objects never change: their representation is printed once for all
    // requests sharing them, unless this request's layer changed a field it reads.
    const memo = this.#options.shared && memoizable(layer, entry.selection)
      ? repMemoOf(object)
      : null;
    let json = memo?.get(entry.selection);
    if (json === undefined) {
      const rep: Json = {};
      if (!renderFields(this.#layers, object, fields, rep)) return null;
      rep.__typename = entry.sendTypename;
      json = JSON.stringify(rep);
      memo?.set(entry.selection, json);
    }
    return this.#number(json, node, last);
  }

  /** The number of a representation's JSON (added when new), noted under its values. */
  #number(json: string, node: ValueNode | undefined, last: unknown): number {
    const list = this.json;
    let index: number | undefined;
    if (this.#byJson !== null) index = this.#byJson.get(json);
    else {
      const at = list.indexOf(json);
      if (at >= 0) index = at;
    }
    if (index === undefined) {
      index = list.length;
      list.push(json);
      if (this.#byJson !== null) this.#byJson.set(json, index);
      else if (list.length > SCAN_UP_TO) this.#byJson = new Map(list.map((j, i) => [j, i]));
    }
    node?.set(last, index);
    return index;
  }
}
