import assert from "node:assert/strict";
import { transformSupergraphToPublicSchema } from "@theguild/federation-composition";
import { buildASTSchema, getVariableValues, Kind, parse, print, validate } from "graphql";
import { parse as parseYaml } from "yaml";
import { OPERATION_EXAMPLES } from "../../demo/examples.ts";
import { composeSupergraph, formatCompositionError } from "../../lib/compose/mod.ts";

const ROOT = new URL("../../", import.meta.url);
const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';

interface ConfigSubgraph {
  name: string;
  routing_url: string;
  schema_file: string;
}

function demoInputs() {
  const config = parseYaml(Deno.readTextFileSync(new URL("config.yaml", ROOT))) as {
    subgraphs: ConfigSubgraph[];
  };
  return config.subgraphs.map((s) => ({
    name: s.name,
    url: s.routing_url,
    sdl: Deno.readTextFileSync(new URL(s.schema_file, ROOT)),
  }));
}

function composeDemo(): string {
  const outcome = composeSupergraph(demoInputs());
  if (!outcome.ok) assert.fail(outcome.errors.map(formatCompositionError).join("\n"));
  return outcome.supergraphSdl;
}

Deno.test("issue 2.7: the four demo subgraphs of config.yaml compose into schema/supergraph.graphql, byte for byte", () => {
  const inputs = demoInputs();
  assert.deepEqual(inputs.map((s) => s.name), ["accounts", "products", "reviews", "inventory"]);
  assert.deepEqual(
    inputs.map((s) => s.url),
    [4001, 4002, 4003, 4004].map((port) => `http://127.0.0.1:${port}/graphql`),
  );
  const committed = Deno.readTextFileSync(new URL("schema/supergraph.graphql", ROOT));
  assert.equal(
    committed,
    `${composeDemo()}\n`,
    "schema/supergraph.graphql is stale: run deno run -A main.ts compose --out schema/supergraph.graphql",
  );
});

Deno.test("issue 2.7: the demo supergraph has a composite key, @requires, @provides, a union, enums, an input object and @requiresScopes/@authenticated fields", () => {
  const document = parse(composeDemo());
  const joinTypes: string[] = [];
  const joinFields: string[] = [];
  const access: string[] = [];
  const kinds = new Map<string, string>();
  for (const definition of document.definitions) {
    if (!("name" in definition) || definition.name === undefined) continue;
    const typeName = definition.name.value;
    kinds.set(typeName, definition.kind);
    for (const directive of "directives" in definition ? definition.directives ?? [] : []) {
      if (directive.name.value === "join__type") joinTypes.push(`${typeName} ${print(directive)}`);
    }
    for (const field of "fields" in definition ? definition.fields ?? [] : []) {
      for (const directive of field.directives ?? []) {
        const text = `${typeName}.${field.name.value} ${print(directive)}`;
        if (directive.name.value === "join__field") joinFields.push(text);
        if (["requiresScopes", "authenticated"].includes(directive.name.value)) access.push(text);
      }
    }
  }
  assert.ok(joinTypes.includes('Product @join__type(graph: INVENTORY, key: "upc sku")'));
  assert.ok(
    joinFields.includes(
      'Product.shippingEstimate @join__field(graph: INVENTORY, requires: "price weight")',
    ),
  );
  assert.ok(
    joinFields.includes('Review.author @join__field(graph: REVIEWS, provides: "username")'),
  );
  assert.deepEqual(access, [
    'User.email @requiresScopes(scopes: [["read:email"]])',
    "User.orders @authenticated",
    'Order.paymentMethod @requiresScopes(scopes: [["read:orders", "read:billing"], ["admin"]])',
    "Query.me @authenticated",
  ]);
  assert.equal(kinds.get("SearchResult"), Kind.UNION_TYPE_DEFINITION);
  for (const name of ["Category", "StockStatus", "MembershipTier"]) {
    assert.equal(kinds.get(name), Kind.ENUM_TYPE_DEFINITION, name);
  }
  for (const name of ["ProductFilter", "AddReviewInput"]) {
    assert.equal(kinds.get(name), Kind.INPUT_OBJECT_TYPE_DEFINITION, name);
  }
});

