import assert from "node:assert/strict";
import { buildSchema } from "graphql";
import {
  buildContractModel,
  type ContractModel,
  generateOpenApi,
  generateProto,
  type ProtoLock,
} from "../../lib/connect/mod.ts";
import { buildOperationRegistry, type OperationFile } from "../../lib/operations/mod.ts";

const SCHEMA = buildSchema(`
  "Product categories."
  enum Category {
    "Tables and chairs."
    FURNITURE
    KITCHEN
  }
  "A product."
  type Product { upc: ID!, name: String!, price: Float, category: Category!, tags: [String!]!, brand: Brand }
  "A brand."
  type Brand { id: ID!, name: String! }
  union Hit = Product | Brand
  input ProductFilter { category: Category, maxPrice: Float, first: Int = 10 }
  type Query {
    "One product by UPC."
    product(upc: ID!): Product
    products(filter: ProductFilter): [Product!]!
    search(text: String!): [Hit!]!
  }
  type Mutation { addProduct(name: String!): Product! }
`);

function model(files: OperationFile[]): ContractModel {
  const registry = buildOperationRegistry(files, SCHEMA);
  assert.deepEqual(registry.skipped, []);
  return buildContractModel(SCHEMA, registry.operations);
}

const GET_PRODUCT = {
  path: "GetProduct.graphql",
  text:
    "# Gets one product.\nquery GetProduct($upc: ID!) { product(upc: $upc) { upc name price brand { id name } } }",
};
const LIST = {
  path: "ListProducts.graphql",
  text:
    "query ListProducts($filter: ProductFilter) { products(filter: $filter) { upc category tags } }",
};
const SEARCH = {
  path: "Search.graphql",
  text:
    "query Search($text: String!) { search(text: $text) { __typename ... on Product { upc } ... on Brand { id } } }",
};
const ADD = {
  path: "AddProduct.graphql",
  text: "mutation AddProduct($name: String!) { addProduct(name: $name) { upc } }",
};
const OPTIONS = { package: "service.v1", service: "GraphService" };

Deno.test("issue 5: the proto is proto3 with the package, one rpc per operation, NO_SIDE_EFFECTS on queries only", () => {
  const proto = generateProto(model([GET_PRODUCT, ADD]), OPTIONS);
  assert.equal(proto.path, "service/v1/service.proto");
  assert.match(proto.text, /^syntax = "proto3";$/m);
  assert.match(proto.text, /^package service\.v1;$/m);
  assert.match(
    proto.text,
    / {2}\/\/ Gets one product\.\n {2}rpc GetProduct\(GetProductRequest\) returns \(GetProductResponse\) \{\n {4}option idempotency_level = NO_SIDE_EFFECTS;\n {2}\}/,
  );
  assert.match(
    proto.text,
    / {2}rpc AddProduct\(AddProductRequest\) returns \(AddProductResponse\) \{\}/,
  );
});

Deno.test("issue 5: nullable scalars are wrappers, lists repeated, selections nested messages, descriptions comments", () => {
  const proto = generateProto(model([GET_PRODUCT, LIST]), OPTIONS);
  assert.match(proto.text, /^import "google\/protobuf\/wrappers\.proto";$/m);
  assert.match(
    proto.text,
    /message GetProductResponse \{\n {2}\/\/ A product\.\n {2}message Product \{\n {4}\/\/ A brand\.\n {4}message Brand \{\n {6}string id = 1;\n {6}string name = 2;\n {4}\}\n {4}string upc = 1;\n {4}string name = 2;\n {4}google\.protobuf\.DoubleValue price = 3;\n {4}Brand brand = 4;\n {2}\}\n {2}\/\/ One product by UPC\.\n {2}Product product = 1;\n\}/,
  );
  assert.match(proto.text, / {4}repeated string tags = 3;/);
  assert.match(
    proto.text,
    /message ProductFilter \{\n {2}optional Category category = 1;\n {2}google\.protobuf\.DoubleValue max_price = 2;\n {2}google\.protobuf\.Int32Value first = 3;\n\}/,
  );
});

