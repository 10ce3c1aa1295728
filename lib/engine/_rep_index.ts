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
 * @module
 */
import type { Layers } from "./_layers.ts";
import { renderFields } from "./_data.ts";
import type { RepSelection } from "./_rep.ts";

type Json = Record<string, unknown>;

/** A node of the lookup by values: the next field's values, or (after the last) the number. */
type ValueNode = Map<unknown, ValueNode | number>;

/** What an object's representation is printed from. */
export interface RepresentationOf {
  /** The object's concrete type (the lookup's first level). */
  readonly typename: string;
  /** The type's representation selection in this fetch. */
  readonly selection: RepSelection;
  /** The `__typename` sent for it. */
  readonly sendTypename: string;
  /**
   * The JSON printed earlier for this object and selection (shared objects), if any;
   * `remember` keeps a JSON printed now.
   */
  readonly memo?: Map<RepSelection, string> | null;
}

/** The representations of one entity request. */
export class RepresentationIndex {
  /** The distinct representations' JSON, by number. */
  readonly json: string[] = [];
  readonly #byJson = new Map<string, number>();
  readonly #byValues = new Map<string, ValueNode>();
  readonly #layers: Layers;

  /** @param layers The request's layers (fields are read through them). */
  constructor(layers: Layers) {
    this.#layers = layers;
  }

  /**
   * The number of an object's representation, added when new; null when the
   * object is not sent (a `@key` field is missing).
   *
   * @example Objects of one entity share a number; a new entity gets the next one
   * ```ts
   * import assert from "node:assert/strict";
   * import { Layers } from "./_layers.ts";
   * import { RepresentationIndex } from "./_rep_index.ts";
   * const index = new RepresentationIndex(new Layers({}, { inPlace: true }));
   * const selection = { fields: [{ key: "upc", dataKey: "upc", selection: null, isKey: true }], byType: new Map() };
   * const of = { typename: "Product", selection, sendTypename: "Product" };
   * assert.equal(index.indexOf({ upc: "1" }, of), 0);
   * assert.equal(index.indexOf({ upc: "2" }, of), 1);
   * assert.equal(index.indexOf({ upc: "1", name: "Desk" }, of), 0);
   * assert.equal(index.indexOf({ name: "Lamp" }, of), null);
   * assert.deepEqual(index.json, ['{"upc":"1","__typename":"Product"}', '{"upc":"2","__typename":"Product"}']);
   * ```
   * @param object The object (read through the layers).
   * @param of Its type, selection, sent type name and memo.
   * @returns The representation's number, or null.
   */
  indexOf(object: Json, of: RepresentationOf): number | null {
    const fields = of.selection.fields;
    const layer = this.#layers.layerOf(object);
    // The node and the value under which a new combination of leaf values is noted.
    let node: ValueNode | undefined;
    let last: unknown;
    if (fields.length > 0) {
      node = this.#byValues.get(of.typename);
      if (node === undefined) this.#byValues.set(of.typename, node = new Map());
      const end = fields.length - 1;
      for (let i = 0; i <= end; i++) {
        const f = fields[i]!;
        if (f.selection !== null) {
          node = undefined;
          break;
        }
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
    }
    let json = of.memo?.get(of.selection);
    if (json === undefined) {
      const rep: Json = {};
      if (!renderFields(this.#layers, object, fields, rep)) return null;
      rep.__typename = of.sendTypename;
      json = JSON.stringify(rep);
      of.memo?.set(of.selection, json);
    }
    let index = this.#byJson.get(json);
    if (index === undefined) {
      index = this.json.length;
      this.#byJson.set(json, index);
      this.json.push(json);
    }
    node?.set(last, index);
    return index;
  }
}
