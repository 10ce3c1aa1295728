import assert from "node:assert/strict";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { createEngine, execute, prepare } from "../../lib/engine/mod.ts";
import { buildSupergraph } from "../../lib/supergraph/mod.ts";
import { buildSchema, type GraphQLFormattedError, parse } from "graphql";
import { normalizeOperation } from "../../lib/engine/prepare/normalize.ts";
import { shapeResponse } from "../../lib/engine/execute/shape.ts";

const composed = composeSupergraph([{
  name: "values",
  url: "http://values.invalid/graphql",
  sdl: `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
scalar JSON
enum Color { RED GREEN }
type Item { id: ID! quantity: Int! label: String }
type Tag { name: String }
union Hit = Item | Tag
type Query {
  n: Int f: Float s: String b: Boolean id: ID e: Color j: JSON
  quantity: Int!
  item: Item
  items: [Item]
  ints: [Int]
  strictItem: Item!
  hit: Hit
  hits: [Hit]
  strictHit: Hit!
}`,
}]);
if (!composed.ok) throw new Error("test supergraph does not compose");
const MODEL = buildSupergraph(composed.supergraphSdl);

async function run(query: string, data: Record<string, unknown>) {
  const engine = createEngine(MODEL, { fetch: () => Promise.resolve(Response.json({ data })) });
  const prepared = prepare(engine, { query });
  assert.ok(prepared.ok, JSON.stringify(prepared));
  return await execute(engine, prepared.operation);
}

Deno.test("issue 14: leaf values of the right kind pass; coercible ones are coerced as graphql-js serializes them", async () => {
  const result = await run("{ n f s b id e j }", {
    n: 3.0,
    f: 1,
    s: 12,
    b: true,
    id: 7,
    e: "RED",
    j: { any: ["shape"] },
  });
  assert.deepEqual(result, {
    data: { n: 3, f: 1, s: "12", b: true, id: "7", e: "RED", j: { any: ["shape"] } },
  });
});

Deno.test("issue 14: an object returned for an Int! field is never forwarded: null propagates with an error at its path", async () => {
  const result = await run("{ quantity s }", { quantity: { ssn: "123-45-6789" }, s: "x" });
  assert.equal(result.data, null);
  assert.equal(
    result.errors?.[0]?.message,
    "The subgraph returned an object where a value of type Int was expected",
  );
  assert.deepEqual(result.errors?.[0]?.path, ["quantity"]);
  assert.equal(result.errors?.[0]?.extensions?.code, "SUBGRAPH_INVALID_RESPONSE");
  assert.doesNotMatch(JSON.stringify(result), /ssn|123-45/);
});

Deno.test("issue 14: wrong scalar kinds become null with an error (Int out of range, Float NaN-like, Boolean object)", async () => {
  const result = await run("{ n f b s }", { n: 2 ** 40, f: "abc", b: { x: 1 }, s: ["a"] });
  assert.deepEqual(result.data, { n: null, f: null, b: null, s: null });
  assert.deepEqual(result.errors?.map((e) => e.path), [["n"], ["f"], ["b"], ["s"]]);
  assert.equal(
    result.errors?.[3]?.message,
    "The subgraph returned a list where a value of type String was expected",
  );
});

Deno.test("issue 14: an enum value outside the API schema is null with an error; a non-string is not echoed", async () => {
  const result = await run("{ e }", { e: { secret: 1 } });
  assert.deepEqual(result.data, { e: null });
  assert.equal(result.errors?.[0]?.message, 'Enum "Color" cannot represent value: an object');
  const named = await run("{ e }", { e: "PURPLE" });
  assert.equal(named.errors?.[0]?.message, 'Enum "Color" cannot represent value: "PURPLE"');
});

Deno.test("issue 14: a wrongly shaped object or list value is null with an error, not silently dropped", async () => {
  const result = await run("{ item { id } items { id } ints }", {
    item: "not an object",
    items: { id: "1" },
    ints: 5,
  });
  assert.deepEqual(result.data, { item: null, items: null, ints: null });
  assert.deepEqual(result.errors?.map((e) => [e.path, e.message]), [
    [["item"], "The subgraph returned a string where an object for Query.item was expected"],
    [["items"], "The subgraph returned an object where a list for Query.items was expected"],
    [["ints"], "The subgraph returned a number where a list for Query.ints was expected"],
  ]);
});

Deno.test("issue 14: an array returned for a non-null object nulls its parent (null propagation)", async () => {
  const result = await run("{ strictItem { id } s }", { strictItem: [{ id: "1" }], s: "x" });
  assert.equal(result.data, null);
  assert.equal(result.errors?.length, 1);
  assert.deepEqual(result.errors?.[0]?.path, ["strictItem"]);
});

Deno.test("issue 14: a bad item inside a list nulls that item only when the item type is nullable", async () => {
  const result = await run("{ items { id quantity label } }", {
    items: [{ id: "1", quantity: 1, label: "a" }, { id: "2", quantity: "many", label: "b" }],
  });
  assert.deepEqual(result.data, { items: [{ id: "1", quantity: 1, label: "a" }, null] });
  assert.deepEqual(result.errors?.[0]?.path, ["items", 1, "quantity"]);
});

