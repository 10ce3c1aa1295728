import assert from "node:assert/strict";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import {
  createEngine,
  type EngineOptions,
  execute,
  type ExecutionObserver,
  type FetchRecord,
  prepare,
} from "../../../lib/engine/mod.ts";

const MODEL = buildSupergraph(
  Deno.readTextFileSync(new URL("../../../schema/supergraph.graphql", import.meta.url)),
);
const NAME_BY_URL = new Map([...MODEL.subgraphs.values()].map((s) => [s.url, s.name]));

interface Seen {
  subgraph: string;
  query: string;
  variables: Record<string, unknown>;
  headers: Headers;
}

type Handler = (
  subgraph: string,
  body: { query: string; variables: Record<string, unknown> },
) => unknown;

function fakeFetch(handler: Handler, seen: Seen[], delayMs = 0) {
  return async (request: Request): Promise<Response> => {
    const body = await request.json();
    const subgraph = NAME_BY_URL.get(request.url) ?? "?";
    seen.push({ subgraph, query: body.query, variables: body.variables, headers: request.headers });
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    const answer = handler(subgraph, body);
    if (answer instanceof Error) throw answer;
    return Response.json(answer);
  };
}

async function run(
  query: string,
  handler: Handler,
  options: {
    variables?: Record<string, unknown>;
    headers?: Headers;
    engine?: Omit<EngineOptions, "fetch">;
    observer?: ExecutionObserver;
  } = {},
) {
  const seen: Seen[] = [];
  const engine = createEngine(MODEL, { ...options.engine, fetch: fakeFetch(handler, seen) });
  const prepared = prepare(engine, { query });
  assert.ok(prepared.ok, JSON.stringify(prepared));
  const result = await execute(engine, prepared.operation, {
    variables: options.variables ?? {},
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.observer ? { observer: options.observer } : {}),
  });
  return { result, seen };
}

const PRODUCTS = [
  { __typename: "Product", upc: "1", name: "Table" },
  { __typename: "Product", upc: "2", name: "Couch" },
  { __typename: "Product", upc: "1", name: "Table" },
];

Deno.test("issue 3: a batch entity fetch sends each distinct representation once and fans results out", async () => {
  const { result, seen } = await run(`{ topProducts { name averageRating } }`, (subgraph, body) => {
    if (subgraph === "products") return { data: { topProducts: PRODUCTS } };
    const reps = body.variables.representations as { upc: string }[];
    return { data: { _entities: reps.map((r) => ({ averageRating: Number(r.upc) + 0.5 })) } };
  });
  assert.deepEqual(result, {
    data: {
      topProducts: [
        { name: "Table", averageRating: 1.5 },
        { name: "Couch", averageRating: 2.5 },
        { name: "Table", averageRating: 1.5 },
      ],
    },
  });
  const reviews = seen.find((s) => s.subgraph === "reviews");
  assert.deepEqual(reviews?.variables.representations, [
    { __typename: "Product", upc: "1" },
    { __typename: "Product", upc: "2" },
  ]);
});

Deno.test("issue 3: an entity error is re-pathed to every client path of its representation", async () => {
  const { result } = await run(`{ topProducts { name averageRating } }`, (subgraph) => {
    if (subgraph === "products") return { data: { topProducts: PRODUCTS } };
    return {
      data: { _entities: [null, { averageRating: 4 }] },
      errors: [{ message: "no rating for 1", path: ["_entities", 0, "averageRating"] }],
    };
  });
  assert.deepEqual(result.data, {
    topProducts: [
      { name: "Table", averageRating: null },
      { name: "Couch", averageRating: 4 },
      { name: "Table", averageRating: null },
    ],
  });
  assert.deepEqual(result.errors?.map((e) => [e.message, e.path]), [
    ["no rating for 1", ["topProducts", 0, "averageRating"]],
    ["no rating for 1", ["topProducts", 2, "averageRating"]],
  ]);
});

