/**
 * Whole plans pinned for the key planning shapes of issue 13 (`planner_snapshots/*.json`).
 * A changed plan fails here with the difference; after checking it is right, rewrite with
 * `UPDATE_PLAN_SNAPSHOTS=1 deno test -A tests/unit/planner_snapshots_test.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { compose, planQuery } from "./_planner_fixture.ts";
import {
  PARTIAL_UNION,
  REENTER_PARENT,
  REQUIRES_ARGUMENT,
  REQUIRES_CHAIN,
  SHARED_ROOT,
  WIDE,
} from "./_planner_graphs.ts";

const UPDATE = Deno.env.get("UPDATE_PLAN_SNAPSHOTS") === "1";

function pinned(name: string, graph: Record<string, string>, query: string): void {
  const plan = planQuery(compose(graph), query).plan;
  const file = new URL(`./plan_snapshots/${name}.json`, import.meta.url);
  const text = JSON.stringify({ query, plan }, null, 2) + "\n";
  if (UPDATE) Deno.writeTextFileSync(file, text);
  assert.deepEqual(JSON.parse(text), JSON.parse(Deno.readTextFileSync(file)));
}

Deno.test("issue 13 shape 1: a requires chain catalog → pricing → catalog → pricing plans as four fetches in sequence", () => {
  pinned("requires_chain", REQUIRES_CHAIN, `{ products { name label } }`);
});

Deno.test("issue 13 shape 2: aliases of a shared root field go to the subgraph serving each whole selection, in parallel", () => {
  pinned("shared_root_aliases", SHARED_ROOT, `{ a: product { name } b: product { price } }`);
});

Deno.test("issue 13 shape 2: a field @provides makes local is served by the providing root fetch", () => {
  pinned("shared_root_provides", SHARED_ROOT, `{ top { price } }`);
});

Deno.test("issue 13 shape 4: a value-type field only another subgraph resolves re-enters the parent entity by key", () => {
  pinned("reenter_parent", REENTER_PARENT, `{ user { profile { bio avatar } } }`);
});

Deno.test("issue 13 shape 7: a union member only one subgraph knows sends the shared root field there", () => {
  pinned("partial_union", PARTIAL_UNION, `{ feed { ... on Post { text } ... on Video { url } } }`);
});

Deno.test("issue 13: sibling fields many subgraphs serve share one fetch; the rest go where they must", () => {
  pinned("wide_siblings", WIDE, `{ things { f1 f2 f3 g h k } }`);
});

Deno.test("issue 13: a requirement's field with another argument than the client's is aliased in the fetch collecting both", () => {
  pinned(
    "requires_argument_alias",
    REQUIRES_ARGUMENT,
    `{ products { pricey family { mean(currency: "EUR") } } }`,
  );
});
