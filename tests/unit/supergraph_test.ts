import assert from "node:assert/strict";
import { composeServices } from "@theguild/federation-composition";
import { isEnumType, isInputObjectType, isObjectType, parse } from "graphql";
import { buildSupergraph } from "../../lib/supergraph/mod.ts";

function compose(subgraphs: { name: string; typeDefs: string }[]): string {
  const result = composeServices(subgraphs.map((s) => ({
    name: s.name,
    typeDefs: parse(s.typeDefs),
    url: `http://127.0.0.1:0/${s.name}`,
  })));
  if (result.errors !== undefined) throw new Error(result.errors.map((e) => e.message).join("\n"));
  return result.supergraphSdl;
}

function fed2(...imports: string[]): string {
  return `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ${
    JSON.stringify(imports)
  })\n`;
}

const DEMO = Deno.readTextFileSync(new URL("../../schema/supergraph.graphql", import.meta.url));

Deno.test("issue 2.3: demo supergraph: subgraphs with name, URL and join__Graph value", () => {
  const model = buildSupergraph(DEMO);
  assert.deepEqual([...model.subgraphs.keys()].sort(), [
    "accounts",
    "inventory",
    "products",
    "reviews",
  ]);
  const accounts = model.subgraphs.get("accounts");
  assert.equal(accounts?.enumValue, "ACCOUNTS");
  assert.match(accounts?.url ?? "", /^http:\/\/127\.0\.0\.1:\d+\/graphql$/);
});

Deno.test("issue 2.3: demo supergraph: API schema without join/link machinery", () => {
  const model = buildSupergraph(DEMO);
  const schema = model.apiSchema;
  for (const name of Object.keys(schema.getTypeMap())) {
    assert.ok(!name.startsWith("join__") && !name.startsWith("link__"), name);
  }
  for (const directive of schema.getDirectives()) {
    assert.ok(!["join__type", "join__field", "link", "inaccessible"].includes(directive.name));
  }
  assert.ok(schema.getQueryType()?.getFields().topProducts);
});

Deno.test("issue 2.3: demo supergraph: keys, requires, external and access per field", () => {
  const model = buildSupergraph(DEMO);
  const product = model.types.get("Product");
  assert.ok(product);
  assert.ok(product.keys.some((k) => k.graph === "inventory" && k.fields === "upc sku"));
  assert.ok(product.keys.some((k) => k.graph === "accounts" && !k.resolvable));
  const shipping = product.fields.get("shippingEstimate");
  assert.equal(shipping?.requires.get("inventory"), "price weight");
  assert.deepEqual(product.fields.get("price")?.resolvableIn, ["products"]);
  assert.deepEqual(product.fields.get("price")?.externalIn, ["inventory"]);
  assert.deepEqual(model.access.get("User.email"), {
    authenticated: false,
    requiresScopes: [["read:email"]],
  });
  assert.equal(model.access.get("User.orders")?.authenticated, true);
});

Deno.test("issue 2.3: Federation 1 subgraphs (extend type, @external keys) compose into owners and keys", () => {
  const sdl = compose([
    {
      name: "products",
      typeDefs: `type Query { topProducts: [Product] }
        type Product @key(fields: "upc") { upc: String! name: String }`,
    },
    {
      name: "reviews",
      typeDefs: `type Review { body: String author: User @provides(fields: "username") }
        extend type Product @key(fields: "upc") { upc: String! @external reviews: [Review] }
        extend type User @key(fields: "id") { id: ID! @external username: String @external }`,
    },
    {
      name: "accounts",
      typeDefs: `type User @key(fields: "id") { id: ID! username: String }`,
    },
  ]);
  const model = buildSupergraph(sdl);
  const product = model.types.get("Product");
  assert.deepEqual(product?.fields.get("reviews")?.resolvableIn, ["reviews"]);
  assert.deepEqual(product?.fields.get("name")?.resolvableIn, ["products"]);
  assert.deepEqual(
    product?.keys.map((k) => k.graph).sort(),
    ["products", "reviews"],
  );
  assert.equal(
    model.types.get("Review")?.fields.get("author")?.provides.get("reviews"),
    "username",
  );
});

