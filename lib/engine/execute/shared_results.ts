/**
 * One result for requests answered alike. With single flight, concurrent
 * requests for one operation mostly join the same in-flight subgraph answers
 * at every step (94 % of the requests on the federation benchmark), so they
 * merge the same data, and the shaped result is a pure function of the plan
 * and those answers. The first such request keeps its result with the answers
 * it was built from, weakly (it goes when they go, with the last request
 * holding them); the others take it instead of shaping their own, and its
 * JSON is printed once ({@linkcode resultJson}). Nothing here is kept by
 * time: a request reuses a result only when it merged the very same answer
 * objects. Whatever else a result can depend on (a trace, introspection, a
 * failed fetch) makes a request build its own (the caller decides; see
 * `execute` in `mod.ts`).
 *
 * Results handed out here are shared: no reader may change them.
 *
 * @module
 */
import type { ExecutionResult } from "../types.ts";

/** Results by the answers they were built from. */
export class SharedResults {
  /** By the last answer merged: a result lives as long as that answer. */
  readonly #byLast = new WeakMap<object, Map<string, ExecutionResult>>();
  readonly #ids = new WeakMap<object, number>();
  #nextId = 0;

  /**
   * The result built from these answers under this plan, if one was kept.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SharedResults } from "./shared_results.ts";
   * const results = new SharedResults();
   * const plan = {}, a = {}, b = {};
   * const result = { data: { x: 1 } };
   * results.keep(plan, [a, undefined, b], result);
   * assert.equal(results.find(plan, [a, undefined, b]), result);
   * assert.equal(results.find(plan, [a, b]), undefined);
   * assert.equal(results.find({}, [a, undefined, b]), undefined);
   * ```
   * @param plan The cached plan (its identity).
   * @param answers The answers by fetch index (see `ExecutedData.answers`).
   * @returns The kept result, or undefined.
   */
  find(plan: object, answers: readonly (object | undefined)[]): ExecutionResult | undefined {
    const last = lastOf(answers);
    if (last === undefined) return undefined;
    return this.#byLast.get(last)?.get(this.#key(plan, answers));
  }

  /**
   * Keeps a result for the requests that merge the same answers under the same plan.
   * @param plan The cached plan.
   * @param answers The answers by fetch index.
   * @param result The shaped result (shared from now on: never changed).
   */
  keep(plan: object, answers: readonly (object | undefined)[], result: ExecutionResult): void {
    const last = lastOf(answers);
    if (last === undefined) return;
    let byKey = this.#byLast.get(last);
    if (byKey === undefined) this.#byLast.set(last, byKey = new Map());
    // A reader that writes to a shared result throws instead of changing others' answers.
    byKey.set(this.#key(plan, answers), Object.freeze(result));
    PRINTED.set(result, null);
  }

  #key(plan: object, answers: readonly (object | undefined)[]): string {
    let key = String(this.#idOf(plan));
    for (const answer of answers) key += answer === undefined ? ",-" : `,${this.#idOf(answer)}`;
    return key;
  }

  #idOf(object: object): number {
    let id = this.#ids.get(object);
    if (id === undefined) this.#ids.set(object, id = this.#nextId++);
    return id;
  }
}

function lastOf(answers: readonly (object | undefined)[]): object | undefined {
  for (let i = answers.length - 1; i >= 0; i--) if (answers[i] !== undefined) return answers[i];
  return undefined;
}

/** The JSON of kept results, once printed (null: kept, not printed yet). */
const PRINTED = new WeakMap<ExecutionResult, string | null>();

/**
 * Marks a result as shared by several readers (a subscription event's result, delivered to
 * every subscriber that asked for it alike): it is frozen and its JSON is printed once, by
 * the first {@linkcode resultJson}, and the same text handed to every other reader.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { printOnce, resultJson } from "./shared_results.ts";
 * const result = printOnce({ data: { x: 1 } });
 * assert.ok(Object.isFrozen(result));
 * assert.equal(resultJson(result), '{"data":{"x":1}}');
 * assert.equal(resultJson(result), resultJson(result));
 * ```
 * @param result The result (shared from now on: never changed).
 * @returns The same result.
 */
export function printOnce(result: ExecutionResult): ExecutionResult {
  if (!PRINTED.has(result)) PRINTED.set(Object.freeze(result), null);
  return result;
}

/**
 * A result's JSON: printed once for a result shared by several requests.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resultJson } from "./shared_results.ts";
 * assert.equal(resultJson({ data: { x: 1 } }), '{"data":{"x":1}}');
 * ```
 * @param result The result.
 * @returns `JSON.stringify(result)`.
 */
export function resultJson(result: ExecutionResult): string {
  const printed = PRINTED.get(result);
  if (printed) return printed;
  const text = JSON.stringify(result);
  if (printed === null) PRINTED.set(result, text);
  return text;
}
