/**
 * Cost of the issue 14 edge checks on the benchmark query, against the whole
 * request path: the text depth scan and the operation limits (what `prepare`
 * adds before validation) next to a POST /graphql through the handler, cold
 * (a new query text each time: parse, limits, validation, normalization,
 * planning, execution, shaping) and warm (prepare and plan cached: the limits
 * do not run at all). Subgraphs answer from memory.
 * Run: `deno bench -A bench/limits_bench.ts`.
 *
 * @module
 */
import { parse } from "graphql";
import { parseConfig } from "../lib/config/mod.ts";
import {
  checkOperationLimits,
  checkTextDepth,
  DEFAULT_OPERATION_LIMITS,
  findIntrospectionField,
} from "../lib/engine/mod.ts";
import { createHandler } from "../lib/http/mod.ts";
import { silentLogger } from "../lib/log/mod.ts";
import { buildState } from "../lib/state/mod.ts";
import { BENCH_QUERY, BENCH_SUPERGRAPH } from "./_federation_fixture.ts";

let _sink: unknown;
const document = parse(BENCH_QUERY);

Deno.bench("limits: text depth scan + operation limits + introspection scan", {
  group: "limits",
  baseline: true,
}, () => {
  _sink = checkTextDepth(BENCH_QUERY, DEFAULT_OPERATION_LIMITS) ??
    checkOperationLimits(document, DEFAULT_OPERATION_LIMITS) ?? findIntrospectionField(document);
});

Deno.bench("limits: parse of the same text (reference)", { group: "limits" }, () => {
  _sink = parse(BENCH_QUERY);
});

// Whole requests: every subgraph answers with the same in-memory body per request body.
const users = Array.from({ length: 6 }, (_, i) => ({
  __typename: "User",
  id: `${i + 1}`,
  username: `user${i}`,
  name: `User ${i}`,
}));
const products = Array.from({ length: 9 }, (_, i) => ({
  __typename: "Product",
  upc: `${i + 1}`,
  name: `Product ${i}`,
  price: 100 + i,
  weight: 10 + i,
  inStock: i % 2 === 0,
  shippingEstimate: 5 + i,
}));
const review = (i: number) => ({
  __typename: "Review",
  id: `${i + 1}`,
  body: "A review body of a reasonable length. ".repeat(3),
  product: { __typename: "Product", upc: `${(i % 9) + 1}` },
  author: { __typename: "User", id: `${(i % 6) + 1}`, username: `user${i % 6}` },
});
const answers = new Map<string, string>();
function fetch(request: Request): Promise<Response> {
  return request.text().then((body) => {
    const cached = answers.get(body);
    if (cached) return new Response(cached);
    const { query, variables } = JSON.parse(body) as {
      query: string;
      variables: { representations?: { __typename: string; upc?: string; id?: string }[] };
    };
    const payload = query.includes("_entities")
      ? {
        data: {
          _entities: (variables.representations ?? []).map((r, i) =>
            r.__typename === "Product"
              ? { ...products[Number(r.upc) - 1], reviews: [review(i), review(i + 1)] }
              : r.__typename === "Review"
              ? review(i)
              : { ...users[Number(r.id) - 1], reviews: [review(i), review(i + 2)] }
          ),
        },
      }
      : { data: { users, topProducts: products.slice(0, 5) } };
    const text = JSON.stringify(payload);
    answers.set(body, text);
    return new Response(text);
  });
}

const state = await buildState({
  config: parseConfig({}),
  log: silentLogger,
  supergraphSdl: BENCH_SUPERGRAPH,
  operationFiles: [],
  traceKeyPem: null,
  fetch,
});
const handle = createHandler(() => state);
let counter = 0;

function post(query: string): Request {
  return new Request("http://router.bench/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });
}

Deno.bench(
  "request: POST /graphql, cold (new text: parse, limits, validate, plan, execute, shape)",
  {
    group: "limits",
  },
  async (b) => {
    const request = post(`${BENCH_QUERY}\n# ${counter++}`);
    b.start();
    _sink = await (await handle(request)).text();
    b.end();
  },
);

Deno.bench("request: POST /graphql, warm (prepare and plan cached: no limit check runs)", {
  group: "limits",
}, async (b) => {
  const request = post(BENCH_QUERY);
  b.start();
  _sink = await (await handle(request)).text();
  b.end();
});
