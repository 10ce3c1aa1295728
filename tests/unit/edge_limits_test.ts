import assert from "node:assert/strict";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { createEngine, execute, operationLimitsOf, prepare } from "../../lib/engine/mod.ts";
import { buildOperationRegistry } from "../../lib/operations/mod.ts";
import { buildSupergraph } from "../../lib/supergraph/mod.ts";
import {
  deepChain,
  edgeState,
  fragmentBomb,
  graphqlPost,
  handlerOf,
  mcpExecute,
  mcpToolText,
  SUPERGRAPH,
} from "./_edge_fixture.ts";

const MODEL = buildSupergraph(SUPERGRAPH);

function engineWith(security: Record<string, unknown> = {}) {
  const limits = operationLimitsOf(parseConfig({ security }).security);
  return createEngine(MODEL, {
    limits,
    fetch: () => Promise.reject(new Error("no subgraph call expected")),
  });
}

function codeOf(result: ReturnType<typeof prepare>): unknown {
  return result.ok ? "ok" : result.errors[0]?.extensions?.code;
}

Deno.test("issue 14: a fragment bomb is refused with MAX_FIELDS_EXCEEDED before validation and normalization", () => {
  const result = prepare(engineWith(), { query: fragmentBomb(25) });
  assert.equal(result.ok ? "" : result.stage, "limits");
  assert.equal(codeOf(result), "MAX_FIELDS_EXCEEDED");
  const message = result.ok ? "" : result.errors[0]?.message ?? "";
  assert.match(message, /33554432\) exceeds the limit of 3500/);
  assert.match(message, /security\.parser_limits\.total_fields_limit/);
});

Deno.test("issue 14: a fragment bomb just under the field limit passes (counted, not refused by shape)", () => {
  // 2^11 = 2048 fields after expansion, below 3 500.
  assert.equal(codeOf(prepare(engineWith(), { query: fragmentBomb(11) })), "ok");
  assert.equal(codeOf(prepare(engineWith(), { query: fragmentBomb(12) })), "MAX_FIELDS_EXCEEDED");
});

Deno.test("issue 14: a 2 800-level selection is refused with MAX_DEPTH_EXCEEDED, never a RangeError", () => {
  const result = prepare(engineWith(), { query: deepChain(2800) });
  assert.equal(codeOf(result), "MAX_DEPTH_EXCEEDED");
  const message = result.ok ? "" : result.errors[0]?.message ?? "";
  assert.match(message, /limit of 200 \(security\.parser_limits\.approximate_depth_limit\)/);
  assert.doesNotMatch(message, /RangeError|call stack/);
});

Deno.test("issue 14: depth built from a chain of fragments (shallow text) is refused by the field depth", () => {
  // Each fragment adds one level: the text never nests more than 2 braces.
  const n = 400;
  let text = "{ users { ...R0 } }\n";
  for (let i = 0; i < n; i++) {
    text += i % 2 === 0
      ? `fragment R${i} on User { reviews { ...R${i + 1} } }\n`
      : `fragment R${i} on Review { author { ...R${i + 1} } }\n`;
  }
  text += n % 2 === 0 ? `fragment R${n} on User { id }\n` : `fragment R${n} on Review { id }\n`;
  const result = prepare(engineWith(), { query: text });
  assert.equal(codeOf(result), "MAX_DEPTH_EXCEEDED");
});

Deno.test("issue 14: deep nesting in inline fragments and list values is bounded by the approximate depth", () => {
  const inline = `{ ${"... on Query { ".repeat(300)}__typename${" }".repeat(300)} }`;
  assert.equal(codeOf(prepare(engineWith(), { query: inline })), "MAX_DEPTH_EXCEEDED");
  const list = `{ user(id: ${"[".repeat(3000)}1${"]".repeat(3000)}) { id } }`;
  assert.equal(codeOf(prepare(engineWith(), { query: list })), "MAX_DEPTH_EXCEEDED");
});

Deno.test("issue 14: braces inside strings, block strings and comments do not count as depth", () => {
  const query =
    `# {{{{{{{{{{\n{ search(text: "{{{{{{{{{{{{") { __typename } product(upc: """{{{{{{{{{{""") { upc } }`;
  const result = prepare(engineWith({ parser_limits: { approximate_depth_limit: 3 } }), { query });
  assert.equal(codeOf(result), "ok");
});

