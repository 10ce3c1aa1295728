/**
 * Response shaper and executor benchmarks: shaping the benchmark query's merged data
 * (about 53 kB of JSON), and a whole `execute` with subgraph answers served from memory.
 * Run: `deno bench -A bench/shape_bench.ts`.
 *
 * @module
 */
import { buildSupergraph } from "../lib/supergraph/mod.ts";
import { createEngine, execute, prepare } from "../lib/engine/mod.ts";
import { normalizeOperation } from "../lib/engine/prepare/normalize.ts";
import { shapeResponse } from "../lib/engine/execute/shape.ts";
import { BENCH_QUERY, BENCH_SUPERGRAPH } from "./_federation_fixture.ts";
import { parse } from "graphql";

let _sink: unknown;
const model = buildSupergraph(BENCH_SUPERGRAPH);
const selection = normalizeOperation(model.apiSchema, parse(BENCH_QUERY)).selection;

// Deterministic data in the shape the subgraphs return (6 users, 9 products, 12 reviews).
const users = Array.from(
  { length: 6 },
  (_, i) => ({ id: `${i + 1}`, username: `user${i}`, name: `User ${i}` }),
);
const products = Array.from({ length: 9 }, (_, i) => ({
  upc: `${i + 1}`,
  name: `Product ${i}`,
  price: 100 + i,
  weight: 10 + i,
  inStock: i % 2 === 0,
  shippingEstimate: 5 + i,
}));
const reviews = Array.from({ length: 12 }, (_, i) => ({
  id: `${i + 1}`,
  body: "A review body of a reasonable length for a product that arrived on time. ".repeat(2),
  product: i % 9,
  author: i % 6,
}));

function reviewTree(depth: number, filter: (r: typeof reviews[number]) => boolean): unknown[] {
  return reviews.filter(filter).map((r) => {
    const out: Record<string, unknown> = { __typename: "Review", id: r.id, body: r.body };
    if (depth > 0) {
      const p = products[r.product]!;
      const u = users[r.author]!;
      out.product = {
        __typename: "Product",
        ...p,
        reviews: reviewTree(depth - 1, (x) => x.product === r.product),
      };
      out.author = {
        __typename: "User",
        ...u,
        reviews: reviewTree(depth - 1, (x) => x.author === r.author),
      };
    }
    return out;
  });
}

function merged(): Record<string, unknown> {
  return {
    users: users.map((u, i) => ({
      __typename: "User",
      ...u,
      reviews: reviewTree(2, (r) => r.author === i),
    })),
    topProducts: products.slice(0, 5).map((p, i) => ({
      __typename: "Product",
      ...p,
      reviews: reviewTree(2, (r) => r.product === i),
    })),
  };
}

const data = merged();
console.log(`shape input: ${JSON.stringify(data).length} bytes of JSON`);

Deno.bench("shape: benchmark query response", { group: "shape", baseline: true }, () => {
  _sink = shapeResponse(data, selection, { errors: [] });
});

Deno.bench("shape: JSON.stringify of the same data (reference)", { group: "shape" }, () => {
  _sink = JSON.stringify(data);
});

// A whole execute: subgraph answers from memory (same bytes for the same body).
const answers = new Map<string, string>();
function fetch(request: Request): Promise<Response> {
  return request.text().then((body) => {
    const cached = answers.get(body);
    if (cached) return new Response(cached);
    const { query, variables } = JSON.parse(body) as {
      query: string;
      variables: { representations?: { __typename: string; upc?: string; id?: string }[] };
    };
    let payload: unknown;
    if (query.includes("_entities")) {
      payload = {
        data: {
          _entities: (variables.representations ?? []).map((r) =>
            r.__typename === "Product"
              ? { ...products[Number(r.upc) - 1], reviews: reviewTree(0, () => true).slice(0, 3) }
              : { ...users[Number(r.id) - 1], reviews: reviewTree(0, () => true).slice(0, 3) }
          ),
        },
      };
    } else {
      payload = {
        data: {
          users: users.map((u) => ({ __typename: "User", ...u })),
          topProducts: products.slice(0, 5).map((p) => ({ __typename: "Product", ...p })),
        },
      };
    }
    const text = JSON.stringify(payload);
    answers.set(body, text);
    return new Response(text);
  });
}
const engine = createEngine(model, { fetch });
Deno.bench(
  "execute: benchmark query, subgraphs answered from memory",
  { group: "execute" },
  async () => {
    const prepared = prepare(engine, { query: BENCH_QUERY });
    if (prepared.ok) _sink = await execute(engine, prepared.operation);
  },
);
