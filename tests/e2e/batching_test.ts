/**
 * Issue 43, query batching: Apollo Client's `BatchHttpLink` (npm `@apollo/client`)
 * against the router in front of the demo subgraphs, on `config.yaml` and on
 * `config.production.yaml`'s settings (dev mode off, access logs, Prometheus
 * metrics); each refusal of a batch; the rate limit charged per operation.
 */
import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { ApolloClient, gql, InMemoryCache } from "@apollo/client";
import { BatchHttpLink } from "@apollo/client/link/batch-http";
import { type RunningDemo, startDemoSubgraphs } from "../../demo/subgraphs/mod.ts";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { type Logger, silentLogger } from "../../lib/log/mod.ts";

const ROOT = new URL("../../", import.meta.url);

interface Setup {
  readonly router: RunningRouter;
  readonly demo: RunningDemo;
  /** Subgraph calls, by subgraph name. */
  readonly calls: string[];
}

async function withRouter(
  config: { readonly path?: string; readonly raw?: Record<string, unknown> },
  fn: (setup: Setup) => Promise<void>,
  options: { readonly log?: Logger; readonly env?: Record<string, string> } = {},
): Promise<void> {
  const calls: string[] = [];
  const demo = startDemoSubgraphs({ basePort: 0, onRequest: (subgraph) => calls.push(subgraph) });
  let router: RunningRouter | undefined;
  try {
    router = await startRouter({
      ...(config.path ? { configPath: config.path } : {}),
      ...(config.raw
        ? { config: parseConfig(config.raw, { env: {}, baseDir: ROOT.pathname }) }
        : {}),
      env: { LISTEN_ADDR: "127.0.0.1:0", ...options.env },
      supergraphSdl: demo.supergraphSdl,
      log: options.log ?? silentLogger,
    });
    await fn({ router, demo, calls });
  } finally {
    await router?.shutdown();
    await demo.close();
  }
}

/** Apollo Client over `BatchHttpLink`, counting the HTTP requests it makes. */
function batchClient(url: string, posts: unknown[][]): ApolloClient {
  return new ApolloClient({
    link: new BatchHttpLink({
      uri: `${url}/graphql`,
      batchMax: 10,
      batchInterval: 20,
      fetch: async (input, init) => {
        posts.push(JSON.parse(String(init?.body)));
        return await fetch(input, init);
      },
    }),
    cache: new InMemoryCache(),
  });
}

const PRODUCT = gql`query Product { product(upc: "1") { upc name } }`;
const USER = gql`query User { user(id: "1") { id name } }`;
const BROKEN = gql`query Broken { product(upc: "1") { noSuchField } }`;

/** A batch of three sent by Apollo Client, the third one failing validation. */
async function batchOfThree(url: string): Promise<void> {
  const posts: unknown[][] = [];
  const client = batchClient(url, posts);
  const [product, user, broken] = await Promise.allSettled([
    client.query({ query: PRODUCT }),
    client.query({ query: USER }),
    client.query({ query: BROKEN, errorPolicy: "all" }),
  ]);
  // One HTTP request carried the three operations.
  assert.equal(posts.length, 1);
  assert.equal(posts[0]?.length, 3);
  assert.equal(product.status, "fulfilled");
  assert.equal(user.status, "fulfilled");
  assert.equal(broken.status, "fulfilled");
  if (product.status !== "fulfilled" || user.status !== "fulfilled") return;
  if (broken.status !== "fulfilled") return;
  assert.deepEqual(product.value.data, {
    product: { __typename: "Product", upc: "1", name: "Oak Dining Table" },
  });
  assert.equal((user.value.data as { user: { id: string } }).user.id, "1");
  assert.equal(broken.value.data, undefined);
  assert.match(String(broken.value.error?.message), /noSuchField/);
}

Deno.test("issue 43: Apollo Client's BatchHttpLink sends three operations in one request; the failing one fails alone (config.yaml)", async () => {
  await withRouter({ path: new URL("config.yaml", ROOT).pathname }, async ({ router, calls }) => {
    await batchOfThree(router.url);
    // Each valid operation fetched its subgraph; the invalid one fetched nothing.
    assert.deepEqual([...calls].sort(), ["accounts", "products"]);
  }, { env: { BATCHING_ENABLED: "true" } });
});

