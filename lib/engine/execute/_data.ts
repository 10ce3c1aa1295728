/**
 * The merged data of one request, read and written through its layers
 * (`_layers.ts`): merging entity results into the objects they belong to,
 * walking a fetch's path to the objects it needs, and rendering their
 * representations (printed once per shared object and fetch step).
 * The path walks follow the fetch's path and representation rendering its
 * selection (both from the plan); merging follows what two subgraphs sent,
 * down to {@linkcode MAX_DATA_DEPTH}.
 *
 * @module
 */
import type { Layers } from "./_layers.ts";
import { RouterError } from "../../errors.ts";
import { isRawNumber, MAX_DATA_DEPTH } from "../prepare/mod.ts";
import type { RepField, RepSelection } from "../plan/mod.ts";

/** A JSON object of the merged data. */
export type Json = Record<string, unknown>;

/** True for a JSON object (not null, not an array). */
export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Deep-merges `source` into `target` (entity results into the objects they belong to),
 * through the request's layers: shared objects and arrays are never changed.
 * A concrete `__typename` is kept: only an interface name (an `@interfaceObject`'s answer)
 * is replaced, by a concrete type.
 * `depth` is the nesting of `target` below the merge's start (see {@linkcode MAX_DATA_DEPTH}).
 */
export function mergeInto(
  layers: Layers,
  target: Json,
  source: Json,
  abstractNames: ReadonlySet<string> | undefined,
  depth = 0,
): void {
  const deeper = depth + 1 < MAX_DATA_DEPTH;
  // One layer lookup per object, not one per field (reads and writes below).
  let layer = layers.layerOf(target);
  /** Where writes go: not looked up yet, the object itself (null), or its layer. */
  let into: Json | null | undefined;
  for (const key in source) {
    const value = source[key];
    const existing = layer !== undefined && key in layer ? layer[key] : target[key];
    let next: unknown = NO_WRITE;
    if (existing === undefined) {
      next = value;
    } else if (key === "__typename") {
      // An object's concrete type, once known, is kept: an @interfaceObject answers
      // with the interface name (replaced by the concrete type when one comes), and
      // an entity answer naming another type (a faulty subgraph) cannot turn a
      // Product into a Brand.
      if (abstractNames?.has(existing as string) && !abstractNames.has(value as string)) {
        next = value;
      }
    } else if (
      deeper && isObject(existing) && isObject(value) && !isRawNumber(existing) &&
      !isRawNumber(value)
    ) {
      mergeInto(layers, existing, value, abstractNames, depth + 1);
    } else if (
      deeper && Array.isArray(existing) && Array.isArray(value) &&
      existing.length === value.length
    ) {
      // Objects merge item by item; any other item change gives the field a merged copy.
      let copy: unknown[] | null = null;
      for (let i = 0; i < value.length; i++) {
        const e = existing[i];
        const v = value[i];
        if (isObject(e) && isObject(v)) mergeInto(layers, e, v, abstractNames, depth + 1);
        else if (e !== v) (copy ??= existing.slice())[i] = v;
      }
      if (copy !== null) next = copy;
    } else {
      next = value;
    }
    if (next === NO_WRITE) continue;
    if (into === undefined) {
      into = layers.writeTarget(target);
      if (into !== null) layer = into;
    }
    (into ?? target)[key] = next;
  }
}

/** `mergeInto`: the field keeps its value. */
const NO_WRITE = Symbol("no write");

/**
 * Collects the objects at `path` (from `index` on; `@` walks a list's items)
 * below `value` into `out`, each once, reading through the layers.
 *
 * The merged data is a graph, not a tree: one entity answer merged into every
 * object that asked for it makes its lists and objects shared. Walked as a
 * tree, data that alternates between two subgraphs a few levels deep would
 * be visited exponentially often (3 people each 3 friends each 3 followers…:
 * 3^20 visits), so past {@linkcode DEDUPE_AFTER} visits each object (or list)
 * is walked once per path index. Below that the walk keeps no set: most
 * walks are a few hundred visits with nothing shared, where a set lookup per
 * visit would cost more than any repeat.
 */
export function collect(
  layers: Layers,
  value: unknown,
  path: readonly string[],
  index: number,
  out: Json[],
): void {
  walk(layers, value, path, index, out, 0, { visits: 0, seen: [] });
}

/** Visits of one walk before it remembers what it walked (see {@linkcode collect}). */
export const DEDUPE_AFTER = 4096;

/** One walk's count of visits and, past {@linkcode DEDUPE_AFTER}, what it walked per path index. */
interface Visited {
  visits: number;
  readonly seen: (Set<object> | undefined)[];
}

/** True when `value` was already walked at `index` (then marks it walked), once the walk is long. */
function visitedAt(visited: Visited, index: number, value: object): boolean {
  if (++visited.visits <= DEDUPE_AFTER) return false;
  const set = visited.seen[index] ??= new Set();
  if (set.has(value)) return true;
  set.add(value);
  return false;
}

function walk(
  layers: Layers,
  value: unknown,
  path: readonly string[],
  index: number,
  out: Json[],
  depth: number,
  visited: Visited,
): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value)) {
    // Lists within lists do not move along the path: their nesting is bounded apart.
    if (depth >= MAX_DATA_DEPTH || visitedAt(visited, index, value)) return;
    for (const item of value) walk(layers, item, path, index, out, depth + 1, visited);
    return;
  }
  if (!isObject(value) || visitedAt(visited, index, value)) return;
  if (index === path.length) {
    out.push(value);
    return;
  }
  const key = path[index]!;
  const next = key === "@" ? value : layers.get(value, key);
  walk(layers, next, path, index + 1, out, depth + 1, visited);
}

