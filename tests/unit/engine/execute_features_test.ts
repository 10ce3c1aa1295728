import assert from "node:assert/strict";
import { composeServices } from "@theguild/federation-composition";
import { parse } from "graphql";
import { buildSupergraph, type SupergraphModel } from "../../../lib/supergraph/mod.ts";
import { createEngine, execute, planOf, prepare } from "../../../lib/engine/mod.ts";

function fed2(...imports: string[]): string {
  return `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ${
    JSON.stringify(imports)
  })\n`;
}

function compose(subgraphs: Record<string, string>): SupergraphModel {
  const result = composeServices(
    Object.entries(subgraphs).map(([name, typeDefs]) => ({
      name,
      typeDefs: parse(typeDefs),
      url: `http://${name}.test/graphql`,
    })),
  );
  if (result.errors !== undefined) throw new Error(result.errors.map((e) => e.message).join("\n"));
  return buildSupergraph(result.supergraphSdl);
}

type Answer = (body: { query: string; variables: Record<string, unknown> }) => unknown;

async function run(model: SupergraphModel, query: string, answers: Record<string, Answer>) {
  const queries: [string, string][] = [];
  const engine = createEngine(model, {
    fetch: async (request) => {
      const subgraph = new URL(request.url).hostname.replace(".test", "");
      const body = await request.json();
      queries.push([subgraph, body.query]);
      return Response.json(answers[subgraph]?.(body) ?? { data: null });
    },
  });
  const prepared = prepare(engine, { query });
  assert.ok(prepared.ok, JSON.stringify(prepared));
  const plan = planOf(engine, prepared.operation);
  const result = await execute(engine, prepared.operation);
  return { result, queries, plan };
}

Deno.test("issue 3: shared root field of a value type: the other subgraph's root answers its fields", async () => {
  const model = compose({
    a: fed2("@shareable") +
      `type Query { info: Info @shareable } type Info @shareable { a: String }`,
    b: fed2("@shareable") +
      `type Query { info: Info @shareable } type Info @shareable { b: String }`,
  });
  const { result, queries } = await run(model, `{ info { a b } }`, {
    a: () => ({ data: { info: { a: "from a" } } }),
    b: () => ({ data: { info: { b: "from b" } } }),
  });
  assert.deepEqual(result, { data: { info: { a: "from a", b: "from b" } } });
  assert.deepEqual(queries.map(([s]) => s).sort(), ["a", "b"]);
});

Deno.test("issue 3: shared root field: the subgraph resolving more of the selection is chosen", async () => {
  const model = compose({
    a: fed2("@shareable", "@key") +
      `type Query { me: User @shareable } type User @key(fields: "id") { id: ID! name: String }`,
    b: fed2("@shareable", "@key") +
      `type Query { me: User @shareable } type User @key(fields: "id") { id: ID! email: String phone: String }`,
  });
  const { plan } = await run(model, `{ me { email phone } }`, {});
  assert.deepEqual(plan.node, {
    kind: "Fetch",
    serviceName: "b",
    variableUsages: [],
    operation: "query{me{email phone}}",
    operationKind: "query",
  });
});

Deno.test("issue 3: node(id:) interface root field: members of other subgraphs fetched by key", async () => {
  const model = compose({
    nodes: fed2("@key") + `
      type Query { node(id: ID!): Node }
      interface Node { id: ID! }
      type User implements Node @key(fields: "id") { id: ID! }
      type Product implements Node @key(fields: "id") { id: ID! }`,
    users: fed2("@key") + `type User @key(fields: "id") { id: ID! name: String }`,
    products: fed2("@key") + `type Product @key(fields: "id") { id: ID! title: String }`,
  });
  const { result, plan } = await run(
    model,
    `{ node(id: "p1") { __typename id ... on User { name } ... on Product { title } } }`,
    {
      nodes: () => ({ data: { node: { __typename: "Product", id: "p1" } } }),
      products: (body) => {
        assert.deepEqual(body.variables.representations, [{ __typename: "Product", id: "p1" }]);
        return { data: { _entities: [{ title: "Lamp" }] } };
      },
    },
  );
  assert.deepEqual(result, { data: { node: { __typename: "Product", id: "p1", title: "Lamp" } } });
  assert.equal(plan.node?.kind, "Sequence");
});

