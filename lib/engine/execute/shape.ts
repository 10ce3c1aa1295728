/**
 * The response shaper: walks the client's normalized selection over the merged
 * subgraph data and writes the response once: client keys in selection order,
 * no internal fields, `__typename` answered, leaf values coerced as graphql-js
 * serializes them (built-in scalars; enum values checked against the API
 * schema; a custom scalar's value nested deeper than `MAX_DATA_DEPTH`
 * refused), a wrongly shaped object or list nulled with an error at its path,
 * and null propagation exactly as the GraphQL spec says.
 *
 * The walk recurses over the client's selection (not over the data), whose
 * depth `prepare` bounds by `security.parser_limits` first. Its output is
 * counted as it is built (a lower bound of its JSON size): merged data shares
 * entity answers between the objects that asked for them, so a small query
 * alternating between two subgraphs can ask for a tree exponentially larger
 * than the data; past `maxBytes` shaping stops with `tooLarge`.
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import type { Layers } from "./_layers.ts";
import { isRawNumber, MAX_DATA_DEPTH, unauthorizedError } from "../prepare/mod.ts";
import type { NField, NSelection, TypeRef } from "../prepare/mod.ts";
import {
  coerceScalar,
  keptAsIs,
  keptPrefix,
  kindOf,
  nestedDeeperThan,
  NOT_COERCIBLE,
} from "./coerce_leaf.ts";

/** Options for {@linkcode shapeResponse}. */
export interface ShapeOptions {
  /** Errors so far (subgraph errors, re-pathed); the shaper appends its own. */
  readonly errors: GraphQLFormattedError[];
  /** The request's layers over shared subgraph data (`executePlan`); none: plain data. */
  readonly layers?: Layers;
  /**
   * Fields removed by the authorization stage (`field_access.ts`): each is
   * answered `null` with an `UNAUTHORIZED_FIELD_OR_TYPE` error at its path.
   */
  readonly denied?: ReadonlySet<NField>;
  /** The largest response, bytes (`engine.max_response_bytes`). @default Infinity */
  readonly maxBytes?: number;
  /** Bytes the response already holds (the subgraph errors, counted as forwarded). @default 0 */
  readonly bytes?: number;
  /** The error thrown when the output passes `maxBytes`. */
  readonly tooLarge?: () => Error;
  /**
   * Response path of the object shaped (a deferred part's object): error paths start with it.
   * @default []
   */
  readonly at?: readonly (string | number)[];
}

/** A non-null position got null: the parent must be nulled (the error is recorded). */
const INVALID = Symbol("invalid");
/** Null with its error already recorded (a nullable position keeps null, no second error). */
const ERRORED = Symbol("errored");

/**
 * A node of {@linkcode ErrorPaths}: the items leading to it are
 * `path[from..to)` of one error path (kept by reference, not copied).
 */
interface PathNode {
  readonly path: readonly unknown[];
  readonly from: number;
  to: number;
  /** An error path ends here. */
  end: boolean;
  /** The nodes below, by their first item. */
  children: Map<unknown, PathNode> | null;
}

/**
 * The paths of the errors there before shaping (wrapped ones too) in a radix
 * tree, built once: whether one explains a null is a walk along the null's
 * path, not a scan of every error per null (a subgraph list of a million nulls
 * beside thousands of errors was billions of comparisons). At most two nodes
 * per path, whatever its length.
 */
class ErrorPaths {
  readonly #root: PathNode = { path: [], from: 0, to: 0, end: false, children: null };

  constructor(errors: readonly GraphQLFormattedError[], count: number) {
    for (let i = 0; i < count; i++) {
      const error = errors[i];
      this.#add(error?.path);
      const wrapped = error?.extensions?.errors;
      if (Array.isArray(wrapped)) { for (const e of wrapped) this.#add(e?.path); }
    }
  }

  #add(path: unknown): void {
    if (!Array.isArray(path)) return;
    let node = this.#root;
    let i = 0;
    while (i < path.length) {
      const child = node.children?.get(path[i]);
      if (child === undefined) {
        (node.children ??= new Map()).set(path[i], {
          path,
          from: i,
          to: path.length,
          end: true,
          children: null,
        });
        return;
      }
      let j = child.from;
      while (j < child.to && i < path.length && child.path[j] === path[i]) {
        j++;
        i++;
      }
      if (j < child.to) {
        // The paths part inside this node's items: split it there.
        const tail: PathNode = { ...child, from: j };
        child.to = j;
        child.end = false;
        child.children = new Map([[child.path[j], tail]]);
      }
      node = child;
    }
    node.end = true;
  }

