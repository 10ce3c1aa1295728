/**
 * Issue 39: merging two subgraphs' answers for the same selected field stops at
 * `MAX_DATA_DEPTH`. `Item.meta` is a `@shareable` JSON scalar: `specs` answers it
 * for the key `pricing` is entered by (`id meta`), and `pricing` answers it
 * again beside `price`; the two values are merged into one object. Each is a
 * JSON object nested 100 000 deep (a scalar's value is kept whole: no
 * selection cuts it), so a merge that recursed once per level overflowed the
 * stack (a 500). Past the bound the later answer replaces the value; the
 * client gets `null` for it with a `SUBGRAPH_INVALID_RESPONSE` error (printing a
 * value that deep overflows `JSON.stringify` once the response is large).
 *
 * @module
 */
import assert from "node:assert/strict";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { createHandler } from "../../lib/http/mod.ts";
import { silentLogger } from "../../lib/log/mod.ts";
import { buildState } from "../../lib/state/mod.ts";

const FED = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", ' +
  'import: ["@key", "@shareable"])\n';

const SUBGRAPHS = [
  {
    name: "catalog",
    sdl: FED + `
      type Query { items: [Item!]! }
      type Item @key(fields: "id") { id: ID! title: String! }`,
  },
  {
    name: "specs",
    sdl: FED + `
      scalar JSON
      type Item @key(fields: "id") @key(fields: "id meta") { id: ID! meta: JSON @shareable }`,
  },
  {
    name: "pricing",
    sdl: FED + `
      scalar JSON
      type Item @key(fields: "id meta") { id: ID! meta: JSON @shareable price: Float! }`,
  },
];

const LEVELS = 100_000;

/** `{"z":{"z":…1…}}`, `levels` deep, as JSON text (a subgraph's bytes, not an object). */
function deepText(levels: number): string {
  return '{"z":'.repeat(levels) + "1" + "}".repeat(levels);
}

/** A router over the three subgraphs; each answers from text (any JSON, however deep). */
async function router(levels: number, raw: Record<string, unknown> = {}) {
  const composed = composeSupergraph(
    SUBGRAPHS.map((s) => ({ ...s, url: `http://${s.name}.test/graphql` })),
  );
  if (!composed.ok) throw new Error("the test's subgraphs do not compose");
  const asked: string[] = [];
  const meta = deepText(levels);
  const answers: Record<string, string> = {
    catalog: '{"data":{"items":[{"__typename":"Item","id":"1","title":"t"}]}}',
    specs: `{"data":{"_entities":[{"meta":${meta}}]}}`,
    pricing: `{"data":{"_entities":[{"meta":${meta},"price":3}]}}`,
  };
  const state = await buildState({
    config: parseConfig(raw),
    log: silentLogger,
    supergraphSdl: composed.supergraphSdl,
    operationFiles: [],
    traceKeyPem: null,
    fetch: async (request) => {
      const subgraph = new URL(request.url).hostname.split(".")[0]!;
      const body = await request.json() as { query: string };
      asked.push(`${subgraph}: ${body.query}`);
      return new Response(answers[subgraph], { headers: { "content-type": "application/json" } });
    },
  });
  const handle = createHandler(() => state);
  const post = (query: string, search = "") =>
    handle(
      new Request(`http://router.test/graphql${search}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query }),
      }),
    );
  return { post, asked };
}

/** The answer to a value nested too deep: the field null, a clear error at its path. */
const REFUSED = {
  data: { items: [{ meta: null, price: 3 }] },
  errors: [{
    message: "The subgraph returned a value of type JSON nested deeper than 1024 levels",
    path: ["items", 0, "meta"],
    extensions: { code: "SUBGRAPH_INVALID_RESPONSE" },
  }],
};

/** A response without its errors' `request_id`s (one per request). */
function withoutRequestIds(body: { errors?: { extensions?: Record<string, unknown> }[] }) {
  for (const e of body.errors ?? []) delete e.extensions?.request_id;
  return body;
}

Deno.test("issue 39: two subgraphs answering the same selected JSON scalar 100 000 levels deep get a clear error, not a 500", async () => {
  const { post, asked } = await router(LEVELS);
  const response = await post("{ items { meta price } }");
  const text = await response.text();
  assert.equal(response.status, 200, text.slice(0, 300));
  // Both subgraphs were asked for `meta`: the answers were merged, not one dropped unasked.
  assert.equal(asked.filter((q) => /\bmeta\b/.test(q.split("{_entities")[1] ?? "")).length, 2);
  const { extensions: _, ...body } = JSON.parse(text);
  assert.deepEqual(withoutRequestIds(body), REFUSED);
});

Deno.test("issue 39: the same merge on a traced request (each fetch's answer copied) gets the same answer", async () => {
  const { post } = await router(LEVELS, { dev_mode: true });
  const response = await post("{ items { meta price } }", "?gw_trace=true");
  const text = await response.text();
  assert.equal(response.status, 200, text.slice(0, 300));
  const { extensions, ...body } = JSON.parse(text);
  assert.deepEqual(withoutRequestIds(body), REFUSED);
  assert.ok(extensions?.trace, "the request was traced");
});

Deno.test("issue 39: a JSON scalar exactly 1024 levels deep is answered whole", async () => {
  const { post } = await router(1024);
  const response = await post("{ items { meta price } }");
  const text = await response.text();
  assert.equal(response.status, 200);
  const body = JSON.parse(text);
  assert.equal(body.errors, undefined, text.slice(0, 300));
  assert.equal(JSON.stringify(body.data.items[0].meta), deepText(1024));
});

Deno.test("issue 39: the same shape a few levels deep merges the two answers", async () => {
  const { post } = await router(3);
  const response = await post("{ items { title meta price } }");
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    data: { items: [{ title: "t", meta: { z: { z: { z: 1 } } }, price: 3 }] },
  });
});