Deno.test("issue 14: complexity limits are off by default and refuse with their own codes when on", () => {
  const aliases = `{ ${Array.from({ length: 700 }, (_, i) => `a${i}: __typename`).join(" ")} }`;
  assert.equal(codeOf(prepare(engineWith(), { query: aliases })), "ok");
  const on = (key: string, limit: number) =>
    engineWith({
      complexity_limits: { [key]: { enabled: true, limit } },
    });
  assert.equal(
    codeOf(prepare(on("root_field_aliases", 10), { query: aliases })),
    "MAX_ROOT_FIELD_ALIASES_EXCEEDED",
  );
  assert.equal(
    codeOf(prepare(on("root_fields", 10), { query: aliases })),
    "MAX_ROOT_FIELDS_EXCEEDED",
  );
  assert.equal(codeOf(prepare(on("total_fields", 10), { query: aliases })), "MAX_FIELDS_EXCEEDED");
  assert.equal(codeOf(prepare(on("depth", 3), { query: deepChain(4) })), "MAX_DEPTH_EXCEEDED");
  assert.equal(codeOf(prepare(on("depth", 6), { query: deepChain(4) })), "ok");
  const message = (() => {
    const r = prepare(on("root_fields", 10), { query: aliases });
    return r.ok ? "" : r.errors[0]?.message ?? "";
  })();
  assert.match(
    message,
    /\(700\) exceeds the limit of 10 \(security\.complexity_limits\.root_fields\.limit\)/,
  );
});

Deno.test("issue 14: root fields are counted through fragments, as after expansion", () => {
  const query = "{ ...A ...A } fragment A on Query { a: __typename b: __typename }";
  const r = prepare(
    engineWith({ complexity_limits: { root_field_aliases: { enabled: true, limit: 3 } } }),
    { query },
  );
  assert.equal(codeOf(r), "MAX_ROOT_FIELD_ALIASES_EXCEEDED");
});

Deno.test("issue 14: ignore_introspection lets an introspection-only operation pass the complexity limits", () => {
  const query = "{ __schema { types { name fields { name } } } }";
  const strict = { complexity_limits: { depth: { enabled: true, limit: 2 } } };
  assert.equal(codeOf(prepare(engineWith(strict), { query })), "MAX_DEPTH_EXCEEDED");
  const lenient = {
    complexity_limits: { depth: { enabled: true, limit: 2 }, ignore_introspection: true },
  };
  assert.equal(codeOf(prepare(engineWith(lenient), { query })), "ok");
});

Deno.test("issue 14: fragment cycles do not hang: the document is refused by validation", () => {
  const query = "{ ...A } fragment A on Query { ...B } fragment B on Query { __typename ...A }";
  const result = prepare(engineWith(), { query });
  assert.equal(result.ok ? "" : result.stage, "validate");
});

Deno.test("a 1.4 KB web of fragment cycles, or a fragment DAG ending in an unknown fragment, is refused by validation in milliseconds (the ofType walk expanded every path: 12 s, then exponential)", () => {
  const spreads = (i: number, n: number) =>
    [0, 1, 2].map((j) => `...F${(i * 7 + j) % n}`).join(" ");
  let web = "{ ...F0 }";
  for (let i = 0; i < 30; i++) web += ` fragment F${i} on Query { ${spreads(i, 30)} }`;
  let dag = "{ ...F0 }";
  for (let i = 0; i < 40; i++) dag += ` fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`;
  dag += " fragment F40 on Query { ...Unknown }";
  for (const query of [web, dag]) {
    const started = performance.now();
    const result = prepare(engineWith(), { query });
    const elapsed = performance.now() - started;
    assert.equal(result.ok ? "" : result.stage, "validate");
    assert.ok(elapsed < 3000, `${elapsed} ms`);
  }
});

