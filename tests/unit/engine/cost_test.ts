/**
 * Demand control's cost rules on Apollo Router's own examples: each test names the test of
 * `apollo-router/src/plugins/demand_control/cost_calculator/static_cost.rs` whose schema,
 * operation, variables and expected figure it reproduces (fixtures copied unchanged).
 */
import assert from "node:assert/strict";
import { parse } from "graphql";
import { buildCostSchema, buildSupergraph } from "../../../lib/supergraph/mod.ts";
import {
  actualCost,
  CostError,
  estimateOperation,
  estimatePlan,
} from "../../../lib/engine/cost/mod.ts";
import { createEngine, planOf, prepare } from "../../../lib/engine/mod.ts";
import { composeSupergraph } from "../../../lib/compose/mod.ts";

const DIR = new URL("../fixtures/demand_control/", import.meta.url);
const read = (name: string) => Deno.readTextFileSync(new URL(name, DIR));

/** Apollo's `basic_estimated_cost` / `estimated_cost`: the client's document on the schema, requires counted. */
function estimated(
  schemaFile: string,
  query: string,
  variables: Record<string, unknown> = {},
  listSize = 100,
) {
  const schema = buildCostSchema(parse(read(schemaFile)));
  const document = parse(query.endsWith(".graphql") ? read(query) : query);
  return estimateOperation(schema, document, { variables, listSize, estimateRequires: true });
}

/** Apollo's `planned_cost_rust`: the sum over the subgraph operations of GW's plan. */
function planned(schemaFile: string, query: string, variables: Record<string, unknown> = {}) {
  const model = buildSupergraph(read(schemaFile));
  const engine = createEngine(model);
  const prepared = prepare(engine, { query: read(query) });
  assert.ok(prepared.ok, JSON.stringify(prepared));
  const plan = planOf(engine, prepared.operation, variables);
  return estimatePlan(model.cost, plan, { variables, listSize: 100 }).total;
}

/** Apollo's `actual_cost` / `basic_actual_cost`: the answer's data by the same rules. */
function actual(
  schemaFile: string,
  query: string,
  response: string,
  variables: Record<string, unknown> = {},
) {
  const schema = buildCostSchema(parse(read(schemaFile)));
  const document = parse(read(query));
  const data = JSON.parse(read(response)).data;
  return actualCost(schema, document, { data, variables });
}

