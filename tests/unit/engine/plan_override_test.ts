import assert from "node:assert/strict";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { createEngine, execute, prepare } from "../../../lib/engine/mod.ts";
import {
  drawOverrideLabels,
  overrideLabelsOf,
} from "../../../lib/engine/prepare/override_labels.ts";
import { fetchesOf, planQuery } from "./_planner_fixture.ts";
import { parseConfig } from "../../../lib/config/mod.ts";
import { silentLogger } from "../../../lib/log/mod.ts";
import { buildState } from "../../../lib/state/mod.ts";

/** `T.moved` moves from a to b behind `percent(25)`; `T.flagged` behind a named label. */
const SUPERGRAPH = `
schema @link(url: "https://specs.apollo.dev/link/v1.0")
  @link(url: "https://specs.apollo.dev/join/v0.4", for: EXECUTION) { query: Query }
directive @join__graph(name: String!, url: String!) on ENUM_VALUE
directive @join__type(graph: join__Graph!, key: join__FieldSet, extension: Boolean! = false, resolvable: Boolean! = true, isInterfaceObject: Boolean! = false) repeatable on OBJECT | INTERFACE | UNION | ENUM | INPUT_OBJECT | SCALAR
directive @join__field(graph: join__Graph, requires: join__FieldSet, provides: join__FieldSet, type: String, external: Boolean, override: String, usedOverridden: Boolean, overrideLabel: String) repeatable on FIELD_DEFINITION | INPUT_FIELD_DEFINITION
directive @link(url: String, as: String, for: link__Purpose, import: [link__Import]) repeatable on SCHEMA
scalar join__FieldSet
scalar link__Import
enum link__Purpose { SECURITY EXECUTION }
enum join__Graph {
  A @join__graph(name: "a", url: "http://a/graphql")
  B @join__graph(name: "b", url: "http://b/graphql")
}
type Query @join__type(graph: A) { t: T @join__field(graph: A) }
type T @join__type(graph: A, key: "id") @join__type(graph: B, key: "id") {
  id: ID!
  moved: Int @join__field(graph: A, overrideLabel: "percent(25)") @join__field(graph: B, override: "a", overrideLabel: "percent(25)")
  flagged: Int @join__field(graph: A, overrideLabel: "beta") @join__field(graph: B, override: "a", overrideLabel: "beta")
}
`;
const MODEL = buildSupergraph(SUPERGRAPH);

Deno.test("issue 13 override: a progressive field is served by the original subgraph while its label is inactive", () => {
  const plan = planQuery(MODEL, `{ t { moved } }`).plan;
  assert.deepEqual(fetchesOf(plan.node), ["a query{t{moved}}"]);
});

Deno.test("issue 13 override: a progressive field is served by the overriding subgraph only while its label is active", () => {
  const plan = planQuery(MODEL, `{ t { moved } }`, { overrideLabels: new Set(["percent(25)"]) })
    .plan;
  assert.deepEqual(fetchesOf(plan.node), [
    "a query{t{__typename id}}",
    "b query($representations:[_Any!]!){_entities(representations:$representations){...on T{moved}}}",
  ]);
});

Deno.test("issue 13 override: percent(n) labels are drawn per request; named labels stay inactive", () => {
  const labels = overrideLabelsOf(MODEL);
  assert.deepEqual(labels, [{ label: "beta", percent: null }, {
    label: "percent(25)",
    percent: 25,
  }]);
  assert.deepEqual([...drawOverrideLabels(labels, () => 0.2)], ["percent(25)"]);
  assert.deepEqual([...drawOverrideLabels(labels, () => 0.3)], []);
});

Deno.test("issue 13 override: the engine plans each label draw separately (the plan cache key carries the labels)", async () => {
  let draw = 0.1;
  const sent: string[] = [];
  const engine = createEngine(MODEL, {
    random: () => draw,
    fetch: (request) => {
      const url = request instanceof Request ? request.url : String(request);
      sent.push(new URL(url).host);
      const body = url.includes("//a/")
        ? { data: { t: { __typename: "T", id: "1", moved: 1 } } }
        : { data: { _entities: [{ moved: 2 }] } };
      return Promise.resolve(Response.json(body));
    },
  });
  const prepared = prepare(engine, { query: `{ t { moved } }` });
  assert.ok(prepared.ok);
  assert.deepEqual((await execute(engine, prepared.operation)).data, { t: { moved: 2 } });
  draw = 0.9;
  assert.deepEqual((await execute(engine, prepared.operation)).data, { t: { moved: 1 } });
  assert.deepEqual(sent, ["a", "b", "a"]);
});

