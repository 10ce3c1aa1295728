/**
 * Issue 18: the authorization stage between normalization and planning
 * (`lib/engine/field_access.ts`) and how the shaper answers removed fields.
 */
import assert from "node:assert/strict";
import { buildSchema, type GraphQLFormattedError, parse } from "graphql";
import { touchedAccessKeys } from "../../../lib/auth/mod.ts";
import { accessSignature, filterOperation } from "../../../lib/engine/prepare/field_access.ts";
import { normalizeOperation } from "../../../lib/engine/prepare/normalize.ts";
import { shapeResponse } from "../../../lib/engine/execute/shape.ts";
import type { AccessRequirement } from "../../../lib/supergraph/types.ts";

const schema = buildSchema(`
  type Query { me: User, users: [User!]!, node: Node, secretThing: Secret }
  interface Node { id: ID! }
  type User implements Node { id: ID! name: String email: String! phone: String }
  type Secret implements Node { id: ID! value: String }
`);
const scopes = (...list: string[]) => ({ scopeSet: new Set(list) });
const access = new Map<string, AccessRequirement>([
  ["User.email", { authenticated: false, requiresScopes: [["read:email"]] }],
  ["User.phone", { authenticated: true, requiresScopes: null }],
  ["Secret", { authenticated: true, requiresScopes: null }],
]);

function run(
  query: string,
  data: Record<string, unknown>,
  identity: { scopeSet: Set<string> } | null,
) {
  const op = normalizeOperation(schema, parse(query));
  const filtered = filterOperation(op, { access, identity });
  const errors: GraphQLFormattedError[] = [];
  const shaped = shapeResponse(data, op.selection, { errors, denied: filtered.denied });
  return { filtered, errors, data: shaped };
}

Deno.test("issue 18: a removed nullable field is null with UNAUTHORIZED_FIELD_OR_TYPE at its path, even if the data had it", () => {
  const { errors, data } = run(
    "{ me { name phone } }",
    { me: { name: "ada", phone: "LEAK" } },
    null,
  );
  assert.deepEqual(data, { me: { name: "ada", phone: null } });
  assert.deepEqual(errors, [{
    message: "Unauthorized field or type",
    path: ["me", "phone"],
    extensions: { code: "UNAUTHORIZED_FIELD_OR_TYPE" },
  }]);
});

Deno.test("issue 18: a removed non-null field nulls its parent (GraphQL null propagation) with one error", () => {
  const { errors, data } = run(
    "{ me { name email } }",
    { me: { name: "ada", email: "LEAK" } },
    null,
  );
  assert.deepEqual(data, { me: null });
  assert.equal(errors.length, 1);
  assert.deepEqual(errors[0]!.path, ["me", "email"]);
});

Deno.test("issue 18: in a list each item's removed field gets its own error path; a scoped token sees the field", () => {
  const users = [{ name: "a", email: "x" }, { name: "b", email: "y" }];
  const anonymous = run("{ users { name email } }", { users }, null);
  // email is String! and users is [User!]!: the whole data nulls.
  assert.equal(anonymous.data, null);
  assert.deepEqual(anonymous.errors.map((e) => e.path), [["users", 0, "email"]]);
  const allowed = run("{ users { name email } }", { users }, scopes("read:email"));
  assert.deepEqual(allowed.data, { users });
  assert.deepEqual(allowed.errors, []);
  assert.equal(allowed.filtered.denied.size, 0);
});

Deno.test("issue 18: a field whose return type is protected is removed; the planned operation no longer selects it", () => {
  const { filtered, data } = run(
    "{ secretThing { value } me { name } }",
    { me: { name: "a" } },
    null,
  );
  assert.deepEqual(filtered.operation.selection.fields.map((f) => f.name), ["me"]);
  assert.deepEqual(data, { secretThing: null, me: { name: "a" } });
  const authenticated = run("{ secretThing { value } }", {}, scopes());
  assert.equal(authenticated.filtered.denied.size, 0);
});

Deno.test("issue 18: fields selected through an interface are checked on each concrete type (Secret's removed, User's kept)", () => {
  const query = "{ node { id ... on User { name } } }";
  const op = normalizeOperation(schema, parse(query));
  const { operation, denied } = filterOperation(op, { access, identity: null });
  const node = operation.selection.fields[0]!.selection!;
  assert.deepEqual(node.byType.get("User")!.map((f) => f.name), ["id", "name"]);
  // Every Secret field is removed, `__typename` keeps the object.
  assert.deepEqual(node.byType.get("Secret")!.map((f) => f.name), ["__typename"]);
  assert.equal(denied.size, 1);
  const errors: GraphQLFormattedError[] = [];
  const shaped = shapeResponse({ node: { __typename: "Secret", id: "s1" } }, op.selection, {
    errors,
    denied,
  });
  assert.deepEqual(shaped, { node: null });
  assert.deepEqual(errors.map((e) => e.path), [["node", "id"]]);
});

Deno.test("issue 18: the plan cache key part differs exactly when the removed fields differ", () => {
  const document = parse("{ me { name email phone } }");
  const keys = touchedAccessKeys(document, schema, access);
  assert.deepEqual(keys, ["User.email", "User.phone"]);
  const anonymous = accessSignature(keys, access, null);
  const emailOnly = accessSignature(keys, access, scopes("read:email"));
  const plain = accessSignature(keys, access, scopes());
  assert.notEqual(anonymous, plain);
  assert.notEqual(plain, emailOnly);
  assert.equal(plain, accessSignature(keys, access, scopes("unrelated")));
  // Interface selections count their implementations' entries (Secret via Node).
  assert.deepEqual(touchedAccessKeys(parse("{ node { id } }"), schema, access), ["Secret"]);
});

Deno.test("issue 18: removed paths are listed once per response path (reject mode's errors)", () => {
  const op = normalizeOperation(schema, parse("{ node { id } me { phone email } }"));
  const { removed } = filterOperation(op, { access, identity: null });
  assert.deepEqual(removed, [["node", "id"], ["me", "phone"], ["me", "email"]]);
});
