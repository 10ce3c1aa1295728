/**
 * Merged data is a graph: one entity answer is merged into every object that
 * asked for it. A small query alternating between two subgraphs (people →
 * friends in one, followers in the other, …) asks for a response tree that
 * grows as 3^depth while every subgraph request stays three representations.
 * The executor must walk the shared data once per object, and the shaper must
 * stop at `engine.max_response_bytes` while it builds, not after.
 */
import assert from "node:assert/strict";
import { composeSupergraph } from "../../../lib/compose/mod.ts";
import { createEngine, execute, prepare } from "../../../lib/engine/mod.ts";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { inWorker } from "../_in_worker.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';

const composed = composeSupergraph([
  {
    name: "people",
    url: "http://people.test/graphql",
    sdl: `${LINK}
type Query { people: [Person] }
type Person @key(fields: "id") { id: ID! friends: [Person] }`,
  },
  {
    name: "follows",
    url: "http://follows.test/graphql",
    sdl: `${LINK}
type Person @key(fields: "id") { id: ID! followers: [Person] }`,
  },
]);
if (!composed.ok) throw new Error("does not compose");
/** The two-subgraph supergraph (exported for the worker below). */
export const SUPERGRAPH = composed.supergraphSdl;

/** Three people; everybody is everybody's friend and follower. */
export function answer(url: string, body: { variables?: Record<string, unknown> }): unknown {
  const all = () => ["1", "2", "3"].map((id) => ({ __typename: "Person", id }));
  const reps = body.variables?.representations as { id: string }[] | undefined;
  const field = url.includes("people") ? "friends" : "followers";
  if (reps === undefined) {
    return { data: { people: all().map((p) => ({ ...p, friends: all() })) } };
  }
  return {
    data: { _entities: reps.map((r) => ({ __typename: "Person", id: r.id, [field]: all() })) },
  };
}

/** `{ people { friends { followers { friends … { id } } } } }`, `hops` fields below `people`. */
export function alternating(hops: number): string {
  let open = "";
  let close = "";
  for (let i = 0; i < hops; i++) {
    open += `${i % 2 === 0 ? "friends" : "followers"} { `;
    close += " }";
  }
  return `{ people { ${open}id${close} } }`;
}

function engine(maxResponseBytes: number) {
  const requests: number[] = [];
  const e = createEngine(buildSupergraph(SUPERGRAPH), {
    maxResponseBytes,
    fetch: async (request) => {
      const body = await request.json();
      requests.push((body.variables?.representations ?? []).length);
      return Response.json(answer(request.url, body));
    },
  });
  return { engine: e, requests };
}

Deno.test("fan-out: shared entity answers are merged once per object and shaped in full under the limit", async () => {
  const { engine: e, requests } = engine(10_000_000);
  const prepared = prepare(e, { query: alternating(4) });
  assert.ok(prepared.ok);
  const result = await execute(e, prepared.operation, { variables: {} });
  assert.equal(result.errors, undefined);
  // 3 people × 3^4 below each: every position is answered.
  const json = JSON.stringify(result.data);
  assert.equal(json.match(/"id"/g)?.length, 3 ** 5);
  // Each entity request carries the three distinct people, never the repeated positions.
  assert.deepEqual(requests.slice(1), [3, 3, 3]);
});

Deno.test("fan-out: the shaper stops at engine.max_response_bytes while it builds (RESPONSE_TOO_LARGE)", async () => {
  const { engine: e } = engine(100_000);
  const prepared = prepare(e, { query: alternating(9) });
  assert.ok(prepared.ok);
  await assert.rejects(
    execute(e, prepared.operation, { variables: {} }),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, "RESPONSE_TOO_LARGE");
      assert.match(error.message, /100000 bytes \(engine\.max_response_bytes\)/);
      return true;
    },
  );
});

Deno.test("fan-out: 24 alternating hops (3^25 positions) are refused at once, not walked (runs in a worker)", async () => {
  const code = `
    import { createEngine, execute, prepare } from "${new URL(
    "../../../lib/engine/mod.ts",
    import.meta.url,
  )}";
    import { buildSupergraph } from "${new URL("../../../lib/supergraph/mod.ts", import.meta.url)}";
    import { answer, alternating, SUPERGRAPH } from "${import.meta.url}";
    const engine = createEngine(buildSupergraph(SUPERGRAPH), {
      maxResponseBytes: 1_000_000,
      fetch: async (request) => Response.json(answer(request.url, await request.json())),
    });
    const prepared = prepare(engine, { query: alternating(24) });
    try {
      await execute(engine, prepared.operation, { variables: {} });
      self.postMessage("answered");
    } catch (error) {
      self.postMessage(error.code ?? String(error));
    }`;
  // Generous: the walk takes milliseconds; walked as a tree it would take days.
  assert.equal(await inWorker(code, 30_000), "RESPONSE_TOO_LARGE");
});

