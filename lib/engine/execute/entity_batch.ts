/**
 * Entity batching: sibling entity fetches of one `Parallel` step that go to the
 * same subgraph are sent as one request, each as an aliased `_entities` field
 * (`_e0: _entities(representations: $r0) {…}`) with its own representations
 * variable, and the answer is split back into one answer per fetch. Each
 * fetch keeps its own selection, representations, merge, errors and trace
 * record; only the HTTP request is shared. A query with many small fetches at
 * one level (a deep tree over overlapping subgraphs) sends one request per
 * subgraph per level instead of one per fetch.
 *
 * GraphQL executes a query's root fields independently (spec §6.3.1), so the
 * aliased fields answer what the separate requests would have; one difference
 * is kept visible: a failure that nulls the whole `data` nulls every part, and
 * each part reports it.
 *
 * Pure: plan steps in, composed operations out (memoized per immutable step).
 *
 * @module
 */
import type { FetchStep, PlanStep } from "../plan/mod.ts";

/** Sibling entity fetches sent as one request. */
export interface EntityBatch {
  readonly kind: "Batch";
  readonly subgraph: string;
  /** The fetches, in plan order; part `i` is `_e<i>` with variable `$r<i>`. */
  readonly steps: readonly FetchStep[];
  /** `JSON.stringify` of the composed operation. */
  readonly queryJson: string;
  /** Client variables any part uses, sorted and distinct. */
  readonly variableUsages: readonly string[];
}

/** The response key of part `i` of a batch. */
export function batchAlias(i: number): string {
  return `_e${i}`;
}

/** The representations variable of part `i` of a batch. */
export function batchVariable(i: number): string {
  return `r${i}`;
}

interface EntityOperation {
  readonly name: string | undefined;
  /** Variable definitions other than `$representations`, by name. */
  readonly definitions: ReadonlyMap<string, string>;
  /** The selection set of `_entities` (`{...on T{…}}`). */
  readonly selection: string;
}

/** The error of a part whose shared request answered `data: null` for another part's failure. */
export const BATCH_FAILED =
  "No data: the request this fetch shared with others (entity batching) answered data null";

const ENTITIES_CALL = "{_entities(representations:$representations)";
const REPRESENTATIONS_DEFINITION = "$representations:[_Any!]!";

/**
 * Splits variable definitions at their top-level commas (default values may
 * hold lists, objects and strings with commas).
 */
function splitDefinitions(text: string): string[] | null {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      // A string (block strings are three of these: each toggles in turn).
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      continue;
    }
    if (c === "[" || c === "{" || c === "(") depth++;
    else if (c === "]" || c === "}" || c === ")") depth--;
    else if (c === "," && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
    if (depth < 0) return null;
  }
  out.push(text.slice(start));
  return depth === 0 ? out : null;
}

/**
 * The parts of a printed entity operation (`query Name($representations:[_Any!]!,…){_entities(
 * representations:$representations){…}}`), or null when it has another form.
 */