Deno.test("an _entities list of another length than the representations is an error, never data for the wrong object", async () => {
  for (const count of [1, 3]) {
    const { result } = await run(`{ topProducts { name averageRating } }`, (subgraph) => {
      if (subgraph === "products") return { data: { topProducts: PRODUCTS } };
      // Two representations sent (upc 1 and 2); the answer drops or adds one.
      const all = [{ averageRating: 2.5 }, { averageRating: 9 }, { averageRating: 7 }];
      return { data: { _entities: all.slice(0, count) } };
    });
    assert.deepEqual(result.data, {
      topProducts: [
        { name: "Table", averageRating: null },
        { name: "Couch", averageRating: null },
        { name: "Table", averageRating: null },
      ],
    });
    assert.equal(result.errors?.length, 1);
    assert.equal(result.errors?.[0]?.extensions?.code, "SUBGRAPH_ERROR");
    assert.equal(
      result.errors?.[0]?.message,
      `The subgraph "reviews" answered ${count} entities for 2 representations`,
    );
  }
});

Deno.test("spec 6.4.4: a null non-null field nulls the nearest nullable parent, with one error", async () => {
  const { result } = await run(`{ user(id: "1") { id name } }`, () => ({
    data: { user: { id: "1", name: null } },
  }));
  assert.deepEqual(result.data, { user: null });
  assert.deepEqual(result.errors?.map((e) => [e.message, e.path, e.extensions?.code]), [
    [
      "Cannot return null for non-nullable field User.name.",
      ["user", "name"],
      "SUBGRAPH_INVALID_RESPONSE",
    ],
  ]);
});

Deno.test("spec 6.4.4: an entity error on an ancestor explains the nulled non-null field: no second error", async () => {
  const { result } = await run(
    `{ user(id: "1") { id reviews { body } } }`,
    (subgraph) =>
      subgraph === "accounts" ? { data: { user: { __typename: "User", id: "1" } } } : {
        data: { _entities: [null] },
        errors: [{ message: "user gone", path: ["_entities", 0] }],
      },
  );
  assert.deepEqual(result.data, { user: null });
  assert.deepEqual(result.errors?.map((e) => [e.message, e.path]), [["user gone", ["user"]]]);
});

Deno.test("issue 3: a failing subgraph yields partial data plus an error", async () => {
  const { result } = await run(`{ user(id: "1") { id } warehouses { id } }`, (subgraph) => {
    if (subgraph === "inventory") return new TypeError("connection refused");
    return { data: { user: { id: "1" } } };
  });
  assert.deepEqual(result.data, null);
  assert.equal(result.errors?.[0]?.extensions?.code, "SUBGRAPH_UNREACHABLE");
  const partial = await run(`{ user(id: "1") { id reviews { body } } }`, (subgraph) => {
    if (subgraph === "reviews") return new TypeError("connection refused");
    return { data: { user: { __typename: "User", id: "1" } } };
  });
  assert.deepEqual(partial.result.data, { user: null });
  assert.ok(
    (partial.result.errors ?? []).some((e) => e.extensions?.code === "SUBGRAPH_UNREACHABLE"),
  );
});

Deno.test("issue 3: the response follows the client's selection: aliases, order, no internal fields", async () => {
  const { result } = await run(
    `{ top: topProducts { t: __typename averageRating n: name } }`,
    (subgraph) => {
      if (subgraph === "products") {
        return { data: { top: [{ n: "Table", __typename: "Product", upc: "1" }] } };
      }
      return { data: { _entities: [{ averageRating: 5 }] } };
    },
  );
  assert.equal(
    JSON.stringify(result),
    '{"data":{"top":[{"t":"Product","averageRating":5,"n":"Table"}]}}',
  );
});

Deno.test("issue 3: a hidden or unknown enum value in output is an error at its path", async () => {
  const { result } = await run(
    `{ user(id: "1") { tier } warehouses { id } }`,
    (subgraph) =>
      subgraph === "accounts"
        ? { data: { user: { tier: "NOT_A_VALUE" } } }
        : { data: { warehouses: [] } },
  );
  assert.deepEqual(result.data, { user: null, warehouses: [] });
  assert.deepEqual(result.errors?.map((e) => [e.message, e.path]), [
    ['Enum "MembershipTier" cannot represent value: "NOT_A_VALUE"', ["user", "tier"]],
  ]);
});