Deno.test("issue 3: null entity half-way through a chain gives null, not an error", async () => {
  const model = compose({
    a: fed2("@key") +
      `type Query { reviews: [Review!]! } type Review @key(fields: "id") { id: ID! product: Product } type Product @key(fields: "upc", resolvable: false) { upc: ID! }`,
    b: fed2("@key") + `type Product @key(fields: "upc") { upc: ID! maker: Maker }
      type Maker @key(fields: "id") { id: ID! }`,
    c: fed2("@key") + `type Maker @key(fields: "id") { id: ID! name: String }`,
  });
  const { result } = await run(model, `{ reviews { id product { maker { name } } } }`, {
    a: () => ({
      data: {
        reviews: [
          { id: "r1", product: { __typename: "Product", upc: "1" } },
          { id: "r2", product: { __typename: "Product", upc: "2" } },
          { id: "r3", product: null },
        ],
      },
    }),
    b: () => ({ data: { _entities: [{ maker: { __typename: "Maker", id: "m1" } }, null] } }),
    c: () => ({ data: { _entities: [{ name: "Acme" }] } }),
  });
  assert.deepEqual(result, {
    data: {
      reviews: [
        { id: "r1", product: { maker: { name: "Acme" } } },
        { id: "r2", product: { maker: null } },
        { id: "r3", product: null },
      ],
    },
  });
});

Deno.test("issue 3: @requires chain: required fields fetched first and sent in the representation", async () => {
  const model = compose({
    products: fed2("@key") +
      `type Query { products: [Product!]! } type Product @key(fields: "id") { id: ID! weight: Int }`,
    shipping: fed2("@key", "@external", "@requires") + `type Product @key(fields: "id") {
      id: ID! weight: Int @external cost: Int @requires(fields: "weight") }`,
  });
  const { result, plan } = await run(model, `{ products { cost } }`, {
    products: () => ({ data: { products: [{ __typename: "Product", id: "1", weight: 3 }] } }),
    shipping: (body) => {
      assert.deepEqual(body.variables.representations, [{
        __typename: "Product",
        id: "1",
        weight: 3,
      }]);
      return { data: { _entities: [{ cost: 30 }] } };
    },
  });
  assert.deepEqual(result, { data: { products: [{ cost: 30 }] } });
  assert.equal(
    plan.node?.kind === "Sequence" && plan.node.nodes[1]?.kind === "Flatten"
      ? plan.node.nodes[1].node.requires
      : "",
    "...on Product{__typename id weight}",
  );
});

Deno.test("issue 3: an entity whose key could not be fetched (null upstream) is not sent; its fields are null", async () => {
  const model = compose({
    a: fed2("@key") + `type Query { books: [Book] } type Book @key(fields: "upc") { upc: ID! }`,
    b: fed2("@key") + `type Book @key(fields: "id") @key(fields: "upc") { id: ID! upc: ID! }`,
    c: fed2("@key") + `type Book @key(fields: "id") { id: ID! author: String }`,
  });
  const { result, queries } = await run(model, `{ books { upc author } }`, {
    a: () => ({
      data: { books: [{ __typename: "Book", upc: "b1" }, { __typename: "Book", upc: "b3" }] },
    }),
    b: () => ({ data: { _entities: [{ id: "1" }, null] } }),
    c: (body) => {
      assert.deepEqual(body.variables.representations, [{ __typename: "Book", id: "1" }]);
      return { data: { _entities: [{ author: "Alice" }] } };
    },
  });
  assert.deepEqual(result, {
    data: { books: [{ upc: "b1", author: "Alice" }, { upc: "b3", author: null }] },
  });
  assert.deepEqual(queries.map(([s]) => s), ["a", "b", "c"]);
});

