/**
 * Issue 15: graceful shutdown, Apollo's model. On SIGTERM readiness turns 503
 * at once while the listener still accepts for `shutdown_delay`; a slow
 * request in flight is answered; a keep-alive connection gets
 * `Connection: close` on its last response; the process exits within the
 * grace; a request still running when `grace_period` ends gets a 503, not a
 * reset.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startRouter } from "../../lib/cli/serve.ts";
import { startWorkers } from "../../lib/cli/workers.ts";
import { spawnServe } from "./_cli.ts";
import { oneSubgraphWorkspace } from "./_workspace.ts";

async function workspace(subgraphUrl: string, extra: string): Promise<string> {
  return await oneSubgraphWorkspace(subgraphUrl, { sdl: "type Query { hello: String }", extra });
}

/**
 * A subgraph that answers once `release()` is called (or `ms` pass, or its
 * request is aborted); `arrived` resolves when the first request is in.
 */
function slowSubgraph(ms: number) {
  const arrived = Promise.withResolvers<void>();
  const released = Promise.withResolvers<void>();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (request) => {
    arrived.resolve();
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      const done = () => {
        clearTimeout(timer);
        resolve(null);
      };
      request.signal.addEventListener("abort", done);
      released.promise.then(done);
    });
    return Response.json({ data: { hello: "finished" } });
  });
  return Object.assign(server, { arrived: arrived.promise, release: () => released.resolve() });
}

/** Writes one HTTP/1.1 request on an open connection and reads its head. */
async function exchange(conn: Deno.Conn, path: string): Promise<string> {
  await conn.write(new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
  const buffer = new Uint8Array(8192);
  let text = "";
  while (!text.includes("\r\n\r\n")) {
    const n = await conn.read(buffer);
    if (n === null) break;
    text += new TextDecoder().decode(buffer.subarray(0, n));
  }
  return text.toLowerCase();
}

/** GETs run only with a preflight header (`csrf_prevention`, issue 14). */
const PREFLIGHT = { headers: { "graphql-preflight": "1" } };

/** One isolate, or two threads behind the supervisor (`lib/cli/workers.ts`). */
const LAYOUTS = [["main isolate", ""], ["supervised threads", "workers: 2\n"]] as const;
/** The log line once every isolate serves. */
const SERVING = { "main isolate": "GW Router listening", "supervised threads": "Workers serving" };

for (const [layout, extra] of LAYOUTS) {
  Deno.test(`issue 15: SIGTERM drains (${layout}): readiness 503 at once, the slow request answered, keep-alive told to close, exit in the grace`, async () => {
    // Answers once the drain has been checked (the request outlasts shutdown_delay).
    const subgraph = slowSubgraph(10_000);
    const dir = await workspace(
      `http://127.0.0.1:${subgraph.addr.port}/graphql`,
      "shutdown_delay: 500ms\ngrace_period: 10s\n" + extra,
    );
    const serve = spawnServe(join(dir, "config.yaml"));
    const { child, lines } = serve;
    try {
      const { url } = JSON.parse(
        await serve.waitFor((l) => l.includes("GW Router listening")),
      );
      await serve.waitFor((l) => l.includes(SERVING[layout]));
      const port = Number(new URL(url).port);
      const keepAlive = await Deno.connect({ hostname: "127.0.0.1", port });
      assert.match(await exchange(keepAlive, "/health/live"), /^http\/1\.1 200/);
      const slow = fetch(`${url}/graphql?query=%7Bhello%7D`, PREFLIGHT);
      await subgraph.arrived;
      const sentAt = performance.now();
      child.kill("SIGTERM");
      await serve.waitFor((l) => l.includes('"Shutting down"'));
      const ready = await fetch(`${url}/health/ready`);
      assert.equal(ready.status, 503, "readiness turns 503 at once, while still accepting");
      assert.equal((await ready.json()).status, "draining");
      const last = await exchange(keepAlive, "/health/live");
      assert.match(last, /^http\/1\.1 200/);
      assert.match(last, /\r\nconnection: close\r\n/, "keep-alive told to close");
      keepAlive.close();
      subgraph.release();
      const answer = await slow;
      assert.deepEqual(
        { status: answer.status, body: await answer.json() },
        { status: 200, body: { data: { hello: "finished" } } },
        lines.join("\n"),
      );
      const status = await child.status;
      assert.equal(status.code, 0);
      assert.ok(performance.now() - sentAt < 10_000, "exited within the grace");
    } finally {
      subgraph.release();
      await serve.close();
      await subgraph.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

for (const [layout, extra] of LAYOUTS) {
  Deno.test(`issue 15: a request still running when grace_period ends gets 503 SHUTTING_DOWN, not a reset (${layout})`, async () => {
    const subgraph = slowSubgraph(5_000);
    const dir = await workspace(
      `http://127.0.0.1:${subgraph.addr.port}/graphql`,
      "grace_period: 300ms\nlog_level: error\n" + extra,
    );
    const router = await startWorkers({ configPath: join(dir, "config.yaml") });
    try {
      const slow = fetch(`${router.url}/graphql?query=%7Bhello%7D`, PREFLIGHT);
      await subgraph.arrived;
      const stopping = router.shutdown();
      const answer = await slow;
      assert.equal(answer.status, 503);
      const body = await answer.json();
      assert.equal(body.errors[0].extensions.code, "SHUTTING_DOWN");
      assert.equal(answer.headers.get("retry-after"), "1");
      await stopping;
    } finally {
      await router.shutdown();
      await subgraph.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("issue 15: a body still arriving when shutdown begins gets 503 SHUTTING_DOWN + Retry-After, not 400", async () => {
  const subgraph = slowSubgraph(0);
  const dir = await workspace(
    `http://127.0.0.1:${subgraph.addr.port}/graphql`,
    "grace_period: 500ms\nlog_level: error\n",
  );
  const router = await startRouter({ configPath: join(dir, "config.yaml") });
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: Number(new URL(router.url).port),
  });
  try {
    // Deno.serve stops reading request bodies once shutdown begins.
    await conn.write(new TextEncoder().encode(
      "POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
        'Content-Length: 100\r\n\r\n{"query":',
    ));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stopping = router.shutdown();
    const buffer = new Uint8Array(8192);
    let text = "";
    while (!text.includes("SHUTTING_DOWN") && !text.includes("BAD_REQUEST")) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
    }
    assert.match(text, /^HTTP\/1\.1 503/, text);
    assert.match(text, /retry-after: 1/i);
    assert.match(text, /"code":"SHUTTING_DOWN"/);
    await stopping;
  } finally {
    conn.close();
    await router.shutdown();
    await subgraph.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
