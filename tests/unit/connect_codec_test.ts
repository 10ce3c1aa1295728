import assert from "node:assert/strict";
import { buildSchema } from "graphql";
import {
  buildContractModel,
  codeOfGraphQLErrors,
  CONNECT_HTTP_STATUS,
  connectErrorResponse,
  type ContractModel,
  decodeCallMessage,
  encodeResponseMessage,
  resolveCall,
} from "../../lib/connect/mod.ts";
import { buildOperationRegistry } from "../../lib/operations/mod.ts";

const SCHEMA = buildSchema(`
  "Kinds of things."
  enum Category { FURNITURE KITCHEN }
  scalar JSON
  scalar Long
  input Filter { category: Category, maxPrice: Float, first: Int = 10, tags: [String!] }
  type Item { upc: ID!, name: String, category: Category!, price: Float!, big: Long, meta: JSON, tags: [String]! }
  type Query { items(filter: Filter, limit: Int!): [Item!]!, item(upc: ID!): Item }
  type Mutation { rename(upc: ID!, name: String!): Item }
`);

function contract(): ContractModel {
  const registry = buildOperationRegistry([
    {
      path: "ListItems.graphql",
      text:
        "query ListItems($filter: Filter, $limit: Int!) { items(filter: $filter, limit: $limit) " +
        "{ upc name category price big meta tags } }",
    },
    {
      path: "GetItem.graphql",
      text: "query GetItem($upc: ID!) { item(upc: $upc) { upc itemName: name } }",
    },
    {
      path: "Rename.graphql",
      text: "mutation Rename($upc: ID!, $name: String!) { rename(upc: $upc, name: $name) { upc } }",
    },
  ], SCHEMA);
  assert.deepEqual(registry.skipped, []);
  return buildContractModel(SCHEMA, registry.operations);
}

const PREFIX = "/service.v1.GraphService/";
const CONTRACT = contract();

function post(name: string, headers: Record<string, string>) {
  return resolveCall(CONTRACT, PREFIX, {
    method: "POST",
    url: new URL(`http://localhost${PREFIX}${name}`),
    headers: new Headers(headers),
  });
}

function get(name: string, query: string, headers: Record<string, string> = {}) {
  return resolveCall(CONTRACT, PREFIX, {
    method: "GET",
    url: new URL(`http://localhost${PREFIX}${name}?${query}`),
    headers: new Headers(headers),
  });
}

function failureOf(result: ReturnType<typeof resolveCall>) {
  assert.equal(result.ok, false, "expected a refusal");
  if (result.ok) throw new Error("unreachable");
  return result.failure;
}

const JSON_V1 = { "content-type": "application/json", "connect-protocol-version": "1" };

Deno.test("spec 4.2: a POST with application/json and Connect-Protocol-Version 1 resolves to the method", () => {
  const result = post("ListItems", {
    ...JSON_V1,
    "content-type": "application/json; charset=utf-8",
  });
  assert.equal(result.ok, true);
  if (result.ok) {
    assert.equal(result.value.method.name, "ListItems");
    assert.equal(result.value.get, false);
    assert.deepEqual(result.value.source, { kind: "body", compression: "identity" });
  }
});

Deno.test("DESIGN §4: missing Connect-Protocol-Version → 400 invalid_argument naming the header", () => {
  const failure = failureOf(post("ListItems", { "content-type": "application/json" }));
  assert.equal(failure.code, "invalid_argument");
  assert.equal(failure.status, undefined);
  assert.match(failure.message, /Connect-Protocol-Version/);
});

Deno.test("DESIGN §4: a wrong Connect-Protocol-Version → 400 invalid_argument naming the value", () => {
  const failure = failureOf(post("ListItems", { ...JSON_V1, "connect-protocol-version": "2" }));
  assert.equal(failure.code, "invalid_argument");
  assert.match(failure.message, /Connect-Protocol-Version "2"/);
});