const JOIN_V01 = `
schema @core(feature: "https://specs.apollo.dev/core/v0.1")
  @core(feature: "https://specs.apollo.dev/join/v0.1") { query: Query }
directive @core(feature: String!) repeatable on SCHEMA
directive @join__field(graph: join__Graph, requires: join__FieldSet, provides: join__FieldSet) on FIELD_DEFINITION
directive @join__type(graph: join__Graph!, key: join__FieldSet) repeatable on OBJECT | INTERFACE
directive @join__owner(graph: join__Graph!) on OBJECT | INTERFACE
directive @join__graph(name: String!, url: String!) on ENUM_VALUE
scalar join__FieldSet
enum join__Graph {
  PRODUCTS @join__graph(name: "products" url: "http://products/graphql")
  REVIEWS @join__graph(name: "reviews" url: "http://reviews/graphql")
}
type Product @join__owner(graph: PRODUCTS) @join__type(graph: PRODUCTS, key: "upc")
  @join__type(graph: REVIEWS, key: "upc") {
  upc: String!
  name: String
  reviews: [Review] @join__field(graph: REVIEWS)
}
type Query { topProducts: [Product] @join__field(graph: PRODUCTS) }
type Review { body: String }
`;

Deno.test("issue 2.3: join v0.1 supergraph (@core, @join__owner): owner resolves unannotated fields", () => {
  const model = buildSupergraph(JOIN_V01);
  assert.equal(model.federationVersion, 1);
  const product = model.types.get("Product");
  assert.deepEqual(product?.fields.get("name")?.resolvableIn, ["products"]);
  assert.deepEqual(product?.fields.get("reviews")?.resolvableIn, ["reviews"]);
  // A value type without join__type lives in every subgraph.
  assert.deepEqual(model.types.get("Review")?.graphs, ["products", "reviews"]);
  assert.equal(model.apiSchema.getType("join__Graph"), undefined);
  assert.equal(model.apiSchema.getDirective("core"), undefined);
});

const ADVANCED = [
  {
    name: "accounts",
    typeDefs: fed2("@key", "@inaccessible", "@requiresScopes", "@authenticated") + `
      type Query { accounts: [Account!]! secret: String @inaccessible }
      interface Account @key(fields: "id") { id: ID! name: String! }
      type User implements Account @key(fields: "id") {
        id: ID! name: String! email: String! @requiresScopes(scopes: [["read:email"], ["admin"]])
        internal: String @inaccessible
      }
      type Org implements Account @key(fields: "id") @authenticated { id: ID! name: String! }
      enum Status { ACTIVE ARCHIVED @inaccessible }
      input Filter { status: Status hidden: Boolean @inaccessible }
      extend type Query { byStatus(filter: Filter, debug: Boolean @inaccessible): [Account!]! }`,
  },
  {
    name: "extras",
    typeDefs: fed2("@key", "@interfaceObject", "@override", "@shareable") + `
      type Account @key(fields: "id") @interfaceObject { id: ID! rating: Int! }
      type Query { topRated: Account }`,
  },
  {
    name: "billing",
    typeDefs: fed2("@key", "@override") + `
      type User @key(fields: "id") { id: ID! plan: String @override(from: "gone") }
      type Org @key(fields: "id") { id: ID! name: String! @override(from: "accounts") }`,
  },
];

Deno.test("issue 2.3: @inaccessible types, fields, arguments, enum values and input fields are hidden", () => {
  const model = buildSupergraph(compose(ADVANCED));
  const schema = model.apiSchema;
  assert.equal(schema.getQueryType()?.getFields().secret, undefined);
  const user = schema.getType("User");
  assert.ok(isObjectType(user));
  assert.equal(user.getFields().internal, undefined);
  const status = schema.getType("Status");
  assert.ok(isEnumType(status));
  assert.deepEqual(status.getValues().map((v) => v.name), ["ACTIVE"]);
  const filter = schema.getType("Filter");
  assert.ok(isInputObjectType(filter));
  assert.deepEqual(Object.keys(filter.getFields()), ["status"]);
  const byStatus = schema.getQueryType()?.getFields().byStatus;
  assert.deepEqual(byStatus?.args.map((a) => a.name), ["filter"]);
  // The model keeps hidden enum values (the shaper rejects them in output).
  assert.deepEqual(model.types.get("Status")?.enumValues, ["ACTIVE", "ARCHIVED"]);
});

