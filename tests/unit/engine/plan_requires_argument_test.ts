/**
 * Issue 13: requirements whose fields take arguments, beside client fields of the same name in
 * the same fetch, and client arguments from variables with defaults.
 *
 * @module
 */
import assert from "node:assert/strict";
import { compose, fetchesOf, planQuery } from "./_planner_fixture.ts";
import { REQUIRES_ARGUMENT } from "./_planner_graphs.ts";
import type { FetchStep, PlanStep } from "../../../lib/engine/plan/types.ts";
import type { RepSelection } from "../../../lib/engine/plan/rep.ts";

const MODEL = compose(REQUIRES_ARGUMENT);

function fetchSteps(step: PlanStep | null): FetchStep[] {
  if (!step) return [];
  if (step.kind === "Fetch") return [step];
  return step.steps.flatMap(fetchSteps);
}

/** How the `pricey` fetch's representation reads `family { mean }`: `[key, dataKey]`. */
function meanRead(query: string): [string, string] {
  const steps = fetchSteps(planQuery(MODEL, query).step);
  const rep = steps.find((s) => s.subgraph === "freight")!.representations!.get("Product")!;
  const family = rep.fields.find((f) => f.key === "family")!.selection as RepSelection;
  const mean = family.fields[0]!;
  return [mean.key, mean.dataKey];
}

Deno.test("issue 13: a required field whose argument differs from the client's same field is aliased in the collecting fetch", () => {
  const query = `{ products { pricey family { mean(currency: "EUR") } } }`;
  const [stock] = fetchesOf(planQuery(MODEL, query).plan.node);
  assert.equal(
    stock,
    'stock query{products{__typename sku family{mean__gw1:mean(currency:"USD") mean(currency:"EUR")}}}',
  );
  // The representation carries `mean` as freight expects it, read from the alias.
  assert.deepEqual(meanRead(query), ["mean", "mean__gw1"]);
});

Deno.test("issue 13: the client's field keeps its key whether it is planned before or after the requirement", () => {
  const query = `{ products { family { mean(currency: "EUR") } pricey } }`;
  const [stock] = fetchesOf(planQuery(MODEL, query).plan.node);
  assert.match(stock!, /family\{mean\(currency:"EUR"\) mean__gw1:mean\(currency:"USD"\)\}/);
  assert.deepEqual(meanRead(query), ["mean", "mean__gw1"]);
});

Deno.test("issue 13: a client alias naming another field at the required key moves the requirement aside", () => {
  const query = `{ products { family { mean: size } pricey } }`;
  const [stock] = fetchesOf(planQuery(MODEL, query).plan.node);
  assert.match(stock!, /family\{mean:size mean__gw1:mean\(currency:"USD"\)\}/);
  assert.deepEqual(meanRead(query), ["mean", "mean__gw1"]);
});

Deno.test("issue 13: a required field the client selects identically shares the client's key (no alias)", () => {
  const query = `{ products { pricey family { mean(currency: "USD") } } }`;
  const [stock] = fetchesOf(planQuery(MODEL, query).plan.node);
  assert.match(stock!, /family\{mean\(currency:"USD"\)\}/);
  assert.doesNotMatch(stock!, /__gw/);
  assert.deepEqual(meanRead(query), ["mean", "mean"]);
});

Deno.test("issue 13: two requirements of one field with different arguments are both collected, each entity fetch reading its own", () => {
  const plan = planQuery(MODEL, `{ products { pricey cheap family { mean(currency: "GBP") } } }`);
  const [stock] = fetchesOf(plan.plan.node);
  assert.match(
    stock!,
    /family\{mean__gw1:mean\(currency:"USD"\) mean__gw2:mean\(currency:"EUR"\) mean\(currency:"GBP"\)\}/,
  );
  // One representation carries one `mean`: the two requiring fields go in separate fetches.
  const reads = fetchSteps(plan.step).filter((s) => s.subgraph === "freight").map((s) =>
    s.node.requires
  );
  assert.deepEqual(reads, [
    "...on Product{__typename sku family{mean:mean__gw1}}",
    "...on Product{__typename sku family{mean:mean__gw2}}",
  ]);
});

Deno.test("issue 13: a subgraph operation declares the client variable's default (a nullable variable with a default stands in a non-null argument)", () => {
  const fetches = (query: string) => fetchesOf(planQuery(MODEL, query).plan.node).join("\n");
  assert.match(
    fetches(`query ($n: Int = 2) { products { cut(limit: $n) } }`),
    /\$n:Int=2\)/,
  );
  assert.match(fetches(`query ($n: Int!) { products { cut(limit: $n) } }`), /\$n:Int!\)/);
});
