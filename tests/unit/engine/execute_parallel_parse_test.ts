/**
 * Issue 45: root fetches run side by side parse their answers only once every
 * sibling answered, so a big answer is not held parsed (live through the
 * collector's runs) while a slower sibling waits.
 */
import assert from "node:assert/strict";
import { executePlan } from "../../../lib/engine/execute/execute.ts";
import type { SubgraphResponse } from "../../../lib/engine/execute/execute_types.ts";
import type { FetchStep, PlanStep } from "../../../lib/engine/plan/mod.ts";

function rootFetch(subgraph: string, field: string, index: number): FetchStep {
  const operation = `{${field}}`;
  return {
    rewrites: [],
    index,
    queryJson: JSON.stringify(operation),
    kind: "Fetch",
    node: {
      kind: "Fetch",
      serviceName: subgraph,
      variableUsages: [],
      operation,
      operationKind: "query",
    },
    subgraph,
    path: [],
    representations: null,
    sendTypename: new Map(),
    variableUsages: [],
  } as unknown as FetchStep;
}

function answer(body: string): SubgraphResponse {
  return { status: 200, headers: new Headers(), body, deduplicated: false, parsed: {} };
}

const parsed = (response: SubgraphResponse) =>
  "value" in response.parsed! || "whole" in response.parsed!;

Deno.test("issue 45: a root answer is parsed once its parallel siblings answered", async () => {
  const fast = answer('{"data":{"big":[1,2,3]}}');
  const slow = answer('{"data":{"slow":"late"}}');
  let answerSlow!: () => void;
  const slowSent = new Promise<void>((resolve) => answerSlow = resolve);
  const send = async (subgraph: string) => {
    if (subgraph === "fast") return fast;
    await slowSent;
    return slow;
  };
  const plan = {
    kind: "Parallel",
    steps: [rootFetch("fast", "big", 0), rootFetch("slow", "slow", 1)],
  } as unknown as PlanStep;
  const running = executePlan(plan, { send, variables: {}, operationKind: "query" });
  for (let i = 0; i < 20; i++) await Promise.resolve();
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(parsed(fast), false, "the fast answer was parsed while its sibling was out");
  answerSlow();
  const result = await running;
  assert.ok(parsed(fast) && parsed(slow));
  assert.deepEqual(result.data, { big: [1, 2, 3], slow: "late" });
  assert.deepEqual(result.errors, []);
});

Deno.test("issue 45: a failed sibling opens the gate (no hang), its error is the request's", async () => {
  const fast = answer('{"data":{"big":[1]}}');
  const send = (subgraph: string) =>
    subgraph === "fast"
      ? Promise.resolve(fast)
      : new Promise<SubgraphResponse>((_, reject) =>
        setTimeout(() => reject(new TypeError("connection refused")), 5)
      );
  const plan = {
    kind: "Parallel",
    steps: [rootFetch("fast", "big", 0), rootFetch("down", "slow", 1)],
  } as unknown as PlanStep;
  const result = await executePlan(plan, { send, variables: {}, operationKind: "query" });
  assert.deepEqual(result.data.big, [1]);
  assert.equal(result.errors.length, 1);
});
