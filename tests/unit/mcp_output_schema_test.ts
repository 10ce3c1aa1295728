import assert from "node:assert/strict";
import { Ajv } from "ajv";
import { buildSchema, type OperationDefinitionNode, parse } from "graphql";
import { outputSchema } from "../../lib/mcp/output_schema.ts";

const SCHEMA = buildSchema(`
  interface Node { id: ID! }
  type User implements Node { id: ID! name: String tags: [String!]! }
  type Brand implements Node { id: ID! country: String }
  union Hit = User | Brand
  enum Tier { FREE PRO }
  scalar JSON
  type Query { node(id: ID!): Node, search: [Hit!]!, tier: Tier, blob: JSON, me: User! }
`);

function schemaOf(text: string) {
  const document = parse(text);
  const operation = document.definitions.find((d) =>
    d.kind === "OperationDefinition"
  ) as OperationDefinitionNode;
  return outputSchema(operation, { schema: SCHEMA, document });
}

Deno.test("issue 17: a union selection gives one closed object per possible type, __typename pinned to the type", () => {
  const schema = schemaOf(
    "query { search { __typename ... on User { id name } ...B } } fragment B on Brand { id country }",
  );
  const validate = new Ajv({ strict: true }).compile(schema);
  assert.ok(validate({ search: [{ __typename: "User", id: "1", name: null }] }));
  assert.ok(validate({ search: [{ __typename: "Brand", id: "2", country: "SE" }] }));
  // A User shape labelled Brand, or a Brand with a User field, is refused.
  assert.equal(validate({ search: [{ __typename: "Brand", id: "1", name: "x" }] }), false);
  assert.equal(validate({ search: null }), false, "[Hit!]! is not nullable");
});

Deno.test("issue 17: an interface selection with identical shapes collapses to one schema; aliases are the keys", () => {
  const schema = schemaOf('query { thing: node(id: "1") { key: id } }') as {
    properties: { thing: Record<string, unknown> };
  };
  assert.deepEqual(schema.properties.thing, {
    type: ["object", "null"],
    properties: { key: { type: "string" } },
    required: ["key"],
    additionalProperties: false,
  });
});

Deno.test("issue 17: @skip/@include fields are optional; nullable enums allow null; custom scalars accept anything", () => {
  const schema = schemaOf(
    "query($s: Boolean!) { tier blob me { id name @include(if: $s) tags } }",
  );
  const validate = new Ajv({ strict: true }).compile(schema);
  assert.ok(validate({ tier: null, blob: { any: [1] }, me: { id: "1", tags: [] } }));
  assert.ok(validate({ tier: "PRO", blob: 3, me: { id: "1", name: "A", tags: ["x"] } }));
  assert.equal(validate({ tier: "GOLD", blob: 1, me: { id: "1", tags: [] } }), false);
  assert.equal(validate({ tier: null, blob: 1, me: { tags: [] } }), false, "id is required");
});
