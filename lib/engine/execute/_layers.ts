/**
 * Per-request layers over shared subgraph data. With single flight, identical
 * in-flight subgraph requests share one response and one parse of it, so the
 * parsed objects are shared by every request that waited on it and must never
 * change. What one request merges into them (entity fields, renamed keys)
 * goes into its own layer for that object; reads go through {@linkcode Layers}.
 * The request's root object is its own and is written in place.
 *
 * @module
 */
import { MAX_DATA_DEPTH, MAX_TRACE_VALUES } from "../prepare/mod.ts";

type Json = Record<string, unknown>;

/**
 * The prototype of every layer: an object without a prototype and without
 * keys. A layer made from it inherits no keys (`key in layer` and `for…in`
 * see its own fields only: an alias `toString` is a field like any other), as
 * with `Object.create(null)`, but V8 keeps it in fast mode: a null-prototype
 * object starts as a dictionary, three times slower to build and to write.
 */
const LAYER_PROTOTYPE: object = Object.freeze(Object.create(null));

function newLayer(): Json {
  return Object.create(LAYER_PROTOTYPE) as Json;
}

/** Options of {@linkcode Layers}. */
export interface LayersOptions {
  /**
   * No subgraph data of this request can be shared (single flight off, or a
   * mutation): every object is its own, so reads and writes go to it directly.
   */
  readonly inPlace?: boolean;
}

/** One request's layers over shared objects. */
export class Layers {
  readonly #layers = new Map<object, Json>();
  readonly #own: object;
  readonly #inPlace: boolean;

  /**
   * @param own The request's own root object (written in place).
   * @param options In-place mode.
   */
  constructor(own: object, options: LayersOptions = {}) {
    this.#own = own;
    this.#inPlace = options.inPlace === true;
  }

  /**
   * The layer of an object, if the request wrote to it (read it once per object
   * when reading many fields).
   */
  layerOf(object: object): Json | undefined {
    return this.#inPlace ? undefined : this.#layers.get(object);
  }

  /** Reads a field: the request's layer first, then the shared object. */
  get(object: Json, key: string): unknown {
    if (this.#inPlace) return object[key];
    const layer = this.#layers.get(object);
    return layer !== undefined && key in layer ? layer[key] : object[key];
  }

  /** True when the field is present (a field removed in the layer is absent). */
  has(object: Json, key: string): boolean {
    if (this.#inPlace) return key in object;
    const layer = this.#layers.get(object);
    if (layer !== undefined && key in layer) return layer[key] !== undefined;
    return key in object;
  }

  /**
   * Where writes to an object go: the object itself (the request's own root,
   * or every object in in-place mode) is `null`; else its layer, made on first
   * use. For callers that write many fields of one object (one lookup, not one
   * per field).
   */
  writeTarget(object: Json): Json | null {
    if (this.#inPlace || object === this.#own) return null;
    let layer = this.#layers.get(object);
    if (layer === undefined) {
      layer = newLayer();
      this.#layers.set(object, layer);
    }
    return layer;
  }

  /** Writes a field (`undefined` removes it). */
  set(object: Json, key: string, value: unknown): void {
    if (this.#inPlace || object === this.#own) {
      if (value === undefined) delete object[key];
      else object[key] = value;
      return;
    }
    let layer = this.#layers.get(object);
    if (layer === undefined) {
      layer = newLayer();
      this.#layers.set(object, layer);
    }
    layer[key] = value;
  }

  /**
   * A plain deep copy with the layers applied (traces show what was sent and
   * merged at that moment), of at most {@linkcode MAX_TRACE_VALUES} values:
   * shared entity answers make the data a graph whose copy as a tree can be
   * exponentially larger; past the bound (or {@linkcode MAX_DATA_DEPTH} deep)
   * a value is named, not copied.
   * @param value The data.
   * @returns The copy.
   */
  materialize(value: unknown): unknown {
    return this.#copy(value, 0, { left: MAX_TRACE_VALUES });
  }

  #copy(value: unknown, depth: number, budget: { left: number }): unknown {
    if (typeof value !== "object" || value === null) return value;
    // A trace is for people: data past the bounds is named, not copied.
    if (depth >= MAX_DATA_DEPTH) return `[nested deeper than ${MAX_DATA_DEPTH} levels: not shown]`;
    if (--budget.left < 0) return `[more than ${MAX_TRACE_VALUES} values: not shown]`;
    if (Array.isArray(value)) return value.map((item) => this.#copy(item, depth + 1, budget));
    const object = value as Json;
    const out: Json = {};
    for (const key in object) out[key] = object[key];
    const layer = this.#layers.get(object);
    if (layer !== undefined) {
      for (const key in layer) {
        if (layer[key] === undefined) delete out[key];
        else out[key] = layer[key];
      }
    }
    for (const key in out) out[key] = this.#copy(out[key], depth + 1, budget);
    return out;
  }
}