/** A router state on MODEL from a config, recording the subgraph hosts it fetches. */
async function routerWith(raw: Record<string, unknown>, sent: string[]) {
  return await buildState({
    config: parseConfig(raw, { env: {}, baseDir: "." }),
    log: silentLogger,
    supergraphSdl: SUPERGRAPH,
    operationFiles: [],
    traceKeyPem: null,
    fetch: (request) => {
      const url = request instanceof Request ? request.url : String(request);
      sent.push(new URL(url).host);
      const body = url.includes("//a/")
        ? { data: { t: { __typename: "T", id: "1", flagged: 1 } } }
        : { data: { _entities: [{ flagged: 2 }] } };
      return Promise.resolve(Response.json(body));
    },
  });
}

Deno.test("issue 43: override_labels turns a named label on or off, which changes the subgraph fetched", async () => {
  for (const [on, hosts, value] of [[true, ["a", "b"], 2], [false, ["a"], 1]] as const) {
    const sent: string[] = [];
    const state = await routerWith({ override_labels: { beta: on } }, sent);
    const prepared = prepare(state.engine, { query: `{ t { flagged } }` });
    assert.ok(prepared.ok);
    const result = await execute(state.engine, prepared.operation);
    assert.deepEqual(result.data, { t: { flagged: value } }, `beta: ${on}`);
    assert.deepEqual(sent, hosts, `beta: ${on}`);
  }
  // Without it a named label stays off.
  const sent: string[] = [];
  const state = await routerWith({}, sent);
  const prepared = prepare(state.engine, { query: `{ t { flagged } }` });
  assert.ok(prepared.ok);
  await execute(state.engine, prepared.operation);
  assert.deepEqual(sent, ["a"]);
});

Deno.test("issue 43: override_labels stops a percent(n) label's draw", async () => {
  const sent: string[] = [];
  const engine = createEngine(MODEL, {
    random: () => 0, // every draw would turn percent(25) on
    overrideLabels: { "percent(25)": false },
    fetch: (request) => {
      sent.push(new URL(request instanceof Request ? request.url : String(request)).host);
      return Promise.resolve(Response.json({ data: { t: { moved: 1 } } }));
    },
  });
  const prepared = prepare(engine, { query: `{ t { moved } }` });
  assert.ok(prepared.ok);
  await execute(engine, prepared.operation);
  assert.deepEqual(sent, ["a"]);
});

Deno.test("issue 43: a request's override labels win over the configuration's, and the plan cache keeps each plan apart", async () => {
  const sent: string[] = [];
  const engine = createEngine(MODEL, {
    random: () => 0.99, // percent(25) never drawn: only beta decides the key
    overrideLabels: { beta: true },
    fetch: (request) => {
      const url = request instanceof Request ? request.url : String(request);
      sent.push(new URL(url).host);
      const body = url.includes("//a/")
        ? { data: { t: { __typename: "T", id: "1", flagged: 1 } } }
        : { data: { _entities: [{ flagged: 2 }] } };
      return Promise.resolve(Response.json(body));
    },
  });
  const prepared = prepare(engine, { query: `{ t { flagged } }` });
  assert.ok(prepared.ok);
  const run = async (overrideLabels?: Record<string, boolean>) => {
    sent.length = 0;
    const result = await execute(
      engine,
      prepared.operation,
      overrideLabels ? { overrideLabels } : {},
    );
    return { data: result.data, sent: [...sent] };
  };
  // Configured on; then off for one request; then on again: each from its own cached plan.
  assert.deepEqual(await run(), { data: { t: { flagged: 2 } }, sent: ["a", "b"] });
  assert.deepEqual(await run({ beta: false }), { data: { t: { flagged: 1 } }, sent: ["a"] });
  assert.deepEqual(await run(), { data: { t: { flagged: 2 } }, sent: ["a", "b"] });
  assert.deepEqual(await run({ beta: false }), { data: { t: { flagged: 1 } }, sent: ["a"] });
  assert.equal(engine.plans.size, 2);
});

Deno.test("issue 43: a configured label no @override uses is warned about at load", async () => {
  const warnings: { msg: string; fields?: Record<string, unknown> }[] = [];
  await buildState({
    config: parseConfig({ override_labels: { beta: true, btea: true } }, { env: {}, baseDir: "." }),
    log: {
      ...silentLogger,
      warn: (msg, fields) => warnings.push({ msg, ...(fields ? { fields } : {}) }),
    },
    supergraphSdl: SUPERGRAPH,
    operationFiles: [],
    traceKeyPem: null,
  });
  const warning = warnings.find((w) => w.msg.startsWith("override_labels"));
  assert.deepEqual(warning?.fields, { labels: "btea" });
});
