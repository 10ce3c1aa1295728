/**
 * An entity request's part: the objects it starts from, their distinct
 * representations, and the two operations on it the executor needs — its
 * request body, and the part left when some representations were answered by
 * the entity cache (`entity_cache.ts`).
 *
 * Pure.
 *
 * @module
 */
import type { FetchStep } from "../plan/mod.ts";

type Json = Record<string, unknown>;

/** The objects of an entity request and the distinct representations sent for them. */
export interface EntityPart {
  readonly objects: Json[];
  /** Each object's representation, by position in `representations`. */
  readonly indexes: number[];
  /** Each object's type (the `__typename` its entity answer must agree with). */
  readonly typenames: string[];
  /** The representations' JSON, in the order `_entities` answers them. */
  readonly representations: readonly string[];
}

/**
 * The part of an entity request whose representations `keep` accepts (indexes renumbered).
 *
 * @example Two objects share representation 1; only it is kept
 * ```ts
 * import assert from "node:assert/strict";
 * import { restrict } from "./_entity_part.ts";
 * const [a, b, c] = [{ id: "a" }, { id: "b" }, { id: "b" }];
 * const part = restrict(
 *   { objects: [a, b, c], indexes: [0, 1, 1], typenames: ["T", "T", "T"], representations: ["A", "B"] },
 *   (at) => at === 1,
 * );
 * assert.deepEqual(part, { objects: [b, c], indexes: [0, 0], typenames: ["T", "T"], representations: ["B"] });
 * ```
 * @param part The part.
 * @param keep Which representations stay, by index.
 * @returns The part left.
 */
export function restrict(part: EntityPart, keep: (at: number) => boolean): EntityPart {
  const renumbered = new Map<number, number>();
  const representations: string[] = [];
  part.representations.forEach((json, at) => {
    if (!keep(at)) return;
    renumbered.set(at, representations.length);
    representations.push(json);
  });
  const objects: Json[] = [];
  const indexes: number[] = [];
  const typenames: string[] = [];
  part.indexes.forEach((at, i) => {
    const to = renumbered.get(at);
    if (to === undefined) return;
    objects.push(part.objects[i]!);
    indexes.push(to);
    typenames.push(part.typenames[i]!);
  });
  return { objects, indexes, typenames, representations };
}

/** The body of an entity request for the given representations. */
export function entityBody(
  step: FetchStep,
  representations: readonly string[],
  variablesJson: string,
) {
  const rest = variablesJson === "{}" ? "" : `,${variablesJson.slice(1, -1)}`;
  // A GraphQL name: JSON as it stands.
  const name = step.representationsVariable ?? "representations";
  return `{"query":${step.queryJson},"variables":{"${name}":[${
    representations.join(",")
  }]${rest}}}`;
}