Deno.test("fan-out: a trace snapshot of shared data copies at most MAX_TRACE_VALUES values (runs in a worker)", async () => {
  const code = `
    import { Layers } from "${new URL("../../../lib/engine/execute/_layers.ts", import.meta.url)}";
    import { MAX_TRACE_VALUES } from "${new URL(
    "../../../lib/engine/prepare/limits.ts",
    import.meta.url,
  )}";
    // 30 levels, each a list holding the level below three times: 3^30 paths, 31 objects.
    let node = { id: "leaf" };
    for (let i = 0; i < 30; i++) node = { id: String(i), next: [node, node, node] };
    const copy = new Layers({}).materialize(node);
    const text = JSON.stringify(copy);
    self.postMessage({
      capped: text.includes("more than " + MAX_TRACE_VALUES + " values: not shown"),
      length: text.length,
    });`;
  const outcome = await inWorker(code, 30_000) as { capped: boolean; length: number };
  assert.equal(outcome.capped, true);
  assert.ok(outcome.length < 50_000_000, `${outcome.length} characters`);
});

Deno.test("fan-out: the shaper's count is a lower bound: a response of exactly max_response_bytes is answered", async () => {
  const first = engine(10_000_000);
  const prepared = prepare(first.engine, { query: alternating(5) });
  assert.ok(prepared.ok);
  const full = await execute(first.engine, prepared.operation, { variables: {} });
  const size = JSON.stringify(full.data).length;
  const exact = engine(size);
  const again = prepare(exact.engine, { query: alternating(5) });
  assert.ok(again.ok);
  assert.deepEqual(await execute(exact.engine, again.operation, { variables: {} }), full);
});

Deno.test("fan-out: a @fromContext walk over shared data stops at MAX_ANCESTOR_WALK visits (runs in a worker)", async () => {
  const code = `
    import { Layers } from "${new URL("../../../lib/engine/execute/_layers.ts", import.meta.url)}";
    import { collectWithAncestors } from "${new URL(
    "../../../lib/engine/execute/_data.ts",
    import.meta.url,
  )}";
    // 30 levels, each a list holding the level below three times: 3^30 ancestor chains.
    let node = { id: "leaf" };
    for (let i = 0; i < 30; i++) node = { id: String(i), next: [node, node, node] };
    const path = Array.from({ length: 30 }, () => "next");
    try {
      collectWithAncestors(new Layers({}), node, path, { index: 0, at: [], out: [] });
      self.postMessage("walked");
    } catch (error) {
      self.postMessage(error.code ?? String(error));
    }`;
  assert.equal(await inWorker(code, 30_000), "RESPONSE_TOO_LARGE");
});

Deno.test("fan-out: errors count toward engine.max_response_bytes (a subgraph's 400 000 wrong list items are not 400 000 errors)", async () => {
  // 800 KB of `1,1,1,…` where a list of Person objects is expected: one error per item.
  const body = `{"data":{"people":[${Array(400_000).fill("1").join(",")}]}}`;
  const e = createEngine(buildSupergraph(SUPERGRAPH), {
    maxResponseBytes: 2_000_000,
    fetch: () => Promise.resolve(new Response(body)),
  });
  const prepared = prepare(e, { query: "{ people { id } }" });
  assert.ok(prepared.ok);
  await assert.rejects(
    execute(e, prepared.operation, { variables: {} }),
    (error: Error & { code?: string }) => error.code === "RESPONSE_TOO_LARGE",
  );
  // A few wrong items are answered as they were: nulls with their errors.
  const few = createEngine(buildSupergraph(SUPERGRAPH), {
    maxResponseBytes: 2_000_000,
    fetch: () => Promise.resolve(new Response(`{"data":{"people":[1,{"id":"a"}]}}`)),
  });
  const again = prepare(few, { query: "{ people { id } }" });
  assert.ok(again.ok);
  const result = await execute(few, again.operation, { variables: {} });
  assert.deepEqual(result.data, { people: [null, { id: "a" }] });
  assert.equal(result.errors?.[0]?.extensions?.code, "SUBGRAPH_INVALID_RESPONSE");
});