Deno.test("DESIGN §4: an unsupported Content-Type → 415 naming it", () => {
  for (const type of ["application/proto", "text/plain", "application/json; charset=latin1"]) {
    const failure = failureOf(post("ListItems", { ...JSON_V1, "content-type": type }));
    assert.equal(failure.status, 415, type);
    assert.match(failure.message, /Content-Type/);
    assert.ok(failure.message.includes(type), failure.message);
  }
});

Deno.test("DESIGN §4: an unknown method → 404 with code unimplemented naming the method", () => {
  const failure = failureOf(post("DropTables", JSON_V1));
  assert.equal(failure.code, "unimplemented");
  assert.equal(failure.status, 404);
  assert.match(failure.message, /"DropTables"/);
});

Deno.test("DESIGN §4: a mutation over GET → 405 with Allow: POST", () => {
  const failure = failureOf(get("Rename", "connect=v1&encoding=json&message=%7B%7D"));
  assert.equal(failure.status, 405);
  assert.deepEqual(failure.headers, { allow: "POST" });
  assert.match(failure.message, /mutation.*POST/);
});

Deno.test("spec 4.3: GET of a query with connect=v1, encoding=json, message resolves", () => {
  const result = get(
    "GetItem",
    `connect=v1&encoding=json&message=${encodeURIComponent('{"upc":"1"}')}`,
  );
  assert.equal(result.ok, true);
  if (result.ok) {
    assert.equal(result.value.get, true);
    assert.deepEqual(result.value.source, {
      kind: "query",
      message: '{"upc":"1"}',
      compression: "identity",
    });
  }
});

Deno.test("DESIGN §4: missing or wrong GET parameters → 400 invalid_argument naming the parameter", () => {
  const cases: [string, RegExp][] = [
    ["encoding=json&message=%7B%7D", /"connect"/],
    ["connect=v2&encoding=json&message=%7B%7D", /connect="v2"/],
    ["connect=v1&message=%7B%7D", /"encoding"/],
    ["connect=v1&encoding=proto&message=%7B%7D", /encoding="proto"/],
    ["connect=v1&encoding=json", /"message"/],
    ["connect=v1&encoding=json&base64=1&message=%25%25", /base64/],
  ];
  for (const [query, pattern] of cases) {
    const failure = failureOf(get("GetItem", query));
    assert.equal(failure.code, "invalid_argument", query);
    assert.equal(failure.status, undefined, query);
    assert.match(failure.message, pattern, query);
  }
});

Deno.test("Connect protocol: base64url GET messages are decoded", () => {
  const encoded = btoa('{"upc":"7"}').replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const result = get("GetItem", `connect=v1&encoding=json&base64=1&message=${encoded}`);
  assert.equal(result.ok, true);
  if (result.ok && result.value.source.kind === "query") {
    assert.equal(
      new TextDecoder().decode(result.value.source.message as Uint8Array),
      '{"upc":"7"}',
    );
  }
});

Deno.test("Connect protocol: another HTTP method → 405 with the allowed ones", () => {
  const result = resolveCall(CONTRACT, PREFIX, {
    method: "PUT",
    url: new URL(`http://localhost${PREFIX}GetItem`),
    headers: new Headers(JSON_V1),
  });
  const failure = failureOf(result);
  assert.equal(failure.status, 405);
  assert.deepEqual(failure.headers, { allow: "GET, POST" });
});

Deno.test("Connect protocol: a malformed Connect-Timeout-Ms → invalid_argument; a valid one is kept", () => {
  const failure = failureOf(post("GetItem", { ...JSON_V1, "connect-timeout-ms": "soon" }));
  assert.equal(failure.code, "invalid_argument");
  assert.match(failure.message, /Connect-Timeout-Ms "soon"/);
  const ok = post("GetItem", { ...JSON_V1, "connect-timeout-ms": "250" });
  assert.equal(ok.ok && ok.value.timeoutMs, 250);
});

Deno.test("Connect protocol: an unsupported Content-Encoding → unimplemented naming it; gzip is accepted", () => {
  const failure = failureOf(post("GetItem", { ...JSON_V1, "content-encoding": "br" }));
  assert.equal(failure.code, "unimplemented");
  assert.match(failure.message, /"br"/);
  const ok = post("GetItem", { ...JSON_V1, "content-encoding": "gzip" });
  assert.equal(ok.ok && ok.value.source.compression, "gzip");
});

