/**
 * Issue 15: requests that merged the same shared subgraph answers under one
 * plan share one result (`lib/engine/shared_results.ts`); anything else a
 * result depends on makes a request build its own.
 */
import assert from "node:assert/strict";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { composeSupergraph } from "../../../lib/compose/mod.ts";
import {
  createEngine,
  type EngineOptions,
  execute,
  type ExecuteOptions,
  type ExecutionObserver,
  prepare,
  resultJson,
} from "../../../lib/engine/mod.ts";
import { parseOnce } from "../../../lib/engine/execute/_subgraph_answer.ts";
import type { FetchStep } from "../../../lib/engine/plan/mod.ts";

const MODEL = buildSupergraph(
  Deno.readTextFileSync(new URL("../../../schema/supergraph.graphql", import.meta.url)),
);
const NAME_BY_URL = new Map([...MODEL.subgraphs.values()].map((s) => [s.url, s.name]));

const PRODUCTS = [
  { __typename: "Product", upc: "1", name: "Table" },
  { __typename: "Product", upc: "2", name: "Couch" },
];

type Answer = (subgraph: string, variables: Record<string, unknown>) => unknown;

/** A subgraph fetch that answers after `delayMs` (so concurrent requests overlap) and counts. */
function subgraphs(answer: Answer, delayMs: number) {
  const calls: string[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    const body = await request.json();
    const subgraph = NAME_BY_URL.get(request.url) ?? "?";
    calls.push(subgraph);
    await new Promise((r) => setTimeout(r, delayMs));
    const value = answer(subgraph, body.variables);
    if (value instanceof Error) throw value;
    return Response.json(value);
  };
  return { fetch, calls };
}

const RATED: Answer = (subgraph, variables) =>
  subgraph === "products" ? { data: { topProducts: PRODUCTS } } : {
    data: {
      _entities: (variables.representations as unknown[]).map(() => ({ averageRating: 4 })),
    },
  };

function engineWith(answer: Answer, options: Omit<EngineOptions, "fetch"> = {}, delayMs = 10) {
  const { fetch, calls } = subgraphs(answer, delayMs);
  const engine = createEngine(MODEL, { ...options, fetch });
  const run = (query: string, executeOptions: ExecuteOptions = {}) => {
    const prepared = prepare(engine, { query });
    assert.ok(prepared.ok, JSON.stringify(prepared));
    return execute(engine, prepared.operation, executeOptions);
  };
  return { run, calls };
}

const QUERY = "{ topProducts { name averageRating } }";

Deno.test("issue 15: concurrent requests that merged the same answers get one result, printed once", async () => {
  const { run, calls } = engineWith(RATED);
  const [a, b, c] = await Promise.all([run(QUERY), run(QUERY), run(QUERY)]);
  assert.deepEqual(a, {
    data: {
      topProducts: [{ name: "Table", averageRating: 4 }, { name: "Couch", averageRating: 4 }],
    },
  });
  assert.deepEqual(calls, ["products", "reviews"], "every fetch was shared");
  assert.equal(b, a, "the second request took the first one's result");
  assert.equal(c, a);
  assert.equal(resultJson(b!), JSON.stringify(a));
  assert.throws(() => Object.assign(a, { extensions: {} }), TypeError, "a shared result is frozen");
});

Deno.test("issue 15: requests that merged other answers (not in flight together) build their own", async () => {
  const { run, calls } = engineWith(RATED);
  const a = await run(QUERY);
  const b = await run(QUERY);
  assert.equal(calls.length, 4, "nothing was shared");
  assert.deepEqual(b, a);
  assert.notEqual(b, a);
});

Deno.test("issue 15: another plan over the same shared answers shapes its own result", async () => {
  const { run, calls } = engineWith(RATED);
  // The root __typename is answered by the router: both send the same subgraph requests.
  const [a, b] = await Promise.all([run(QUERY), run(`{ __typename ${QUERY.slice(1)}`)]);
  assert.deepEqual(calls, ["products", "reviews"], "every fetch was shared");
  assert.equal(a.data?.__typename, undefined);
  assert.equal(b.data?.__typename, "Query");
  assert.deepEqual(b.data?.topProducts, a.data?.topProducts);
});

Deno.test("issue 15: a failed fetch is the request's own: a request whose deadline passed shares nothing", async () => {
  const answer: Answer = (subgraph, variables) =>
    subgraph === "reviews" ? new TypeError("connection refused") : RATED(subgraph, variables);
  const { run } = engineWith(answer, {}, 40);
  // Both join the same root answer and the same failing entity fetch; one leaves at
  // its deadline (a TimeoutError), the other waits for the subgraph's failure.
  const late = AbortSignal.timeout(60);
  const [timedOut, failed] = await Promise.all([run(QUERY, { signal: late }), run(QUERY)]);
  assert.equal(timedOut.errors?.[0]?.extensions?.code, "DEADLINE_EXCEEDED");
  assert.equal(failed.errors?.[0]?.extensions?.code, "SUBGRAPH_UNREACHABLE");
});

