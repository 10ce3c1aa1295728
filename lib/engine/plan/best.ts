/**
 * Best combination: which path each field of a selection level takes, chosen for the level as a
 * whole (a subgraph one sibling already enters costs the next sibling nothing) and looking ahead
 * into each field's sub-selection (what the chosen subgraph cannot serve costs further fetches).
 *
 * Cost model: fewest fetches, then depth; ties keep the order the candidates came in. The search
 * is bounded: at most {@linkcode MAX_ALTERNATIVES} candidates per field and a per-operation
 * budget of look-ahead steps ({@linkcode SearchState}); once spent, the remaining choices take
 * their cheapest candidate without look-ahead and the plan says so (`searchTruncated`).
 *
 * @module
 */
import type { FieldModel } from "../../supergraph/mod.ts";
import type { FieldSetItem } from "./fieldset.ts";
import type { NField, NSelection } from "../prepare/mod.ts";
import type { QueryGraph } from "./graph.ts";
import { type Candidate, type Cost, providedItem, resolvableAt } from "./paths.ts";

const FREE: Cost = { fetches: 0, depth: 0 };

/** Candidates looked at per field. */
export const MAX_ALTERNATIVES = 8;

/** Look-ahead steps (fields costed) per operation. */
export const DEFAULT_SEARCH_BUDGET = 20_000;

/** The bounded search's state for one operation. */
export interface SearchState {
  /** Look-ahead steps left. */
  remaining: number;
  /** Set once the budget ran out. */
  truncated: boolean;
  /** Costs of (subgraph, selection) already computed (selections without `@provides` only). */
  readonly memo: Map<NSelection, Map<string, Cost>>;
}

/**
 * A fresh search state.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createSearch } from "./best.ts";
 * assert.equal(createSearch(10).remaining, 10);
 * ```
 * @param budget Look-ahead steps allowed.
 * @returns The state.
 */
export function createSearch(budget = DEFAULT_SEARCH_BUDGET): SearchState {
  return { remaining: budget, truncated: false, memo: new Map() };
}

/** The `@provides` items a field brings to its sub-selection in a subgraph. */
export function providedBelow(
  graph: QueryGraph,
  model: FieldModel,
  options: { subgraph: string; item: FieldSetItem | null },
): readonly FieldSetItem[] | null {
  const text = model.provides.get(options.subgraph);
  const provided = text !== undefined ? graph.fieldSet(text) : options.item?.selection ?? null;
  return provided && provided.length > 0 ? provided : null;
}

/** Cost of a field no move reaches from a subgraph (it may still be reached another way). */
const UNREACHABLE = 100;

/** `a` is cheaper than `b`: fewer fetches, then less depth. */
export function cheaper(a: Cost, b: Cost): boolean {
  return a.fetches < b.fetches || (a.fetches === b.fetches && a.depth < b.depth);
}

/**
 * Fetches needed beyond the current one to serve a selection from a subgraph (look-ahead), and
 * the depth of the longest chain of them.
 *
 * @param graph The query graph.
 * @param search The search state (budget, memo).
 * @param at The subgraph, the selection and what `@provides` makes local there.
 * @returns The estimated cost.
 */
export function selectionCost(
  graph: QueryGraph,
  search: SearchState,
  at: {
    readonly subgraph: string;
    readonly selection: NSelection | null;
    readonly provided: readonly FieldSetItem[] | null;
  },
): Cost {
  const { subgraph, selection, provided } = at;
  if (!selection) return FREE;
  const memo = provided === null ? search.memo.get(selection) : undefined;
  const known = memo?.get(subgraph);
  if (known !== undefined) return known;
  let fetches = 0;
  let depth = 0;
  const slices: [string, readonly NField[]][] = selection.abstract
    ? [...selection.byType].filter(([t]) =>
      graph.possibleIn(subgraph, { abstract: selection.typeName, concrete: t })
    )
    : [[selection.typeName, selection.fields]];
  for (const [type, fields] of slices) {
    const targets = new Set<string>();
    for (const f of fields) {
      if (f.introspection || f.name === "__typename") continue;
      if (search.remaining <= 0) {
        search.truncated = true;
        return { fetches, depth };
      }
      search.remaining--;
      const model = graph.field(type, f.name);
      if (!model) continue;
      const item = providedItem(graph, provided, { type, name: f.name });
      const local = resolvableAt(graph, { type, provided, subgraph, name: f.name }) &&
        (item !== null || !model.requires.has(subgraph));
      if (local) {
        const below = selectionCost(graph, search, {
          subgraph,
          selection: f.selection,
          provided: providedBelow(graph, model, { subgraph, item }),
        });
        fetches += below.fetches;
        depth = Math.max(depth, below.depth);
        continue;
      }
      let best: Cost = { fetches: UNREACHABLE, depth: 1 };
      let bestTarget = "";
      for (const s of model.resolvableIn.slice(0, MAX_ALTERNATIVES)) {
        if (!graph.entityMove(type, s)) continue;
        const below = selectionCost(graph, search, {
          subgraph: s,
          selection: f.selection,
          provided: providedBelow(graph, model, { subgraph: s, item: null }),
        });
        const cost = {
          fetches: (targets.has(s) ? 0 : 1) + (model.requires.has(s) ? 1 : 0) + below.fetches,
          depth: 1 + below.depth,
        };
        if (cheaper(cost, best)) {
          best = cost;
          bestTarget = s;
        }
      }
      if (bestTarget !== "") targets.add(bestTarget);
      fetches += best.fetches;
      depth = Math.max(depth, best.depth);
    }
  }
  const cost = { fetches, depth };
  if (provided === null && !search.truncated) {
    let map = search.memo.get(selection);
    if (!map) search.memo.set(selection, map = new Map());
    map.set(subgraph, cost);
  }
  return cost;
}

