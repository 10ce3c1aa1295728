/**
 * Reading one subgraph answer for the executor: the body parsed once (and cut
 * to the keys its fetch selected), whether an entity's type agrees, and error
 * paths named as the client's. Pure.
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import { isRawNumber, parseJsonExact } from "../prepare/mod.ts";
import { NOT_JSON, TOO_DEEP } from "./_answer_faults.ts";
import { selected, selectedItems } from "./_answer_keys.ts";
import { isObject } from "./_data.ts";
import { batchAlias, type EntityBatch } from "./entity_batch.ts";
import type { FetchStep, Rewrite } from "../plan/mod.ts";
import type { SubgraphResponse } from "./execute_types.ts";

type Json = Record<string, unknown>;

/** Options of {@linkcode parseOnce}. */
export interface ParseOnceOptions {
  /**
   * Whether the answer is cut to its fetch's keys (default true). A plan of one
   * root fetch has no other subgraph's data to overwrite, and shaping reads only
   * the selection: the whole answer serves it.
   */
  readonly cut?: boolean;
}

/**
 * The parsed body (null when it is not JSON) with only the members its fetch
 * selected (see {@linkcode selected}), made once per shared response: requests
 * that shared a subgraph response share its parsed data too (one body is one
 * operation text, so one selection). With `cut: false` the answer as parsed
 * (or the cut one, when another request made it already).
 */
export function parseOnce(
  response: SubgraphResponse,
  step: FetchStep | EntityBatch,
  options?: ParseOnceOptions,
): unknown {
  const memo = response.parsed;
  if (memo !== undefined && "value" in memo) return memo.value;
  let payload: unknown;
  if (memo !== undefined && "whole" in memo) payload = memo.whole;
  else {
    try {
      payload = parseJsonExact(response.body);
    } catch (error) {
      payload = error instanceof RangeError ? TOO_DEEP : NOT_JSON;
    }
    if (options?.cut === false) {
      if (memo !== undefined) memo.whole = payload;
      return payload;
    }
  }
  if (options?.cut === false) return payload;
  if (
    payload !== TOO_DEEP && isObject(payload) && isObject(payload.data) &&
    !isRawNumber(payload.data)
  ) {
    const data = payload.data;
    let kept: Json = data;
    if (step.kind === "Batch") {
      // Each part's entities cut to its own fetch's keys.
      step.steps.forEach((part, i) => {
        const alias = batchAlias(i);
        const list = data[alias];
        if (!Array.isArray(list)) return;
        const entities = selectedItems(list, part.keys, 1);
        if (entities !== list) kept = { ...kept, [alias]: entities };
      });
    } else if (step.representations === null) kept = selected(data, step.keys, 0);
    else if (Array.isArray(data._entities)) {
      const entities = selectedItems(data._entities, step.keys, 1);
      if (entities !== data._entities) kept = { ...data, _entities: entities };
    }
    if (kept !== data) payload = { ...payload, data: kept };
  }
  if (memo !== undefined) memo.value = payload;
  return payload;
}

/** The length of a value's JSON; a value JSON cannot print counts as unbounded. */
export function jsonSize(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return Infinity;
  }
}

export function withoutPath(error: Json): GraphQLFormattedError {
  const { path: _path, ...rest } = error;
  return rest as unknown as GraphQLFormattedError;
}

/**
 * Whether an entity answer's `__typename` (none: no claim) agrees with the
 * object's type: the same, or an interface on either side (an
 * `@interfaceObject` answers with the interface, and is answered for by the
 * concrete type).
 */
export function sameType(
  answered: unknown,
  typename: string,
  abstractNames: ReadonlySet<string> | undefined,
): boolean {
  if (answered === undefined || answered === typename) return true;
  if (typeof answered !== "string") return false;
  return abstractNames !== undefined &&
    (abstractNames.has(answered) || abstractNames.has(typename));
}

/**
 * An error path in the client's response keys: a field the planner aliased
 * in the subgraph's operation (a rewrite's `from`, renamed to `to` in the
 * data by `#rewrite`) is named back. A rewrite's path is field keys (`@`
 * stays on the object); the error path's list indexes lie between them.
 */
export function clientPath(
  path: readonly (string | number)[],
  rewrites: readonly Rewrite[],
): readonly (string | number)[] {
  let out: (string | number)[] | null = null;
  // Shallower rewrites first (the plan sorts them): deeper paths name the keys they gave back.
  for (const rewrite of rewrites) {
    const at: readonly (string | number)[] = out ?? path;
    let i = 0;
    let matched = true;
    for (const key of rewrite.path) {
      if (key === "@") continue;
      while (typeof at[i] === "number") i++;
      if (at[i] !== key) {
        matched = false;
        break;
      }
      i++;
    }
    if (!matched) continue;
    while (typeof at[i] === "number") i++;
    if (at[i] === rewrite.from) (out ??= [...path])[i] = rewrite.to;
  }
  return out ?? path;
}

/** Whether a path's first key (none: true) is a response key the fetch selected. */
export function selects(step: FetchStep, first: readonly (string | number)[]): boolean {
  const key = first[0];
  if (key === undefined || step.keys === undefined) return true;
  return typeof key === "string" && step.keys.has(key);
}
