import assert from "node:assert/strict";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { createEngine, execute, prepare } from "../../../lib/engine/mod.ts";
import {
  drawOverrideLabels,
  overrideLabelsOf,
} from "../../../lib/engine/prepare/override_labels.ts";
import { fetchesOf, planQuery } from "./_planner_fixture.ts";

/** `T.moved` moves from a to b behind `percent(25)`; `T.flagged` behind a named label. */
const SUPERGRAPH = `
schema @link(url: "https://specs.apollo.dev/link/v1.0")
  @link(url: "https://specs.apollo.dev/join/v0.4", for: EXECUTION) { query: Query }
directive @join__graph(name: String!, url: String!) on ENUM_VALUE
directive @join__type(graph: join__Graph!, key: join__FieldSet, extension: Boolean! = false, resolvable: Boolean! = true, isInterfaceObject: Boolean! = false) repeatable on OBJECT | INTERFACE | UNION | ENUM | INPUT_OBJECT | SCALAR
directive @join__field(graph: join__Graph, requires: join__FieldSet, provides: join__FieldSet, type: String, external: Boolean, override: String, usedOverridden: Boolean, overrideLabel: String) repeatable on FIELD_DEFINITION | INPUT_FIELD_DEFINITION
directive @link(url: String, as: String, for: link__Purpose, import: [link__Import]) repeatable on SCHEMA
scalar join__FieldSet
scalar link__Import
enum link__Purpose { SECURITY EXECUTION }
enum join__Graph {
  A @join__graph(name: "a", url: "http://a/graphql")
  B @join__graph(name: "b", url: "http://b/graphql")
}
type Query @join__type(graph: A) { t: T @join__field(graph: A) }
type T @join__type(graph: A, key: "id") @join__type(graph: B, key: "id") {
  id: ID!
  moved: Int @join__field(graph: A, overrideLabel: "percent(25)") @join__field(graph: B, override: "a", overrideLabel: "percent(25)")
  flagged: Int @join__field(graph: A, overrideLabel: "beta") @join__field(graph: B, override: "a", overrideLabel: "beta")
}
`;
const MODEL = buildSupergraph(SUPERGRAPH);

Deno.test("issue 13 override: a progressive field is served by the original subgraph while its label is inactive", () => {
  const plan = planQuery(MODEL, `{ t { moved } }`).plan;
  assert.deepEqual(fetchesOf(plan.node), ["a query{t{moved}}"]);
});

Deno.test("issue 13 override: a progressive field is served by the overriding subgraph only while its label is active", () => {
  const plan = planQuery(MODEL, `{ t { moved } }`, { overrideLabels: new Set(["percent(25)"]) })
    .plan;
  assert.deepEqual(fetchesOf(plan.node), [
    "a query{t{__typename id}}",
    "b query($representations:[_Any!]!){_entities(representations:$representations){...on T{moved}}}",
  ]);
});

Deno.test("issue 13 override: percent(n) labels are drawn per request; named labels stay inactive", () => {
  const labels = overrideLabelsOf(MODEL);
  assert.deepEqual(labels, [{ label: "beta", percent: null }, {
    label: "percent(25)",
    percent: 25,
  }]);
  assert.deepEqual([...drawOverrideLabels(labels, () => 0.2)], ["percent(25)"]);
  assert.deepEqual([...drawOverrideLabels(labels, () => 0.3)], []);
});

Deno.test("issue 13 override: the engine plans each label draw separately (the plan cache key carries the labels)", async () => {
  let draw = 0.1;
  const sent: string[] = [];
  const engine = createEngine(MODEL, {
    random: () => draw,
    fetch: (request) => {
      const url = request instanceof Request ? request.url : String(request);
      sent.push(new URL(url).host);
      const body = url.includes("//a/")
        ? { data: { t: { __typename: "T", id: "1", moved: 1 } } }
        : { data: { _entities: [{ moved: 2 }] } };
      return Promise.resolve(Response.json(body));
    },
  });
  const prepared = prepare(engine, { query: `{ t { moved } }` });
  assert.ok(prepared.ok);
  assert.deepEqual((await execute(engine, prepared.operation)).data, { t: { moved: 2 } });
  draw = 0.9;
  assert.deepEqual((await execute(engine, prepared.operation)).data, { t: { moved: 1 } });
  assert.deepEqual(sent, ["a", "b", "a"]);
});
