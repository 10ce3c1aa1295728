/**
 * Issue 18: traces without secrets. A real router traces a request whose
 * every header, propagated header, `set` header, subgraph URL query, subgraph
 * response header and client query string carries a sentinel: none of them
 * may appear anywhere in `extensions.trace` (names stay, values are `****`).
 */
import assert from "node:assert/strict";
import { composeServices } from "@theguild/federation-composition";
import { parse } from "graphql";
import { serveSubgraph } from "../../demo/subgraph.ts";
import { startRouter } from "../../lib/cli/serve.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { silentLogger } from "../../lib/log/mod.ts";

const SDL = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
type Query { hello: String }`;

Deno.test("issue 18: no sentinel from headers, propagated headers, subgraph URL query or client query reaches extensions.trace", async () => {
  const subgraph = serveSubgraph("a", {
    typeDefs: SDL,
    resolvers: { Query: { hello: () => "hi" } },
  });
  try {
    const composed = composeServices([{
      name: "a",
      typeDefs: parse(subgraph.sdl),
      url: `${subgraph.url}?api_key=SENTINEL-SUBGRAPH-URL`,
    }]);
    assert.equal(composed.errors, undefined);
    const config = parseConfig({
      listen_addr: "127.0.0.1:0",
      operations_dir: "/nonexistent-operations",
      mcp: { enabled: false },
      connect_rpc: { enabled: false },
      headers: {
        all: {
          request: [
            { op: "propagate", matching: ".*" },
            { op: "set", name: "X-Internal-Secret", value: "SENTINEL-SET-RULE" },
          ],
        },
      },
    }, { env: { DEV_MODE: "true" } });
    const router = await startRouter({
      config,
      supergraphSdl: composed.supergraphSdl!,
      log: silentLogger,
      fetch: async (request: Request) => {
        const response = await fetch(request);
        const headers = new Headers(response.headers);
        headers.set("x-upstream-token", "SENTINEL-SUBGRAPH-RESPONSE");
        headers.append("set-cookie", "session=SENTINEL-SET-COOKIE");
        return new Response(response.body, { status: response.status, headers });
      },
    });
    try {
      const response = await fetch(
        `${router.url}/graphql?gw_trace=true&token=SENTINEL-CLIENT-QUERY`,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-api-key": "SENTINEL-API-KEY",
            "x-tenant": "SENTINEL-TENANT",
            cookie: "sid=SENTINEL-COOKIE",
            "x-forwarded-for": "SENTINEL-XFF",
            "x-amz-security-token": "SENTINEL-AWS",
            "x-gw-trace": "true",
          },
          body: JSON.stringify({ query: "{ hello }" }),
        },
      );
      const body = await response.json();
      assert.deepEqual(body.data, { hello: "hi" });
      const trace = body.extensions?.trace;
      assert.ok(trace, "the request was traced");
      const text = JSON.stringify(trace);
      assert.doesNotMatch(text, /SENTINEL/, text.match(/.{60}SENTINEL.{20}/)?.[0]);
      // Names stay, values are masked; allowed headers stay readable.
      assert.deepEqual(trace.request.headers["X-Api-Key"], ["****"]);
      assert.deepEqual(trace.request.headers["Content-Type"], ["application/json"]);
      assert.match(trace.request.url, /\?gw_trace=\*\*\*\*&token=\*\*\*\*$/);
      const load = trace.fetches.fetch?.trace ?? trace.fetches.children?.[0]?.fetch?.trace;
      assert.match(load.input.url, /\?api_key=\*\*\*\*$/);
      assert.deepEqual(load.input.header["X-Api-Key"], ["****"], "propagated, masked");
    } finally {
      await router.shutdown();
    }
  } finally {
    await subgraph.close();
  }
});
