/**
 * A subgraph's redirect is not followed: following it would re-send the
 * query, its variables and the forwarded headers (all but `Authorization`,
 * which fetch drops across origins) to whatever host the `Location` names.
 * Real sockets: the router, a subgraph answering 307, and the host it names.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startRouter } from "../../lib/cli/serve.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { oneSubgraphWorkspace } from "./_workspace.ts";

Deno.test("a subgraph answering 307 gets SUBGRAPH_ERROR; the host it names receives nothing", async () => {
  const received: Record<string, string>[] = [];
  const elsewhere = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (request) => {
    received.push(Object.fromEntries(request.headers));
    return Response.json({ data: { hello: "from elsewhere" } });
  });
  const sub = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () =>
      new Response(null, {
        status: 307,
        headers: { location: `http://localhost:${elsewhere.addr.port}/collect` },
      }),
  );
  const dir = await oneSubgraphWorkspace(`http://127.0.0.1:${sub.addr.port}/graphql`, {
    sdl: "type Query { hello(secret: String): String }",
    extra: `headers:
  all:
    request:
      - { op: propagate, named: Authorization }
      - { op: set, name: X-Api-Key, value: subgraph-key }
`,
  });
  const router = await startRouter({
    configPath: join(dir, "config.yaml"),
    log: createLogger({ level: "error", write: () => {} }),
  });
  try {
    const response = await fetch(`${router.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer client-token" },
      body: JSON.stringify({
        query: "query($s: String) { hello(secret: $s) }",
        variables: { s: "card-number" },
      }),
    });
    const body = await response.json();
    assert.equal(body.data.hello, null);
    assert.equal(body.errors[0].extensions.code, "SUBGRAPH_ERROR");
    assert.match(
      body.errors[0].message,
      /"greetings" answered HTTP 307 with (an empty body|a body that is not JSON)/,
    );
    assert.deepEqual(received, [], "the redirect target got no request (no key, no variables)");
  } finally {
    await router.shutdown();
    await sub.shutdown();
    await elsewhere.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
