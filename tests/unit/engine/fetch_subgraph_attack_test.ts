/**
 * A faulty or hostile subgraph's answers at the engine: what one answer can
 * make the router do for every request that merges it (amplification,
 * another type's data). A fetch stub stands in for the subgraphs.
 *
 * @module
 */
import assert from "node:assert/strict";
import { composeServices } from "@theguild/federation-composition";
import { parse } from "graphql";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { createEngine, type EngineOptions, execute, prepare } from "../../../lib/engine/mod.ts";
import { RouterError } from "../../../lib/errors.ts";

const FED =
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@shareable"])\n`;

/** The supergraph model of subgraphs named by their SDL (after the federation link), at `http://<name>.test/graphql`. */
function compose(subgraphs: Record<string, string>) {
  const result = composeServices(
    Object.entries(subgraphs).map(([name, sdl]) => ({
      name,
      url: `http://${name}.test/graphql`,
      typeDefs: parse(FED + sdl),
    })),
  );
  if (result.errors !== undefined) throw new Error(result.errors.map((e) => e.message).join());
  return buildSupergraph(result.supergraphSdl);
}

function model() {
  return compose({
    a: `type Query { products: [Product] } type Product @key(fields: "id") { id: ID! }`,
    b: `type Product @key(fields: "id") { id: ID! price: Int }`,
  });
}

/** Runs `{ products { id price } }`: `a` lists `count` products of one id, `b` answers `entities`. */
async function products(
  count: number,
  entities: string,
  options: Omit<EngineOptions, "fetch"> = {},
) {
  const list = Array.from({ length: count }, () => `{"__typename":"Product","id":"1"}`);
  const engine = createEngine(model(), {
    ...options,
    fetch: (request) =>
      Promise.resolve(
        new Response(
          new URL(request.url).hostname === "a.test"
            ? `{"data":{"products":[${list.join(",")}]}}`
            : entities,
          { headers: { "content-type": "application/json" } },
        ),
      ),
  });
  const prepared = prepare(engine, { query: "{ products { id price } }" });
  assert.ok(prepared.ok);
  return await execute(engine, prepared.operation);
}

Deno.test("an entity error shared by many objects: at most 100 copies forwarded, the rest counted (1 error x 20 000 objects was 20 000 errors)", async () => {
  const result = await products(
    20_000,
    `{"data":{"_entities":[null]},"errors":[{"message":"no price","path":["_entities",0,"price"]}]}`,
  );
  const errors = result.errors ?? [];
  assert.equal(errors.length, 101);
  assert.deepEqual(errors[0], { message: "no price", path: ["products", 0, "price"] });
  assert.deepEqual(errors[99]?.path, ["products", 99, "price"]);
  assert.deepEqual(errors[100], {
    message:
      `The subgraph "b" sent errors for 20000 positions in the response; the first 100 are forwarded`,
    extensions: { code: "SUBGRAPH_ERROR", serviceName: "b" },
  });
  assert.equal((result.data?.products as unknown[]).length, 20_000);
});

Deno.test("entity errors repeated per object count toward max_response_bytes: RESPONSE_TOO_LARGE, never a response of gigabytes", async () => {
  // An error of 1 MB at the one representation of 100 objects: 100 MB of errors.
  const answer = `{"data":{"_entities":[null]},"errors":[{"message":"${
    "x".repeat(1_000_000)
  }","path":["_entities",0,"price"]}]}`;
  const started = performance.now();
  await assert.rejects(
    () => products(100, answer, { maxResponseBytes: 32_000_000 }),
    (error: unknown) => error instanceof RouterError && error.code === "RESPONSE_TOO_LARGE",
  );
  assert.ok(performance.now() - started < 5_000);
  // 10 MB of them, under the limit: forwarded.
  const message = "x".repeat(100_000);
  const one = await products(
    100,
    `{"data":{"_entities":[null]},"errors":[{"message":"${message}","path":["_entities",0]}]}`,
    { maxResponseBytes: 32_000_000 },
  );
  assert.equal(one.errors?.length, 100);
});

Deno.test("an entity answered as another type is not merged: its fields are not the object's (null, with an error at the object)", async () => {
  const result = await products(
    2,
    `{"data":{"_entities":[{"__typename":"Brand","price":5}]}}`,
  );
  assert.deepEqual(result, {
    data: { products: [{ id: "1", price: null }, { id: "1", price: null }] },
    errors: [0, 1].map((i) => ({
      message: `The subgraph "b" answered an entity of another type than its representation's`,
      path: ["products", i],
      extensions: { code: "SUBGRAPH_ERROR", serviceName: "b" },
    })),
  });
  for (const typename of [5, null, ["Product"]]) {
    const odd = await products(
      1,
      `{"data":{"_entities":[{"__typename":${JSON.stringify(typename)},"price":5}]}}`,
    );
    assert.deepEqual(odd.data, { products: [{ id: "1", price: null }] }, String(typename));
  }
  // Its own type, or no __typename at all: merged.
  for (const entity of [`{"__typename":"Product","price":5}`, `{"price":5}`]) {
    const right = await products(1, `{"data":{"_entities":[${entity}]}}`);
    assert.deepEqual(right, { data: { products: [{ id: "1", price: 5 }] } });
  }
});