Deno.test("an object whose __typename is no possible type of an abstract position is null with an error, never a silent null", async () => {
  const result = await run(
    "{ hit { ... on Tag { name } } hits { __typename ... on Item { label } } s }",
    {
      hit: { __typename: "Secret", name: "x" },
      hits: [{ __typename: "Item", label: "ok" }, { label: "no typename" }, { __typename: 5 }],
      s: "kept",
    },
  );
  const invalid = {
    message: "The subgraph returned an object whose __typename is not a possible type of Hit",
    extensions: { code: "SUBGRAPH_INVALID_RESPONSE" },
  };
  assert.deepEqual(result, {
    data: { hit: null, hits: [{ __typename: "Item", label: "ok" }, null, null], s: "kept" },
    errors: [
      { ...invalid, path: ["hit"] },
      { ...invalid, path: ["hits", 1] },
      { ...invalid, path: ["hits", 2] },
    ],
  });
  assert.doesNotMatch(JSON.stringify(result), /Secret/);
  // A non-null position: the parent is nulled by the same error, not a bare null error.
  const strict = await run("{ strictHit { __typename } }", { strictHit: { __typename: "Secret" } });
  assert.deepEqual(strict, { data: null, errors: [{ ...invalid, path: ["strictHit"] }] });
});

Deno.test("a field the subgraph left out is null whatever its alias: `toString`, `constructor`… never read Object.prototype", async () => {
  const result = await run(
    "{ toString: s valueOf: j constructor: item { id } hasOwnProperty: items { id } s }",
    { s: "x" },
  );
  assert.deepEqual(result, {
    data: { toString: null, valueOf: null, constructor: null, hasOwnProperty: null, s: "x" },
  });
  assert.equal(
    JSON.stringify(result),
    '{"data":{"toString":null,"valueOf":null,"constructor":null,"hasOwnProperty":null,"s":"x"}}',
  );
});

Deno.test("which errors explain a null is looked up, not scanned per null: 100 000 nulls beside 20 000 errors shape at once", () => {
  const schema = buildSchema("type Query { items: [Item] } type Item { name: String! }");
  const { selection } = normalizeOperation(schema, parse("{ items { name } }"));
  const errors: GraphQLFormattedError[] = Array.from(
    { length: 20_000 },
    (_, i) => ({ message: "elsewhere", path: ["other", i] }),
  );
  // On an ancestor, below the field, and wrapped (`subgraph_error_propagation.mode: wrapped`).
  errors.push({ message: "entity", path: ["items", 1] });
  errors.push({ message: "below", path: ["items", 2, "name", "x"] });
  errors.push({
    message: "wrapper",
    extensions: { errors: [{ message: "w", path: ["items", 3] }] },
  });
  const items = Array.from({ length: 100_000 }, () => ({ name: null }));
  const start = performance.now();
  const data = shapeResponse({ items }, selection, { errors });
  const ms = performance.now() - start;
  assert.equal((data?.items as unknown[]).length, 100_000);
  const added = errors.slice(20_003);
  assert.equal(added.length, 100_000 - 3, "one error per null the others do not explain");
  assert.deepEqual(added.slice(0, 2).map((e) => e.path), [["items", 0, "name"], [
    "items",
    4,
    "name",
  ]]);
  assert.ok(ms < 3_000, `shaped in ${Math.round(ms)} ms`);
});

Deno.test("issue 33: a subgraph object already in the selection's shape is the answer itself (not held twice); any difference makes a copy", () => {
  const schema = buildSchema(
    "type Query { items: [Item] } type Item { id: ID name: String n: Int }",
  );
  const { selection } = normalizeOperation(schema, parse("{ items { id name } }"));
  const items = [{ id: "1", name: "a" }, { id: "2", name: "b" }];
  const source = { items };
  const errors: GraphQLFormattedError[] = [];
  const data = shapeResponse(source, selection, { errors });
  assert.equal(data, source, "the root, its list and its items are reused");
  assert.equal(data?.items, items);
  // An extra member (a key the client did not select), another order, a coerced value: copies.
  const extra = { items: [{ id: "1", name: "a", n: 1 }, items[1]] };
  const shapedExtra = shapeResponse(extra, selection, { errors });
  assert.notEqual(shapedExtra?.items, extra.items);
  assert.deepEqual(shapedExtra, { items: [{ id: "1", name: "a" }, items[1]] });
  assert.equal(
    (shapedExtra?.items as unknown[])[1],
    items[1],
    "the unchanged item is still reused",
  );
  const reordered = { items: [{ name: "a", id: "1" }] };
  assert.equal(
    JSON.stringify(shapeResponse(reordered, selection, { errors })),
    '{"items":[{"id":"1","name":"a"}]}',
    "printed in the selection's order",
  );
  const numeric = { items: [{ id: 7, name: "a" }] };
  assert.equal(
    JSON.stringify(shapeResponse(numeric, selection, { errors })),
    '{"items":[{"id":"7","name":"a"}]}',
    "an ID given as a number is coerced: a copy",
  );
  assert.deepEqual(errors, []);
});