Deno.test("issue 15: a traced request and one with introspection build their own results", async () => {
  const observer: ExecutionObserver = {
    now: () => performance.now() * 1e6,
    stage() {},
    plan() {},
    fetch() {},
  };
  const { run } = engineWith(RATED, { introspection: true });
  const [plain, traced] = await Promise.all([run(QUERY), run(QUERY, { observer })]);
  assert.deepEqual(traced, plain);
  assert.notEqual(traced, plain);
  const withSchema = `{ __schema { queryType { name } } ${QUERY.slice(1)}`;
  const [x, y] = await Promise.all([run(withSchema), run(withSchema)]);
  assert.deepEqual(y, x);
  assert.notEqual(y, x);
});

Deno.test("a mutation's entity fetches never join a query's: its in-place merge would write into the answer the query reads", async () => {
  const link =
    'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';
  const composed = composeSupergraph([
    {
      name: "things",
      url: "http://things.test/graphql",
      sdl:
        `${link}\ntype Query { thing: Thing }\ntype Mutation { make: Thing }\ntype Thing @key(fields: "id") { id: ID! }`,
    },
    {
      name: "children",
      url: "http://children.test/graphql",
      sdl:
        `${link}\ntype Thing @key(fields: "id") { id: ID! child: Child }\ntype Child @key(fields: "id") { id: ID! }`,
    },
    {
      name: "secrets",
      url: "http://secrets.test/graphql",
      sdl: `${link}\ntype Child @key(fields: "id") { id: ID! secret: String }`,
    },
  ]);
  assert.ok(composed.ok);
  const mutationDone = Promise.withResolvers<void>();
  const childrenCalls: string[] = [];
  const engine = createEngine(buildSupergraph(composed.supergraphSdl), {
    // Only the secrets subgraph learns who asks.
    headers: {
      all: { request: [] },
      subgraphs: { secrets: { request: [{ op: "propagate", named: "x-user" }] } },
    },
    fetch: async (request) => {
      const body = await request.json();
      const host = new URL(request.url).hostname;
      if (host === "things.test") {
        const root = body.query.startsWith("mutation") ? "make" : "thing";
        return Response.json({ data: { [root]: { __typename: "Thing", id: "1" } } });
      }
      if (host === "children.test") {
        childrenCalls.push(request.headers.get("x-user") ?? "");
        // Both requests' identical child fetches are in flight together.
        await new Promise((r) => setTimeout(r, 20));
        return Response.json({
          data: { _entities: [{ child: { __typename: "Child", id: "c" } }] },
        });
      }
      if (request.headers.get("x-user") === "alice") {
        return Response.json({ data: { _entities: [{ secret: "alice's secret" }] } });
      }
      // Bob may not see the secret (the subgraph leaves it out), and answers after Alice's mutation.
      await mutationDone.promise;
      return Response.json({ data: { _entities: [{}] } });
    },
  });
  const run = (query: string, user: string) => {
    const prepared = prepare(engine, { query });
    assert.ok(prepared.ok, JSON.stringify(prepared));
    return execute(engine, prepared.operation, { headers: new Headers({ "x-user": user }) });
  };
  const mutation = run("mutation { make { child { secret } } }", "alice");
  const query = run("{ thing { child { secret } } }", "bob");
  assert.deepEqual(await mutation, { data: { make: { child: { secret: "alice's secret" } } } });
  mutationDone.resolve();
  assert.deepEqual(await query, { data: { thing: { child: { secret: null } } } });
  assert.equal(childrenCalls.length, 2, "the mutation's entity fetch was its own");
});

Deno.test("issue 45: a plan of one root fetch merges the answer whole; its result still holds only the selection", async () => {
  const { run, calls } = engineWith(() => ({
    data: {
      topProducts: [{ __typename: "Product", upc: "1", name: "Table", price: 9, extra: { a: 1 } }],
      notAsked: true,
    },
  }));
  const result = await run("{ topProducts { name } }");
  assert.deepEqual(calls, ["products"]);
  assert.deepEqual(JSON.parse(resultJson(result)), { data: { topProducts: [{ name: "Table" }] } });
});

Deno.test("issue 45: a shared answer parsed whole for one plan is still cut for another", () => {
  const keys = new Map<string, Map<string, null> | null>([["a", new Map([["x", null]])]]);
  const step = { kind: "Fetch", representations: null, keys } as unknown as FetchStep;
  const answer = () => ({
    status: 200,
    headers: new Headers(),
    body: '{"data":{"a":{"x":1,"y":2},"b":3}}',
    deduplicated: true,
    parsed: {},
  });
  const cutLater = answer();
  const whole = parseOnce(cutLater, step, { cut: false });
  assert.deepEqual(whole, { data: { a: { x: 1, y: 2 }, b: 3 } });
  assert.deepEqual(
    parseOnce(cutLater, step),
    { data: { a: { x: 1 } } },
    "cut from the whole parse",
  );
  assert.equal(parseOnce(cutLater, step, { cut: false }), parseOnce(cutLater, step));
  const cutFirst = answer();
  const cut = parseOnce(cutFirst, step);
  assert.deepEqual(cut, { data: { a: { x: 1 } } });
  assert.equal(parseOnce(cutFirst, step, { cut: false }), cut, "the cut answer serves a whole one");
});