Deno.test("DESIGN §4: only headers a rule names are propagated to subgraphs", async () => {
  const { seen } = await run(`{ users { id } }`, () => ({ data: { users: [] } }), {
    headers: new Headers({ "x-tenant": "t1", authorization: "Bearer x", cookie: "c=1" }),
    engine: {
      headers: {
        all: { request: [{ op: "propagate", named: "X-Tenant" }] },
        subgraphs: { accounts: { request: [{ op: "set", name: "x-from", value: "router" }] } },
      },
    },
  });
  const headers = seen[0]?.headers;
  assert.equal(headers?.get("x-tenant"), "t1");
  assert.equal(headers?.get("x-from"), "router");
  assert.equal(headers?.get("authorization"), null);
  assert.equal(headers?.get("cookie"), null);
});

Deno.test("issue 3: single flight shares identical in-flight subgraph requests, and can be switched off", async () => {
  for (const enableSingleFlight of [true, false]) {
    const seen: Seen[] = [];
    const engine = createEngine(MODEL, {
      enableSingleFlight,
      fetch: fakeFetch(() => ({ data: { users: [{ id: "1" }] } }), seen, 5),
    });
    const prepared = prepare(engine, { query: "{ users { id } }" });
    assert.ok(prepared.ok);
    const results = await Promise.all([1, 2, 3].map(() => execute(engine, prepared.operation)));
    for (const r of results) assert.deepEqual(r, { data: { users: [{ id: "1" }] } });
    assert.equal(seen.length, enableSingleFlight ? 1 : 3);
  }
});

Deno.test("issue 3: a subgraph that does not answer in time gives DEADLINE_EXCEEDED", async () => {
  const seen: Seen[] = [];
  const engine = createEngine(MODEL, {
    subgraphRequestTimeoutMs: 10,
    fetch: (request) =>
      new Promise((_, reject) => {
        seen.push({ subgraph: "", query: "", variables: {}, headers: request.headers });
        request.signal.addEventListener("abort", () => reject(request.signal.reason));
      }),
  });
  const prepared = prepare(engine, { query: "{ users { id } }" });
  assert.ok(prepared.ok);
  const result = await execute(engine, prepared.operation);
  assert.equal(result.data, null);
  assert.equal(result.errors?.[0]?.extensions?.code, "DEADLINE_EXCEEDED");
});

Deno.test("issue 6: observer sees stages, the plan (cached on the second run) and one record per fetch", async () => {
  const stages: string[] = [];
  const plans: boolean[] = [];
  const fetches: FetchRecord[] = [];
  let clock = 0;
  const observer: ExecutionObserver = {
    now: () => ++clock,
    stage: (name) => stages.push(name),
    plan: (_plan, info) => plans.push(info.cached),
    fetch: (record) => fetches.push(record),
  };
  const seen: Seen[] = [];
  const engine = createEngine(MODEL, {
    fetch: fakeFetch(
      (subgraph, body) =>
        subgraph === "products" ? { data: { topProducts: PRODUCTS } } : {
          data: {
            _entities: (body.variables.representations as unknown[]).map(() => ({
              averageRating: 1,
            })),
          },
        },
      seen,
    ),
  });
  const query = "{ topProducts { name averageRating } }";
  for (let i = 0; i < 2; i++) {
    const prepared = prepare(engine, { query }, { observer });
    assert.ok(prepared.ok);
    await execute(engine, prepared.operation, { observer });
  }
  assert.deepEqual(stages, ["parse", "validate", "normalize", "plan"]);
  assert.deepEqual(plans, [false, true]);
  assert.deepEqual(fetches.map((f) => [f.kind, f.subgraph, f.path]), [
    ["Single", "products", "query"],
    ["BatchEntity", "reviews", "query.topProducts.@"],
    ["Single", "products", "query"],
    ["BatchEntity", "reviews", "query.topProducts.@"],
  ]);
  assert.equal((fetches[1]?.rawInputData as unknown[]).length, 3);
  assert.equal(fetches[1]?.response?.status, 200);
});

