/**
 * The GraphQL facet's side of ART (spec §5.5–5.6): the trace gate answers
 * before execution, a traced response carries `extensions.trace` and is never
 * cached, an untraced one is left alone.
 */
import assert from "node:assert/strict";
import { serveSubgraph } from "../../demo/subgraph.ts";
import { startRouter } from "../../lib/cli/serve.ts";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { silentLogger } from "../../lib/log/mod.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';

async function withRouter(
  raw: Record<string, unknown>,
  fn: (url: string, calls: () => number) => Promise<void>,
): Promise<void> {
  let calls = 0;
  const subgraph = serveSubgraph("greetings", {
    typeDefs: `${LINK}\ntype Query { hello: String! }`,
    resolvers: { Query: { hello: () => "world" } },
  }, { onRequest: () => calls++ });
  const operationsDir = await Deno.makeTempDir();
  try {
    const composed = composeSupergraph([{
      name: "greetings",
      url: subgraph.url,
      sdl: subgraph.sdl,
    }]);
    assert.ok(composed.ok);
    const router = await startRouter({
      config: parseConfig({ listen_addr: "127.0.0.1:0", operations_dir: operationsDir, ...raw }),
      supergraphSdl: composed.supergraphSdl,
      log: silentLogger,
    });
    try {
      await fn(`${router.url}/graphql`, () => calls);
    } finally {
      await router.shutdown();
    }
  } finally {
    await subgraph.close();
    await Deno.remove(operationsDir, { recursive: true });
  }
}

function post(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ query: "{ hello }" }),
  });
}

Deno.test("spec 5.5/5.6: in dev mode X-GW-Trace and gw_trace return extensions.trace with Cache-Control: no-store", async () => {
  await withRouter({ dev_mode: true }, async (url) => {
    for (
      const response of [
        await post(url, { "x-gw-trace": "true" }),
        await post(`${url}?gw_trace=true`),
      ]
    ) {
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("cache-control"), "no-store");
      const body = await response.json();
      assert.deepEqual(body.data, { hello: "world" });
      // The trace records this request and the one fetch it made.
      const trace = body.extensions?.trace;
      assert.deepEqual(trace?.request?.body, { query: "{ hello }" });
      assert.equal(trace.fetches?.children?.[0]?.fetch?.source_name, "greetings");
    }
    const plain = await post(url);
    assert.equal(plain.headers.get("cache-control"), null);
    const body = await plain.json();
    assert.deepEqual(body, { data: { hello: "world" } });
  });
});

Deno.test("spec 5.5: without dev mode, force flag or a valid X-GW-Token a trace request is refused with 400 before execution", async () => {
  await withRouter({ dev_mode: false }, async (url, calls) => {
    for (const accept of ["application/json", "application/graphql-response+json"]) {
      const response = await post(url, { "x-gw-trace": "true", "x-gw-token": "not-a-jwt", accept });
      assert.equal(response.status, 400, accept);
      assert.ok(response.headers.get("content-type")?.startsWith(accept));
      const body = await response.json();
      assert.equal("data" in body, false);
      assert.equal(body.errors[0].extensions.code, "INVALID_TRACE_TOKEN");
    }
    assert.equal(calls(), 0, "no subgraph was called");
  });
});

Deno.test("spec 5.6: ENGINE_ENABLE_REQUEST_TRACING=false ignores trace requests", async () => {
  await withRouter({ dev_mode: true, engine: { enable_request_tracing: false } }, async (url) => {
    const response = await post(url, { "x-gw-trace": "true" });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("cache-control"), null);
    assert.deepEqual(await response.json(), { data: { hello: "world" } });
  });
});