Deno.test("nested ofType is counted through fragment spreads and inline fragments", () => {
  const engine = createEngine(MODEL, {
    introspection: true,
    fetch: () => Promise.reject(new Error("no subgraph call expected")),
  });
  const query = (levels: number) => {
    let text = '{ __type(name: "User") { ...T0 } }';
    for (let i = 0; i < levels; i++) {
      const next = i + 1 < levels ? `...T${i + 1}` : "name";
      text += i % 2 === 0
        ? ` fragment T${i} on __Type { name ofType { ${next} } }`
        : ` fragment T${i} on __Type { ... on __Type { ofType { kind ${next} } } }`;
    }
    return text;
  };
  assert.equal(codeOf(prepare(engine, { query: query(10) })), "ok");
  const refused = prepare(engine, { query: query(11) });
  assert.equal(codeOf(refused), "GRAPHQL_VALIDATION_FAILED");
  assert.match(
    refused.ok ? "" : refused.errors[0]!.message,
    /"ofType" is nested 11 levels deep; at most 10/,
  );
});

Deno.test("issue 14: an operation over the limits in operations_dir is refused at load, file named", () => {
  const registry = buildOperationRegistry([
    { path: "Bomb.graphql", text: fragmentBomb(20) },
    { path: "Ok.graphql", text: "query Ok { __typename }" },
  ], MODEL.apiSchema);
  assert.deepEqual(registry.operations.map((o) => o.name), ["Ok"]);
  assert.equal(registry.skipped[0]?.path, "Bomb.graphql");
  assert.match(registry.skipped[0]?.reason ?? "", /total_fields_limit/);
});

Deno.test("issue 14: /graphql answers a limit refusal with 400 and its code, for both media types", async () => {
  const handle = handlerOf(await edgeState());
  for (const accept of ["application/json", "application/graphql-response+json"]) {
    const response = await handle(graphqlPost({ query: fragmentBomb(25) }, { accept }));
    assert.equal(response.status, 400);
    const body = await response.json();
    assert.equal(body.errors[0].extensions.code, "MAX_FIELDS_EXCEEDED");
    assert.equal(body.errors[0].extensions.limit, 3500);
  }
  const deep = await handle(graphqlPost({ query: deepChain(2800) }));
  assert.equal(deep.status, 400);
  assert.equal((await deep.json()).errors[0].extensions.code, "MAX_DEPTH_EXCEEDED");
});

Deno.test("issue 14: MCP execute_graphql applies the same limits (the serving thread never stalls)", async () => {
  const handle = handlerOf(await edgeState());
  const bomb = await mcpToolText(await handle(mcpExecute(fragmentBomb(25))));
  assert.match(bomb, /\(33554432\) exceeds the limit of 3500/);
  const deep = await mcpToolText(await handle(mcpExecute(deepChain(2800))));
  assert.match(deep, /exceeds the limit of 200/);
  assert.doesNotMatch(deep, /RangeError/);
});

Deno.test("issue 14: approximate_depth_limit is capped at 1000 (it bounds the recursive walks)", () => {
  assert.throws(
    () => parseConfig({ security: { parser_limits: { approximate_depth_limit: 5000 } } }),
    { code: "CONFIG_INVALID", details: { path: "security.parser_limits.approximate_depth_limit" } },
  );
});

Deno.test("issue 14: at the largest depth limit a 999-level operation is planned, executed and shaped without overflow", async () => {
  const composed = composeSupergraph([{
    name: "nodes",
    url: "http://nodes.invalid/graphql",
    sdl: `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
type Node { next: Node v: Int }
type Query { a: Node }`,
  }]);
  assert.ok(composed.ok);
  const depth = 998;
  let data: Record<string, unknown> = { v: 1 };
  for (let i = 0; i < depth; i++) data = { next: data, v: 1 };
  const limits = operationLimitsOf(
    parseConfig({ security: { parser_limits: { approximate_depth_limit: 1000 } } }).security,
  );
  const engine = createEngine(buildSupergraph(composed.supergraphSdl), {
    limits,
    fetch: () => Promise.resolve(Response.json({ data: { a: data } })),
  });
  const prepared = prepare(engine, {
    query: `{ a { ${"next { ".repeat(depth)}v${" }".repeat(depth)} } }`,
  });
  assert.ok(prepared.ok);
  const result = await execute(engine, prepared.operation);
  assert.equal(result.errors, undefined);
  let node = result.data?.a as Record<string, unknown>;
  let levels = 0;
  while (node.next) {
    node = node.next as Record<string, unknown>;
    levels++;
  }
  assert.equal(levels, depth);
});
