/**
 * Issue 43, response header rules (`headers.*.response`): a subgraph's
 * `Set-Cookie` reaches the client by a rule and never without one; values of
 * several subgraphs merge (cookies appended, `Cache-Control` to the most
 * restrictive); on GraphQL, Connect and a batch; router on production
 * settings (dev mode off, access logs, metrics).
 */
import assert from "node:assert/strict";
import { type RunningSubgraph, serveSubgraph } from "../../demo/subgraph.ts";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { silentLogger } from "../../lib/log/mod.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';

/** A real subgraph behind a front that adds response headers, as a subgraph's framework would. */
function subgraphWithHeaders(
  name: string,
  field: string,
  headers: readonly [string, string][],
): { subgraph: RunningSubgraph; front: Deno.HttpServer; url: string } {
  const subgraph = serveSubgraph(name, {
    typeDefs: `${LINK}\ntype Query { ${field}: String }`,
    resolvers: { Query: { [field]: () => `${field}!` } },
  });
  const front = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const answer = await fetch(subgraph.url, {
      method: "POST",
      headers: req.headers,
      body: await req.text(),
    });
    const out = new Headers(answer.headers);
    for (const [header, value] of headers) out.append(header, value);
    return new Response(answer.body, { status: answer.status, headers: out });
  });
  return { subgraph, front, url: `http://127.0.0.1:${front.addr.port}/graphql` };
}

async function withRouter(
  headers: Record<string, unknown>,
  fn: (router: RunningRouter) => Promise<void>,
): Promise<void> {
  const a = subgraphWithHeaders("accounts", "me", [
    ["set-cookie", "session=abc; HttpOnly; Path=/"],
    ["cache-control", "public, max-age=60"],
    ["x-internal-host", "accounts-7f9"],
  ]);
  const p = subgraphWithHeaders("products", "top", [
    ["set-cookie", "pref=dark; Path=/"],
    ["cache-control", "private, max-age=30"],
    ["x-served-by", "products-1"],
  ]);
  const operationsDir = await Deno.makeTempDir({ prefix: "gw_resp_headers_" });
  await Deno.writeTextFile(`${operationsDir}/GetBoth.graphql`, "query GetBoth { me top }\n");
  let router: RunningRouter | undefined;
  try {
    const composed = composeSupergraph([
      { name: "accounts", url: a.url, sdl: a.subgraph.sdl },
      { name: "products", url: p.url, sdl: p.subgraph.sdl },
    ]);
    assert.ok(composed.ok);
    router = await startRouter({
      config: parseConfig({
        listen_addr: "127.0.0.1:0",
        dev_mode: false,
        operations_dir: operationsDir,
        mcp: { enabled: false },
        batching: { enabled: true },
        telemetry: { metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:0" } } },
        headers,
      }, { env: {}, baseDir: "." }),
      supergraphSdl: composed.supergraphSdl,
      log: silentLogger,
    });
    await fn(router);
  } finally {
    await router?.shutdown();
    await Promise.all([
      a.subgraph.close(),
      p.subgraph.close(),
      a.front.shutdown(),
      p.front.shutdown(),
    ]);
    await Deno.remove(operationsDir, { recursive: true });
  }
}

async function graphql(router: RunningRouter, body: unknown): Promise<Response> {
  const response = await fetch(`${router.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await response.body?.cancel();
  return response;
}

const RULES = {
  all: {
    response: [
      { op: "propagate", named: "Set-Cookie" },
      { op: "propagate", named: "Cache-Control" },
    ],
  },
  subgraphs: {
    products: {
      response: [{ op: "propagate", named: "X-Served-By", rename: "X-Products-Served-By" }],
    },
  },
};

Deno.test("issue 43: a subgraph's Set-Cookie reaches the client by a rule; values of two subgraphs merge", async () => {
  await withRouter(RULES, async (router) => {
    const response = await graphql(router, { query: "{ me top }" });
    assert.equal(response.status, 200);
    assert.deepEqual(response.headers.getSetCookie().sort(), [
      "pref=dark; Path=/",
      "session=abc; HttpOnly; Path=/",
    ]);
    // public 60 s and private 30 s: the most restrictive of both.
    assert.equal(response.headers.get("cache-control"), "private, max-age=30");
    assert.equal(response.headers.get("x-products-served-by"), "products-1");
    // No rule names these: they never reach the client.
    assert.equal(response.headers.get("x-internal-host"), null);
    assert.equal(response.headers.get("x-served-by"), null);

    // Only what the fetched subgraph answered: accounts alone.
    const one = await graphql(router, { query: "{ me }" });
    assert.deepEqual(one.headers.getSetCookie(), ["session=abc; HttpOnly; Path=/"]);
    assert.equal(one.headers.get("cache-control"), "public, max-age=60");
    assert.equal(one.headers.get("x-products-served-by"), null);

    // Connect: the same rules on a registered operation's answer.
    const connect = await fetch(`${router.url}/service.v1.GraphService/GetBoth`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1" },
      body: "{}",
    });
    assert.equal(connect.status, 200);
    await connect.body?.cancel();
    assert.equal(connect.headers.getSetCookie().length, 2);

    // A batch: each operation's headers, merged again.
    const batch = await graphql(router, [{ query: "{ me }" }, { query: "{ top }" }]);
    assert.equal(batch.status, 200);
    assert.equal(batch.headers.getSetCookie().length, 2);
    assert.equal(batch.headers.get("cache-control"), "private, max-age=30");
  });
});

Deno.test("issue 43: without a response rule no subgraph header reaches the client; a pattern never passes Set-Cookie", async () => {
  await withRouter({}, async (router) => {
    const response = await graphql(router, { query: "{ me top }" });
    assert.equal(response.status, 200);
    assert.deepEqual(response.headers.getSetCookie(), []);
    assert.equal(response.headers.get("cache-control"), null);
    assert.equal(response.headers.get("x-served-by"), null);
  });
  await withRouter({ all: { response: [{ op: "propagate", matching: ".*" }] } }, async (router) => {
    const response = await graphql(router, { query: "{ me top }" });
    // A broad pattern passes ordinary headers, never a cookie (only a named rule does).
    assert.deepEqual(response.headers.getSetCookie(), []);
    assert.equal(response.headers.get("x-served-by"), "products-1");
    assert.equal(response.headers.get("x-internal-host"), "accounts-7f9");
    // The router's own framing headers are never a subgraph's.
    assert.equal(response.headers.get("content-type"), "application/json; charset=utf-8");
  });
});

Deno.test("issue 43: a response rule naming a header the router sets itself is refused at load", () => {
  assert.throws(
    () =>
      parseConfig({
        headers: { all: { response: [{ op: "propagate", named: "Content-Length" }] } },
      }, { env: {}, baseDir: "." }),
    /headers\.all\.response\[0\]\.named.*"Content-Length" is a header the router sets on its own responses/,
  );
});