Deno.test("issue 5: enums have <ENUM>_UNSPECIFIED = 0 and prefixed values with their descriptions", () => {
  const proto = generateProto(model([LIST]), OPTIONS);
  assert.match(
    proto.text,
    /\/\/ Product categories\.\nenum Category \{\n {2}CATEGORY_UNSPECIFIED = 0;\n {2}\/\/ Tables and chairs\.\n {2}CATEGORY_FURNITURE = 1;\n {2}CATEGORY_KITCHEN = 2;\n\}/,
  );
});

Deno.test("issue 5: a union selection is one message with every fragment's fields, optional on the wire", () => {
  const proto = generateProto(model([SEARCH]), OPTIONS);
  assert.match(
    proto.text,
    /message Search \{\n(?:.*\n)? {4}string typename = 1;\n(?:.*\n)? {4}google\.protobuf\.StringValue upc = 2;\n(?:.*\n)? {4}google\.protobuf\.StringValue id = 3;\n {2}\}/,
  );
});

function numbersOf(lock: ProtoLock, message: string): Record<string, number> {
  const entry = lock.messages[message];
  assert.ok(entry, `lock has ${message}`);
  return Object.fromEntries(
    Object.entries(entry.fields).map(([name, field]) => [name, field.number]),
  );
}

Deno.test("DESIGN §3: field numbers survive adding and removing an operation field (lock, reserved numbers)", () => {
  const v1 = generateProto(model([GET_PRODUCT]), OPTIONS);
  assert.deepEqual(numbersOf(v1.lock, "GetProductResponse.Product"), {
    upc: 1,
    name: 2,
    price: 3,
    brand: 4,
  });
  // v2: `name` removed, `category` added before `price`.
  const v2Text =
    "query GetProduct($upc: ID!) { product(upc: $upc) { upc category price brand { id name } } }";
  const v2 = generateProto(model([{ path: "GetProduct.graphql", text: v2Text }]), {
    ...OPTIONS,
    lock: v1.lock,
  });
  assert.deepEqual(numbersOf(v2.lock, "GetProductResponse.Product"), {
    upc: 1,
    category: 5,
    price: 3,
    brand: 4,
  });
  assert.deepEqual(v2.lock.messages["GetProductResponse.Product"]?.reserved, [2]);
  assert.match(v2.text, /message Product \{\n(?:.*\n)*? {4}reserved 2;\n/);
  assert.match(v2.text, / {4}Category category = 5;/);
  // v3: `name` comes back: a new number, 2 stays reserved (old clients read 2 as something else).
  const v3Text =
    "query GetProduct($upc: ID!) { product(upc: $upc) { upc category price name brand { id name } } }";
  const v3 = generateProto(model([{ path: "GetProduct.graphql", text: v3Text }]), {
    ...OPTIONS,
    lock: v2.lock,
  });
  assert.deepEqual(numbersOf(v3.lock, "GetProductResponse.Product"), {
    upc: 1,
    category: 5,
    price: 3,
    name: 6,
    brand: 4,
  });
  assert.deepEqual(v3.lock.messages["GetProductResponse.Product"]?.reserved, [2]);
  // Regenerating with the same lock changes nothing.
  const again = generateProto(model([{ path: "GetProduct.graphql", text: v3Text }]), {
    ...OPTIONS,
    lock: v3.lock,
  });
  assert.equal(again.text, v3.text);
  assert.deepEqual(again.lock, v3.lock);
});

Deno.test("DESIGN §3: a field whose type changes gets a new number; the old one is reserved", () => {
  const v1 = generateProto(model([ADD]), OPTIONS);
  const retyped = {
    path: "AddProduct.graphql",
    text: 'mutation AddProduct($name: String = "x") { addProduct(name: $name) { upc } }',
  };
  const v2 = generateProto(model([retyped]), { ...OPTIONS, lock: v1.lock });
  assert.deepEqual(v1.lock.messages["AddProductRequest"]?.fields, {
    name: { number: 1, type: "string" },
  });
  assert.deepEqual(v2.lock.messages["AddProductRequest"]?.fields, {
    name: { number: 2, type: "google.protobuf.StringValue" },
  });
  assert.deepEqual(v2.lock.messages["AddProductRequest"]?.reserved, [1]);
});

Deno.test("DESIGN §3: a removed operation keeps its lock entry, so re-adding it keeps its numbers", () => {
  const v1 = generateProto(model([GET_PRODUCT, ADD]), OPTIONS);
  const v2 = generateProto(model([ADD]), { ...OPTIONS, lock: v1.lock });
  assert.ok(!v2.text.includes("GetProduct"));
  assert.deepEqual(
    v2.lock.messages["GetProductResponse.Product"],
    v1.lock.messages["GetProductResponse.Product"],
  );
  const v3 = generateProto(model([GET_PRODUCT, ADD]), { ...OPTIONS, lock: v2.lock });
  assert.equal(v3.text, v1.text);
});

Deno.test("issue 5: OpenAPI 3.1 has POST for every method and GET with connect, encoding, message for queries", () => {
  const doc = generateOpenApi(model([GET_PRODUCT, ADD]), {
    ...OPTIONS,
    version: "1.2.3",
    serverUrl: "http://localhost:3002",
  });
  assert.equal(doc.openapi, "3.1.0");
  const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;
  assert.deepEqual(Object.keys(paths).sort(), [
    "/service.v1.GraphService/AddProduct",
    "/service.v1.GraphService/GetProduct",
  ]);
  assert.deepEqual(Object.keys(paths["/service.v1.GraphService/GetProduct"]!), ["post", "get"]);
  assert.deepEqual(Object.keys(paths["/service.v1.GraphService/AddProduct"]!), ["post"]);
  const get = paths["/service.v1.GraphService/GetProduct"]!.get!;
  const params = get.parameters as { name?: string; required?: boolean; $ref?: string }[];
  assert.deepEqual(
    params.filter((p) => p.name !== undefined).map((p) => [p.name, p.required]),
    [["connect", true], ["encoding", true], ["message", true]],
  );
  const schemas = (doc.components as { schemas: Record<string, Record<string, unknown>> }).schemas;
  assert.deepEqual(schemas["GetProductResponse.Product"]?.properties, {
    upc: { type: "string" },
    name: { type: "string" },
    price: { type: ["number", "null"], format: "double" },
    brand: {
      oneOf: [{ $ref: "#/components/schemas/GetProductResponse.Product.Brand" }, { type: "null" }],
    },
  });
  assert.deepEqual(schemas["GetProductRequest"]?.required, ["upc"]);
  assert.deepEqual(schemas["ConnectError"]?.required, ["code", "message"]);
  const post = paths["/service.v1.GraphService/AddProduct"]!.post!;
  assert.deepEqual(Object.keys(post.responses as object), ["200", "4XX", "5XX"]);
});

Deno.test("issue 5: a field is optional on the wire only when it may be absent (type condition, @skip/@include)", () => {
  const schema = buildSchema(`
    interface Node { id: ID! }
    type Thing implements Node { id: ID!, label: String! }
    type Other implements Node { id: ID! }
    type Query { thing: Thing!, node: Node! }
  `);
  const registry = buildOperationRegistry([{
    path: "Q.graphql",
    text:
      "query Q($withLabel: Boolean!) { thing { ... on Node { id } label @include(if: $withLabel) } " +
      "node { id ... on Thing { label } } }",
  }], schema);
  assert.deepEqual(registry.skipped, []);
  const proto = generateProto(buildContractModel(schema, registry.operations), OPTIONS);
  const thing = /message Thing \{\n([^}]*)\}/.exec(proto.text)?.[1];
  const node = /message Node \{\n([^}]*)\}/.exec(proto.text)?.[1];
  assert.equal(thing, "    string id = 1;\n    google.protobuf.StringValue label = 2;\n  ");
  assert.equal(node, "    string id = 1;\n    google.protobuf.StringValue label = 2;\n  ");
});

Deno.test("issue 5: request fields carry the description of the argument or input field the variable feeds", () => {
  const schema = buildSchema(`
    input Range { "Lowest price." min: Float, max: Float }
    type Query { count("Text to match." text: String, range: Range): Int }
  `);
  const registry = buildOperationRegistry([{
    path: "Count.graphql",
    text: "query Count($text: String, $min: Float) { count(text: $text, range: { min: $min }) }",
  }], schema);
  const proto = generateProto(buildContractModel(schema, registry.operations), OPTIONS);
  assert.equal(
    /message CountRequest \{\n([^}]*)\}/.exec(proto.text)?.[1],
    "  // Text to match.\n  google.protobuf.StringValue text = 1;\n" +
      "  // Lowest price.\n  google.protobuf.DoubleValue min = 2;\n",
  );
});
