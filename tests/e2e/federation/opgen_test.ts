/**
 * The seeded operation generator of the differential tests (`_opgen.ts`).
 *
 * @module
 */
import { deepStrictEqual, equal, notEqual, ok } from "node:assert/strict";
import {
  buildSchema,
  type DocumentNode,
  Kind,
  parse,
  type SelectionSetNode,
  validate,
  visit,
} from "graphql";
import { drawConditions, generateOperation } from "./_opgen.ts";
import { operationHash } from "./_differential.ts";

const SCHEMA = buildSchema(`
  type Query {
    node(id: ID!): Node
    search(term: String!): [Result!]!
    things(filter: Filter!): [Thing!]!
    count(min: Int): Int
    deep: A
  }
  interface Node { id: ID! }
  type Thing implements Node { id: ID! name(upper: Boolean): String! parts: [Part!]! }
  type Part implements Node { id: ID! size: Int! }
  union Result = Thing | Part
  input Filter { x: Int }
  type A { b: B v: Int }
  type B { a: A w: Int }
`);

const SEEDS = Array.from({ length: 200 }, (_, i) => i + 1);

/** Field nesting of a selection set, following named fragments. */
function depth(document: DocumentNode, set: SelectionSetNode): number {
  let most = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      most = Math.max(
        most,
        1 + (selection.selectionSet ? depth(document, selection.selectionSet) : 0),
      );
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      most = Math.max(most, depth(document, selection.selectionSet));
    } else {
      const fragment = document.definitions.find((d) =>
        d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === selection.name.value
      );
      if (fragment?.kind === Kind.FRAGMENT_DEFINITION) {
        most = Math.max(most, depth(document, fragment.selectionSet));
      }
    }
  }
  return most;
}

/** Every `Parent.field` coordinate selected (by field name; parents are not resolved). */
function fieldNames(document: DocumentNode): Set<string> {
  const names = new Set<string>();
  visit(document, { [Kind.FIELD]: (node) => void names.add(node.name.value) });
  return names;
}

Deno.test("issue 13 opgen: one seed gives one operation, other seeds give others", () => {
  equal(generateOperation(SCHEMA, { seed: 42 }), generateOperation(SCHEMA, { seed: 42 }));
  const distinct = new Set(SEEDS.map((seed) => generateOperation(SCHEMA, { seed })));
  ok(distinct.size > SEEDS.length / 2, `only ${distinct.size} distinct operations`);
});

Deno.test("issue 13 opgen: every generated operation is valid against the schema", () => {
  for (const seed of SEEDS) {
    const source = generateOperation(SCHEMA, { seed });
    deepStrictEqual(validate(SCHEMA, parse(source)).map((e) => e.message), [], source);
  }
});

Deno.test("issue 13 opgen: nesting never goes deeper than maxDepth below the root", () => {
  for (const maxDepth of [0, 1, 2]) {
    for (const seed of SEEDS) {
      const source = generateOperation(SCHEMA, { seed, maxDepth });
      const document = parse(source);
      const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
      if (operation?.kind !== Kind.OPERATION_DEFINITION) throw new Error("no operation");
      ok(
        depth(document, operation.selectionSet) <= maxDepth + 1,
        `maxDepth ${maxDepth}: ${source}`,
      );
    }
  }
});

Deno.test("issue 13 opgen: roots and excluded fields are respected", () => {
  for (const seed of SEEDS) {
    const source = generateOperation(SCHEMA, {
      seed,
      roots: ["search", "node"],
      exclude: ["Thing.parts", "Part.size"],
    });
    const names = fieldNames(parse(source));
    ok(!names.has("deep") && !names.has("count"), source);
    ok(!names.has("parts") && !names.has("size"), source);
  }
});

Deno.test("issue 13 opgen: a required argument without a value pool leaves its field out", () => {
  for (const seed of SEEDS) {
    ok(!fieldNames(parse(generateOperation(SCHEMA, { seed }))).has("things"));
  }
  const withPool = SEEDS.map((seed) =>
    generateOperation(SCHEMA, { seed, values: { "Query.things(filter:)": ["{ x: 1 }"] } })
  );
  ok(withPool.some((s) => s.includes("things(filter: { x: 1 })")));
});

Deno.test("issue 13 opgen: value pools by coordinate win over pools by type", () => {
  const sources = SEEDS.map((seed) =>
    generateOperation(SCHEMA, {
      seed,
      values: { "Query.search(term:)": ['"zz"'], String: ['"s"'] },
    })
  );
  ok(sources.some((s) => s.includes('search(term: "zz")')));
  ok(sources.every((s) => !s.includes('search(term: "s")')));
});

Deno.test("issue 13 opgen: seeds cover aliases, fragments, abstract types, arguments and directives", () => {
  const sources = SEEDS.map((seed) => generateOperation(SCHEMA, { seed }));
  const has = (pattern: RegExp) => sources.some((s) => pattern.test(s));
  ok(has(/\ba\d+: /), "aliases");
  ok(has(/^fragment F\d+ on /m), "named fragments");
  ok(has(/\.\.\. on (Thing|Part) /), "inline fragments on members of abstract types");
  ok(has(/\.\.\. \{/), "inline fragments without a type condition");
  ok(has(/__typename/), "__typename");
  ok(has(/name\(upper: (true|false)\)/), "optional arguments");
  ok(has(/@(skip|include)\(if: (true|false)\)/), "@skip/@include with a literal");
  ok(has(/@(skip|include)\(if: \$c\d+\)/), "@skip/@include with a variable");
  ok(has(/^query \(\$c1: Boolean!/), "declared variables");
});

Deno.test("issue 13 differential: an operation's gap id is a stable hash of its text", () => {
  equal(operationHash("{ a }"), operationHash("{ a }"));
  notEqual(operationHash("{ a }"), operationHash("{ b }"));
  equal(operationHash(""), "811c9dc5");
});

Deno.test("issue 13 opgen: each condition variable is run both ways (a draw and its complement)", () => {
  deepStrictEqual(drawConditions("{ a }", 3), [{}]);
  const source = "query ($c1: Boolean!, $c2: Boolean!) { a @skip(if: $c1) b @include(if: $c2) }";
  for (const seed of SEEDS) {
    const [one, other] = drawConditions(source, seed);
    deepStrictEqual(Object.keys(one!).sort(), ["c1", "c2"]);
    deepStrictEqual(other, { c1: !one!.c1, c2: !one!.c2 });
    deepStrictEqual(drawConditions(source, seed), [one, other]);
  }
});