Deno.test("a subgraph error at a field the planner aliased (value__alias_0) is placed at the client's key, not the alias", async () => {
  // `A.value` is `String!` in subgraph `a` only: beside `B.value: String` the
  // planner aliases one of them in `a`'s operation.
  const supergraph = compose({
    a: `type Query { items: [U] } union U = A | B type A @shareable { value: String! } type B { value: String }`,
    c: `type Query { a: A } type A @shareable { value: String }`,
  });
  let sent = "";
  const engine = createEngine(supergraph, {
    fetch: async (request) => {
      sent = JSON.parse(await request.text()).query;
      const alias = /(\w+__alias_\d+):value/.exec(sent)![1]!;
      return Response.json({
        data: { items: [{ __typename: "A", value: "s" }, { __typename: "B", [alias]: null }] },
        errors: [{ message: "no value", path: ["items", 1, alias] }],
      });
    },
  });
  const prepared = prepare(engine, {
    query: "{ items { ... on A { value } ... on B { value } } }",
  });
  assert.ok(prepared.ok);
  const result = await execute(engine, prepared.operation);
  assert.match(sent, /__alias_\d+:value/);
  assert.deepEqual(result, {
    data: { items: [{ value: "s" }, { value: null }] },
    errors: [{ message: "no value", path: ["items", 1, "value"] }],
  });
});

Deno.test("a subgraph's answer is merged only for what its fetch selected at every level: a shared value type's field of another subgraph is not overwritten", async () => {
  // `Info.w` is answered by b, `Info.h` by c: two entity fetches, in parallel.
  const supergraph = compose({
    a: `type Query { products: [Product] } type Product @key(fields: "id") { id: ID! }`,
    b: `type Product @key(fields: "id") { id: ID! info: Info @shareable } type Info @shareable { w: Int }`,
    c: `scalar JSON type Product @key(fields: "id") { id: ID! info: Info @shareable } type Info @shareable { h: Int meta: JSON }`,
  });
  // Shared answers (single flight) merge through layers; unshared ones in place.
  for (const enableSingleFlight of [true, false]) {
    const engine = createEngine(supergraph, {
      enableSingleFlight,
      fetch: async (request) => {
        const host = new URL(request.url).hostname;
        if (host === "a.test") {
          return Response.json({ data: { products: [{ __typename: "Product", id: "1" }] } });
        }
        if (host === "b.test") return Response.json({ data: { _entities: [{ info: { w: 5 } }] } });
        // c answers last, with b's field too (and a JSON scalar whose object is its value).
        await new Promise((resolve) => setTimeout(resolve, 20));
        return Response.json({
          data: { _entities: [{ info: { h: 1, w: 666, meta: { w: 1 } }, id: "2" }] },
        });
      },
    });
    const prepared = prepare(engine, { query: "{ products { id info { w h meta } } }" });
    assert.ok(prepared.ok);
    const result = await execute(engine, prepared.operation);
    assert.deepEqual(result, {
      data: { products: [{ id: "1", info: { w: 5, h: 1, meta: { w: 1 } } }] },
    }, `single flight ${enableSingleFlight}`);
  }
});

Deno.test("a long integer where data or an entity belongs is a malformed answer (SUBGRAPH_ERROR), not a silent null", async () => {
  const big = "123456789012345678901234567890";
  // An entity that is a number.
  const entity = await products(1, `{"data":{"_entities":[${big}]}}`);
  assert.deepEqual(entity.data, { products: [{ id: "1", price: null }] });
  assert.equal(
    entity.errors?.[0]?.message,
    `The subgraph "b" answered a malformed GraphQL response: an entity in its _entities is neither an object nor null`,
  );
  // Data that is a number.
  const data = await products(1, `{"data":${big},"errors":[]}`);
  assert.equal(
    data.errors?.[0]?.message,
    `The subgraph "b" answered a malformed GraphQL response: its data is not an object`,
  );
  const engine = createEngine(model(), {
    fetch: () => Promise.resolve(new Response(`{"data":${big}}`)),
  });
  const prepared = prepare(engine, { query: "{ products { id } }" });
  assert.ok(prepared.ok);
  const root = await execute(engine, prepared.operation);
  assert.deepEqual(root, {
    data: { products: null },
    errors: [{
      message: `The subgraph "a" answered a malformed GraphQL response: its data is not an object`,
      extensions: { code: "SUBGRAPH_ERROR", serviceName: "a" },
    }],
  });
});