Deno.test("Apollo query_cost: scalars cost 0", () => {
  assert.equal(estimated("basic_schema.graphql", "basic_query.graphql"), 0);
});
Deno.test("Apollo mutation_cost: a mutation costs 10", () => {
  assert.equal(estimated("basic_schema.graphql", "basic_mutation.graphql"), 10);
});
Deno.test("Apollo object_cost: an object costs 1", () => {
  assert.equal(estimated("basic_schema.graphql", "basic_object_query.graphql"), 1);
});
Deno.test("Apollo interface_cost: an interface costs 1", () => {
  assert.equal(estimated("basic_schema.graphql", "basic_interface_query.graphql"), 1);
});
Deno.test("Apollo union_cost: a union costs 1, its fragments' scalars 0", () => {
  assert.equal(estimated("basic_schema.graphql", "basic_union_query.graphql"), 1);
});
Deno.test("Apollo list_cost: a list of objects costs list_size (100)", () => {
  assert.equal(estimated("basic_schema.graphql", "basic_object_list_query.graphql"), 100);
});
Deno.test("Apollo scalar_list_cost: a list of scalars costs 0", () => {
  assert.equal(estimated("basic_schema.graphql", "basic_scalar_list_query.graphql"), 0);
});
Deno.test("Apollo nested_object_lists: 100 × (1 + 100 × 1) = 10100", () => {
  assert.equal(estimated("basic_schema.graphql", "basic_nested_list_query.graphql"), 10100);
});
Deno.test("Apollo input_object_cost: input objects cost 1 each (4)", () => {
  assert.equal(estimated("basic_schema.graphql", "basic_input_object_query.graphql"), 4);
});
Deno.test("Apollo input_object_cost_with_returned_objects: estimate 104, actual 7", () => {
  assert.equal(estimated("basic_schema.graphql", "basic_input_object_query_2.graphql"), 104);
  assert.equal(
    actual(
      "basic_schema.graphql",
      "basic_input_object_query_2.graphql",
      "basic_input_object_response.json",
    ),
    7,
  );
});
Deno.test("Apollo skip_directive_excludes_cost: @skip(if: true) costs 0", () => {
  assert.equal(estimated("basic_schema.graphql", "basic_skipped_query.graphql"), 0);
});
Deno.test("Apollo include_directive_excludes_cost: @include(if: false) costs 0", () => {
  assert.equal(estimated("basic_schema.graphql", "basic_excluded_query.graphql"), 0);
});
Deno.test("Apollo fragments_cost: narrowing and widening fragments, estimated and planned 102", () => {
  assert.equal(estimated("basic_supergraph_schema.graphql", "basic_fragments_query.graphql"), 102);
  assert.equal(planned("basic_supergraph_schema.graphql", "basic_fragments_query.graphql"), 102);
});
Deno.test("Apollo federated_query_with_name: estimate 100, actual 2", () => {
  assert.equal(
    estimated("federated_ships_schema.graphql", "federated_ships_named_query.graphql"),
    100,
  );
  assert.equal(
    actual(
      "federated_ships_schema.graphql",
      "federated_ships_named_query.graphql",
      "federated_ships_named_response.json",
    ),
    2,
  );
});
Deno.test("Apollo federated_query_with_requires: estimate 10200, planned 10400, actual 2", () => {
  const s = "federated_ships_schema.graphql";
  assert.equal(estimated(s, "federated_ships_required_query.graphql"), 10200);
  assert.equal(planned(s, "federated_ships_required_query.graphql"), 10400);
  assert.equal(
    actual(s, "federated_ships_required_query.graphql", "federated_ships_required_response.json"),
    2,
  );
});
Deno.test("Apollo federated_query_with_fragments: estimate 300, planned 400, actual 6", () => {
  const s = "federated_ships_schema.graphql";
  assert.equal(estimated(s, "federated_ships_fragment_query.graphql"), 300);
  assert.equal(planned(s, "federated_ships_fragment_query.graphql"), 400);
  assert.equal(
    actual(s, "federated_ships_fragment_query.graphql", "federated_ships_fragment_response.json"),
    6,
  );
});
Deno.test("Apollo federated_query_with_inline_fragments: estimate 300, planned 400, actual 6", () => {
  const s = "federated_ships_schema.graphql";
  assert.equal(estimated(s, "federated_ships_inline_fragment_query.graphql"), 300);
  assert.equal(planned(s, "federated_ships_inline_fragment_query.graphql"), 400);
  assert.equal(
    actual(
      s,
      "federated_ships_inline_fragment_query.graphql",
      "federated_ships_fragment_response.json",
    ),
    6,
  );
});
Deno.test("Apollo federated_query_with_defer: estimate 10200, planned 10400, actual 2", () => {
  const s = "federated_ships_schema.graphql";
  assert.equal(estimated(s, "federated_ships_deferred_query.graphql"), 10200);
  assert.equal(planned(s, "federated_ships_deferred_query.graphql"), 10400);
  assert.equal(
    actual(s, "federated_ships_deferred_query.graphql", "federated_ships_deferred_response.json"),
    2,
  );
});
Deno.test("Apollo federated_query_with_adjustable_list_cost: list_size 100 → 10200, 5 → 35", () => {
  const s = "federated_ships_schema.graphql";
  assert.equal(estimated(s, "federated_ships_deferred_query.graphql", {}, 100), 10200);
  assert.equal(estimated(s, "federated_ships_deferred_query.graphql", {}, 5), 35);
});
Deno.test("Apollo federated_query_with_typenames: __typename costs nothing, actual 2", () => {
  const s = "federated_ships_schema.graphql";
  assert.equal(
    actual(s, "federated_ships_typename_query.graphql", "federated_ships_typename_response.json"),
    2,
  );
});
for (
  const schema of [
    "custom_cost_schema.graphql",
    "custom_cost_schema_with_renamed_directives.graphql",
  ]
) {
  Deno.test(`Apollo custom_cost_query (${schema}): estimate 127, planned 127, actual 125`, () => {
    assert.equal(estimated(schema, "custom_cost_query.graphql"), 127);
    assert.equal(planned(schema, "custom_cost_query.graphql"), 127);
    assert.equal(actual(schema, "custom_cost_query.graphql", "custom_cost_response.json"), 125);
  });
}
Deno.test("Apollo custom_cost_query_with_default_slicing_argument: estimate and planned 132, actual 125", () => {
  const s = "custom_cost_schema.graphql";
  assert.equal(estimated(s, "custom_cost_query_with_default_slicing_argument.graphql"), 132);
  assert.equal(planned(s, "custom_cost_query_with_default_slicing_argument.graphql"), 132);
  assert.equal(
    actual(
      s,
      "custom_cost_query_with_default_slicing_argument.graphql",
      "custom_cost_response.json",
    ),
    125,
  );
});
Deno.test("Apollo custom_cost_query_with_variable_slicing_argument: estimate and planned 127, actual 125", () => {
  const s = "custom_cost_schema.graphql";
  const variables = { costlyInput: { somethingWithCost: 10 }, fieldCountVar: 5 };
  const q = "custom_cost_query_with_variable_slicing_argument.graphql";
  assert.equal(estimated(s, q, variables), 127);
  assert.equal(planned(s, q, variables), 127);
  assert.equal(actual(s, q, "custom_cost_response.json", variables), 125);
});
Deno.test("Apollo arbitrary_json_as_custom_scalar_in_variables: 1", () => {
  const query =
    "query FetchData($myJsonValue: ArbitraryJson) { fetch(args: { json: $myJsonValue }) }";
  assert.equal(
    estimated("arbitrary_json_schema.graphql", query, { myJsonValue: { "field.with.dots": 1 } }),
    1,
  );
});
Deno.test("Apollo subscription_request: estimated and planned 1", () => {
  assert.equal(estimated("subscription_schema.graphql", "subscription_query.graphql"), 1);
  assert.equal(planned("subscription_schema.graphql", "subscription_query.graphql"), 1);
});