/**
 * Objects one {@linkcode collectWithAncestors} walk may visit. Its answer keeps
 * each object's ancestors, so shared data cannot be walked once per object as
 * {@linkcode collect} does; past this many visits (data shared between two
 * subgraphs, many levels deep) the walk stops with `RESPONSE_TOO_LARGE`.
 */
export const MAX_ANCESTOR_WALK = 1_000_000;

/** Like {@linkcode collect}, with the object met at each index of the path (`at[i]`). */
export function collectWithAncestors(
  layers: Layers,
  value: unknown,
  path: readonly string[],
  walk: {
    readonly index: number;
    readonly at: readonly Json[];
    readonly out: Json[][];
    readonly depth?: number;
    /** Visits left (see {@linkcode MAX_ANCESTOR_WALK}), shared by the whole walk. */
    readonly budget?: { left: number };
  },
): void {
  if (value === null || value === undefined) return;
  const depth = walk.depth ?? 0;
  const budget = walk.budget ?? { left: MAX_ANCESTOR_WALK };
  if (--budget.left < 0) {
    throw new RouterError(
      "RESPONSE_TOO_LARGE",
      `The operation reaches more than ${MAX_ANCESTOR_WALK} objects along the path of a @fromContext fetch`,
      { details: { limit: MAX_ANCESTOR_WALK } },
    );
  }
  if (Array.isArray(value)) {
    if (depth >= MAX_DATA_DEPTH) return;
    for (const item of value) {
      collectWithAncestors(layers, item, path, { ...walk, depth: depth + 1, budget });
    }
    return;
  }
  if (!isObject(value)) return;
  const { index, out } = walk;
  const at = [...walk.at];
  at[index] = value;
  if (index === path.length) {
    out.push(at);
    return;
  }
  const key = path[index]!;
  const next = key === "@" ? value : layers.get(value, key);
  collectWithAncestors(layers, next, path, {
    index: index + 1,
    at,
    out,
    depth: depth + 1,
    budget,
  });
}

/**
 * Like {@linkcode collect}, keeping each object's response path (`at`, the
 * list indexes included) in `out`: where an entity error belongs.
 */
export function collectPaths(
  layers: Layers,
  value: unknown,
  path: readonly string[],
  index: number,
  at: (string | number)[],
  out: Map<Json, (string | number)[]>,
  visited: Visited = { visits: 0, seen: [] },
): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value)) {
    // Each list level adds to `at`: nesting past the bound names no response path.
    // A shared list is walked once (see `collect`): its objects keep their first path.
    if (at.length >= MAX_DATA_DEPTH || visitedAt(visited, index, value)) return;
    for (let i = 0; i < value.length; i++) {
      collectPaths(layers, value[i], path, index, [...at, i], out, visited);
    }
    return;
  }
  if (!isObject(value) || visitedAt(visited, index, value)) return;
  if (index === path.length) {
    if (!out.has(value)) out.set(value, at);
    return;
  }
  const key = path[index]!;
  if (key === "@") collectPaths(layers, value, path, index + 1, at, out, visited);
  else collectPaths(layers, layers.get(value, key), path, index + 1, [...at, key], out, visited);
}

/** Renders representation fields; false when a `@key` field is missing (nothing to send). */
export function renderFields(
  layers: Layers,
  source: Json,
  fields: readonly RepField[],
  out: Json,
): boolean {
  const layer = layers.layerOf(source);
  for (const f of fields) {
    const value = layer !== undefined && f.dataKey in layer ? layer[f.dataKey] : source[f.dataKey];
    if (f.isKey && (value === null || value === undefined)) return false;
    out[f.key] = f.selection
      ? renderValue(layers, value, f.selection)
      : value === undefined
      ? null
      : value;
  }
  return true;
}

function renderValue(layers: Layers, value: unknown, selection: RepSelection): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((v) => renderValue(layers, v, selection));
  if (!isObject(value)) return value;
  const out: Json = {};
  renderFields(layers, value, selection.fields, out);
  const typename = layers.get(value, "__typename");
  if (typeof typename === "string") {
    const typed = selection.byType.get(typename);
    if (typed) renderFields(layers, value, typed, out);
  }
  return out;
}

/**
 * The representation JSON of a shared subgraph object per selection (a
 * non-enumerable symbol-keyed property: invisible to every reader of the data,
 * `JSON.stringify` and deep comparisons included). Each selection belongs to
 * one fetch step and one type, so the JSON is a function of the object alone.
 */
const REP_MEMO: unique symbol = Symbol("gw.representations");
type RepMemoHolder = { [REP_MEMO]?: Map<RepSelection, string> };

/**
 * True when an object's representation is its own fields alone: leaf fields
 * that this request's layer (`layer`) did not write (a nested selection can
 * reach objects with layers of their own).
 */
export function memoizable(layer: Json | undefined, selection: RepSelection): boolean {
  for (const f of selection.fields) {
    if (f.selection !== null) return false;
    if (layer !== undefined && f.dataKey in layer) return false;
  }
  return true;
}

/** The object's memo, made on first use (not enumerable: no reader sees it). */
export function repMemoOf(object: Json): Map<RepSelection, string> {
  const holder = object as RepMemoHolder;
  let memo = holder[REP_MEMO];
  if (memo === undefined) {
    memo = new Map();
    Object.defineProperty(object, REP_MEMO, { value: memo });
  }
  return memo;
}
