/**
 * Issue 34: the input values of a request (variables and argument literals)
 * are counted before coercion and held to
 * `security.parser_limits.max_input_values`: a 2.4 MB body of 300 000 small
 * objects is refused with 400 `MAX_INPUT_VALUES_EXCEEDED` before any is
 * coerced, on a real router.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { oneSubgraphWorkspace } from "./_workspace.ts";

async function setUp(extra = "") {
  let calls = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (request) => {
    calls++;
    const body = await request.json();
    return Response.json({ data: { count: body.variables?.items?.length ?? 0 } });
  });
  const dir = await oneSubgraphWorkspace(`http://127.0.0.1:${server.addr.port}/graphql`, {
    name: "items",
    sdl: "input Item { a: Int }\ntype Query { count(items: [Item!]!): Int }",
    extra: `log_level: error\n${extra}`,
  });
  const router: RunningRouter = await startRouter({ configPath: join(dir, "config.yaml") });
  return {
    router,
    calls: () => calls,
    close: async () => {
      await router.shutdown();
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function post(router: RunningRouter, body: unknown) {
  const response = await fetch(`${router.url}/graphql`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/graphql-response+json",
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const QUERY = "query($items: [Item!]!) { count(items: $items) }";

Deno.test("issue 34: 300 000 small input objects are refused before coercion (400 MAX_INPUT_VALUES_EXCEEDED)", async () => {
  const { router, calls, close } = await setUp();
  try {
    const items = Array.from({ length: 300_000 }, () => ({ a: 1 }));
    const refused = await post(router, { query: QUERY, variables: { items } });
    assert.equal(refused.status, 400);
    const [error] = refused.body.errors;
    assert.equal(error.extensions.code, "MAX_INPUT_VALUES_EXCEEDED");
    assert.equal(error.extensions.limit, 100_000);
    assert.match(error.message, /security\.parser_limits\.max_input_values/);
    assert.equal(calls(), 0);
    const fine = await post(router, { query: QUERY, variables: { items: items.slice(0, 1000) } });
    assert.equal(fine.status, 200);
    assert.deepEqual(fine.body, { data: { count: 1000 } });
  } finally {
    await close();
  }
});

Deno.test("issue 34: max_input_values counts the argument literals and the variables together", async () => {
  const { router, calls, close } = await setUp(
    "security: { parser_limits: { max_input_values: 10 } }\n",
  );
  try {
    const items = (n: number) => Array.from({ length: n }, () => ({ a: 1 }));
    // A list, 4 objects, 4 scalars: 9 values.
    assert.equal(
      (await post(router, { query: QUERY, variables: { items: items(4) } })).status,
      200,
    );
    const variables = await post(router, { query: QUERY, variables: { items: items(5) } });
    assert.equal(variables.status, 400);
    assert.equal(variables.body.errors[0].extensions.code, "MAX_INPUT_VALUES_EXCEEDED");
    const literal = `{ count(items: [${items(5).map(() => "{ a: 1 }").join(", ")}]) }`;
    const inline = await post(router, { query: literal });
    assert.equal(inline.status, 400);
    assert.equal(inline.body.errors[0].extensions.code, "MAX_INPUT_VALUES_EXCEEDED");
    // 3 literal objects (7 values) and 2 variable items (5 values): 12 together.
    const mixed = await post(router, {
      query:
        "query($b: [Item!]!) { x: count(items: [{ a: 1 }, { a: 2 }, { a: 3 }]) y: count(items: $b) }",
      variables: { b: items(2) },
    });
    assert.equal(mixed.status, 400);
    assert.equal(calls(), 1, "only the first request reached the subgraph");
  } finally {
    await close();
  }
});