Deno.test("issue 3: a merged entity fetch serves each of its paths: one request, results and errors at the right path", async () => {
  const { result, seen } = await run(
    `{ users { id reviews { body } } topProducts { name reviews { body } } }`,
    (subgraph, body) => {
      if (subgraph === "accounts") {
        return { data: { users: [{ __typename: "User", id: "u1" }] } };
      }
      if (subgraph === "products") return { data: { topProducts: PRODUCTS.slice(0, 2) } };
      const reps = body.variables.representations as Record<string, string>[];
      return {
        data: {
          _entities: reps.map((r) => ({ reviews: [{ body: `${r.__typename} ${r.id ?? r.upc}` }] })),
        },
        errors: [{ message: "partial reviews for 2", path: ["_entities", 2, "reviews"] }],
      };
    },
  );
  const reviews = seen.filter((s) => s.subgraph === "reviews");
  assert.equal(reviews.length, 1);
  assert.deepEqual(reviews[0]?.variables.representations, [
    { __typename: "User", id: "u1" },
    { __typename: "Product", upc: "1" },
    { __typename: "Product", upc: "2" },
  ]);
  assert.deepEqual(result.data, {
    users: [{ id: "u1", reviews: [{ body: "User u1" }] }],
    topProducts: [
      { name: "Table", reviews: [{ body: "Product 1" }] },
      { name: "Couch", reviews: [{ body: "Product 2" }] },
    ],
  });
  assert.deepEqual(result.errors?.map((e) => [e.message, e.path]), [
    ["partial reviews for 2", ["topProducts", 1, "reviews"]],
  ]);
});

// The shared parse staying untouched is proven at the executor level below; here,
// end to end, two different operations on one shared root fetch each get their own answer.
Deno.test("issue 8: two operations sharing one subgraph response each get their own entity merges", async () => {
  const seen: Seen[] = [];
  const rootBodies: string[] = [];
  const engine = createEngine(MODEL, {
    fetch: fakeFetch(
      (subgraph, body) => {
        if (subgraph === "products") {
          rootBodies.push(body.query);
          return { data: { topProducts: PRODUCTS } };
        }
        // Each request's entity fetch asks for its own alias of the same field.
        const alias = /(\w+):averageRating/.exec(body.query)?.[1] ?? "averageRating";
        const value = alias === "a" ? 1 : 2;
        return {
          data: {
            _entities: (body.variables.representations as unknown[]).map(() => ({
              [alias]: value,
            })),
          },
        };
      },
      seen,
      10,
    ),
  });
  const run = (query: string) => {
    const prepared = prepare(engine, { query });
    assert.ok(prepared.ok);
    return execute(engine, prepared.operation);
  };
  const [a, b] = await Promise.all([
    run("{ topProducts { name a: averageRating } }"),
    run("{ topProducts { name b: averageRating } }"),
  ]);
  assert.equal(rootBodies.length, 1, "the identical root fetch was shared");
  assert.deepEqual(a, {
    data: {
      topProducts: [
        { name: "Table", a: 1 },
        { name: "Couch", a: 1 },
        { name: "Table", a: 1 },
      ],
    },
  });
  assert.deepEqual(b, {
    data: {
      topProducts: [
        { name: "Table", b: 2 },
        { name: "Couch", b: 2 },
        { name: "Table", b: 2 },
      ],
    },
  });
});

