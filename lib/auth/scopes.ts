/**
 * Scope algebra over `@requiresScopes` requirements: OR-of-AND lists, their
 * Cartesian-product combination (DESIGN §4), satisfaction and best-group
 * selection (spec §7.2). Pure and allocation-free on the request path
 * ({@linkcode satisfiesScopes}, {@linkcode bestScopeGroup}).
 *
 * @module
 */

/** One AND-group: every scope is required. */
export type ScopeGroup = readonly string[];

/** OR-of-AND: any one group suffices. The empty list requires nothing. */
export type ScopeRequirement = readonly ScopeGroup[];

function isSubset(small: ScopeGroup, big: ScopeGroup): boolean {
  if (small.length > big.length) return false;
  for (const scope of small) if (!big.includes(scope)) return false;
  return true;
}

function dedupeGroup(group: ScopeGroup): ScopeGroup {
  const out: string[] = [];
  for (const scope of group) if (!out.includes(scope)) out.push(scope);
  return out;
}

/**
 * Normalizes a requirement: scopes inside a group deduplicated (first seen
 * kept), then exact duplicate groups and every group that is a superset of
 * another removed, survivors in their original order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { normalizeScopes } from "./scopes.ts";
 * assert.deepEqual(normalizeScopes([["a", "b"], ["c"], ["b", "a"], ["a"]]), [["c"], ["a"]]);
 * ```
 * @param requirement OR-of-AND groups.
 * @returns The normalized, frozen requirement.
 */
export function normalizeScopes(requirement: ScopeRequirement): ScopeRequirement {
  const groups = requirement.map(dedupeGroup);
  const out: ScopeGroup[] = [];
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i]!;
    let keep = true;
    for (let j = 0; j < groups.length && keep; j++) {
      if (i === j) continue;
      const other = groups[j]!;
      if (!isSubset(other, group)) continue;
      // `other` ⊆ `group`: drop `group` if it is a strict superset, or an equal set seen later.
      if (other.length < group.length || j < i) keep = false;
    }
    if (keep) out.push(Object.freeze(group));
  }
  return Object.freeze(out);
}

function product(left: ScopeRequirement, right: ScopeRequirement): ScopeGroup[] {
  const out: ScopeGroup[] = [];
  for (const a of left) {
    for (const b of right) out.push(dedupeGroup([...a, ...b]));
  }
  return out;
}

/**
 * Combines two requirements that must both hold (AND): the Cartesian product
 * of their groups, earlier groups outer, scopes of a merged group in first-seen
 * order, then {@linkcode normalizeScopes}. An empty side requires nothing.
 *
 * @example Spec §2.5
 * ```ts
 * import assert from "node:assert/strict";
 * import { combineScopes } from "./scopes.ts";
 * assert.deepEqual(
 *   combineScopes([["a"], ["b"]], [["c"], ["d"]]),
 *   [["a", "c"], ["a", "d"], ["b", "c"], ["b", "d"]],
 * );
 * assert.equal(combineScopes([["a"], ["b"]], [["c"], ["d"]], { maxCombinations: 3 }), null);
 * ```
 * @param left The first requirement (outer).
 * @param right The second requirement (inner).
 * @param options `maxCombinations` caps the product (default 2048).
 * @returns The combined requirement, or null when it would exceed the cap.
 */
export function combineScopes(
  left: ScopeRequirement,
  right: ScopeRequirement,
  options: { readonly maxCombinations?: number } = {},
): ScopeRequirement | null {
  return foldScopes([left, right], options);
}

/**
 * Folds several requirements left to right (DESIGN §4): the raw Cartesian
 * product (earlier groups outer, scopes in first-seen order), capped at
 * `maxCombinations` groups at every step, then normalized once at the end with
 * {@linkcode normalizeScopes}. Empty requirements are neutral.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { foldScopes } from "./scopes.ts";
 * assert.deepEqual(foldScopes([[["a"]], [], [["b"], ["a"]]]), [["a"]]);
 * ```
 * @param requirements Requirements in document order.
 * @param options `maxCombinations` (default 2048).
 * @returns The combined requirement, or null when over the cap.
 */
