import assert from "node:assert/strict";
import { buildSchema } from "graphql";
import { buildOperationRegistry, validateArguments } from "../../lib/operations/mod.ts";

const SCHEMA = buildSchema(`
  type Query { user(id: ID!, filter: Filter, tier: Tier): String, hello: String }
  type Mutation { rename(name: String!): String }
  type Subscription { tick: Int }
  enum Tier { FREE PRO }
  input Filter { name: String!, limit: Int = 10, tags: [String!] }
`);

Deno.test("issue 4: one named operation per file; invalid and anonymous operations are skipped, subscriptions registered (issue 29)", () => {
  const registry = buildOperationRegistry([
    {
      path: "b.graphql",
      text: "query GetUser($id: ID!) { user(id: $id) ...F } fragment F on Query { hello }",
    },
    { path: "a.graphql", text: "subscription Tick { tick }" },
    { path: "c.graphql", text: "query Bad { nope }" },
    { path: "d.graphql", text: "{ hello }" },
    { path: "e.graphql", text: "query A { hello } query B { hello }" },
    { path: "f.graphql", text: "mutation Rename($n: String!) { rename(name: $n) }" },
  ], SCHEMA);
  assert.deepEqual(registry.operations.map((o) => [o.name, o.kind]), [
    ["Tick", "subscription"],
    ["GetUser", "query"],
    ["Rename", "mutation"],
  ]);
  assert.deepEqual(registry.skipped.map((s) => s.path), [
    "c.graphql",
    "d.graphql",
    "e.graphql",
  ]);
});

Deno.test("issue 4: duplicate operation names: the first file wins", () => {
  const registry = buildOperationRegistry([
    { path: "z.graphql", text: "query Hello { hello }" },
    { path: "a.graphql", text: "query Hello { user(id: 1) }" },
  ], SCHEMA);
  assert.equal(registry.byName.get("Hello")?.path, "a.graphql");
  assert.match(registry.skipped[0]!.reason, /Duplicate operation name "Hello"/);
});

Deno.test("issue 4: inputSchema: nullable → [t, null], enums listed, input objects nested, required = non-null without default", () => {
  const registry = buildOperationRegistry([{
    path: "a.graphql",
    text:
      "query Q($id: ID!, $filter: Filter, $tier: Tier = FREE, $t2: Tier!) { user(id: $id, filter: $filter, tier: $tier) u2: user(id: $id, tier: $t2) }",
  }], SCHEMA);
  assert.deepEqual(registry.operations[0]!.inputSchema, {
    type: "object",
    properties: {
      id: { type: ["string", "integer"] },
      filter: {
        type: ["object", "null"],
        properties: {
          name: { type: "string" },
          limit: { type: ["integer", "null"] },
          tags: { type: ["array", "null"], items: { type: "string" } },
        },
        required: ["name"],
        additionalProperties: false,
      },
      tier: { type: ["string", "null"], enum: ["FREE", "PRO", null] },
      t2: { type: "string", enum: ["FREE", "PRO"] },
    },
    required: ["id", "t2"],
    additionalProperties: false,
  });
});

Deno.test("issue 4: arguments are validated before execution; the message names the field", () => {
  const { inputSchema } = buildOperationRegistry([{
    path: "a.graphql",
    text: "query Q($id: ID!, $filter: Filter) { user(id: $id, filter: $filter) }",
  }], SCHEMA).operations[0]!;
  assert.equal(validateArguments({ id: "1" }, inputSchema), null);
  assert.equal(validateArguments({}, inputSchema), 'Missing required argument "id"');
  assert.equal(
    validateArguments({ id: "1", filter: { name: 3 } }, inputSchema),
    'Invalid argument "filter.name": expected string, got integer',
  );
  assert.equal(
    validateArguments({ id: "1", filter: { name: "x", extra: 1 } }, inputSchema),
    'Unknown argument "filter.extra"',
  );
  assert.equal(validateArguments({ id: "1", other: 1 }, inputSchema), 'Unknown argument "other"');
});

Deno.test("MCP tool arguments: names of Object.prototype members are unknown arguments too, and a missing required one is missing", () => {
  const { inputSchema } = buildOperationRegistry([{
    path: "a.graphql",
    text: "query Q($id: ID!, $filter: Filter) { user(id: $id, filter: $filter) }",
  }], SCHEMA).operations[0]!;
  for (const name of ["toString", "constructor", "hasOwnProperty", "valueOf", "__proto__"]) {
    assert.equal(
      validateArguments(JSON.parse(`{"id":"1","${name}":{"a":1}}`), inputSchema),
      `Unknown argument "${name}"`,
    );
    assert.equal(
      validateArguments(JSON.parse(`{"id":"1","filter":{"name":"x","${name}":1}}`), inputSchema),
      `Unknown argument "filter.${name}"`,
    );
  }
  const { inputSchema: named } = buildOperationRegistry([{
    path: "b.graphql",
    text: "query R($toString: ID!) { user(id: $toString) }",
  }], SCHEMA).operations[0]!;
  assert.equal(validateArguments({}, named), 'Missing required argument "toString"');
});

Deno.test("issue 4: the leading # comment is the operation's description", () => {
  const registry = buildOperationRegistry([{
    path: "a.graphql",
    text: "# Unrelated\n\n# Says hello\n# to you\nquery Hello { hello }",
  }], SCHEMA);
  assert.equal(registry.operations[0]!.description, "Says hello\nto you");
});