Deno.test("issue 8: a shared parse is never mutated: merges stay in the request's layers", async () => {
  const { executePlan } = await import("../../../lib/engine/execute/execute.ts");
  const { normalizeOperation } = await import("../../../lib/engine/prepare/normalize.ts");
  const { planOperation } = await import("../../../lib/engine/plan/mod.ts");
  const { parse } = await import("graphql");
  const planFor = (query: string) =>
    planOperation(MODEL, normalizeOperation(MODEL.apiSchema, parse(query))).step;
  const rootBody = JSON.stringify({ data: { topProducts: PRODUCTS } });
  // One response object, as single flight hands it to every waiter.
  const shared = {
    status: 200,
    headers: new Headers(),
    body: rootBody,
    deduplicated: false,
    parsed: {},
  };
  const send = (subgraph: string, body: string) => {
    if (subgraph === "products") return Promise.resolve(shared);
    const { variables } = JSON.parse(body) as { variables: { representations: unknown[] } };
    const rating = body.includes("x:averageRating") ? 7 : 8;
    const entities = variables.representations.map(() =>
      body.includes("x:averageRating") ? { x: rating } : { averageRating: rating }
    );
    return Promise.resolve({
      status: 200,
      headers: new Headers(),
      body: JSON.stringify({ data: { _entities: entities } }),
      deduplicated: false,
    });
  };
  const options = { send, variables: {}, operationKind: "query" };
  const first = await executePlan(planFor("{ topProducts { name x: averageRating } }"), options);
  const second = await executePlan(planFor("{ topProducts { name averageRating } }"), options);
  // The parse was shared (the same objects) ...
  assert.equal(
    (first.data.topProducts as unknown[])[0],
    (second.data.topProducts as unknown[])[0],
  );
  // ... and is exactly what the subgraph sent: nothing merged into it.
  assert.deepEqual((shared.parsed as { value?: unknown }).value, JSON.parse(rootBody));
  // Each request reads its own merges through its layers.
  const product = (first.data.topProducts as Record<string, unknown>[])[0]!;
  assert.equal(first.layers.get(product, "x"), 7);
  assert.equal(first.layers.get(product, "averageRating"), undefined);
  assert.equal(second.layers.get(product, "averageRating"), 8);
  assert.equal(second.layers.get(product, "x"), undefined);
});

Deno.test("issue 8: layers write shared objects only in the request's layer, unless the data is the request's own", async () => {
  const { Layers } = await import("../../../lib/engine/execute/_layers.ts");
  const shared: Record<string, unknown> = { __typename: "Product", upc: "1", old: "x" };
  const root: Record<string, unknown> = { topProducts: [shared] };
  const layered = new Layers(root);
  layered.set(shared, "name", "Table");
  layered.set(shared, "renamed", layered.get(shared, "old"));
  layered.set(shared, "old", undefined);
  layered.set(root, "extra", 1);
  assert.deepEqual(shared, { __typename: "Product", upc: "1", old: "x" }, "shared data untouched");
  assert.equal(layered.get(shared, "name"), "Table");
  assert.equal(layered.has(shared, "old"), false);
  assert.equal(root.extra, 1, "the root is the request's own");
  assert.deepEqual(layered.materialize(root), {
    topProducts: [{ __typename: "Product", upc: "1", name: "Table", renamed: "x" }],
    extra: 1,
  });
  const own: Record<string, unknown> = { upc: "2" };
  const inPlace = new Layers({}, { inPlace: true });
  inPlace.set(own, "name", "Couch");
  assert.deepEqual(own, { upc: "2", name: "Couch" });
  assert.equal(inPlace.layerOf(own), undefined);
});

Deno.test("issue 8: a subgraph answer over engine.max_subgraph_response_bytes is a SUBGRAPH_ERROR, read or declared", async () => {
  const big = JSON.stringify({ data: { users: [{ id: "1".repeat(500) }] } });
  for (const declared of [false, true]) {
    const engine = createEngine(MODEL, {
      maxSubgraphResponseBytes: 200,
      fetch: () =>
        Promise.resolve(
          new Response(big, {
            headers: declared ? { "content-length": String(big.length) } : {},
          }),
        ),
    });
    const prepared = prepare(engine, { query: "{ users { id } }" });
    assert.ok(prepared.ok);
    const result = await execute(engine, prepared.operation);
    assert.equal(result.data, null);
    assert.equal(result.errors?.[0]?.extensions?.code, "SUBGRAPH_ERROR");
    assert.match(
      result.errors?.[0]?.message ?? "",
      /answered more than 200 bytes \(engine\.max_subgraph_response_bytes\)/,
    );
  }
  // Within the limit: read as usual.
  const engine = createEngine(MODEL, {
    maxSubgraphResponseBytes: 10_000,
    fetch: () => Promise.resolve(new Response(big)),
  });
  const prepared = prepare(engine, { query: "{ users { id } }" });
  assert.ok(prepared.ok);
  assert.deepEqual(await execute(engine, prepared.operation), JSON.parse(big));
});

