/**
 * Issue 45: root fetches run side by side parse a big answer (1 MiB of text or
 * more) only once every sibling answered, so it is not held parsed (live
 * through the collector's runs) while a slower sibling waits; a small one is
 * parsed at once.
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

const BIG = "x".repeat(1 << 20);

Deno.test("issue 45: a big root answer is parsed once its parallel siblings answered", async () => {
  const fast = answer(`{"data":{"big":[1,2,3],"pad":"${BIG}"}}`);
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
  assert.deepEqual([result.data.big, result.data.slow], [[1, 2, 3], "late"]);
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

Deno.test("issue 45: a small root answer is parsed at once, before its sibling answers", async () => {
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
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(parsed(fast), true);
  answerSlow();
  assert.deepEqual((await running).data, { big: [1, 2, 3], slow: "late" });
});
