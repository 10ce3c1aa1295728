/**
 * Issue 41: demand control over HTTP — a real router (`startRouter`) in front of real federation
 * subgraphs (`@apollo/subgraph`) that declare `@cost` and `@listSize` (Federation 2.9), composed
 * by `gw-router compose`'s composer. Run with `config.production.yaml`'s settings (dev mode off,
 * access logs, Prometheus metrics) and with MCP's `execute_graphql` and operation tools.
 */
import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import type { Logger } from "../../lib/log/mod.ts";
import { type RunningSubgraph, serveSubgraph } from "../../demo/subgraph.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@cost", "@listSize"])';

const PRODUCTS = Array.from({ length: 10 }, (_, i) => ({
  id: `p${i}`,
  upc: String(i),
  name: `Product ${i}`,
  price: 10 + i,
}));

function startSubgraphs(
  seen: string[],
): { products: RunningSubgraph; reviews: RunningSubgraph } {
  const products = serveSubgraph("products", {
    typeDefs: `${LINK}
type Query {
  products(first: Int = 5): [Product!]! @listSize(slicingArguments: ["first"])
  productPage(first: Int!): ProductConnection! @listSize(slicingArguments: ["first"], sizedFields: ["edges"])
  search(text: String!): [SearchResult!]! @listSize(assumedSize: 4, requireOneSlicingArgument: false)
  node(id: ID!): Node
}
type Mutation { restock(upc: ID!, amount: Int!): Product @cost(weight: 5) }
interface Node { id: ID! }
union SearchResult = Product | Category
type Product implements Node @key(fields: "upc") { id: ID! upc: ID! name: String price: Int @cost(weight: 2) }
type Category implements Node { id: ID! name: String }
type ProductConnection { edges: [ProductEdge!]! total: Int }
type ProductEdge { node: Product! }`,
    resolvers: {
      Query: {
        products: (_: unknown, args: { first: number }) => PRODUCTS.slice(0, args.first),
        productPage: (_: unknown, args: { first: number }) => ({
          total: PRODUCTS.length,
          edges: PRODUCTS.slice(0, args.first).map((node) => ({ node })),
        }),
        search: () => [{ ...PRODUCTS[0], __typename: "Product" }, {
          id: "c1",
          name: "Tools",
          __typename: "Category",
        }],
        node: (_: unknown, args: { id: string }) => ({
          ...PRODUCTS.find((p) => p.id === args.id),
          __typename: "Product",
        }),
      },
      Mutation: {
        restock: (_: unknown, args: { upc: string }) => PRODUCTS.find((p) => p.upc === args.upc),
      },
      Node: { __resolveType: (o: { __typename: string }) => o.__typename },
      SearchResult: { __resolveType: (o: { __typename: string }) => o.__typename },
      Product: {
        __resolveReference: (ref: { upc: string }) => PRODUCTS.find((p) => p.upc === ref.upc),
      },
    },
  }, { onRequest: () => seen.push("products") });
  const reviews = serveSubgraph("reviews", {
    typeDefs: `${LINK}
type Product @key(fields: "upc") { upc: ID! reviews: [Review!]! @listSize(assumedSize: 3) }
type Review { body: String }`,
    resolvers: {
      // One review each: shorter than the assumed 3.
      Product: { reviews: (p: { upc: string }) => [{ body: `Review of ${p.upc}` }] },
    },
  }, { onRequest: () => seen.push("reviews") });
  return { products, reviews };
}

interface Fixture {
  readonly router: RunningRouter;
  /** Subgraph requests received, by subgraph name, in order. */
  readonly seen: string[];
  readonly logs: { msg: string; fields: Record<string, unknown> }[];
  close(): Promise<void>;
}