  /** True when an error is at `path`, on an ancestor of it, or below it. */
  explains(path: readonly (string | number)[]): boolean {
    let node = this.#root;
    let i = 0;
    while (true) {
      if (node.end) return true;
      if (i === path.length) return node.children !== null;
      const child = node.children?.get(path[i]);
      if (child === undefined) return false;
      for (let j = child.from; j < child.to; j++, i++) {
        if (i === path.length) return true;
        if (child.path[j] !== path[i]) return false;
      }
      node = child;
    }
  }
}

class Shaper {
  readonly #errors: GraphQLFormattedError[];
  readonly #initialErrors: number;
  /** The paths of those errors, indexed at the first null (most responses have none). */
  #explained: ErrorPaths | null = null;
  /**
   * The response path of the value being shaped, pushed and popped around
   * each field and list item: copied only for an error, so shaping allocates
   * nothing per field but the output itself.
   */
  readonly #path: (string | number)[];
  readonly #layers: Layers | undefined;
  readonly #denied: ReadonlySet<NField> | undefined;
  /** A lower bound of the output's JSON size so far (punctuation and string lengths). */
  #bytes = 0;
  readonly #maxBytes: number;
  readonly #tooLarge: () => Error;

  constructor(errors: GraphQLFormattedError[], options: ShapeOptions) {
    this.#errors = errors;
    this.#path = [...(options.at ?? [])];
    this.#initialErrors = errors.length;
    this.#layers = options.layers;
    this.#denied = options.denied !== undefined && options.denied.size > 0
      ? options.denied
      : undefined;
    this.#bytes = options.bytes ?? 0;
    this.#maxBytes = options.maxBytes ?? Infinity;
    this.#tooLarge = options.tooLarge ??
      (() => new RangeError(`The response would exceed ${this.#maxBytes} bytes`));
  }