Deno.test("issue 3: a field no subgraph can reach (@external where the root is) is a planning error", async () => {
  const model = compose({
    a: fed2("@key", "@shareable", "@external") + `
      type Query { node(id: ID!): Node @shareable }
      interface Node { id: ID! }
      type Account implements Node @key(fields: "id") { id: ID! username: String! }
      type Chat implements Node @key(fields: "id") { id: ID! @external account: Account! }`,
    b: fed2("@key", "@shareable", "@external") + `
      type Query { node(id: ID!): Node @shareable }
      interface Node { id: ID! }
      type Account implements Node @key(fields: "id") { id: ID! @external chats: [Chat!]! }
      type Chat implements Node @key(fields: "id") { id: ID! text: String! }`,
  });
  const { result, queries } = await run(model, `{ node(id: "a1") { id } }`, {});
  assert.equal(result.data, null);
  assert.equal(result.errors?.[0]?.extensions?.code, "QUERY_PLANNING_FAILED");
  assert.equal(queries.length, 0);
  const chat = await run(model, `{ n: node(id: "c1") { ... on Chat { id text } } }`, {
    b: () => ({ data: { n: { __typename: "Chat", id: "c1", text: "hi" } } }),
  });
  assert.deepEqual(chat.result, { data: { n: { id: "c1", text: "hi" } } });
  assert.deepEqual(chat.queries.map(([s]) => s), ["b"]);
});

Deno.test("issue 3: interface fields every member resolves are sent once, without type conditions", async () => {
  const model = compose({
    a: fed2("@key") + `
      type Query { node(id: ID!): Node }
      interface Node { id: ID! }
      type User implements Node @key(fields: "id") { id: ID! name: String }
      type Team implements Node @key(fields: "id") { id: ID! }`,
  });
  const { result, plan } = await run(model, `{ node(id: "u1") { id } }`, {
    a: () => ({ data: { node: { __typename: "User", id: "u1" } } }),
  });
  assert.deepEqual(result, { data: { node: { id: "u1" } } });
  assert.equal(
    plan.node?.kind === "Fetch" ? plan.node.operation : "",
    'query{node(id:"u1"){__typename id}}',
  );
  const mixed = await run(model, `{ node(id: "u1") { id ... on User { name } } }`, {
    a: () => ({ data: { node: { __typename: "User", id: "u1", name: "Ada" } } }),
  });
  assert.equal(
    mixed.plan.node?.kind === "Fetch" ? mixed.plan.node.operation : "",
    'query{node(id:"u1"){__typename ...on User{id name} ...on Team{id}}}',
  );
  assert.deepEqual(mixed.result, { data: { node: { id: "u1", name: "Ada" } } });
});

Deno.test("issue 3: nested @requires on a list from a field that itself @requires: one fetch per step", async () => {
  const model = compose({
    s1: fed2("@key") +
      `type Query { user: User } type User @key(fields: "id") { id: ID! lastName: String! }`,
    s2: fed2("@key", "@requires", "@external") + `
      type UserOrder @key(fields: "id", resolvable: false) { id: ID! }
      type User @key(fields: "id") {
        id: ID!
        userOrders: [UserOrder!] @external
        total: Int @requires(fields: "userOrders { id }")
        count: Int @requires(fields: "userOrders { id }")
      }`,
    s3: fed2("@key", "@requires", "@external") + `
      type UserOrder @key(fields: "id") { id: ID! }
      type User @key(fields: "id") {
        id: ID!
        lastName: String! @external
        userOrders: [UserOrder!] @requires(fields: "lastName")
      }`,
  });
  const { result, queries } = await run(model, `{ user { count total } }`, {
    s1: () => ({ data: { user: { __typename: "User", id: "u1", lastName: "Park" } } }),
    s3: (body) => {
      assert.deepEqual(body.variables.representations, [
        { __typename: "User", id: "u1", lastName: "Park" },
      ]);
      return { data: { _entities: [{ userOrders: [{ id: "Park1" }] }] } };
    },
    s2: (body) => {
      assert.deepEqual(body.variables.representations, [
        { __typename: "User", id: "u1", userOrders: [{ id: "Park1" }] },
      ]);
      return { data: { _entities: [{ count: 1, total: 0 }] } };
    },
  });
  assert.deepEqual(result, { data: { user: { count: 1, total: 0 } } });
  assert.deepEqual(queries.map(([s]) => s), ["s1", "s3", "s2"]);
});