/** The production config (`config.production.yaml`) pointed at the test's files, plus `extra`. */
async function productionConfig(extra: Record<string, unknown>, operationsDir: string) {
  const raw = parseYaml(
    await Deno.readTextFile(new URL("../../config.production.yaml", import.meta.url)),
  ) as Record<string, unknown>;
  return parseConfig({
    ...raw,
    listen_addr: "127.0.0.1:0",
    supergraph_path: "unused.graphql",
    operations_dir: operationsDir,
    // No identity provider is reachable here: tokens are not part of this test.
    authentication: { jwt: { jwks: [] } },
    mcp: {
      enabled: true,
      session_secret: "demand-control-e2e-secret-0123456789",
      enable_arbitrary_operations: true,
      server: { base_url: "http://127.0.0.1" },
    },
    telemetry: { metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:0" } } },
    shutdown_delay: "0s",
    grace_period: "1s",
    ...extra,
  });
}

async function start(demandControl: Record<string, unknown>): Promise<Fixture> {
  const seen: string[] = [];
  const { products, reviews } = startSubgraphs(seen);
  const composed = composeSupergraph([
    { name: "products", url: products.url, sdl: products.sdl },
    { name: "reviews", url: reviews.url, sdl: reviews.sdl },
  ]);
  if (!composed.ok) throw new Error(JSON.stringify(composed.errors));
  assert.match(composed.supergraphSdl, /@listSize\(/, "compose keeps @listSize");
  const operationsDir = await Deno.makeTempDir({ prefix: "gw_cost_ops_" });
  await Deno.writeTextFile(
    `${operationsDir}/TopProducts.graphql`,
    "query TopProducts($n: Int) { products(first: $n) { name } }",
  );
  const logs: { msg: string; fields: Record<string, unknown> }[] = [];
  const record = (msg: string, fields?: Record<string, unknown>) =>
    logs.push({ msg, fields: fields ?? {} });
  const log: Logger = { debug: record, info: record, warn: record, error: record };
  const config = await productionConfig({ demand_control: demandControl }, operationsDir);
  const router = await startRouter({ config, supergraphSdl: composed.supergraphSdl, log });
  return {
    router,
    seen,
    logs,
    async close() {
      await router.shutdown();
      await Promise.all([products.close(), reviews.close()]);
      await Deno.remove(operationsDir, { recursive: true });
    },
  };
}

async function graphql(
  fixture: Fixture,
  query: string,
  variables: Record<string, unknown> = {},
  // deno-lint-ignore no-explicit-any
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${fixture.router.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/graphql-response+json" },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.json() };
}

const enforce = (max: number, more: Record<string, unknown> = {}) => ({
  enabled: true,
  mode: "enforce",
  strategy: { static_estimated: { list_size: 10, max, ...more } },
  expose_in_extensions: true,
});
const PAGE = "query Page($n: Int) { products(first: $n) { name } }";

Deno.test("issue 41 e2e (production settings): enforce admits at exactly max and refuses above it, slicing by variable", async () => {
  const fixture = await start(enforce(5));
  try {
    const atMax = await graphql(fixture, PAGE, { n: 5 });
    assert.equal(atMax.status, 200);
    assert.equal(atMax.body.data.products.length, 5);
    assert.deepEqual(atMax.body.extensions.cost, {
      estimated: 5,
      actual: 5,
      max: 5,
      result: "COST_OK",
      strategy: "static_estimated",
    });
    const before = fixture.seen.length;
    const over = await graphql(fixture, PAGE, { n: 6 });
    assert.equal(fixture.seen.length, before, "refused before any fetch");
    // A request error: 400 under application/graphql-response+json (GraphQL over HTTP).
    assert.equal(over.status, 400);
    assert.equal(over.body.data, undefined);
    const [error] = over.body.errors;
    assert.equal(error.extensions.code, "COST_ESTIMATED_TOO_EXPENSIVE");
    assert.equal(error.extensions["cost.estimated"], 6);
    assert.equal(error.extensions["cost.max"], 5);
    assert.match(error.message, /estimated cost 6 is above the maximum 5/);
    // The access log line carries the figures.
    const lines = fixture.logs.filter((l) => l.msg === "request");
    assert.deepEqual(
      lines.map((l) => [l.fields.cost_estimated, l.fields.cost_actual, l.fields.cost_result]),
      [
        [5, 5, "COST_OK"],
        [6, null, "COST_ESTIMATED_TOO_EXPENSIVE"],
      ],
    );
  } finally {
    await fixture.close();
  }
});

Deno.test("issue 41 e2e: sizedFields on a connection, an abstract type, a mutation", async () => {
  const fixture = await start(enforce(1000));
  try {
    // productPage 1 + edges 3 × (edge 1 + node 1).
    const page = await graphql(
      fixture,
      "{ productPage(first: 3) { total edges { node { name } } } }",
    );
    assert.equal(page.body.extensions.cost.estimated, 7);
    assert.equal(page.body.extensions.cost.actual, 7);
    // A union list (assumedSize 4) and its fragments; an interface with a @cost field.
    const search = await graphql(
      fixture,
      '{ search(text: "a") { ... on Product { name price } ... on Category { name } } }',
    );
    assert.equal(search.body.extensions.cost.estimated, 4 * (1 + 2));
    assert.equal(search.body.data.search.length, 2);
    // Actual: two results (1 each) and the product's price (2).
    assert.equal(search.body.extensions.cost.actual, 4);
    const node = await graphql(fixture, '{ node(id: "p1") { id ... on Product { price } } }');
    assert.equal(node.body.extensions.cost.estimated, 3);
    // A mutation: 10 + restock's @cost(weight: 5).
    const mutation = await graphql(fixture, 'mutation { restock(upc: "1", amount: 2) { name } }');
    assert.equal(mutation.body.extensions.cost.estimated, 15);
    assert.equal(mutation.body.data.restock.name, "Product 1");
  } finally {
    await fixture.close();
  }
});

Deno.test("issue 41 e2e: measure admits over max and records both histograms; actual on a list shorter than assumed", async () => {
  const fixture = await start({ ...enforce(10), mode: "measure" });
  try {
    // products 2; reviews' _entities 10 × (1 + reviews 3) = 40: estimate 42 > 10, admitted.
    const { body } = await graphql(fixture, "{ products(first: 2) { name reviews { body } } }");
    assert.equal(body.errors, undefined);
    assert.equal(body.data.products[1].reviews[0].body, "Review of 1");
    // Two products with one review each (3 assumed).
    assert.deepEqual(body.extensions.cost, {
      estimated: 42,
      actual: 4,
      max: 10,
      result: "COST_ESTIMATED_TOO_EXPENSIVE",
      strategy: "static_estimated",
    });
    const metrics = await (await fetch(fixture.router.metricsUrl!)).text();
    assert.match(
      metrics,
      /gw_router_cost_estimated_sum\{result="COST_ESTIMATED_TOO_EXPENSIVE"\} 42/,
    );
    assert.match(metrics, /gw_router_cost_actual_sum\{result="COST_ESTIMATED_TOO_EXPENSIVE"\} 4/);
    assert.match(
      metrics,
      /gw_router_cost_estimated_count\{result="COST_ESTIMATED_TOO_EXPENSIVE"\} 1/,
    );
  } finally {
    await fixture.close();
  }
});

Deno.test("issue 41 e2e: a subgraph over its budget is not asked, its fields null with an error", async () => {
  const fixture = await start(enforce(1000, { subgraph: { subgraphs: { reviews: { max: 39 } } } }));
  try {
    const { body } = await graphql(fixture, "{ products(first: 2) { name reviews { body } } }");
    const error = body.errors.find((e: { extensions: { code: string } }) =>
      e.extensions.code === "SUBGRAPH_COST_ESTIMATED_TOO_EXPENSIVE"
    );
    assert.ok(error, JSON.stringify(body.errors));
    assert.match(
      error.message,
      /subgraph reviews: its part of the estimated cost, 40, is above its maximum 39/,
    );
    // products was asked, reviews never; its non-null fields null their parents up to `data`.
    assert.deepEqual(fixture.seen, ["products"]);
    assert.equal(body.data, null);
  } finally {
    await fixture.close();
  }
});

async function mcpCall(fixture: Fixture, session: string | null, body: Record<string, unknown>) {
  const response = await fetch(`${fixture.router.url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...(session === null ? {} : { "mcp-session-id": session }),
    },
    body: JSON.stringify({ jsonrpc: "2.0", ...body }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  return {
    session: response.headers.get("mcp-session-id"),
    body: text === "" ? null : JSON.parse(text),
  };
}

Deno.test("issue 41 e2e: MCP's execute_graphql and operation tools answer a tool error the agent can act on", async () => {
  const fixture = await start(enforce(5));
  try {
    const init = await mcpCall(fixture, null, {
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    });
    assert.ok(init.session);
    await mcpCall(fixture, init.session, { method: "notifications/initialized" });
    const inline = await mcpCall(fixture, init.session, {
      id: 2,
      method: "tools/call",
      params: { name: "execute_graphql", arguments: { query: PAGE, variables: { n: 50 } } },
    });
    assert.equal(inline.body.result.isError, true);
    const text = inline.body.result.content[0].text;
    assert.match(text, /estimated cost 50 is above the maximum 5/);
    assert.match(text, /smaller page size/);
    const tool = await mcpCall(fixture, init.session, {
      id: 3,
      method: "tools/call",
      params: { name: "execute_operation_top_products", arguments: { n: 9 } },
    });
    assert.equal(tool.body.result.isError, true);
    assert.match(
      tool.body.result.content[0].text,
      /estimated cost 9 is above the maximum 5/,
    );
    // The agent asks for a smaller page: admitted.
    const fixed = await mcpCall(fixture, init.session, {
      id: 4,
      method: "tools/call",
      params: { name: "execute_operation_top_products", arguments: { n: 5 } },
    });
    assert.equal(fixed.body.result.isError, false);
  } finally {
    await fixture.close();
  }
});

Deno.test("issue 41 e2e: Connect answers resource_exhausted over max", async () => {
  const fixture = await start(enforce(5));
  try {
    const response = await fetch(`${fixture.router.url}/service.v1.GraphService/TopProducts`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1" },
      body: JSON.stringify({ n: 6 }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = await response.json();
    assert.equal(response.status, 429);
    assert.equal(body.code, "resource_exhausted");
    assert.match(body.message, /estimated cost 6 is above the maximum 5/);
  } finally {
    await fixture.close();
  }
});