Deno.test("issue 15: a shared object's representation follows this request's layer; printed ones keep nothing on it", async () => {
  const { executePlan } = await import("../../../lib/engine/execute/execute.ts");
  type Step = Parameters<typeof executePlan>[0];
  const fetchStep = (
    index: number,
    subgraph: string,
    query: string,
    fields: { key: string; isKey?: boolean }[] | null,
  ) => ({
    kind: "Fetch" as const,
    node: {
      kind: "Fetch" as const,
      serviceName: subgraph,
      variableUsages: [],
      operation: query,
      operationKind: "query" as const,
    },
    index,
    queryJson: JSON.stringify(query),
    subgraph,
    path: fields === null ? [] : ["products", "@"],
    representations: fields === null ? null : new Map([["Product", {
      fields: fields.map((f) => ({ key: f.key, dataKey: f.key, selection: null, isKey: f.isKey })),
      byType: new Map(),
    }]]),
    sendTypename: new Map(),
    variableUsages: [],
    rewrites: [],
  });
  // products (shared root) -> prices: `price` merged into the shared object, this
  // request's layer -> shipping requires {upc price}; reviews requires {upc} only.
  const plan = {
    kind: "Sequence",
    steps: [
      fetchStep(0, "products", "{products{__typename upc}}", null),
      fetchStep(1, "prices", "{_entities{...on Product{price}}}", [{ key: "upc", isKey: true }]),
      fetchStep(2, "shipping", "{_entities{...on Product{eta}}}", [
        { key: "upc", isKey: true },
        { key: "price" },
      ]),
      fetchStep(3, "reviews", "{_entities{...on Product{stars}}}", [{ key: "upc", isKey: true }]),
    ],
  } as unknown as Step;
  const shared = {
    status: 200,
    headers: new Headers(),
    body: JSON.stringify({ data: { products: [{ __typename: "Product", upc: "1" }] } }),
    deduplicated: false,
    parsed: {},
  };
  let price = 10;
  const bodies: Record<string, string[]> = { prices: [], shipping: [], reviews: [] };
  const send = (subgraph: string, body: string) => {
    if (subgraph === "products") return Promise.resolve(shared);
    bodies[subgraph]!.push(JSON.stringify(JSON.parse(body).variables.representations));
    const entity = subgraph === "prices" ? { price: price++ } : {};
    return Promise.resolve({
      status: 200,
      headers: new Headers(),
      body: JSON.stringify({ data: { _entities: [entity] } }),
      deduplicated: false,
    });
  };
  const options = { send, variables: {}, operationKind: "query" as const };
  const first = await executePlan(plan, options);
  const second = await executePlan(plan, options);
  const product = (first.data.products as Record<string, unknown>[])[0]!;
  assert.equal((second.data.products as unknown[])[0], product); // one shared object
  // Each request sends the price its own layer holds (10, then 11), never a memo of another's.
  assert.deepEqual(bodies.shipping, [
    '[{"upc":"1","price":10,"__typename":"Product"}]',
    '[{"upc":"1","price":11,"__typename":"Product"}]',
  ]);
  assert.deepEqual(bodies.reviews, [
    '[{"upc":"1","__typename":"Product"}]',
    '[{"upc":"1","__typename":"Product"}]',
  ]);
  // Leaf representations are printed from the values (issue 45): nothing is kept on the
  // shared object, which readers see unchanged.
  assert.deepEqual(Object.keys(product), ["__typename", "upc"]);
  assert.equal(JSON.stringify(product), '{"__typename":"Product","upc":"1"}');
  assert.deepEqual(Object.getOwnPropertySymbols(product), []);
});

Deno.test("issue 15: a layer inherits no keys: aliases named like Object.prototype members are fields", async () => {
  const { Layers } = await import("../../../lib/engine/execute/_layers.ts");
  const shared: Record<string, unknown> = { upc: "1" };
  const layers = new Layers({});
  layers.set(shared, "name", "Table");
  const layer = layers.layerOf(shared)!;
  for (const key of ["toString", "constructor", "hasOwnProperty", "valueOf"]) {
    assert.equal(key in layer, false, `${key} is not in a fresh layer`);
  }
  layers.set(shared, "toString", "a field");
  assert.equal(layers.get(shared, "toString"), "a field");
  assert.deepEqual(Object.keys(layer), ["name", "toString"]);
  assert.deepEqual(layers.materialize(shared), { upc: "1", name: "Table", toString: "a field" });
});