  #nullError(parentType: string, field: NField): void {
    const arr = this.#path.slice();
    // A subgraph error at or below this field, or on an ancestor (the entity failed),
    // already explains the null; so does one wrapped in a router error
    // (`subgraph_error_propagation.mode: wrapped`).
    this.#explained ??= new ErrorPaths(this.#errors, this.#initialErrors);
    if (this.#explained.explains(arr)) return;
    // Nothing explains it: the subgraph sent null (or nothing) where its schema says non-null.
    this.#error({
      message: `Cannot return null for non-nullable field ${parentType}.${field.name}.`,
      path: arr,
      extensions: { code: "SUBGRAPH_INVALID_RESPONSE" },
    });
  }

  /**
   * Records an error of the response, counted like its data: a subgraph can
   * answer millions of wrong list items, each an error of its own.
   */
  #error(error: GraphQLFormattedError): void {
    // `{"message":"…","path":[…]}`: its message, punctuation and a separator per path item.
    this.#bytes += error.message.length + 20 + (error.path?.length ?? 0);
    if (this.#bytes > this.#maxBytes) throw this.#tooLarge();
    this.#errors.push(error);
  }

  object(
    source: Record<string, unknown>,
    selection: NSelection,
  ): Record<string, unknown> | typeof INVALID | typeof ERRORED {
    let typeName = selection.typeName;
    let fields = selection.fields;
    // The request's own writes to this (possibly shared) object, looked up once.
    const layer = this.#layers?.layerOf(source);
    if (selection.abstract) {
      const runtime = layer !== undefined && "__typename" in layer
        ? layer.__typename
        : source.__typename;
      let sliced = typeof runtime === "string" ? selection.byType.get(runtime) : undefined;
      if (!sliced && runtime === selection.typeName) sliced = selection.interfaceFields;
      // No possible type of the position: an error, never a silent null (nor its name echoed).
      if (!sliced) {
        return this.#invalid(`an object of a possible type of ${selection.typeName}`, source, {
          message:
            `The subgraph returned an object whose __typename is not a possible type of ${selection.typeName}`,
        });
      }
      typeName = runtime as string;
      fields = sliced;
    }
    // Issue 33: while every value is the source's own, the source object is
    // already the answer (same keys, same order): it is returned, and nothing is
    // copied (issue 45: the copy is made at the first value that differs, from
    // the source's values before it, which were kept as they are).
    let out: Record<string, unknown> | null = layer === undefined ? null : {};
    // `{}`, and per field at least `"":` and a value's first character (key lengths
    // left out: one addition per object keeps it a lower bound and cheap).
    const bytes = this.#bytes + 2 + 4 * fields.length;
    if (bytes > this.#maxBytes) throw this.#tooLarge();
    this.#bytes = bytes;
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      if (f.name === "__typename") {
        if (out !== null) out[f.key] = typeName;
        else if (source[f.key] !== typeName) (out = copied(source, fields, i))[f.key] = typeName;
        continue;
      }
      if (this.#denied?.has(f)) {
        this.#path.push(f.key);
        this.#error(unauthorizedError(this.#path.slice()));
        this.#path.pop();
        if (f.type.kind === "nonNull") return INVALID;
        (out ??= copied(source, fields, i))[f.key] = null;
        continue;
      }
      let raw = layer !== undefined && f.key in layer ? layer[f.key] : source[f.key];
      // A built-in scalar's value of its own kind is kept as it is (no call, no path).
      const leaf = f.type.kind === "nonNull" ? f.type.of : f.type;
      if (leaf.kind === "scalar" && keptAsIs(leaf.name, raw)) {
        if (typeof raw === "string" && (this.#bytes += raw.length) > this.#maxBytes) {
          throw this.#tooLarge();
        }
        if (out !== null) out[f.key] = raw;
        continue;
      }
      // JSON holds no functions: one is inherited (an alias `toString` the subgraph left out).
      if (typeof raw === "function") raw = undefined;
      this.#path.push(f.key);
      const value = this.value(raw, f.type, f, typeName);
      this.#path.pop();
      if (value === INVALID) return INVALID;
      const kept = value === ERRORED ? null : value;
      if (out !== null) out[f.key] = kept;
      else if (kept !== raw) (out = copied(source, fields, i))[f.key] = kept;
    }
    if (out !== null) return out;
    return sameKeys(source, fields) ? source : copied(source, fields, fields.length);
  }

  value(
    raw: unknown,
    type: TypeRef,
    field: NField,
    parentType: string,
  ): unknown {
    if (type.kind === "nonNull") {
      const v = this.value(raw, type.of, field, parentType);
      if (v === null || v === INVALID || v === ERRORED) {
        if (v === null) this.#nullError(parentType, field);
        return INVALID;
      }
      return v;
    }
    if (raw === null || raw === undefined) return null;
    switch (type.kind) {
      case "list": {
        if (!Array.isArray(raw)) {
          return this.#invalid(`a list for ${parentType}.${field.name}`, raw);
        }
        // `[]` and the separators between items (each item counts itself).
        this.#bytes += raw.length === 0 ? 2 : raw.length + 1;
        if (this.#bytes > this.#maxBytes) throw this.#tooLarge();
        let i = 0;
        const item = type.of.kind === "nonNull" ? type.of.of : type.of;
        if (item.kind === "scalar") {
          // Issue 45: a list of a built-in scalar's values of their own kind is
          // checked in one loop (no call, no path per item).
          i = keptPrefix(item.name, raw);
          if (item.name === "String" || item.name === "ID") {
            let strings = 0;
            for (let j = 0; j < i; j++) strings += (raw[j] as string).length;
            if ((this.#bytes += strings) > this.#maxBytes) throw this.#tooLarge();
          }
          if (i === raw.length) return raw;
        }
        const path = this.#path;
        // Every item the source's own: the source list is the answer (see `object`);
        // the copy is made at the first item that differs.
        let out: unknown[] | null = null;
        for (; i < raw.length; i++) {
          path.push(i);
          const v = this.value(raw[i], type.of, field, parentType);
          path.pop();
          if (v === INVALID) return ERRORED;
          const kept = v === ERRORED ? null : v;
          if (out !== null) out.push(kept);
          else if (kept !== raw[i]) (out = raw.slice(0, i)).push(kept);
        }
        return out ?? raw;
      }
      case "enum":
        if (typeof raw !== "string" || !type.values.has(raw)) {
          // A string outside the enum is named (it is a value of the enum's kind);
          // anything else is only described: it may be data nobody selected.
          const what = typeof raw === "string" ? JSON.stringify(raw) : kindOf(raw);
          return this.#invalid(`a value of enum ${type.name}`, raw, {
            message: `Enum "${type.name}" cannot represent value: ${what}`,
          });
        }
        return raw;
      case "composite": {
        if (field.selection === null) return null;
        if (typeof raw !== "object" || Array.isArray(raw) || isRawNumber(raw)) {
          return this.#invalid(`an object for ${parentType}.${field.name}`, raw);
        }
        const v = this.object(raw as Record<string, unknown>, field.selection);
        return v === INVALID ? ERRORED : v;
      }
      default: {
        if (typeof raw === "string") {
          this.#bytes += raw.length;
          if (this.#bytes > this.#maxBytes) throw this.#tooLarge();
        }
        if (type.name === undefined) return raw;
        if (typeof raw === "object" && nestedDeeperThan(raw, MAX_DATA_DEPTH)) {
          return this.#invalid(`a value of type ${type.name}`, raw, {
            message: `The subgraph returned a value of type ${type.name} nested deeper than ` +
              `${MAX_DATA_DEPTH} levels`,
          });
        }
        const v = coerceScalar(type.name, raw);
        return v === NOT_COERCIBLE ? this.#invalid(`a value of type ${type.name}`, raw) : v;
      }
    }
  }

  /**
   * Records that the subgraph's value at the current path is not what the
   * schema says (never echoing it) and answers null for it.
   */
  #invalid(
    expected: string,
    raw: unknown,
    options: { readonly message?: string } = {},
  ): typeof ERRORED {
    this.#error({
      message: options.message ??
        `The subgraph returned ${kindOf(raw)} where ${expected} was expected`,
      path: this.#path.slice(),
      extensions: { code: "SUBGRAPH_INVALID_RESPONSE" },
    });
    return ERRORED;
  }
}