export function foldScopes(
  requirements: Iterable<ScopeRequirement>,
  options: { readonly maxCombinations?: number } = {},
): ScopeRequirement | null {
  const max = options.maxCombinations ?? 2048;
  let out: ScopeGroup[] = [];
  for (const requirement of requirements) {
    if (requirement.length === 0) continue;
    if (out.length === 0) {
      out = requirement.map(dedupeGroup);
    } else {
      if (out.length * requirement.length > max) return null;
      out = product(out, requirement);
    }
    if (out.length > max) return null;
  }
  return normalizeScopes(out);
}

/**
 * Tells whether a token's scopes satisfy a requirement (any AND-group fully held).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { satisfiesScopes } from "./scopes.ts";
 * assert.equal(satisfiesScopes([["a", "b"], ["c"]], new Set(["c"])), true);
 * assert.equal(satisfiesScopes([["a", "b"]], new Set(["a"])), false);
 * assert.equal(satisfiesScopes([], new Set()), true);
 * ```
 * @param requirement OR-of-AND groups.
 * @param scopes The token's scopes.
 * @returns True when satisfied.
 */
export function satisfiesScopes(
  requirement: ScopeRequirement,
  scopes: ReadonlySet<string>,
): boolean {
  if (requirement.length === 0) return true;
  outer: for (const group of requirement) {
    for (const scope of group) if (!scopes.has(scope)) continue outer;
    return true;
  }
  return false;
}

/**
 * Tells whether a token holds every scope of one flat list (an AND-group).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasAllScopes } from "./scopes.ts";
 * assert.equal(hasAllScopes(["a", "b"], new Set(["b", "a", "c"])), true);
 * assert.equal(hasAllScopes(["a", "d"], new Set(["a"])), false);
 * ```
 * @param required The scopes.
 * @param scopes The token's scopes.
 * @returns True when all are held.
 */
export function hasAllScopes(required: readonly string[], scopes: ReadonlySet<string>): boolean {
  for (const scope of required) if (!scopes.has(scope)) return false;
  return true;
}

/**
 * Best-group selection (spec §7.2): the AND-group with the fewest scopes the
 * token is missing, ties to the first; the whole group is returned.
 *
 * @example Spec §7.2 example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bestScopeGroup } from "./scopes.ts";
 * const requirement = [["A", "B", "C"], ["D"]];
 * assert.deepEqual(bestScopeGroup(requirement, new Set(["A", "B"])), ["A", "B", "C"]);
 * assert.deepEqual(bestScopeGroup(requirement, new Set(["A"])), ["D"]);
 * ```
 * @param requirement OR-of-AND groups (non-empty).
 * @param scopes The token's scopes.
 * @returns The chosen group (empty when the requirement is empty).
 */
export function bestScopeGroup(
  requirement: ScopeRequirement,
  scopes: ReadonlySet<string>,
): ScopeGroup {
  let best: ScopeGroup = [];
  let bestMissing = Infinity;
  for (const group of requirement) {
    let missing = 0;
    for (const scope of group) if (!scopes.has(scope)) missing++;
    if (missing < bestMissing) {
      best = group;
      bestMissing = missing;
    }
  }
  return best;
}

/**
 * The `scope` value of a 403 challenge (spec §7.3): the required scopes, or with
 * `includeTokenScopes` the token's scopes first, then the required ones not
 * already present.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { challengeScopes } from "./scopes.ts";
 * assert.deepEqual(challengeScopes(["b", "c"], ["a", "b"], false), ["b", "c"]);
 * assert.deepEqual(challengeScopes(["b", "c"], ["a", "b"], true), ["a", "b", "c"]);
 * ```
 * @param required The required scopes.
 * @param tokenScopes The token's scopes, in claim order.
 * @param includeTokenScopes `scope_challenge_include_token_scopes`.
 * @returns Scopes for the challenge.
 */
export function challengeScopes(
  required: readonly string[],
  tokenScopes: readonly string[],
  includeTokenScopes: boolean,
): readonly string[] {
  if (!includeTokenScopes) return required;
  const out = [...tokenScopes];
  for (const scope of required) if (!out.includes(scope)) out.push(scope);
  return out;
}