const CUSTOM = "custom_cost_schema.graphql";
const CASES: readonly (readonly [string, string, Record<string, unknown>, number])[] = [
  // backward_compatibility_tests
  ["no_directive", "query { enumWithCost }", {}, 15],
  ["single_slicing_argument_with_array", 'query { itemsByIds(ids: ["a", "b"]) { id } }', {}, 2],
  ["slicing_argument_with_variable", "query Q($ids: [ID!]!) { itemsByIds(ids: $ids) { id } }", {
    ids: ["x", "y", "z"],
  }, 3],
  ["nested_sized_fields", "query { containerWithNestedList(first: 5) { page { id } } }", {}, 6],
  [
    "assumed_size_fallback",
    "query Q($ids: [ID!]) { itemsByIdsWithAssumedSize(ids: $ids) { id } }",
    { ids: null },
    50,
  ],
  [
    "sized_fields_propagate_to_nested_lists",
    "query { fieldWithDynamicListSize { items { id } } }",
    {},
    11,
  ],
  // array_slicing_argument_tests
  ["inline_array_of_3", 'query { itemsByIds(ids: ["a", "b", "c"]) { id } }', {}, 3],
  ["empty_inline_array", "query { itemsByIds(ids: []) { id } }", {}, 0],
  ["variable_array_of_5", "query Q($ids: [ID!]!) { itemsByIds(ids: $ids) { id } }", {
    ids: ["a", "b", "c", "d", "e"],
  }, 5],
  [
    "variable_empty_array",
    "query Q($ids: [ID!]!) { itemsByIds(ids: $ids) { id } }",
    { ids: [] },
    0,
  ],
  ["null_variable", "query Q($ids: [ID!]) { itemsByIdsWithAssumedSize(ids: $ids) { id } }", {
    ids: null,
  }, 50],
  [
    "missing_variable",
    "query Q($ids: [ID!]) { itemsByIdsWithAssumedSize(ids: $ids) { id } }",
    {},
    50,
  ],
  // nested_input_path_tests
  ["inline_nested_first_10", "query { search(input: {pagination: {first: 10}}) { id } }", {}, 12],
  [
    "inline_nested_first_5",
    'query { search(input: {pagination: {first: 5}, query: "test"}) { id } }',
    {},
    7,
  ],
  ["variable_nested_object", "query Q($input: SearchInput!) { search(input: $input) { id } }", {
    input: { pagination: { first: 7 }, query: "test" },
  }, 9],
  ["variable_nested_first_only", "query Q($input: SearchInput!) { search(input: $input) { id } }", {
    input: { pagination: { first: 3 } },
  }, 5],
  [
    "missing_nested_value",
    "query Q($input: SearchInput) { searchWithAssumedSize(input: $input) { id } }",
    { input: { pagination: {} } },
    27,
  ],
  [
    "missing_pagination",
    "query Q($input: SearchInput) { searchWithAssumedSize(input: $input) { id } }",
    { input: {} },
    26,
  ],
  ["null_input", "query Q($input: SearchInput) { searchWithAssumedSize(input: $input) { id } }", {
    input: null,
  }, 25],
  [
    "deeply_nested_path_inline",
    "query { deeplyNested(input: {level1: {level2: {count: 15}}}) { id } }",
    {},
    18,
  ],
  [
    "deeply_nested_path_variable",
    "query Q($input: DeeplyNestedInput!) { deeplyNested(input: $input) { id } }",
    { input: { level1: { level2: { count: 12 } } } },
    15,
  ],
  [
    "inline_nested_object_with_other_fields",
    'query { search(input: {pagination: {first: 8, after: "cursor"}, query: "search term"}) { id } }',
    {},
    10,
  ],
  // nested_sized_fields_tests
  [
    "simple_sized_fields_on_nested_type",
    "query { containerWithNestedList(first: 5) { page { id } metadata } }",
    {},
    6,
  ],
  [
    "nested_sized_fields_two_levels",
    "query { deepContainerWithNestedList(first: 7) { results { page { id } } } }",
    {},
    9,
  ],
  [
    "nested_sized_fields_with_variable",
    "query Q($n: Int!) { deepContainerWithNestedList(first: $n) { results { page { id } } } }",
    { n: 3 },
    5,
  ],
  [
    "nested_sized_fields_with_default_value",
    "query { deepContainerWithNestedList { results { page { id } } } }",
    {},
    12,
  ],
  [
    "nested_sized_fields_not_selected",
    "query { deepContainerWithNestedList(first: 100) { total } }",
    {},
    1,
  ],
  [
    "intermediate_container_without_sized_field",
    "query { deepContainerWithNestedList(first: 100) { results { metadata } } }",
    {},
    2,
  ],
  [
    "mixed_sized_fields_single_and_nested",
    "query { deepContainerWithMixedSizedFields(first: 5) { page { id } results { page { id } } } }",
    {},
    12,
  ],
];
for (const [name, query, variables, expected] of CASES) {
  Deno.test(`Apollo ${name}: ${expected}`, () => {
    assert.equal(estimated(CUSTOM, query, variables), expected);
  });
}