Deno.test("issue 2.3: @interfaceObject subgraphs and interface membership per subgraph", () => {
  const model = buildSupergraph(compose(ADVANCED));
  const account = model.types.get("Account");
  assert.deepEqual(account?.interfaceObjectIn, ["extras"]);
  assert.deepEqual(account?.fields.get("rating")?.resolvableIn, ["extras"]);
  assert.deepEqual(model.types.get("User")?.implementsIn.get("accounts"), ["Account"]);
  assert.equal(model.types.get("User")?.implementsIn.get("billing"), undefined);
});

Deno.test("issue 2.3: @override moves a field, also from a subgraph that does not exist", () => {
  const model = buildSupergraph(compose(ADVANCED));
  assert.deepEqual(model.types.get("Org")?.fields.get("name")?.resolvableIn, ["billing"]);
  assert.deepEqual(model.types.get("User")?.fields.get("plan")?.resolvableIn, ["billing"]);
});

Deno.test("issue 2.3: @requiresScopes and @authenticated per type and field", () => {
  const model = buildSupergraph(compose(ADVANCED));
  assert.deepEqual(model.access.get("User.email"), {
    authenticated: false,
    requiresScopes: [["read:email"], ["admin"]],
  });
  assert.deepEqual(model.access.get("Org"), { authenticated: true, requiresScopes: null });
  assert.equal(model.access.get("User.name"), undefined);
});

Deno.test("issue 2.3: directives renamed by @link import are recognized", () => {
  const sdl = `
schema @link(url: "https://specs.apollo.dev/link/v1.0")
  @link(url: "https://specs.apollo.dev/join/v0.3", as: "j", for: EXECUTION)
  @link(url: "https://specs.apollo.dev/requiresScopes/v0.1", import: [{name: "@requiresScopes", as: "@scopes"}], for: SECURITY)
  @link(url: "https://specs.apollo.dev/authenticated/v0.1", as: "authn", for: SECURITY)
  @link(url: "https://specs.apollo.dev/inaccessible/v0.2", as: "hidden", for: SECURITY) { query: Query }
directive @link(url: String, as: String, for: link__Purpose, import: [link__Import]) repeatable on SCHEMA
directive @j__graph(name: String!, url: String!) on ENUM_VALUE
directive @j__type(graph: j__Graph!, key: j__FieldSet) repeatable on OBJECT
directive @scopes(scopes: [[String!]!]!) on FIELD_DEFINITION | OBJECT
directive @authn on FIELD_DEFINITION | OBJECT
directive @hidden on FIELD_DEFINITION | OBJECT
scalar j__FieldSet
scalar link__Import
enum link__Purpose { SECURITY EXECUTION }
enum j__Graph { A @j__graph(name: "a", url: "http://a/graphql") }
type Query @j__type(graph: A) {
  me: String @authn
  email: String @scopes(scopes: [["read:email"]])
  internal: String @hidden
}`;
  const model = buildSupergraph(sdl);
  assert.equal(model.subgraphs.get("a")?.enumValue, "A");
  assert.deepEqual(model.access.get("Query.email"), {
    authenticated: false,
    requiresScopes: [["read:email"]],
  });
  assert.deepEqual(model.access.get("Query.me"), { authenticated: true, requiresScopes: null });
  assert.equal(model.apiSchema.getQueryType()?.getFields().internal, undefined);
  assert.equal(model.apiSchema.getDirective("scopes"), undefined);
});

Deno.test("issue 2.3: an unparsable supergraph stops with SUPERGRAPH_INVALID", () => {
  assert.throws(() => buildSupergraph("type Query {"), { code: "SUPERGRAPH_INVALID" });
});