const LIST = CONTRACT.byName.get("ListItems")!;

Deno.test("DESIGN §4: a malformed message → 400 invalid_argument saying it is malformed", () => {
  const result = decodeCallMessage(LIST, '{"limit": ');
  assert.equal(result.ok, false);
  if (!result.ok) {
    assert.equal(result.failure.code, "invalid_argument");
    assert.match(result.failure.message, /Malformed ListItemsRequest message/);
  }
});

Deno.test("spec 2.7: a message that is not a JSON object → 400 invalid_argument", () => {
  for (const text of ["[]", "42", '"x"', "null"]) {
    const result = decodeCallMessage(LIST, text);
    assert.equal(result.ok, false, text);
    if (!result.ok) {
      assert.equal(result.failure.code, "invalid_argument");
      assert.match(result.failure.message, /must be a JSON object/);
    }
  }
});

Deno.test("spec 2.7: unknown fields and wrongly typed values → invalid_argument naming the field", () => {
  const cases: [string, RegExp][] = [
    ['{"limit": 1, "color": "red"}', /Unknown field "color"/],
    ['{"limit": "many"}', /"limit" expects an integer/],
    ['{"limit": 1.5}', /"limit" expects an integer/],
    ['{"limit": 1, "filter": {"maxPrice": true}}', /"filter\.maxPrice" expects a number/],
    [
      '{"limit": 1, "filter": {"category": "TABLES"}}',
      /"filter\.category" expects a Category value/,
    ],
    ['{"limit": 1, "filter": {"tags": "a"}}', /"filter\.tags" expects an array/],
    ['{"limit": 3000000000}', /int32 range/],
    // Numbers as strings as protobuf-es reads them: no surrounding whitespace.
    ['{"limit": " 12"}', /"limit" expects an integer, got the string " 12"/],
    ['{"limit": "12\\n"}', /"limit" expects an integer/],
    ['{"limit": 1, "filter": {"maxPrice": "1.5 "}}', /"filter\.maxPrice" expects a number/],
  ];
  for (const [text, pattern] of cases) {
    const result = decodeCallMessage(LIST, text);
    assert.equal(result.ok, false, text);
    if (!result.ok) {
      assert.equal(result.failure.code, "invalid_argument", text);
      assert.match(result.failure.message, pattern, text);
    }
  }
});

Deno.test("proto3 JSON: lowerCamelCase JSON names and original names are both accepted", () => {
  const camel = decodeCallMessage(LIST, '{"limit": 2, "filter": {"maxPrice": 10}}');
  const snake = decodeCallMessage(LIST, '{"limit": 2, "filter": {"max_price": 10}}');
  assert.deepEqual(camel, { ok: true, value: { limit: 2, filter: { maxPrice: 10 } } });
  assert.deepEqual(snake, camel);
});

Deno.test("proto3 JSON: enums by proto name become GraphQL values; _UNSPECIFIED and null mean unset", () => {
  const result = decodeCallMessage(
    LIST,
    '{"limit": "3", "filter": {"category": "CATEGORY_FURNITURE", "maxPrice": null}}',
  );
  assert.deepEqual(result, { ok: true, value: { limit: 3, filter: { category: "FURNITURE" } } });
  const unset = decodeCallMessage(
    LIST,
    '{"limit": 1, "filter": {"category": "CATEGORY_UNSPECIFIED"}}',
  );
  assert.deepEqual(unset, { ok: true, value: { limit: 1, filter: {} } });
});

Deno.test("proto3 JSON: an omitted required scalar takes its proto3 default (senders omit zero values)", () => {
  assert.deepEqual(decodeCallMessage(LIST, "{}"), { ok: true, value: { limit: 0 } });
  assert.deepEqual(decodeCallMessage(LIST, ""), { ok: true, value: { limit: 0 } });
});

