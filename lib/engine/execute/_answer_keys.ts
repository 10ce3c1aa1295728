/**
 * A subgraph answer cut to the response keys its fetch selected, at every
 * level, before it is merged: members it was not asked for would overwrite
 * other subgraphs' data. Pure.
 *
 * @module
 */
import { isObject } from "./_data.ts";
import type { KeyTree } from "../plan/mod.ts";
import { isRawNumber, MAX_DATA_DEPTH } from "../prepare/mod.ts";

type Json = Record<string, unknown>;

/** What {@linkcode selected} drops. */
const UNSELECTED = Symbol("unselected");

/**
 * The members of a subgraph's answer its fetch selected, at every level: one
 * answering keys it was not asked for (a root field of another subgraph, a
 * field another subgraph owns, or one of a shared value type's fields below
 * an entity's) would overwrite their data. Copies only where there is such a
 * key; a leaf (a custom scalar's object) is kept whole. Below
 * {@linkcode MAX_DATA_DEPTH} (where merging stops too) values are kept as sent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { selected } from "./_answer_keys.ts";
 * const keys = new Map([["info", new Map([["w", null]])]]);
 * assert.deepEqual(selected({ info: { w: 5, x: 6 }, other: 1 }, keys, 0), { info: { w: 5 } });
 * ```
 * @param answer An object of the answer.
 * @param keys The keys it may have (undefined: all).
 * @param depth Its depth in the answer.
 * @returns The object, or a copy without the keys not selected.
 */
export function selected(answer: Json, keys: KeyTree | undefined, depth: number): Json {
  if (keys === undefined || depth >= MAX_DATA_DEPTH) return answer;
  let out: Json | null = null;
  for (const key in answer) {
    const value = answer[key];
    // One lookup: a leaf's entry is null, a key not selected has none.
    const below = keys.get(key);
    const kept = below === undefined
      ? UNSELECTED
      : below === null
      ? value
      : selectedValue(value, below, depth + 1);
    if (out === null && kept !== value) {
      // The members before this one were kept as they are.
      out = {};
      for (const k in answer) {
        if (k === key) break;
        out[k] = answer[k];
      }
    }
    if (out !== null && kept !== UNSELECTED) out[key] = kept;
  }
  return out ?? answer;
}

/** {@linkcode selected} of a field's value: an object, a list of them, or a leaf. */
function selectedValue(value: unknown, keys: KeyTree, depth: number): unknown {
  if (Array.isArray(value)) return selectedItems(value, keys, depth);
  return isObject(value) && !isRawNumber(value) ? selected(value, keys, depth) : value;
}

/**
 * {@linkcode selected} of each item of a list (a copy only when one changed).
 * @param list The items (objects, lists of them, or leaves).
 * @param keys The keys each item may have (undefined: all).
 * @param depth The list's depth in the answer.
 * @returns The list, or a copy with the items cut.
 */
export function selectedItems(
  list: readonly unknown[],
  keys: KeyTree | undefined,
  depth: number,
): unknown[] {
  if (keys === undefined || depth >= MAX_DATA_DEPTH) return list as unknown[];
  let copy: unknown[] | null = null;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    const kept = selectedValue(item, keys, depth + 1);
    if (kept !== item) (copy ??= list.slice())[i] = kept;
  }
  return copy ?? list as unknown[];
}
