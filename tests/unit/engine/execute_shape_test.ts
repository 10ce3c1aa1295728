import assert from "node:assert/strict";
import { buildSchema, execute, type GraphQLFieldResolver, parse } from "graphql";
import { normalizeOperation } from "../../../lib/engine/prepare/normalize.ts";
import { shapeResponse } from "../../../lib/engine/execute/shape.ts";

// Issue 45: the shaper keeps a subgraph answer that already is the selection
// as it is (no copy), checking leaves and lists of leaves in tight loops. Every
// answer below is shaped and compared, printed (key order counts), with what
// graphql-js answers executing the same query over the same data (reading
// each field by its response key, as the subgraph answered it).

const SDL = `type Query { regions: [Region!]! }
type Region {
  id: ID! name: String score: Float weights: [Float!]! counts: [Int] labels: [String!]
  open: Boolean stores: [Store!] items: [Item]
}
type Store { id: ID! rating: Float! counts: [Int!]! }
interface Item { id: ID! price: Float! }
type Book implements Item { id: ID! price: Float! pages: Int tags: [String!]! }
type Tool implements Item { id: ID! price: Float! weight: Float }`;

const QUERY = `query Nested {
  regions {
    ...R
    stores { id rating counts }
    items { __typename ... on Book { id price pages tags } ...T }
  }
}
fragment R on Region { id name score weights counts labels open alias: name skipped: id @skip(if: true) }
fragment T on Tool { id price weight }`;

const schema = buildSchema(SDL);
const document = parse(QUERY);
const selection = normalizeOperation(schema, document).selection;

/** Deterministic data with every field of every type. */
function fullData(): Record<string, unknown> {
  return {
    regions: [0, 1, 2].map((r) => ({
      id: `r${r}`,
      name: `Region ${r}`,
      alias: `Region ${r}`,
      score: r / 7,
      weights: [0.5, r / 3, 1e21, -2.25],
      counts: [r, r * 1000, -7],
      labels: [`l${r}`, "é ✓", ""],
      open: r % 2 === 0,
      stores: [0, 1].map((s) => ({ id: `s${r}-${s}`, rating: s + 0.1, counts: [s, 2] })),
      items: [0, 1, 2, 3].map((i) =>
        i % 2 === 0
          ? { __typename: "Book", id: `b${i}`, price: i + 0.99, pages: 100 + i, tags: ["x", "y"] }
          : { __typename: "Tool", id: `t${i}`, price: i * 1.5, weight: i / 3 }
      ),
    })),
  };
}

/** Reads each field by its response key (the subgraph answered by response keys). */
const byKey: GraphQLFieldResolver<Record<string, unknown>, unknown> = (source, _args, _c, info) =>
  source[info.path.key as string];

/** graphql-js's answer over `data`: data printed, error paths sorted. */
function reference(data: Record<string, unknown>): { data: string; paths: string[] } {
  const result = execute({
    schema,
    document,
    rootValue: structuredClone(data),
    fieldResolver: byKey,
    typeResolver: (value) => (value as { __typename?: string }).__typename,
  }) as { data?: unknown; errors?: readonly { path?: readonly unknown[] }[] };
  return {
    data: JSON.stringify(result.data ?? null),
    paths: (result.errors ?? []).map((e) => JSON.stringify(e.path)).sort(),
  };
}

/** The subgraph's answer: exactly the selection (graphql-js's answer, parsed from its JSON). */
function answer(): Record<string, unknown> {
  return JSON.parse(reference(fullData()).data);
}

function shaped(data: Record<string, unknown>) {
  const errors: { path?: readonly (string | number)[] }[] = [];
  const out = shapeResponse(data, selection, { errors: errors as never[] });
  return {
    out,
    data: JSON.stringify(out),
    paths: errors.map((e) => JSON.stringify(e.path)).sort(),
  };
}

Deno.test("issue 45: an answer that is exactly the selection (fragments, aliases, @skip, an interface, lists of leaves) is returned as it is, not copied", () => {
  const data = answer();
  const result = shaped(data);
  assert.equal(result.out, data);
  assert.deepEqual(result.paths, []);
  assert.equal(result.data, reference(fullData()).data);
});