Deno.test("proto3 JSON: responses use JSON names, enum proto names, int64 strings, null for GraphQL null", () => {
  const data = {
    items: [
      {
        upc: "1",
        name: null,
        category: "KITCHEN",
        price: 2.5,
        big: 12,
        meta: { a: [1] },
        tags: ["x", null],
      },
    ],
  };
  assert.deepEqual(encodeResponseMessage(LIST.response, data), {
    items: [
      {
        upc: "1",
        name: null,
        category: "CATEGORY_KITCHEN",
        price: 2.5,
        big: "12",
        meta: { a: [1] },
        tags: ["x", ""],
      },
    ],
  });
  const aliased = CONTRACT.byName.get("GetItem")!;
  assert.deepEqual(
    encodeResponseMessage(aliased.response, { item: { upc: "9", itemName: "Cup" } }),
    {
      item: { upc: "9", itemName: "Cup" },
    },
  );
  assert.deepEqual(encodeResponseMessage(aliased.response, { item: null }), { item: null });
});

Deno.test("Connect protocol: the HTTP status table is the current Connect table", () => {
  // Written from the spec (connectrpc.com/docs/protocol, "Error Codes"), not from errors.ts:
  // connectrpc/connectrpc.com#130 moved canceled 408→499, deadline_exceeded 408→504,
  // failed_precondition 412→400 and unimplemented 404→501.
  assert.deepEqual({ ...CONNECT_HTTP_STATUS }, {
    canceled: 499,
    unknown: 500,
    invalid_argument: 400,
    deadline_exceeded: 504,
    not_found: 404,
    already_exists: 409,
    permission_denied: 403,
    resource_exhausted: 429,
    failed_precondition: 400,
    aborted: 409,
    out_of_range: 400,
    unimplemented: 501,
    internal: 500,
    unavailable: 503,
    data_loss: 500,
    unauthenticated: 401,
  });
});

Deno.test("DESIGN §4: GraphQL errors → the code of the first error, all errors under graphql_errors", async () => {
  const errors = [
    { message: "Not signed in", path: ["user", "email"], extensions: { code: "UNAUTHENTICATED" } },
    { message: "Other", extensions: { code: "FORBIDDEN" } },
  ];
  assert.equal(codeOfGraphQLErrors(errors, { requestError: false }), "unauthenticated");
  const table: [string, string][] = [
    ["GRAPHQL_VALIDATION_FAILED", "invalid_argument"],
    ["BAD_USER_INPUT", "invalid_argument"],
    ["FORBIDDEN", "permission_denied"],
    ["SUBGRAPH_UNREACHABLE", "unavailable"],
    ["SUBGRAPH_ERROR", "unknown"],
  ];
  for (const [code, expected] of table) {
    assert.equal(
      codeOfGraphQLErrors([{ message: "m", extensions: { code } }], { requestError: false }),
      expected,
    );
  }
  const response = connectErrorResponse({
    code: "unauthenticated",
    message: "Not signed in",
    graphqlErrors: errors,
  });
  assert.equal(response.status, 401);
  assert.equal(response.headers.get("content-type"), "application/json");
  assert.deepEqual(await response.json(), {
    code: "unauthenticated",
    message: "Not signed in",
    graphql_errors: errors,
  });
});

Deno.test("Connect GET: a protocol parameter given twice is invalid_argument naming it (no first-wins)", () => {
  const method = { idempotent: true } as unknown as ContractModel["methods"][number];
  const contract = { byName: new Map([["M", method]]) } as unknown as ContractModel;
  for (const name of ["connect", "encoding", "message", "base64", "compression"]) {
    const result = resolveCall(contract, "/p.v1.S/", {
      method: "GET",
      url: new URL(`http://r/p.v1.S/M?connect=v1&encoding=json&message=%7B%7D&${name}=a&${name}=b`),
      headers: new Headers(),
    });
    assert.equal(result.ok, false, name);
    if (!result.ok) {
      assert.equal(result.failure.code, "invalid_argument", name);
      assert.equal(
        result.failure.message,
        `The "${name}" query parameter is given more than once; give it once`,
      );
    }
  }
});
