/**
 * ART end to end: a real router (`startRouter`) over HTTP in front of three
 * real federation subgraphs (`demo/subgraph.ts`), composed with
 * `@theguild/federation-composition`. `topProducts` makes batch-entity
 * fetches (a list of representations), `product(upc:)` an entity fetch.
 */
import assert from "node:assert/strict";
import { composeServices } from "@theguild/federation-composition";
import { parse } from "graphql";
import { type RunningSubgraph, serveSubgraph } from "../../demo/subgraph.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { startRouter } from "../../lib/cli/serve.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { findTrace, readTrace } from "../../lib/playground/trace_model.ts";
import {
  type FetchTreeTraceNode,
  generateTraceKeyPair,
  mintTraceToken,
  type TraceData,
} from "../../lib/trace/mod.ts";

const PRODUCTS = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
type Query {
  topProducts: [Product!]!
  product(upc: String!): Product
}
type Product @key(fields: "upc") {
  upc: String!
  name: String!
}`;
const REVIEWS = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
type Product @key(fields: "upc") {
  upc: String!
  reviews: [Review!]!
}
type Review {
  body: String!
}`;
const INVENTORY = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
type Product @key(fields: "upc") {
  upc: String!
  inStock: Boolean!
}`;

const NAMES: Record<string, string> = { "1": "Table", "2": "Couch" };

const BATCH_QUERY = "query Top { topProducts { upc name reviews { body } inStock } }";
const ENTITY_QUERY = 'query One { product(upc: "1") { name reviews { body } } }';

interface Graph {
  readonly url: string;
  readonly logs: Record<string, unknown>[];
  /** Subgraph requests in arrival order: subgraph name and query. */
  readonly requests: { subgraph: string; query: string }[];
}

interface GraphOptions {
  readonly env?: Record<string, string>;
  readonly raw?: Record<string, unknown>;
  readonly publicKeyPem?: string;
  /** Wraps subgraph responses (e.g. to add Set-Cookie). */
  readonly wrap?: (response: Response) => Response;
}

async function withGraph(options: GraphOptions, run: (graph: Graph) => Promise<void>) {
  const requests: { subgraph: string; query: string }[] = [];
  const record = (subgraph: string) => (body: { query: string }) =>
    requests.push({ subgraph, query: body.query });
  const subgraphs: RunningSubgraph[] = [
    serveSubgraph("products", {
      typeDefs: PRODUCTS,
      resolvers: {
        Query: {
          topProducts: () => [{ upc: "1", name: "Table" }, { upc: "2", name: "Couch" }],
          product: (_: unknown, { upc }: { upc: string }) =>
            NAMES[upc] ? { upc, name: NAMES[upc] } : null,
        },
        Product: {
          __resolveReference: (ref: { upc: string }) => ({ ...ref, name: NAMES[ref.upc] }),
        },
      },
    }, { onRequest: record("products") }),
    serveSubgraph("reviews", {
      typeDefs: REVIEWS,
      resolvers: {
        Product: {
          __resolveReference: (ref: { upc: string }) => ref,
          reviews: (product: { upc: string }) => [{ body: `Review of ${product.upc}` }],
        },
      },
    }, { onRequest: record("reviews") }),
    serveSubgraph("inventory", {
      typeDefs: INVENTORY,
      resolvers: {
        Product: {
          __resolveReference: (ref: { upc: string }) => ({ ...ref, inStock: ref.upc === "1" }),
        },
      },
    }, { onRequest: record("inventory") }),
  ];
  let dir: string | null = null;
  try {
    const composed = composeServices(
      subgraphs.map((s) => ({ name: s.name, typeDefs: parse(s.sdl), url: s.url })),
    );
    if (composed.errors !== undefined) {
      throw new Error(composed.errors.map((e) => e.message).join("\n"));
    }
    let keyFile = "";
    if (options.publicKeyPem !== undefined) {
      dir = await Deno.makeTempDir();
      keyFile = `${dir}/trace_public.pem`;
      await Deno.writeTextFile(keyFile, options.publicKeyPem);
    }
    const config = parseConfig({
      listen_addr: "127.0.0.1:0",
      operations_dir: "/nonexistent-operations",
      mcp: { enabled: false },
      connect_rpc: { enabled: false },
      playground: { enabled: false },
      engine: { request_tracing_public_key_file: keyFile },
      ...options.raw,
    }, { env: options.env ?? {} });
    const logs: Record<string, unknown>[] = [];
    const log = createLogger({ level: "debug", write: (line) => logs.push(JSON.parse(line)) });
    const wrap = options.wrap;
    const router = await startRouter({
      config,
      supergraphSdl: composed.supergraphSdl,
      log,
      ...(wrap ? { fetch: async (request: Request) => wrap(await fetch(request)) } : {}),
    });
    try {
      await run({ url: router.url, logs, requests });
    } finally {
      await router.shutdown();
    }
  } finally {
    await Promise.all(subgraphs.map((s) => s.close()));
    if (dir !== null) await Deno.remove(dir, { recursive: true });
  }
}

interface Sent {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly body: {
    data?: unknown;
    errors?: { message: string }[];
    extensions?: { trace?: TraceData };
  };
}

async function post(
  graph: Graph,
  query: string,
  headers: Record<string, string> = {},
  search = "",
): Promise<Sent> {
  const response = await fetch(`${graph.url}/graphql${search}`, {
    method: "POST",
    // A fixed X-Request-Id (issue 16): otherwise each request's generated id is a traced header.
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      "x-request-id": "trace-art-test",
      ...headers,
    },
    body: JSON.stringify({ query }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: JSON.parse(text) };
}

function shape(node: FetchTreeTraceNode): unknown {
  return node.fetch
    ? [node.fetch.kind, node.fetch.source_name]
    : [node.kind, (node.children ?? []).map(shape)];
}

function singles(node: FetchTreeTraceNode | null | undefined): FetchTreeTraceNode[] {
  if (!node) return [];
  return node.fetch ? [node] : (node.children ?? []).flatMap(singles);
}

function loads(trace: TraceData): Record<string, unknown>[] {
  return singles(trace.fetches).flatMap((n) => [
    ...(n.fetch?.trace ? [n.fetch.trace] : []),
    ...(n.fetch?.traces ?? []),
  ]) as unknown as Record<string, unknown>[];
}

const DEV = { DEV_MODE: "true" };
const TRACE = { "X-GW-Trace": "true" };

Deno.test("spec 1: the trace tree and fetch kinds match the plan (batch entity fetches)", async () => {
  await withGraph({ env: DEV }, async (graph) => {
    const sent = await post(graph, BATCH_QUERY, TRACE);
    assert.equal(sent.status, 200);
    assert.deepEqual(sent.body.data, {
      topProducts: [
        { upc: "1", name: "Table", reviews: [{ body: "Review of 1" }], inStock: true },
        { upc: "2", name: "Couch", reviews: [{ body: "Review of 2" }], inStock: false },
      ],
    });
    const trace = sent.body.extensions!.trace!;
    assert.deepEqual(shape(trace.fetches!), [
      "Sequence",
      [
        ["Single", "products"],
        ["Parallel", [["BatchEntity", "reviews"], ["BatchEntity", "inventory"]]],
      ],
    ]);
    // Every fetch of the tree is a request a subgraph received, and nothing else was sent.
    const traced = loads(trace).map((l) => ({
      subgraph: "",
      query: (l.input as { body: { query: string } }).body.query,
    }));
    assert.deepEqual(
      traced.map((t) => t.query).sort(),
      graph.requests.map((r) => r.query).sort(),
    );
    const batch = singles(trace.fetches)[1]!.fetch!;
    assert.equal(batch.path.endsWith("topProducts.@"), true, batch.path);
    assert.deepEqual(
      (batch.trace!.input!.body as { variables: { representations: unknown[] } }).variables
        .representations,
      [{ __typename: "Product", upc: "1" }, { __typename: "Product", upc: "2" }],
    );
  });
});

Deno.test("spec 1: a fetch for one object is an Entity fetch", async () => {
  await withGraph({ env: DEV }, async (graph) => {
    const trace = (await post(graph, ENTITY_QUERY, TRACE)).body.extensions!.trace!;
    assert.deepEqual(shape(trace.fetches!), [
      "Sequence",
      [["Single", "products"], ["Entity", "reviews"]],
    ]);
    // An entity fetch was rendered from one object (Cosmo shows it bare).
    const entity = singles(trace.fetches)[1]!.fetch!;
    assert.equal(entity.path, "query.product");
    assert.deepEqual(entity.trace?.raw_input_data, {
      upc: "1",
      name: "Table",
      __typename: "Product",
    });
  });
});

Deno.test("spec 1: the trace shows stage timings, plan cache, request, raw input, input, output and load timings", async () => {
  await withGraph({ env: DEV }, async (graph) => {
    const first = (await post(graph, BATCH_QUERY, TRACE)).body.extensions!.trace!;
    const second = (await post(graph, BATCH_QUERY, TRACE)).body.extensions!.trace!;
    assert.equal(first.version, "1");
    assert.match(first.info.trace_start_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(Math.abs(first.info.trace_start_unix - Date.now() / 1000) < 60);
    assert.equal(first.info.router_version, "0.43.0");
    assert.equal(first.info.plan_cache_hit, false);
    assert.equal(second.info.plan_cache_hit, true);
    for (
      const key of ["parse_stats", "normalize_stats", "validate_stats", "planner_stats"] as const
    ) {
      const stats = first.info[key]!;
      assert.equal(typeof stats.duration_nanoseconds, "number", key);
      assert.equal(typeof stats.duration_pretty, "string", key);
      assert.ok(stats.duration_since_start_nanoseconds >= stats.duration_nanoseconds, key);
    }
    assert.equal(first.request?.method, "POST");
    assert.equal(first.request?.url, `${graph.url}/graphql`);
    assert.deepEqual(first.request?.body, { query: BATCH_QUERY });
    const [root, reviews] = singles(first.fetches).map((n) => n.fetch!.trace!);
    assert.ok(root && reviews);
    assert.match(String(root.input?.url), /^http:\/\/127\.0\.0\.1:\d+\/graphql$/);
    assert.equal(root.input?.method, "POST");
    const output = reviews.output as {
      data: { _entities: unknown[] };
      extensions: { trace: { response: { status_code: number; body_size: number } } };
    };
    assert.deepEqual(output.data._entities, [
      { reviews: [{ body: "Review of 1" }] },
      { reviews: [{ body: "Review of 2" }] },
    ]);
    assert.equal(output.extensions.trace.response.status_code, 200);
    assert.ok(output.extensions.trace.response.body_size > 0);
    // The raw input is what the input was rendered from, taken before the
    // parallel sibling (inventory) merged its fields: products' data only.
    const productsData = [
      { upc: "1", name: "Table", __typename: "Product" },
      { upc: "2", name: "Couch", __typename: "Product" },
    ];
    for (const load of singles(first.fetches).slice(1).map((n) => n.fetch!.trace!)) {
      assert.deepEqual(load.raw_input_data, productsData);
    }
    assert.deepEqual(root.raw_input_data, {});
    assert.ok((reviews.duration_load_nanoseconds ?? 0) > 0);
    assert.ok(
      (reviews.duration_since_start_nanoseconds ?? 0) >=
        (root.duration_since_start_nanoseconds ?? 0),
    );
    assert.ok(
      (reviews.load_stats?.got_first_response_byte.duration_since_start_nanoseconds ?? 0) > 0,
    );
  });
});

Deno.test("spec 5.6: each exclude option removes exactly its part", async () => {
  await withGraph({ env: DEV }, async (graph) => {
    await post(graph, BATCH_QUERY); // warm the plan cache: plan_cache_hit is state, not timing
    const traceWith = async (options: string) => {
      const trace = (await post(graph, BATCH_QUERY, {
        "X-GW-Trace": `enable_predictable_debug_timings,${options}`,
      })).body.extensions!.trace!;
      // The request's own X-GW-Trace header differs by design.
      assert.deepEqual(trace.request?.headers["X-Gw-Trace"], [
        `enable_predictable_debug_timings,${options}`,
      ]);
      delete trace.request?.headers["X-Gw-Trace"];
      return trace;
    };
    const full = await traceWith("");
    const cases: [string, (trace: TraceData) => void][] = [
      ["exclude_parse_stats", (t) => delete t.info.parse_stats],
      ["exclude_normalize_stats", (t) => delete t.info.normalize_stats],
      ["exclude_validate_stats", (t) => delete t.info.validate_stats],
      ["exclude_planner_stats", (t) => delete t.info.planner_stats],
      ["exclude_raw_input_data", (t) => loads(t).forEach((l) => delete l.raw_input_data)],
      ["exclude_input", (t) => loads(t).forEach((l) => delete l.input)],
      ["exclude_output", (t) => loads(t).forEach((l) => delete l.output)],
      ["exclude_load_stats", (t) =>
        loads(t).forEach((l) => {
          for (const key of Object.keys(l)) {
            if (key.startsWith("duration_") || key === "load_stats") delete l[key];
          }
        })],
    ];
    for (const [option, remove] of cases) {
      const expected = structuredClone(full);
      remove(expected);
      assert.notDeepEqual(expected, full, option);
      assert.deepEqual(await traceWith(option), expected, option);
    }
  });
});

Deno.test("spec 5.6: predictable timings give byte-identical traces for identical requests", async () => {
  await withGraph({ env: DEV }, async (graph) => {
    await post(graph, BATCH_QUERY);
    const headers = { "X-GW-Trace": "enable_predictable_debug_timings" };
    const first = await post(graph, BATCH_QUERY, headers);
    const second = await post(graph, BATCH_QUERY, headers);
    const a = JSON.stringify(first.body.extensions!.trace);
    const b = JSON.stringify(second.body.extensions!.trace);
    assert.equal(a, b);
    const trace = first.body.extensions!.trace!;
    assert.equal(trace.info.trace_start_time, "");
    assert.equal(trace.info.parse_stats?.duration_nanoseconds, 5);
    assert.ok(loads(trace).every((l) => l.duration_load_nanoseconds === 1));
    assert.doesNotMatch(a, /127\.0\.0\.1:\d/);
    assert.doesNotMatch(a, /"Date"/);
  });
});

Deno.test("spec 4.4: the header form (any case) and the gw_trace query form both trace; the query wins", async () => {
  await withGraph({ env: DEV }, async (graph) => {
    const header = await post(graph, ENTITY_QUERY, { "x-gw-trace": "true" });
    assert.equal(header.body.extensions?.trace?.version, "1");
    const playground = await post(graph, ENTITY_QUERY, { "X-GW-TRACE": "true" });
    assert.equal(playground.body.extensions?.trace?.version, "1");
    const query = await post(graph, ENTITY_QUERY, {}, "?gw_trace=true");
    assert.equal(query.body.extensions?.trace?.version, "1");
    const both = await post(
      graph,
      ENTITY_QUERY,
      { "X-GW-Trace": "exclude_input" },
      "?gw_trace=exclude_output",
    );
    const load = loads(both.body.extensions!.trace!)[0]!;
    assert.equal(load.output, undefined);
    assert.notEqual(load.input, undefined);
    const get = await fetch(
      `${graph.url}/graphql?gw_trace=true&query=${encodeURIComponent(ENTITY_QUERY)}`,
      // A GET carries a CSRF preflight header (csrf_prevention, issue 14).
      { headers: { accept: "application/json", "graphql-preflight": "1" } },
    );
    const body = await get.json();
    assert.equal(body.extensions.trace.request.method, "GET");
    assert.deepEqual(body.extensions.trace.request.body, { query: ENTITY_QUERY });
  });
});

Deno.test("spec 5.6: a traced response is not cacheable; an untraced one has no trace", async () => {
  await withGraph({ env: DEV }, async (graph) => {
    const traced = await post(graph, ENTITY_QUERY, TRACE);
    assert.equal(traced.headers.get("cache-control"), "no-store");
    const plain = await post(graph, ENTITY_QUERY);
    assert.equal(plain.body.extensions?.trace, undefined);
    assert.equal(plain.headers.get("cache-control"), null);
    const data = { product: { name: "Table", reviews: [{ body: "Review of 1" }] } };
    assert.deepEqual(traced.body.data, data);
    assert.deepEqual(plain.body.data, data);
  });
});

function warnings(graph: Graph): string[] {
  return graph.logs.filter((l) => l.level === "warn").map((l) => String(l.msg)).filter((m) =>
    m.startsWith("Advanced Request Tracing (ART) is enabled")
  );
}

Deno.test("spec 5.6 gate: ENGINE_ENABLE_REQUEST_TRACING=false disables ART entirely", async () => {
  await withGraph({ env: { ...DEV, ENGINE_ENABLE_REQUEST_TRACING: "false" } }, async (graph) => {
    const sent = await post(graph, ENTITY_QUERY, TRACE);
    assert.equal(sent.status, 200);
    assert.equal(sent.body.extensions?.trace, undefined);
    assert.deepEqual(warnings(graph), []);
  });
});

Deno.test("spec 5.5 gate: DEV_MODE=true traces without a token and warns at start-up", async () => {
  await withGraph({ env: DEV }, async (graph) => {
    assert.equal((await post(graph, ENTITY_QUERY, TRACE)).body.extensions?.trace?.version, "1");
    assert.equal(warnings(graph).length, 1);
  });
});

Deno.test("spec 5.5 gate: the force flag traces without a token and logs what it exposes", async () => {
  const env = { ENGINE_FORCE_UNAUTHENTICATED_REQUEST_TRACING: "true" };
  await withGraph({ env }, async (graph) => {
    assert.equal((await post(graph, ENTITY_QUERY, TRACE)).body.extensions?.trace?.version, "1");
    const logged = warnings(graph);
    assert.equal(logged.length, 2);
    assert.match(logged[1]!, /force_unauthenticated_request_tracing/);
    assert.match(logged[1]!, /subgraph URLs/);
  });
});

Deno.test("spec 5.5 gate: a valid X-GW-Token traces in production", async () => {
  const pair = await generateTraceKeyPair();
  await withGraph({ publicKeyPem: pair.publicKeyPem }, async (graph) => {
    const token = await mintTraceToken(pair.privateKeyPem, { ttlSeconds: 300 });
    const sent = await post(graph, ENTITY_QUERY, { ...TRACE, "X-GW-Token": token });
    assert.equal(sent.status, 200);
    assert.equal(sent.body.extensions?.trace?.version, "1");
    assert.deepEqual(sent.body.data, {
      product: { name: "Table", reviews: [{ body: "Review of 1" }] },
    });
    assert.deepEqual(sent.body.extensions?.trace?.request?.headers["X-Gw-Token"], ["****"]);
    assert.ok(!sent.text.includes(token));
  });
});

Deno.test("spec 5.5 gate: a token from another key gets 400 with a GraphQL error, never echoed or logged", async () => {
  const pair = await generateTraceKeyPair();
  const stranger = await generateTraceKeyPair();
  await withGraph({ publicKeyPem: pair.publicKeyPem }, async (graph) => {
    const token = await mintTraceToken(stranger.privateKeyPem);
    const sent = await post(graph, ENTITY_QUERY, { ...TRACE, "X-GW-Token": token });
    assert.equal(sent.status, 400);
    assert.equal(sent.body.data, undefined);
    assert.match(sent.body.errors?.[0]?.message ?? "", /Trace token \(X-GW-Token\)/);
    assert.ok(!sent.text.includes(token.split(".")[2]!));
    assert.ok(!JSON.stringify(graph.logs).includes(token.split(".")[2]!));
    assert.equal(graph.requests.length, 0, "nothing was executed");
  });
});

Deno.test("spec 5.5 gate: without a token a production request runs normally without a trace", async () => {
  const pair = await generateTraceKeyPair();
  await withGraph({ publicKeyPem: pair.publicKeyPem }, async (graph) => {
    const sent = await post(graph, ENTITY_QUERY, TRACE);
    assert.equal(sent.status, 200);
    assert.deepEqual(sent.body.data, {
      product: { name: "Table", reviews: [{ body: "Review of 1" }] },
    });
    assert.equal(sent.body.extensions?.trace, undefined);
  });
});

Deno.test("spec 5.5: credentials are masked on the inbound request and on subgraph requests and responses", async () => {
  await withGraph({
    env: DEV,
    raw: {
      headers: {
        all: {
          request: [{ op: "propagate", named: "Authorization" }, {
            op: "propagate",
            named: "Cookie",
          }],
        },
      },
    },
    wrap: (response) => {
      const headers = new Headers(response.headers);
      headers.set("set-cookie", "sid=SUBGRAPH-SECRET");
      headers.set("www-authenticate", 'Bearer realm="SUBGRAPH-SECRET"');
      return new Response(response.body, { status: response.status, headers });
    },
  }, async (graph) => {
    const sent = await post(graph, BATCH_QUERY, {
      ...TRACE,
      Authorization: "Bearer CLIENT-SECRET",
      Cookie: "session=CLIENT-SECRET",
    });
    assert.equal(sent.status, 200);
    const trace = sent.body.extensions!.trace!;
    assert.doesNotMatch(JSON.stringify(trace), /SECRET/);
    assert.deepEqual(trace.request?.headers.Authorization, ["****"]);
    assert.deepEqual(trace.request?.headers.Cookie, ["****"]);
    assert.equal(loads(trace).length, 3);
    for (const load of loads(trace)) {
      const input = load.input as { header: Record<string, string[]> };
      assert.deepEqual(input.header.Authorization, ["****"], "propagated to the subgraph, masked");
      const meta = (load.output as {
        extensions: { trace: { response: { headers: Record<string, string[]> } } };
      })
        .extensions.trace.response.headers;
      assert.deepEqual(meta["Set-Cookie"], ["****"]);
      assert.deepEqual(meta["Www-Authenticate"], ["****"]);
    }
  });
});

Deno.test("spec 2.8: a request that fails validation still carries its trace, without fetches", async () => {
  await withGraph({ env: DEV }, async (graph) => {
    const sent = await post(graph, "{ topProducts { nope } }", TRACE);
    assert.equal(sent.body.data, undefined);
    assert.ok((sent.body.errors?.length ?? 0) > 0);
    const trace = sent.body.extensions!.trace!;
    assert.equal(trace.fetches, null);
    assert.equal(trace.info.plan_cache_hit, undefined);
    assert.equal(typeof trace.info.validate_stats?.duration_nanoseconds, "number");
    assert.equal(graph.requests.length, 0);
  });
});

Deno.test("DESIGN §3: the playground's ART viewer reads the trace: plan tree and waterfall", async () => {
  await withGraph({ env: DEV }, async (graph) => {
    const sent = await post(graph, BATCH_QUERY, TRACE);
    const found = findTrace(sent.text);
    assert.ok(found);
    const model = readTrace(found);
    assert.equal(model.version, "1");
    assert.deepEqual(model.fetches.map((f) => [f.kind, f.subgraph]), [
      ["Single", "products"],
      ["BatchEntity", "reviews"],
      ["BatchEntity", "inventory"],
    ]);
    assert.deepEqual(model.waterfall.map((row) => row.label), [
      "parse",
      "normalize",
      "validate",
      "plan",
      "products",
      "reviews",
      "inventory",
    ]);
    assert.ok(model.fetches.every((f) => f.startNs !== null && (f.durationNs ?? 0) > 0));
  });
});
