/**
 * Issue 15 over real sockets: a query's subgraph fetch is retried, a
 * mutation's never; the circuit breaker opens, fails fast and half-opens.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { oneSubgraphWorkspace, postQuery } from "./_workspace.ts";

async function setUp(
  answer: (request: Request) => Response,
  traffic: string,
): Promise<{ router: RunningRouter; close: () => Promise<void> }> {
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, answer);
  const dir = await oneSubgraphWorkspace(`http://127.0.0.1:${server.addr.port}/graphql`, {
    name: "counter",
    sdl: "type Query { hello: String }\ntype Mutation { bump: Int }",
    extra: `log_level: error\ntraffic_shaping:\n${traffic}`,
  });
  const router = await startRouter({ configPath: join(dir, "config.yaml") });
  return {
    router,
    close: async () => {
      await router.shutdown();
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const post = postQuery;

Deno.test("issue 15: a query's subgraph fetch is retried after a 503; a mutation's never is", async () => {
  const seen: string[] = [];
  const { router, close } = await setUp((request) => {
    seen.push(request.method);
    // Every first attempt fails.
    if (seen.length % 2 === 1) return new Response("busy", { status: 503 });
    return Response.json({ data: { hello: "again", bump: 1 } });
  }, "  all: { retry: { enabled: true, max_attempts: 2, interval: 10ms } }\n");
  try {
    assert.deepEqual(await post(router.url, "{ hello }"), { data: { hello: "again" } });
    assert.equal(seen.length, 2, "the query was sent twice");
    const mutation = await post(router.url, "mutation { bump }");
    assert.equal(seen.length, 3, "the mutation was sent once");
    assert.equal(mutation.data.bump, null);
    assert.ok(mutation.errors?.length > 0, JSON.stringify(mutation));
  } finally {
    await close();
  }
});

Deno.test("issue 15: a subgraph's circuit breaker opens (no request sent, SUBGRAPH_CIRCUIT_OPEN) and half-opens after sleep_window", async () => {
  let sent = 0;
  let healthy = false;
  const { router, close } = await setUp(
    () => {
      sent++;
      return healthy
        ? Response.json({ data: { hello: "back" } })
        : new Response("down", { status: 500 });
    },
    `  subgraphs:
    counter:
      circuit_breaker:
        enabled: true
        request_threshold: 3
        error_threshold_percentage: 50
        sleep_window: 300ms
`,
  );
  try {
    for (let i = 0; i < 3; i++) await post(router.url, "{ hello }");
    assert.equal(sent, 3);
    const open = await post(router.url, "{ hello }");
    assert.equal(sent, 3, "an open breaker sends nothing");
    assert.equal(open.errors[0].extensions.code, "SUBGRAPH_CIRCUIT_OPEN");
    assert.match(open.errors[0].message, /circuit breaker of the subgraph "counter" is open/);
    healthy = true;
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.deepEqual(await post(router.url, "{ hello }"), { data: { hello: "back" } });
    assert.equal(sent, 4, "the half-open probe went and closed the breaker");
    assert.deepEqual(await post(router.url, "{ hello }"), { data: { hello: "back" } });
  } finally {
    await close();
  }
});
