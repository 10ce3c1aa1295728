import assert from "node:assert/strict";
import { compose, fetchesOf, planQuery } from "./_planner_fixture.ts";
import { type FetchStep, PlanningError, type PlanStep } from "../../../lib/engine/plan/mod.ts";
import { composeSupergraph } from "../../../lib/compose/mod.ts";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { REQUIRES_CHAIN } from "./_planner_graphs.ts";

const link = (imports: string[]) =>
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.8", import: ${
    JSON.stringify(imports)
  })\n`;

const CONTEXT_SUBGRAPHS = {
  customers: link(["@key", "@shareable"]) + `
    type Query { customers: [Customer!]! }
    type Customer @key(fields: "id") { id: ID! currency: String! @shareable }`,
  orders: link(["@key", "@shareable", "@context", "@fromContext"]) + `
    type Customer @key(fields: "id") @context(name: "customer") {
      id: ID!
      currency: String! @shareable
      orders: [Order!]!
    }
    type Order @key(fields: "id") {
      id: ID!
      amount: Int!
      total(currency: String @fromContext(field: "$customer { currency }")): String!
    }`,
};
const CONTEXT = compose(CONTEXT_SUBGRAPHS);

function composeSdl(subgraphs: Record<string, string>): string {
  const outcome = composeSupergraph(
    Object.entries(subgraphs).map(([name, sdl]) => ({ name, url: `http://${name}/graphql`, sdl })),
  );
  if (!outcome.ok) throw new Error("composition failed");
  return outcome.supergraphSdl;
}

function stepsOf(step: PlanStep | null): FetchStep[] {
  if (!step) return [];
  return step.kind === "Fetch" ? [step] : step.steps.flatMap(stepsOf);
}

Deno.test("issue 13 context: a @fromContext argument becomes a variable of its own entity fetch, read per object from the context ancestor", () => {
  const planned = planQuery(CONTEXT, `{ customers { orders { total } } }`);
  const fetches = fetchesOf(planned.plan.node);
  assert.equal(fetches.length, 3);
  assert.match(
    fetches[1]!,
    /^orders .*\.\.\.on Customer\{orders\{__typename id\} __typename currency\}/,
  );
  assert.match(
    fetches[2]!,
    /\$contextualArgument_0:String.*\.\.\.on Order\{total\(currency:\$contextualArgument_0\)\}/,
  );
  const steps = stepsOf(planned.step);
  assert.deepEqual(steps[2]?.contextVariables, [{
    name: "contextualArgument_0",
    type: "String",
    path: ["customers", "@"],
    read: ["currency"],
  }]);
});

Deno.test("issue 13 context: without an ancestor setting the context, planning fails", () => {
  const sdl = composeSdl(CONTEXT_SUBGRAPHS).replace(/ @context\(name: "[^"]+"\)/, "");
  assert.throws(
    () => planQuery(buildSupergraph(sdl), `{ customers { orders { total } } }`),
    (e) => e instanceof PlanningError && /sets the context/.test(e.message),
  );
});

Deno.test("issue 13 context: a context field whose type has no key in its subgraph fails planning", () => {
  const sdl = composeSdl(CONTEXT_SUBGRAPHS).replace(
    'type Order @join__type(graph: ORDERS, key: "id")',
    "type Order @join__type(graph: ORDERS)",
  );
  assert.throws(
    () => planQuery(buildSupergraph(sdl), `{ customers { orders { total } } }`),
    (e) => e instanceof PlanningError && /has no key/.test(e.message),
  );
});

Deno.test("issue 13 fetch graph: @requires fields may come from the subgraph being entered (A → B → A)", () => {
  const fetches = fetchesOf(planQuery(compose(REQUIRES_CHAIN), `{ products { label } }`).plan.node);
  assert.deepEqual(fetches.map((f) => f.split(" ")[0]), [
    "catalog",
    "pricing",
    "catalog",
    "pricing",
  ]);
});

/** The variable names an operation declares, in order. */
function declaredVariables(operation: string): string[] {
  const head = operation.slice(0, operation.indexOf("{"));
  return [...head.matchAll(/\$(\w+):/g)].map((m) => m[1]!);
}

Deno.test("a client variable named $representations keeps its name: the entity fetch sends the representations as $representations__gw1", async () => {
  const sdl = composeSdl({
    products: link(["@key"]) + `
      type Query { products: [Product!]! }
      type Product @key(fields: "upc") { upc: ID! }`,
    reviews: link(["@key"]) + `
      type Product @key(fields: "upc") { upc: ID! reviews(first: Int): [String!]! }`,
  });
  const model = buildSupergraph(sdl);
  const query =
    "query($representations: Int) { products { upc reviews(first: $representations) } }";
  const fetches = fetchesOf(planQuery(model, query).plan.node);
  const entity = fetches[1]!.slice("reviews ".length);
  assert.deepEqual(declaredVariables(entity), ["representations__gw1", "representations"]);
  assert.match(entity, /_entities\(representations:\$representations__gw1\)/);
  assert.match(entity, /reviews\(first:\$representations\)/);
  // What the subgraph receives: both variables, each once.
  const { createEngine, execute, prepare } = await import("../../../lib/engine/mod.ts");
  const bodies: string[] = [];
  const engine = createEngine(model, {
    fetch: async (request) => {
      const body = await request.text();
      bodies.push(body);
      const { variables } = JSON.parse(body);
      return Response.json(
        variables?.representations__gw1
          ? { data: { _entities: [{ reviews: [`first ${variables.representations}`] }] } }
          : { data: { products: [{ __typename: "Product", upc: "1" }] } },
      );
    },
  });
  const prepared = prepare(engine, { query });
  assert.ok(prepared.ok);
  const result = await execute(engine, prepared.operation, { variables: { representations: 2 } });
  assert.deepEqual(result, { data: { products: [{ upc: "1", reviews: ["first 2"] }] } });
  assert.deepEqual(JSON.parse(bodies[1]!).variables, {
    representations__gw1: [{ __typename: "Product", upc: "1" }],
    representations: 2,
  });
});

Deno.test("issue 13 context: a client variable named like a context variable keeps its name; the context one takes the next", () => {
  const model = compose({
    ...CONTEXT_SUBGRAPHS,
    orders: CONTEXT_SUBGRAPHS.orders.replace(
      'total(currency: String @fromContext(field: "$customer { currency }"))',
      'total(currency: String @fromContext(field: "$customer { currency }"), round: Int)',
    ),
  });
  const query =
    "query($contextualArgument_0: Int) { customers { orders { total(round: $contextualArgument_0) } } }";
  const fetches = fetchesOf(planQuery(model, query).plan.node);
  const last = fetches[fetches.length - 1]!;
  assert.deepEqual(declaredVariables(last.slice("orders ".length)), [
    "representations",
    "contextualArgument_0",
    "contextualArgument_1",
  ]);
  assert.match(last, /total\(round:\$contextualArgument_0,currency:\$contextualArgument_1\)/);
});