Deno.test("issue 2.4: a field type conflict names both subgraphs and the field's line and column in each", () => {
  const outcome = composeSupergraph([
    { name: "a", url: "http://a/graphql", sdl: `${LINK}\ntype Query {\n  hello: String\n}` },
    {
      name: "b",
      url: "http://b/graphql",
      sdl: `${LINK}\ntype Query {\n  other: Int\n  hello: Int\n}`,
    },
  ]);
  assert.equal(outcome.ok, false);
  if (outcome.ok) return;
  const mismatch = outcome.errors.find((e) => e.code === "FIELD_TYPE_MISMATCH");
  assert.ok(mismatch, outcome.errors.map(formatCompositionError).join("\n"));
  assert.deepEqual(mismatch.subgraphs, ["a", "b"]);
  assert.deepEqual(mismatch.locations, [
    { subgraph: "a", line: 3, column: 3 },
    { subgraph: "b", line: 4, column: 3 },
  ]);
  assert.match(formatCompositionError(mismatch), /^a:3:3: FIELD_TYPE_MISMATCH .*"Query\.hello"/);
});

Deno.test("issue 2.4: a syntax error in one subgraph names that subgraph, line and column", () => {
  const outcome = composeSupergraph([
    { name: "good", url: "http://a/graphql", sdl: `${LINK}\ntype Query { a: String }` },
    { name: "broken", url: "http://b/graphql", sdl: `${LINK}\ntype Query {\n  b: \n}` },
  ]);
  assert.equal(outcome.ok, false);
  if (outcome.ok) return;
  assert.equal(outcome.errors.length, 1);
  const [error] = outcome.errors;
  assert.equal(error?.code, "INVALID_GRAPHQL");
  assert.deepEqual(error?.subgraphs, ["broken"]);
  assert.deepEqual(error?.locations, [{ subgraph: "broken", line: 4, column: 1 }]);
  assert.match(error?.message ?? "", /^\[broken\] Syntax Error/);
});

Deno.test("issue 2.4: a subgraph-level error (directive not imported) keeps the subgraph's name and position", () => {
  const outcome = composeSupergraph([
    {
      name: "inventory",
      url: "http://i/graphql",
      sdl:
        `${LINK}\ntype Query { a: T }\ntype T @key(fields: "id") {\n  id: ID!\n  w: Int @requires(fields: "id")\n}`,
    },
  ]);
  assert.equal(outcome.ok, false);
  if (outcome.ok) return;
  const error = outcome.errors[0];
  assert.deepEqual(error?.subgraphs, ["inventory"]);
  assert.deepEqual(error?.locations, [{ subgraph: "inventory", line: 5, column: 10 }]);
  assert.match(error?.message ?? "", /@requires/);
});

Deno.test("issue 2.4: duplicate subgraph names and an empty list are refused with a message", () => {
  const sdl = `${LINK}\ntype Query { a: String }`;
  const duplicate = composeSupergraph([
    { name: "a", url: "http://a/graphql", sdl },
    { name: "a", url: "http://b/graphql", sdl },
  ]);
  assert.deepEqual(duplicate.ok ? [] : duplicate.errors.map((e) => [e.code, e.message]), [
    ["DUPLICATE_SUBGRAPH_NAME", 'Subgraph name "a" is used more than once'],
  ]);
  const empty = composeSupergraph([]);
  assert.deepEqual(empty.ok ? [] : empty.errors.map((e) => e.code), ["NO_SUBGRAPHS"]);
});

Deno.test("issue 2.7: every file of operations/ holds one named operation, valid against the demo API schema, with a leading description and an example", () => {
  const api = buildASTSchema(transformSupergraphToPublicSchema(parse(composeDemo())));
  const files = [...Deno.readDirSync(new URL("operations/", ROOT))].map((e) => e.name).sort();
  assert.deepEqual(files.map((f) => f.replace(/\.graphql$/, "")), Object.keys(OPERATION_EXAMPLES));
  const kinds: string[] = [];
  for (const file of files) {
    const text = Deno.readTextFileSync(new URL(`operations/${file}`, ROOT));
    assert.match(text, /^# \S/, `${file}: starts with a description comment`);
    const document = parse(text);
    assert.deepEqual(validate(api, document).map((e) => e.message), [], file);
    const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
    assert.equal(operations.length, 1, file);
    const operation = operations[0]!;
    assert.equal(`${operation.name?.value}.graphql`, file);
    kinds.push(operation.operation);
    const example = OPERATION_EXAMPLES[operation.name!.value]!;
    const coerced = getVariableValues(api, operation.variableDefinitions ?? [], {
      ...example.variables,
    });
    assert.equal(coerced.errors, undefined, `${file}: example variables are valid`);
  }
  assert.ok(kinds.includes("mutation") && kinds.includes("query"));
});
