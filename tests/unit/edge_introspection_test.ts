import assert from "node:assert/strict";
import { getIntrospectionQuery } from "graphql";
import { edgeState, graphqlPost, handlerOf, mcpExecute, mcpToolText } from "./_edge_fixture.ts";

const JSON_ACCEPT = { accept: "application/json" };

async function ask(
  raw: Record<string, unknown>,
  query: string,
  variables?: Record<string, unknown>,
): Promise<
  {
    status: number;
    body: Record<string, unknown> & {
      errors?: { message: string; extensions?: Record<string, unknown> }[];
    };
  }
> {
  const handle = handlerOf(await edgeState(raw));
  const response = await handle(graphqlPost({ query, variables }, JSON_ACCEPT));
  return { status: response.status, body: await response.json() };
}

const POSITIONS: Record<string, string> = {
  "root field": "{ __schema { queryType { name } } }",
  "aliased": "{ s: __schema { queryType { name } } }",
  "__type": '{ __type(name: "User") { name } }',
  "inline fragment": '{ ... on Query { __type(name: "User") { name } } }',
  "named fragment": '{ ...F } fragment F on Query { t: __type(name: "User") { name } }',
  "nested inline fragments": "{ ... on Query { ... { __schema { types { name } } } } }",
};

for (const [where, query] of Object.entries(POSITIONS)) {
  Deno.test(`issue 14: introspection off (the production default) refuses __schema/__type as ${where} with 400 INTROSPECTION_DISABLED`, async () => {
    const { status, body } = await ask({}, query);
    assert.equal(status, 400);
    assert.equal(body.errors?.[0]?.extensions?.code, "INTROSPECTION_DISABLED");
    assert.equal("data" in body, false);
  });
}

Deno.test("issue 14: __typename always works, introspection off or on", async () => {
  const off = await ask({}, "{ __typename ... on Query { t: __typename } }");
  assert.equal(off.status, 200);
  assert.deepEqual(off.body, { data: { __typename: "Query", t: "Query" } });
});

Deno.test("issue 14: MCP execute_graphql refuses introspection when it is off", async () => {
  const handle = handlerOf(await edgeState());
  const text = await mcpToolText(await handle(mcpExecute("{ __schema { queryType { name } } }")));
  assert.match(text, /Introspection is disabled/);
});

Deno.test("issue 14: introspection.enabled defaults to dev_mode", async () => {
  const { status, body } = await ask({ dev_mode: true }, "{ __schema { queryType { name } } }");
  assert.equal(status, 200);
  assert.deepEqual(body, { data: { __schema: { queryType: { name: "Query" } } } });
});

Deno.test("issue 14: fragment-wrapped introspection is answered when on (inline and named fragments)", async () => {
  const on = { introspection: { enabled: true } };
  const inline = await ask(on, '{ ... on Query { __type(name: "User") { name } } }');
  assert.deepEqual(inline.body, { data: { __type: { name: "User" } } });
  const named = await ask(
    on,
    '{ ...F __typename } fragment F on Query { t: __type(name: "Review") { kind } }',
  );
  assert.deepEqual(named.body, { data: { t: { kind: "OBJECT" }, __typename: "Query" } });
});

Deno.test("issue 14: graphql-js's full introspection query passes every default limit when on", async () => {
  const { status, body } = await ask({ introspection: { enabled: true } }, getIntrospectionQuery());
  assert.equal(status, 200);
  assert.equal(body.errors, undefined);
  assert.ok(Array.isArray((body.data as { __schema: { types: unknown[] } }).__schema.types));
});

Deno.test("issue 14: nested ofType deeper than 10 is refused by validation", async () => {
  const deep = `{ __type(name: "User") { ${"ofType { ".repeat(11)}name${" }".repeat(11)} } }`;
  const { status, body } = await ask({ introspection: { enabled: true } }, deep);
  assert.equal(status, 200); // application/json: a validation error is a 200 with errors
  assert.equal(body.errors?.[0]?.extensions?.code, "GRAPHQL_VALIDATION_FAILED");
  assert.match(body.errors?.[0]?.message ?? "", /"ofType" is nested 11 levels deep; at most 10/);
  const ok = `{ __type(name: "User") { ${"ofType { ".repeat(10)}name${" }".repeat(10)} } }`;
  assert.equal((await ask({ introspection: { enabled: true } }, ok)).body.errors, undefined);
});

Deno.test("issue 14: graphql-js's MaxIntrospectionDepthRule is applied (nested fields/types lists)", async () => {
  const query =
    "{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }";
  const { body } = await ask({ introspection: { enabled: true } }, query);
  assert.match(body.errors?.[0]?.message ?? "", /Maximum introspection depth exceeded/);
});

Deno.test("issue 14: 'Did you mean' suggestions are hidden in validation when introspection is off", async () => {
  const off = await ask({}, "{ userz { id } }");
  assert.equal(off.body.errors?.[0]?.message, 'Cannot query field "userz" on type "Query".');
  const on = await ask({ introspection: { enabled: true } }, "{ userz { id } }");
  assert.match(on.body.errors?.[0]?.message ?? "", /Did you mean/);
});

Deno.test("issue 14: 'Did you mean' suggestions are hidden in variable coercion when introspection is off", async () => {
  const query = "query ($s: StockStatus!) { productsByStock(status: $s) { upc } }";
  const off = await ask({}, query, { s: "IN_STOK" });
  assert.equal(off.body.errors?.[0]?.extensions?.code, "BAD_USER_INPUT");
  assert.doesNotMatch(off.body.errors?.[0]?.message ?? "", /Did you mean|IN_STOCK/);
  const on = await ask({ introspection: { enabled: true } }, query, { s: "IN_STOK" });
  assert.match(on.body.errors?.[0]?.message ?? "", /Did you mean the enum value "IN_STOCK"/);
});
