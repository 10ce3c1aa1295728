import assert from "node:assert/strict";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { createEngine, execute, prepare } from "../../../lib/engine/mod.ts";

const MODEL = buildSupergraph(
  Deno.readTextFileSync(new URL("../../../schema/supergraph.graphql", import.meta.url)),
);

function engine(calls: string[] = []) {
  return createEngine(MODEL, {
    fetch: async (request) => {
      calls.push(await request.text());
      return Response.json({ data: { users: [{ id: "1" }] } });
    },
  });
}

Deno.test("spec 2.1 (parse): a syntax error is a parse-stage error with a location", () => {
  const result = prepare(engine(), { query: "{ users { id }" });
  assert.equal(result.ok, false);
  if (result.ok) return;
  assert.equal(result.stage, "parse");
  assert.equal(result.errors[0]?.extensions?.code, "GRAPHQL_PARSE_FAILED");
  assert.deepEqual(result.errors[0]?.locations, [{ line: 1, column: 15 }]);
});

Deno.test("issue 2.6: maxTokens caps the parser on hostile input", () => {
  const query = `{ ${"users { id } ".repeat(5000)} }`;
  const result = prepare(engine(), { query });
  assert.equal(result.ok ? "" : result.stage, "parse");
  assert.match(result.ok ? "" : result.errors[0]?.message ?? "", /more that 15000 tokens/);
});

Deno.test("spec 5 (validation): an unknown field is a validate-stage error naming it", () => {
  const result = prepare(engine(), { query: "{ users { zzz } }" });
  assert.equal(result.ok ? "" : result.stage, "validate");
  assert.equal(
    result.ok ? "" : result.errors[0]?.message,
    'Cannot query field "zzz" on type "User".',
  );
  assert.equal(result.ok ? "" : result.errors[0]?.extensions?.code, "GRAPHQL_VALIDATION_FAILED");
});

Deno.test("GraphQL over HTTP: operationName selects the operation; missing or unknown names are refused", () => {
  const e = engine();
  const query = "query A { users { id } } query B { warehouses { id } }";
  const b = prepare(e, { query, operationName: "B" });
  assert.equal(b.ok ? b.operation.name : null, "B");
  const none = prepare(e, { query });
  assert.equal(none.ok ? "" : none.stage, "select");
  const unknown = prepare(e, { query, operationName: "C" });
  assert.equal(unknown.ok ? "" : unknown.errors[0]?.message, 'Unknown operation named "C".');
  // A name is the client's: never echoed at any length.
  const long = prepare(e, { query, operationName: "x".repeat(1_000_000) });
  assert.equal(
    long.ok ? "" : long.errors[0]?.message,
    `Unknown operation named "${"x".repeat(100)}…".`,
  );
});

Deno.test("issue 2.6: prepare results are cached by text + name, failures included", () => {
  const e = engine();
  assert.equal(
    prepare(e, { query: "{ users { id } }" }),
    prepare(e, { query: "{ users { id } }" }),
  );
  assert.equal(prepare(e, { query: "{ nope }" }), prepare(e, { query: "{ nope }" }));
});

Deno.test("spec 6.1.2: variables are coerced with defaults; bad input is a request error without data", async () => {
  const calls: string[] = [];
  const e = engine(calls);
  const prepared = prepare(e, { query: "query($id: ID!) { user(id: $id) { id } }" });
  assert.ok(prepared.ok);
  const missing = await execute(e, prepared.operation, { variables: {} });
  assert.equal("data" in missing, false);
  assert.equal(missing.errors?.[0]?.extensions?.code, "BAD_USER_INPUT");
  assert.equal(
    missing.errors?.[0]?.message,
    'Variable "$id" of required type "ID!" was not provided.',
  );
  assert.equal(calls.length, 0);
  const defaults = prepare(e, { query: "query($n: Int = 2) { topProducts(first: $n) { upc } }" });
  assert.ok(defaults.ok);
  await execute(e, defaults.operation, { variables: {} });
  assert.deepEqual(JSON.parse(calls[0] ?? "{}").variables, { n: 2 });
});

Deno.test("spec 4 (introspection): answered by the router from the API schema, no subgraph call", async () => {
  const calls: string[] = [];
  const e = engine(calls);
  const prepared = prepare(e, {
    query: '{ __typename __schema { queryType { name } } t: __type(name: "User") { name } }',
  });
  assert.ok(prepared.ok);
  const result = await execute(e, prepared.operation);
  assert.deepEqual(result, {
    data: { __typename: "Query", __schema: { queryType: { name: "Query" } }, t: { name: "User" } },
  });
  assert.equal(calls.length, 0);
});

Deno.test("spec 4: join machinery is not visible through introspection", async () => {
  const e = engine();
  const prepared = prepare(e, { query: "{ __schema { types { name } } }" });
  assert.ok(prepared.ok);
  const result = await execute(e, prepared.operation);
  const names = (result.data?.__schema as { types: { name: string }[] }).types.map((t) => t.name);
  assert.ok(names.includes("User"));
  assert.ok(!names.some((n) => n.startsWith("join__") || n.startsWith("link__")));
});

Deno.test("spec 4 (introspection): fragments spread in an introspection query are resolved", async () => {
  const e = engine();
  const prepared = prepare(e, {
    query: "{ __schema { queryType { ...T } } } fragment T on __Type { name kind }",
  });
  assert.ok(prepared.ok);
  const result = await execute(e, prepared.operation);
  assert.deepEqual(result, {
    data: { __schema: { queryType: { name: "Query", kind: "OBJECT" } } },
  });
});

Deno.test("edge: a document whose repeated fields exhaust graphql-js's comparison budget gets a message naming why", () => {
  const e = engine();
  const query = `{ ${Array(3000).fill("a: __typename").join(" ")} }`;
  const result = prepare(e, { query });
  assert.equal(result.ok ? "" : result.stage, "validate");
  const errors = result.ok ? [] : result.errors;
  assert.equal(errors.length, 1);
  assert.equal(errors[0]?.extensions?.code, "GRAPHQL_VALIDATION_FAILED");
  assert.match(errors[0]?.message ?? "", /too many fields share a response name/);
  // Under the budget the same fields are valid (they merge).
  assert.ok(prepare(e, { query: `{ ${Array(50).fill("a: __typename").join(" ")} }` }).ok);
});