/** config.production.yaml, made runnable on a test host (no identity provider, ports 0). */
async function productionConfig(): Promise<Record<string, unknown>> {
  const raw = parseYaml(
    await Deno.readTextFile(new URL("config.production.yaml", ROOT)),
  ) as Record<string, unknown>;
  return {
    ...raw,
    listen_addr: "127.0.0.1:0",
    operations_dir: "operations",
    mcp: { enabled: false },
    authentication: { jwt: { jwks: [] } },
    telemetry: { metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:0" } } },
    batching: { enabled: true, maximum_size: 3 },
    shutdown_delay: "0s",
  };
}

Deno.test("issue 43: a batch on config.production.yaml's settings: each operation counted in metrics, one access log line", async () => {
  const lines: Record<string, unknown>[] = [];
  const log: Logger = {
    ...silentLogger,
    info: (msg, fields) => {
      if (msg === "request") lines.push(fields ?? {});
    },
  };
  await withRouter({ raw: await productionConfig() }, async ({ router }) => {
    await batchOfThree(router.url);
    const metrics = await (await fetch(router.metricsUrl!)).text();
    for (const name of ["Product", "User", "Broken"]) {
      assert.match(
        metrics,
        new RegExp(`gw_router_operations_total\\{[^}]*operation_name="${name}"[^}]*\\} 1`),
        name,
      );
    }
    // Over maximum_size (3): refused whole, before anything runs.
    const four = await post(
      router.url,
      Array.from({ length: 4 }, () => ({ query: "{ __typename }" })),
    );
    assert.equal(four.status, 400);
    assert.equal(codeOf(four.json), "BATCH_LIMIT_EXCEEDED");
    const after = await (await fetch(router.metricsUrl!)).text();
    assert.match(after, /gw_router_batches_total\{outcome="answered"\} 1\n/);
    assert.match(after, /gw_router_batches_total\{outcome="too_large"\} 1\n/);
    assert.match(after, /gw_router_batch_operations_total 3\n/);
    // The access log writes one line per HTTP request, a batch included.
    assert.equal(lines.length, 2);
    assert.equal(lines[0]?.status, 200);
    assert.equal(lines[0]?.method, "POST");
    assert.equal(lines[1]?.status, 400);
  }, { log });
});

async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown; headers: Headers }> {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json(), headers: response.headers };
}

function codeOf(json: unknown): unknown {
  return (json as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code;
}

const HELLO = { query: "{ __typename }" };

Deno.test("issue 43: batching is off by default: an array body is a 400 BATCHING_NOT_ENABLED", async () => {
  await withRouter({ path: new URL("config.yaml", ROOT).pathname }, async ({ router, calls }) => {
    const { status, json } = await post(router.url, [HELLO, HELLO]);
    assert.equal(status, 400);
    assert.equal(codeOf(json), "BATCHING_NOT_ENABLED");
    assert.deepEqual(calls, []);
  });
});

Deno.test("issue 43: batch refusals and item failures: empty, too many, nested, not objects, bad JSON", async () => {
  await withRouter({ path: new URL("config.yaml", ROOT).pathname }, async ({ router }) => {
    const empty = await post(router.url, []);
    assert.equal(empty.status, 400);
    assert.equal(codeOf(empty.json), "BAD_REQUEST");
    const many = await post(router.url, [HELLO, HELLO, HELLO]);
    assert.equal(many.status, 400);
    assert.equal(codeOf(many.json), "BATCH_LIMIT_EXCEEDED");
    assert.match(
      JSON.stringify(many.json),
      /3 operations, more than the 2 allowed \(batching\.maximum_size\)/,
    );
    // Items that are not operations fail alone; the good one answers.
    const mixed = await post(router.url, [[HELLO], HELLO]);
    assert.equal(mixed.status, 200);
    const [nested, ok] = mixed.json as unknown[];
    assert.equal(codeOf(nested), "BAD_REQUEST");
    assert.deepEqual(ok, { data: { __typename: "Query" } });
    const scalar = await post(router.url, [1, { query: "{ nope }" }]);
    assert.equal(scalar.status, 200);
    assert.equal(codeOf((scalar.json as unknown[])[0]), "BAD_REQUEST");
    assert.equal(codeOf((scalar.json as unknown[])[1]), "GRAPHQL_VALIDATION_FAILED");
    // A malformed array is refused whole.
    const bad = await fetch(`${router.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '[{"query":"{ __typename }"},',
    });
    assert.equal(bad.status, 400);
    assert.equal(codeOf(await bad.json()), "BAD_REQUEST");
  }, { env: { BATCHING_ENABLED: "true", BATCHING_MAXIMUM_SIZE: "2" } });
});

Deno.test("issue 43: each operation of a batch is charged to the rate limit", async () => {
  const raw = parseYaml(
    await Deno.readTextFile(new URL("config.yaml", ROOT)),
  ) as Record<string, unknown>;
  await withRouter({
    raw: {
      ...raw,
      listen_addr: "127.0.0.1:0",
      batching: { enabled: true },
      rate_limit: { enabled: true, rate: 1, burst: 3, period: "1h" },
    },
  }, async ({ router }) => {
    // A burst of 3: the first three operations run, the fourth is refused alone.
    const { status, json } = await post(router.url, [HELLO, HELLO, HELLO, HELLO]);
    assert.equal(status, 200);
    const answers = json as unknown[];
    assert.deepEqual(answers.slice(0, 3), [
      { data: { __typename: "Query" } },
      { data: { __typename: "Query" } },
      { data: { __typename: "Query" } },
    ]);
    assert.equal(codeOf(answers[3]), "RATE_LIMITED");
  });
});

Deno.test("issue 43: a batch's identical subgraph fetches share one request (single flight)", async () => {
  await withRouter({ path: new URL("config.yaml", ROOT).pathname }, async ({ router, calls }) => {
    const query = '{ product(upc: "1") { name } }';
    const { status, json } = await post(router.url, [{ query }, { query }, { query }]);
    assert.equal(status, 200);
    assert.deepEqual(json, Array(3).fill({ data: { product: { name: "Oak Dining Table" } } }));
    assert.deepEqual(calls, ["products"]);
  }, { env: { BATCHING_ENABLED: "true" } });
});