Deno.test("Apollo multiple_leaves_in_one_path_fails_at_schema_load", () => {
  const sdl = read(CUSTOM).replace(
    'sizedFields: ["results { page }"]',
    'sizedFields: ["results { page metadata }"]',
  );
  assert.throws(() => buildCostSchema(parse(sdl)), /at most one list field per path/);
});

Deno.test("IBM spec requireOneSlicingArgument: no slicing argument is refused with COST_QUERY_PARSE_FAILURE", () => {
  // itemsByIds requires one slicing argument; a variable left unset gives none.
  assert.throws(
    () => estimated(CUSTOM, "query Q($ids: [ID!]!) { itemsByIds(ids: $ids) { id } }", {}),
    (e: unknown) =>
      e instanceof CostError && e.code === "COST_QUERY_PARSE_FAILURE" && /found 0/.test(e.message),
  );
});

// Apollo Router's docs, `docs/source/routing/security/demand-control.mdx` (same commit).
const BOOKS = `
directive @cost(weight: Int!) on ARGUMENT_DEFINITION | ENUM | FIELD_DEFINITION | INPUT_FIELD_DEFINITION | OBJECT | SCALAR
directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
type Query {
  book(id: ID): Book
  bestsellers: [Book] @listSize(assumedSize: 5)
  newestAdditions(after: ID, limit: Int!): [Book] @listSize(slicingArguments: ["limit"])
}
type Book { title: String author: Author publisher: Publisher }
type Author { name: String }
type Publisher { name: String address: Address }
type Address ADDRESS_COST { zipCode: Int! }`;
const SELECTION = "{ title author { name } publisher { name address { zipCode } } }";
const books = (addressCost: string) =>
  buildCostSchema(parse(BOOKS.replace("ADDRESS_COST", addressCost)));