/** Changes to the exact answer, each one the fast path must not accept as it is. */
const CHANGES: Record<string, (data: { regions: Record<string, unknown>[] }) => void> = {
  "an extra field deep down": (d) => {
    ((d.regions[1]!.items as Record<string, unknown>[])[2]!).extra = 5;
  },
  "an extra field at the root": (d) => {
    (d as Record<string, unknown>).more = 1;
  },
  "an extra item field on a store": (d) => {
    ((d.regions[0]!.stores as Record<string, unknown>[])[1]!).secret = "x";
  },
  "fields in another order": (d) => {
    const { id, ...rest } = d.regions[2]!;
    d.regions[2] = { ...rest, id };
  },
  "a float in an Int list": (d) => {
    (d.regions[1]!.counts as unknown[])[1] = 1.5;
  },
  "an integer beyond 32 bits in an Int list": (d) => {
    (d.regions[0]!.counts as unknown[])[2] = 2 ** 40;
  },
  "a numeric string in an Int list": (d) => {
    (d.regions[0]!.counts as unknown[])[0] = "3";
  },
  "a string in a non-null Int list": (d) => {
    ((d.regions[2]!.stores as Record<string, unknown>[])[0]!.counts as unknown[])[1] = "x";
  },
  "null in a non-null Float list (bubbles to the root)": (d) => {
    (d.regions[1]!.weights as unknown[])[3] = null;
  },
  "a number in a String list": (d) => {
    (d.regions[0]!.labels as unknown[])[1] = 5;
  },
  "an object in a String list": (d) => {
    (d.regions[0]!.labels as unknown[])[0] = { a: 1 };
  },
  "a string where a list belongs": (d) => {
    d.regions[1]!.labels = "abc";
  },
  "a number for an ID": (d) => {
    d.regions[2]!.id = 7;
  },
  "a string for a Float": (d) => {
    d.regions[0]!.score = "1.5";
  },
  "a wrong kind for a Boolean": (d) => {
    d.regions[1]!.open = "yes";
  },
  "a missing nullable field": (d) => {
    delete ((d.regions[0]!.items as Record<string, unknown>[])[0]!).pages;
  },
  "a missing non-null field (bubbles to the list)": (d) => {
    delete ((d.regions[1]!.stores as Record<string, unknown>[])[1]!).rating;
  },
  "an item of no possible type": (d) => {
    ((d.regions[2]!.items as Record<string, unknown>[])[1]!).__typename = "Shelf";
  },
  "an item of another possible type": (d) => {
    ((d.regions[2]!.items as Record<string, unknown>[])[0]!).__typename = "Tool";
  },
  "an alias holding another value than the field": (d) => {
    d.regions[0]!.alias = 12;
  },
};

for (const [name, change] of Object.entries(CHANGES)) {
  Deno.test(`issue 45: an answer with ${name} is shaped as graphql-js answers it (data and error paths)`, () => {
    const data = answer();
    change(data as { regions: Record<string, unknown>[] });
    const expected = reference(data);
    const result = shaped(data);
    assert.notEqual(result.out, data, "the changed answer must not be passed as it is");
    assert.equal(result.data, expected.data);
    assert.deepEqual(result.paths, expected.paths);
  });
}

Deno.test("issue 45: nulls where the schema allows them are the selection too: the answer is kept as it is", () => {
  const data = answer() as { regions: Record<string, unknown>[] };
  (data.regions[0]!.items as unknown[])[3] = null;
  (data.regions[1]!.counts as unknown[])[0] = null;
  data.regions[2]!.stores = null;
  data.regions[2]!.score = null;
  const result = shaped(data);
  assert.equal(result.out, data);
  assert.deepEqual(result.paths, []);
  assert.equal(result.data, reference(data).data);
});

Deno.test("issue 45: the untouched parts of a changed answer are still kept as they are", () => {
  const data = answer() as { regions: Record<string, unknown>[] };
  (data.regions[1]!.counts as unknown[])[1] = 1.5;
  const out = shapeResponse(data, selection, { errors: [] }) as { regions: unknown[] };
  assert.notEqual(out.regions, data.regions);
  assert.equal(out.regions[0], data.regions[0]);
  assert.equal(out.regions[2], data.regions[2]);
  const region = out.regions[1] as Record<string, unknown>;
  assert.notEqual(region, data.regions[1]);
  assert.equal(region.weights, data.regions[1]!.weights);
  assert.deepEqual(region.counts, [1, null, -7]);
});

Deno.test("issue 45: strings kept as they are still count toward the response limit", () => {
  const data = answer() as { regions: Record<string, unknown>[] };
  (data.regions[0]!.labels as string[])[0] = "z".repeat(10_000);
  const tooLarge = () => new RangeError("too large");
  assert.throws(
    () => shapeResponse(data, selection, { errors: [], maxBytes: 9_000, tooLarge }),
    /too large/,
  );
  data.regions[0]!.labels = ["a"];
  data.regions[0]!.name = "z".repeat(10_000);
  data.regions[0]!.alias = "z".repeat(10_000);
  assert.throws(
    () => shapeResponse(data, selection, { errors: [], maxBytes: 9_000, tooLarge }),
    /too large/,
  );
});
