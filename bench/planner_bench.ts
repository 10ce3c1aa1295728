/**
 * Planner benchmarks (issue 8: cold plan of the benchmark query ≤ 5 ms, cache hit ≤ 20 µs).
 * The federation benchmark's supergraph and nested query are embedded so this runs on a
 * clean clone. Run: `deno bench -A bench/planner_bench.ts`.
 *
 * @module
 */
import { parse } from "graphql";
import { buildSupergraph } from "../lib/supergraph/mod.ts";
import { createEngine, planOf, prepare } from "../lib/engine/mod.ts";
import { normalizeOperation } from "../lib/engine/normalize.ts";
import { planOperation } from "../lib/engine/plan.ts";

/** `../shared/bench/federation/supergraph.graphql`. */
export const BENCH_SUPERGRAPH =
  'schema @link(url: "https://specs.apollo.dev/link/v1.0") @link(url: "https://specs.apollo.dev/join/v0.3", for: EXECUTION) {\n  query: Query\n}\n\ndirective @join__enumValue(graph: join__Graph!) repeatable on ENUM_VALUE\n\ndirective @join__graph(name: String!, url: String!) on ENUM_VALUE\n\ndirective @join__field(\n  graph: join__Graph\n  requires: join__FieldSet\n  provides: join__FieldSet\n  type: String\n  external: Boolean\n  override: String\n  usedOverridden: Boolean\n) repeatable on FIELD_DEFINITION | INPUT_FIELD_DEFINITION\n\ndirective @join__implements(graph: join__Graph!, interface: String!) repeatable on OBJECT | INTERFACE\n\ndirective @join__type(\n  graph: join__Graph!\n  key: join__FieldSet\n  extension: Boolean! = false\n  resolvable: Boolean! = true\n  isInterfaceObject: Boolean! = false\n) repeatable on OBJECT | INTERFACE | UNION | ENUM | INPUT_OBJECT | SCALAR\n\ndirective @join__unionMember(graph: join__Graph!, member: String!) repeatable on UNION\n\nscalar join__FieldSet\n\ndirective @link(url: String, as: String, for: link__Purpose, import: [link__Import]) repeatable on SCHEMA\n\nscalar link__Import\n\nenum link__Purpose {\n  """\n  `SECURITY` features provide metadata necessary to securely resolve fields.\n  """\n  SECURITY\n  """\n  `EXECUTION` features provide metadata necessary for operation execution.\n  """\n  EXECUTION\n}\n\nenum join__Graph {\n  ACCOUNTS @join__graph(name: "accounts", url: "http://127.0.0.1:14200/accounts")\n  INVENTORY @join__graph(name: "inventory", url: "http://127.0.0.1:14200/inventory")\n  PRODUCTS @join__graph(name: "products", url: "http://127.0.0.1:14200/products")\n  REVIEWS @join__graph(name: "reviews", url: "http://127.0.0.1:14200/reviews")\n}\n\ntype Query @join__type(graph: ACCOUNTS) @join__type(graph: INVENTORY) @join__type(graph: PRODUCTS) @join__type(graph: REVIEWS) {\n  me: User @join__field(graph: ACCOUNTS)\n  user(id: ID!): User @join__field(graph: ACCOUNTS)\n  users: [User] @join__field(graph: ACCOUNTS)\n  topProducts(first: Int = 5): [Product] @join__field(graph: PRODUCTS)\n}\n\ntype User @join__type(graph: ACCOUNTS, key: "id") @join__type(graph: REVIEWS, key: "id") {\n  id: ID!\n  name: String @join__field(graph: ACCOUNTS)\n  username: String @join__field(graph: ACCOUNTS) @join__field(graph: REVIEWS, external: true)\n  birthday: Int @join__field(graph: ACCOUNTS)\n  reviews: [Review] @join__field(graph: REVIEWS)\n}\n\ntype Product @join__type(graph: INVENTORY, key: "upc") @join__type(graph: PRODUCTS, key: "upc") @join__type(graph: REVIEWS, key: "upc") {\n  upc: String!\n  weight: Int @join__field(graph: INVENTORY, external: true) @join__field(graph: PRODUCTS)\n  price: Int @join__field(graph: INVENTORY, external: true) @join__field(graph: PRODUCTS)\n  inStock: Boolean @join__field(graph: INVENTORY)\n  shippingEstimate: Int @join__field(graph: INVENTORY, requires: "price weight")\n  name: String @join__field(graph: PRODUCTS)\n  reviews: [Review] @join__field(graph: REVIEWS)\n}\n\ntype Review @join__type(graph: REVIEWS, key: "id") {\n  id: ID!\n  body: String\n  product: Product\n  author: User @join__field(graph: REVIEWS, provides: "username")\n}\n';

/** `../shared/bench/federation/queries/federated.graphql`. */
export const BENCH_QUERY =
  "# Standard nested federation query (shape of the public graphql-gateways-benchmark\n# query): users -> reviews -> product -> reviews -> author -> reviews -> product,\n# and topProducts -> reviews -> author -> reviews -> product, with inventory\n# fields (inStock, shippingEstimate @requires(price weight)) on every Product.\n# Touches all four subgraphs with parallel and sequential entity fetches.\nfragment User on User {\n  id\n  username\n  name\n}\n\nfragment Review on Review {\n  id\n  body\n}\n\nfragment Product on Product {\n  inStock\n  name\n  price\n  shippingEstimate\n  upc\n  weight\n}\n\nquery TestQuery {\n  users {\n    ...User\n    reviews {\n      ...Review\n      product {\n        ...Product\n        reviews {\n          ...Review\n          author {\n            ...User\n            reviews {\n              ...Review\n              product {\n                ...Product\n              }\n            }\n          }\n        }\n      }\n    }\n  }\n  topProducts {\n    ...Product\n    reviews {\n      ...Review\n      author {\n        ...User\n        reviews {\n          ...Review\n          product {\n            ...Product\n          }\n        }\n      }\n    }\n  }\n}\n";

let _sink: unknown; // keep results reachable so V8 cannot drop the call
const model = buildSupergraph(BENCH_SUPERGRAPH);
const document = parse(BENCH_QUERY);
const engine = createEngine(model);
const prepared = prepare(engine, { query: BENCH_QUERY });
if (!prepared.ok) throw new Error("The benchmark query does not validate");
const operation = prepared.operation;
planOf(engine, operation); // warm the cache

Deno.bench("planner: cold (normalize + plan) of the benchmark query", {
  group: "planner",
  baseline: true,
}, () => {
  _sink = planOperation(model, normalizeOperation(model.apiSchema, document));
});

Deno.bench("planner: plan cache hit (prepare + plan lookup)", { group: "planner" }, () => {
  const again = prepare(engine, { query: BENCH_QUERY });
  if (again.ok) _sink = planOf(engine, again.operation);
});

Deno.bench("normalize: the benchmark query", { group: "stages" }, () => {
  _sink = normalizeOperation(model.apiSchema, document);
});

Deno.bench("supergraph: build the model of the benchmark supergraph", { group: "stages" }, () => {
  _sink = buildSupergraph(BENCH_SUPERGRAPH);
});