/** One field of a level and its candidates. */
export interface Choice {
  readonly field: NField;
  readonly model: FieldModel;
  readonly candidates: readonly Candidate[];
}

/**
 * The best combination of candidates for the fields of one level: fields with one candidate
 * first, then each field takes the candidate adding the fewest fetches (a subgraph a sibling or
 * an existing fetch at this path already enters adds none), sub-selections included.
 *
 * @param graph The query graph.
 * @param search The search state.
 * @param options The choices, and subgraphs already entered at this path.
 * @returns The candidate per field.
 */
export function bestCombination(
  graph: QueryGraph,
  search: SearchState,
  options: { readonly choices: readonly Choice[]; readonly existing: ReadonlySet<string> },
): Map<NField, Candidate> {
  const result = new Map<NField, Candidate>();
  const entered = new Set(options.existing);
  const targetOf = (c: Candidate) => c.resolution.kind === "local" ? null : c.resolution.subgraph;
  const ordered = [
    ...options.choices.filter((c) => c.candidates.length === 1),
    ...options.choices.filter((c) => c.candidates.length > 1),
  ];
  for (const { field, model, candidates } of ordered) {
    let best = candidates[0];
    if (!best) continue;
    if (candidates.length > 1 && search.remaining > 0) {
      let bestCost: Cost = { fetches: Infinity, depth: Infinity };
      for (const c of candidates.slice(0, MAX_ALTERNATIVES)) {
        const target = targetOf(c);
        const below = target === null ? FREE : selectionCost(graph, search, {
          subgraph: target,
          selection: field.selection,
          provided: providedBelow(graph, model, { subgraph: target, item: null }),
        });
        const cost = {
          fetches: (target !== null && entered.has(target) ? 0 : c.cost.fetches) + below.fetches,
          depth: c.cost.depth + below.depth,
        };
        if (cheaper(cost, bestCost)) {
          best = c;
          bestCost = cost;
        }
      }
    } else if (candidates.length > 1) search.truncated = true;
    const target = targetOf(best);
    if (target !== null) entered.add(target);
    result.set(field, best);
  }
  return result;
}

/**
 * The subgraph a root field is fetched from: the one serving its whole selection (counting
 * `@provides`) with the fewest fetches, a root fetch already planned costing none; ties go to
 * an already planned root fetch, then to the subgraph resolving more of the selection itself.
 *
 * @param graph The query graph.
 * @param search The search state.
 * @param options The field, its model, and the subgraphs with a root fetch already.
 * @returns The subgraph.
 */
export function bestRoot(
  graph: QueryGraph,
  search: SearchState,
  options: { readonly field: NField; readonly model: FieldModel; readonly open: readonly string[] },
): string {
  const { field, model, open } = options;
  const list = model.resolvableIn;
  if (list.length === 1) return list[0]!;
  let best = list[0]!;
  let bestKey: number[] = [Infinity];
  for (const s of list.slice(0, MAX_ALTERNATIVES)) {
    const below = selectionCost(graph, search, {
      subgraph: s,
      selection: field.selection,
      provided: providedBelow(graph, model, { subgraph: s, item: null }),
    });
    const index = open.indexOf(s);
    const key = [
      below.fetches + (index >= 0 ? 0 : 1),
      below.depth,
      index >= 0 ? index : open.length,
      -localScore(graph, s, { selection: field.selection, type: model.namedType }),
    ];
    if (compare(key, bestKey) < 0) {
      best = s;
      bestKey = key;
    }
  }
  return best;
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** How many fields of a selection a subgraph resolves itself (recursively). */
function localScore(
  graph: QueryGraph,
  subgraph: string,
  at: { selection: NSelection | null; type: string },
): number {
  const { selection, type } = at;
  if (!selection) return 0;
  let score = 0;
  const slices = selection.abstract ? [...selection.byType] : [[type, selection.fields] as const];
  for (const [typeName, fields] of slices) {
    for (const f of fields) {
      const m = graph.field(typeName, f.name);
      if (f.name === "__typename" || m?.resolvableIn.includes(subgraph)) {
        score += 1 +
          (m ? localScore(graph, subgraph, { selection: f.selection, type: m.namedType }) : 0);
      }
    }
  }
  return score;
}