/**
 * The shaped object's first `count` fields, whose values were the source's
 * own (`__typename` included: it was the source's too).
 */
function copied(
  source: Record<string, unknown>,
  fields: readonly NField[],
  count: number,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) out[fields[i]!.key] = source[fields[i]!.key];
  return out;
}

/**
 * True when `source` has exactly the keys of `fields`, in their order (so it
 * prints as the shaped object would).
 */
function sameKeys(source: Record<string, unknown>, fields: readonly NField[]): boolean {
  let i = 0;
  for (const key in source) {
    if (i >= fields.length || fields[i]!.key !== key) return false;
    i++;
  }
  return i === fields.length;
}

/**
 * Shapes merged data to the client's selection.
 *
 * @example Aliases and non-null propagation
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse } from "graphql";
 * import { normalizeOperation } from "../prepare/normalize.ts";
 * import { shapeResponse } from "./shape.ts";
 * const schema = buildSchema("type Query { a: Int! b: String }");
 * const op = normalizeOperation(schema, parse("{ x: b a }"));
 * const errors: { message: string }[] = [];
 * assert.equal(shapeResponse({ x: "hi" }, op.selection, { errors }), null);
 * assert.equal(errors.length, 1);
 * assert.deepEqual(shapeResponse({ x: "hi", a: 1 }, op.selection, { errors: [] }), { x: "hi", a: 1 });
 * ```
 * @param data The merged subgraph data (root object).
 * @param selection The root selection.
 * @param options Error list to append to.
 * @returns The response `data` (null when a non-null root field is null).
 */
export function shapeResponse(
  data: Record<string, unknown>,
  selection: NSelection,
  options: ShapeOptions,
): Record<string, unknown> | null {
  const result = new Shaper(options.errors, options).object(data, selection);
  return result === INVALID || result === ERRORED ? null : result;
}