export function parseEntityOperation(operation: string): EntityOperation | null {
  const head = /^query(?: ([_A-Za-z][_0-9A-Za-z]*))?\(/.exec(operation);
  if (head === null || !operation.endsWith("}")) return null;
  const call = operation.indexOf(`)${ENTITIES_CALL}`, head[0].length);
  if (call < 0) return null;
  const parts = splitDefinitions(operation.slice(head[0].length, call));
  if (parts === null || parts[0] !== REPRESENTATIONS_DEFINITION) return null;
  const definitions = new Map<string, string>();
  for (const definition of parts.slice(1)) {
    const name = /^\$([_A-Za-z][_0-9A-Za-z]*):/.exec(definition)?.[1];
    if (name === undefined || name === "representations") return null;
    definitions.set(name, definition);
  }
  const selection = operation.slice(call + 1 + ENTITIES_CALL.length, -1);
  if (!selection.startsWith("{")) return null;
  return { name: head[1], definitions, selection };
}

/** Whether a fetch may share a request with its siblings. */
function batchable(step: FetchStep): boolean {
  return step.representations !== null && step.node.operationKind === "query" &&
    step.contextVariables === undefined && step.representationsVariable === undefined;
}

/**
 * Composes one operation for several entity fetches to one subgraph, or null
 * when an operation has another form or two define one variable differently.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { composeEntityBatch } from "./entity_batch.ts";
 * const step = (selection: string) => ({
 *   kind: "Fetch" as const, index: 0, queryJson: "", subgraph: "a", path: ["t"],
 *   representations: new Map(), sendTypename: new Map(), variableUsages: [], rewrites: [],
 *   node: {
 *     kind: "Fetch" as const, serviceName: "a", variableUsages: [], operationKind: "query" as const,
 *     operation: `query Q($representations:[_Any!]!){_entities(representations:$representations){...on T{${selection}}}}`,
 *   },
 * });
 * const batch = composeEntityBatch([step("x"), step("y")]);
 * assert.equal(
 *   JSON.parse(batch!.queryJson),
 *   "query Q__batch($r0:[_Any!]!,$r1:[_Any!]!){_e0:_entities(representations:$r0){...on T{x}} _e1:_entities(representations:$r1){...on T{y}}}",
 * );
 * ```
 * @param steps Entity fetches to one subgraph (two or more), in plan order.
 * @returns The batch, or null.
 */
export function composeEntityBatch(steps: readonly FetchStep[]): EntityBatch | null {
  const definitions = new Map<string, string>();
  const fields: string[] = [];
  const variables: string[] = [];
  let name: string | undefined;
  for (let i = 0; i < steps.length; i++) {
    const parsed = parseEntityOperation(steps[i]!.node.operation);
    if (parsed === null) return null;
    name ??= parsed.name;
    for (const [variable, definition] of parsed.definitions) {
      const known = definitions.get(variable);
      if (known !== undefined && known !== definition) return null;
      definitions.set(variable, definition);
    }
    variables.push(`$${batchVariable(i)}:[_Any!]!`);
    fields.push(
      `${batchAlias(i)}:_entities(representations:$${batchVariable(i)})${parsed.selection}`,
    );
  }
  const names = [...definitions.keys()].sort();
  const operation = `query${name === undefined ? "" : ` ${name}__batch`}(${
    [...variables, ...names.map((n) => definitions.get(n)!)].join(",")
  }){${fields.join(" ")}}`;
  return {
    kind: "Batch",
    subgraph: steps[0]!.subgraph,
    steps,
    queryJson: JSON.stringify(operation),
    variableUsages: [...new Set(steps.flatMap((s) => s.variableUsages))].sort(),
  };
}

type ParallelStep = Exclude<PlanStep, FetchStep>;

const memo = new WeakMap<ParallelStep, readonly (PlanStep | EntityBatch)[]>();

/**
 * The children of a `Parallel` step with its sibling entity fetches to one
 * subgraph grouped into batches (two or more each; the others as they are).
 * Memoized per step: a cached plan composes its batches once.
 *
 * @param step A parallel step.
 * @returns Its children, batched.
 */
export function batchedChildren(step: ParallelStep): readonly (PlanStep | EntityBatch)[] {
  const known = memo.get(step);
  if (known !== undefined) return known;
  const bySubgraph = new Map<string, FetchStep[]>();
  for (const child of step.steps) {
    if (child.kind !== "Fetch" || !batchable(child)) continue;
    const list = bySubgraph.get(child.subgraph);
    if (list) list.push(child);
    else bySubgraph.set(child.subgraph, [child]);
  }
  const batchOf = new Map<FetchStep, EntityBatch>();
  for (const list of bySubgraph.values()) {
    if (list.length < 2) continue;
    const batch = composeEntityBatch(list);
    if (batch !== null) { for (const s of list) batchOf.set(s, batch); }
  }
  const out: (PlanStep | EntityBatch)[] = [];
  const added = new Set<EntityBatch>();
  for (const child of step.steps) {
    const batch = child.kind === "Fetch" ? batchOf.get(child) : undefined;
    if (batch === undefined) out.push(child);
    else if (!added.has(batch)) {
      added.add(batch);
      out.push(batch);
    }
  }
  memo.set(step, out);
  return out;
}

/**
 * Part `i`'s share of a batch's answer, as the answer its fetch alone would
 * have had: `data._entities` from `data._e<i>`, and the errors whose path
 * starts at `_e<i>` re-pathed to `_entities`. Errors that name no part go to
 * part 0 (once, not to every part).
 *
 * @param payload The batch's answer (an object with `data` and/or `errors`).
 * @param part The part's index.
 * @returns The part's answer.
 */
export function partOfAnswer(
  payload: Readonly<Record<string, unknown>>,
  part: number,
): Record<string, unknown> {
  const alias = batchAlias(part);
  const data = payload.data;
  const out: Record<string, unknown> = {};
  if (data !== undefined) {
    out.data = data !== null && typeof data === "object" && !Array.isArray(data)
      ? (alias in data ? { _entities: (data as Record<string, unknown>)[alias] } : {})
      : data;
  }
  if (Array.isArray(payload.errors)) {
    const errors: unknown[] = [];
    for (const error of payload.errors) {
      const path = error !== null && typeof error === "object"
        ? (error as Record<string, unknown>).path
        : undefined;
      const first = Array.isArray(path) ? path[0] : undefined;
      if (first === alias) {
        errors.push({ ...(error as object), path: ["_entities", ...(path as unknown[]).slice(1)] });
      } else if (part === 0 && !(typeof first === "string" && /^_e\d+$/.test(first))) {
        errors.push(error);
      }
    }
    // A whole answer without data fails every part: one with no error of its own says why.
    if (data === null && errors.length === 0) errors.push({ message: BATCH_FAILED });
    out.errors = errors;
  } else if (payload.errors !== undefined) out.errors = payload.errors;
  return out;
}