const docCost = (addressCost: string, query: string) =>
  estimateOperation(books(addressCost), parse(query), { variables: {}, listSize: 10 });

Deno.test("Apollo docs 'Calculating cost': BookQuery costs 4", () => {
  assert.equal(docCost("", `query BookQuery { book(id: 1) ${SELECTION} }`), 4);
});
Deno.test("Apollo docs 'Customizing cost': Address @cost(weight: 5) makes BookQuery 8", () => {
  assert.equal(docCost("@cost(weight: 5)", `query BookQuery { book(id: 1) ${SELECTION} }`), 8);
});
Deno.test("Apollo docs 'Handling list fields': bestsellers (assumedSize 5) costs 40", () => {
  assert.equal(
    docCost("@cost(weight: 5)", `query BestsellersQuery { bestsellers ${SELECTION} }`),
    40,
  );
});
Deno.test("Apollo docs 'Handling list fields': newestAdditions(limit: 3) 24, limit 7 56", () => {
  assert.equal(
    docCost("@cost(weight: 5)", `query NewestAdditions { newestAdditions(limit: 3) ${SELECTION} }`),
    24,
  );
  assert.equal(
    docCost("@cost(weight: 5)", `query NewestAdditions { newestAdditions(limit: 7) ${SELECTION} }`),
    56,
  );
});

Deno.test("gw-router compose keeps @cost and @listSize, and the model reads them", () => {
  const link =
    'extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@cost", "@listSize"])';
  const composed = composeSupergraph([{
    name: "a",
    url: "http://a/graphql",
    sdl: `${link}
type Query { items(first: Int = 10 @cost(weight: 2)): [Item!]! @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false) @cost(weight: 3) }
type Item @key(fields: "id") @cost(weight: 5) { id: ID! }`,
  }]);
  assert.ok(composed.ok);
  const model = buildSupergraph(composed.supergraphSdl);
  const items = model.cost.types.get("Query")?.fields.get("items");
  assert.equal(items?.weight, 3);
  assert.equal(items?.arguments.get("first")?.weight, 2);
  assert.deepEqual(items?.listSizes, [{
    assumedSize: null,
    slicingArguments: ["first"],
    sizedFields: null,
    requireOneSlicingArgument: false,
  }]);
  assert.equal(model.cost.types.get("Query")?.fields.get("_service"), undefined);
  // Item's own @cost stands for the field of its type that has none.
  const plain = estimateOperation(model.cost, parse("{ items(first: 2) { id } }"), {
    variables: {},
    listSize: 10,
  });
  // items' @cost 3 per item × 2 + the argument's @cost 2.
  assert.equal(plain, 2 * 3 + 2);
});

Deno.test("a subgraph operation's argument the supergraph hides (@fromContext) costs 0, not a failure", () => {
  const schema = buildCostSchema(parse("type Query { cart: Cart } type Cart { total: Int }"));
  const plan = {
    kind: "QueryPlan" as const,
    node: {
      kind: "Fetch" as const,
      serviceName: "a",
      variableUsages: [],
      operationKind: "query" as const,
      operation: "query($c:String){cart{total(currency:$c) __typename}}",
    },
  };
  assert.equal(estimatePlan(schema, plan, { variables: { c: "EUR" }, listSize: 10 }).total, 1);
  // The client's own (validated) document has no such argument: there it is an error.
  assert.throws(
    () =>
      estimateOperation(schema, parse('{ cart { total(currency: "EUR") } }'), {
        variables: {},
        listSize: 10,
      }),
    CostError,
  );
});
