/**
 * The differential runner (`_differential.ts`) itself: a difference from
 * the monolith is reported with its operation and seed, and only the exact
 * operation listed as a known gap is let through.
 *
 * @module
 */
import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { type Area, fed2, startArea } from "./_harness.ts";
import { compareWithMonolith, differentialCaseName } from "./_differential.ts";

/** A one-subgraph graph whose monolith is given different data on purpose. */
const AREA: Area = {
  name: "differential_self",
  title: "differential runner",
  subgraphs: [{
    name: "only",
    typeDefs: fed2("@key") + `
      type Query {
        n: Int!
        item: Item!
      }
      type Item @key(fields: "id") {
        id: ID!
        label: String!
      }
    `,
    resolvers: { Query: { n: () => 1, item: () => ({ id: "i1", label: "one" }) } },
  }],
  cases: [],
};
const SAME = { n: 1, item: { id: "i1", label: "one" } };
const OTHER = { n: 2, item: { id: "i1", label: "one" } };

Deno.test("issue 13 differential: the same data gives no difference", async () => {
  const started = await startArea(AREA);
  try {
    const run = await compareWithMonolith({ area: AREA, root: SAME }, {
      supergraphSdl: started.supergraphSdl,
      cases: 30,
      seed: 1,
      gaps: new Set(),
    });
    deepStrictEqual(run.failures, []);
    ok(run.compared > 3, `only ${run.compared} operations`);
  } finally {
    await started.close();
  }
});

Deno.test("issue 13 differential: a difference fails with its operation and seed unless that exact operation is a known gap", async () => {
  const started = await startArea(AREA);
  try {
    const options = { supergraphSdl: started.supergraphSdl, cases: 30, seed: 1 };
    const first = await compareWithMonolith({ area: AREA, root: OTHER }, {
      ...options,
      gaps: new Set(),
    });
    ok(first.failures.length > 0, "the wrong n must be found");
    const failure = first.failures[0]!;
    ok(/\(seed \d+\)\n(query \([^)]*\) )?\{ /.test(failure), failure);
    ok(failure.includes('"n":2') && failure.includes('"n":1'), failure);
    // register exactly one failing operation: only that one is let through
    const name = failure.slice(0, failure.indexOf(" (seed"));
    ok(name.startsWith(differentialCaseName(AREA, "").slice(0, -8)), name);
    const second = await compareWithMonolith({ area: AREA, root: OTHER }, {
      ...options,
      gaps: new Set([name]),
    });
    equal(second.known, 1);
    equal(second.failures.length, first.failures.length - 1);
    // the same gap against the right data: reported as fixed, not as a failure
    const third = await compareWithMonolith({ area: AREA, root: SAME }, {
      ...options,
      gaps: new Set([name]),
    });
    deepStrictEqual([third.failures, third.fixed], [[], [name]]);
  } finally {
    await started.close();
  }
});
