/**
 * Multi-worker mode (`workers: N`, `lib/cli/workers.ts`): N isolates share one
 * listener (SO_REUSEPORT), port 0 included; all of them answer; shutdown stops
 * them all (Deno's op and resource sanitizers prove nothing leaks).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startWorkers } from "../../lib/cli/workers.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { oneSubgraphWorkspace } from "./_workspace.ts";

/** `heap: null`: V8's defaults, so the main isolate serves (no supervision). */
async function workspace(
  workers: number,
  heap: { young: number; old: number } | null = { young: 24, old: 128 },
  subgraphUrl = "http://127.0.0.1:9/graphql",
): Promise<string> {
  return await oneSubgraphWorkspace(subgraphUrl, {
    sdl: "type Query { hello: String }",
    extra: `log_level: error
workers: ${workers}
heap: { max_young_generation_mb: ${heap?.young ?? 0}, max_old_generation_mb: ${heap?.old ?? 0} }
`,
  });
}

/** One HTTP/1.1 request on a fresh connection (so the kernel picks an isolate each time). */
/** CSRF prevention (issue 14): GET queries carry a preflight header. */
const PREFLIGHT = { "graphql-preflight": "1" };

async function getOnNewConnection(port: number, path: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(
      new TextEncoder().encode(
        `GET ${path} HTTP/1.1\r\nHost: x\r\nGraphQL-Preflight: 1\r\nConnection: close\r\n\r\n`,
      ),
    );
    let text = "";
    const buffer = new Uint8Array(4096);
    const decoder = new TextDecoder();
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += decoder.decode(buffer.subarray(0, n), { stream: true });
    }
    return text.split("\r\n")[0] ?? "";
  } finally {
    conn.close();
  }
}

Deno.test("DESIGN 5: workers: 2 serves one port (port 0 too) from two isolates and stops both", async () => {
  const dir = await workspace(2, null);
  const lines: string[] = [];
  const router = await startWorkers({
    configPath: join(dir, "config.yaml"),
    env: { LOG_LEVEL: "error" },
    log: createLogger({ level: "info", write: (line) => lines.push(line) }),
  });
  try {
    const serving = lines.map((line) => JSON.parse(line)).find((entry) =>
      entry.msg === "Workers serving"
    );
    assert.ok(serving, `no "Workers serving" line in ${lines.join("\n")}`);
    assert.equal(serving.workers, 2, "the second isolate failed to bind the shared port");
    const port = Number(new URL(router.url).port);
    assert.notEqual(port, 0);
    const statuses = await Promise.all(
      Array.from({ length: 16 }, () => getOnNewConnection(port, "/health/live")),
    );
    for (const status of statuses) assert.match(status, /^HTTP\/1\.1 200/);
    assert.equal(await router.reload(), true);
  } finally {
    await router.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
  await router.finished;
});

Deno.test("DESIGN 5: workers: 1 without heap limits is the plain router (no extra isolate), reloading its config file", async () => {
  const dir = await workspace(1, null);
  const lines: string[] = [];
  const router = await startWorkers({
    configPath: join(dir, "config.yaml"),
    log: createLogger({ level: "info", write: (line) => lines.push(line) }),
  });
  try {
    assert.ok(!lines.some((line) => line.includes("Workers serving")));
    const response = await fetch(`${router.url}/health/live`);
    await response.body?.cancel();
    assert.equal(response.status, 200);
    // The router started from the config startWorkers read; a reload reads the file again.
    const config = join(dir, "config.yaml");
    await Deno.writeTextFile(config, (await Deno.readTextFile(config)) + "graphql_path: /gql\n");
    assert.equal(await router.reload(), true);
    assert.equal(router.state().config.graphql_path, "/gql");
  } finally {
    await router.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("issue 8: with heap limits the router serves from supervised worker threads: port 0, reload, shutdown", async () => {
  for (const workers of [1, 2]) {
    const dir = await workspace(workers);
    const lines: string[] = [];
    const router = await startWorkers({
      configPath: join(dir, "config.yaml"),
      env: { LOG_LEVEL: "error" },
      log: createLogger({ level: "info", write: (line) => lines.push(line) }),
    });
    const port = Number(new URL(router.url).port);
    try {
      const serving = lines.map((line) => JSON.parse(line)).find((entry) =>
        entry.msg === "Workers serving"
      );
      assert.equal(serving?.supervised, true, lines.join("\n"));
      assert.equal(serving?.workers, workers);
      assert.deepEqual(serving?.heap, { max_young_generation_mb: 24, max_old_generation_mb: 128 });
      assert.notEqual(port, 0);
      // The main isolate holds no router: its state is only in the threads.
      assert.throws(() => router.state(), /serving isolates/);
      const statuses = await Promise.all(
        Array.from({ length: 8 }, () => getOnNewConnection(port, "/health/live")),
      );
      for (const status of statuses) assert.match(status, /^HTTP\/1\.1 200/);
      // A reload reaches every thread: the new graphql_path answers, the old one no longer.
      const config = join(dir, "config.yaml");
      await Deno.writeTextFile(config, (await Deno.readTextFile(config)) + "graphql_path: /gql\n");
      assert.equal(await router.reload(), true);
      const probes = await Promise.all(
        Array.from({ length: 8 }, () => getOnNewConnection(port, "/gql?query=%7B__typename%7D")),
      );
      for (const status of probes) assert.match(status, /^HTTP\/1\.1 200/);
      assert.match(await getOnNewConnection(port, "/graphql?query=%7B__typename%7D"), / 404 /);
    } finally {
      await router.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
    await router.finished;
    // Every thread stopped listening.
    await assert.rejects(() => Deno.connect({ hostname: "127.0.0.1", port }));
  }
});

Deno.test("issue 8: an oversized subgraph answer is refused; one that exhausts a thread's heap does not take the router down", async () => {
  // A subgraph whose answer (3 million objects) does not fit a 32 MiB old generation.
  const huge = `{"data":{"hello":"x"},"extensions":{"junk":[${'{"a":1},'.repeat(3_000_000)}{}]}}`;
  const subgraph = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => new Response(huge, { headers: { "content-type": "application/json" } }),
  );
  const dir = await workspace(
    1,
    { young: 16, old: 32 },
    `http://127.0.0.1:${subgraph.addr.port}/graphql`,
  );
  // With the default engine.max_subgraph_response_bytes (16 MB) the answer is refused cleanly.
  const bounded = await startWorkers({ configPath: join(dir, "config.yaml"), env: {} });
  try {
    const response = await fetch(`${bounded.url}/graphql?query=%7Bhello%7D`, {
      headers: PREFLIGHT,
    });
    const body = await response.json();
    assert.equal(body.errors?.[0]?.extensions?.code, "SUBGRAPH_ERROR", JSON.stringify(body));
    assert.match(body.errors[0].message, /engine\.max_subgraph_response_bytes/);
  } finally {
    await bounded.shutdown();
  }
  const lines: string[] = [];
  const router = await startWorkers({
    configPath: join(dir, "config.yaml"),
    // Let it in: the heap, not the limit, has to cope.
    env: {
      LOG_LEVEL: "error",
      ENGINE_MAX_SUBGRAPH_RESPONSE_BYTES: "100MB",
      TRAFFIC_SHAPING_ROUTER_REQUEST_TIMEOUT: "2s",
    },
    log: createLogger({ level: "info", write: (line) => lines.push(line) }),
    watchdogTimeoutMs: 1_000,
  });
  try {
    // V8 ends that request's work (or the whole thread, which the watchdog then
    // ends and the supervisor restarts): the client still gets an answer, the
    // thread's deadline (504) or the supervisor's (503 ISOLATE_ENDED).
    const lost = await fetch(`${router.url}/graphql?query=%7Bhello%7D`, {
      headers: PREFLIGHT,
      signal: AbortSignal.timeout(15_000),
    });
    const code = (await lost.json()).errors?.[0]?.extensions?.code;
    assert.ok(
      (lost.status === 504 && code === "GATEWAY_TIMEOUT") ||
        (lost.status === 503 && code === "ISOLATE_ENDED"),
      `${lost.status} ${code}`,
    );
    // ... and the router answers GraphQL again, on the same port.
    const deadline = Date.now() + 20_000;
    let answer = "";
    while (!answer.includes('"__typename":"Query"') && Date.now() < deadline) {
      answer = await fetch(`${router.url}/graphql?query=%7B__typename%7D`, {
        headers: PREFLIGHT,
        signal: AbortSignal.timeout(2_000),
      }).then((response) => response.text(), () => "");
      if (!answer) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(answer, '{"data":{"__typename":"Query"}}', lines.join("\n"));
    // The process survived; a restart, when there was one, was logged.
    if (lines.some((line) => line.includes("stopped answering"))) {
      assert.ok(lines.some((line) => line.includes("restarting it")), lines.join("\n"));
    }
    // Issue 15: an ended isolate's requests answered for it are counted in the error line.
    for (const line of lines.filter((l) => l.includes("restarting it"))) {
      const entry = JSON.parse(line);
      assert.equal(entry.level, "error");
      assert.equal(typeof entry.requests_answered_503, "number", line);
    }
  } finally {
    await router.shutdown();
    await subgraph.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("issue 15: a serving thread that blocks is ended; the supervisor answers its request 503 ISOLATE_ENDED, logs it, readiness 503 until the restart", async () => {
  // The first answer is 15 million objects: processing it blocks the thread's
  // event loop far longer than the watchdog waits for a ping.
  const huge = `{"data":{"hello":"x"},"extensions":{"junk":[${'{"a":1},'.repeat(15_000_000)}{}]}}`;
  let calls = 0;
  const subgraph = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () =>
      calls++ === 0
        ? new Response(huge, { headers: { "content-type": "application/json" } })
        : Response.json({ data: { hello: "again" } }),
  );
  const dir = await workspace(2, null, `http://127.0.0.1:${subgraph.addr.port}/graphql`);
  const lines: string[] = [];
  const router = await startWorkers({
    configPath: join(dir, "config.yaml"),
    env: {
      LOG_LEVEL: "error",
      ENGINE_MAX_SUBGRAPH_RESPONSE_BYTES: "400MB",
      ENGINE_MAX_RESPONSE_BYTES: "400MB",
    },
    log: createLogger({ level: "info", write: (line) => lines.push(line) }),
    watchdogTimeoutMs: 1_000,
  });
  try {
    const sentAt = performance.now();
    const answer = await fetch(`${router.url}/graphql?query=%7Bhello%7D`, {
      headers: PREFLIGHT,
      signal: AbortSignal.timeout(20_000),
    });
    const waited = performance.now() - sentAt;
    const readiness = await fetch(`${router.url}/health/ready`);
    assert.equal(answer.status, 503, lines.join("\n"));
    assert.equal(answer.headers.get("retry-after"), "1");
    assert.equal((await answer.json()).errors[0].extensions.code, "ISOLATE_ENDED");
    assert.ok(waited < 10_000, `answered by the watchdog, not a deadline (${waited} ms)`);
    assert.equal(readiness.status, 503, "one isolate is missing until it restarts");
    assert.equal((await readiness.json()).status, "restarting");
    const ended = lines.map((line) => JSON.parse(line)).find((entry) =>
      entry.msg.includes("stopped answering")
    );
    assert.equal(ended?.level, "error", lines.join("\n"));
    assert.equal(ended.requests_answered_503, 1);
    // The restarted thread serves; readiness comes back.
    const deadline = Date.now() + 20_000;
    let ready = 503;
    while (ready !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const probe = await fetch(`${router.url}/health/ready`);
      await probe.body?.cancel();
      ready = probe.status;
    }
    assert.equal(ready, 200);
    for (let i = 0; i < 4; i++) {
      const again = await fetch(`${router.url}/graphql?query=%7Bhello%7D`, { headers: PREFLIGHT });
      assert.deepEqual(await again.json(), { data: { hello: "again" } });
    }
    // The blocked thread ends once it yields; that starts no second replacement.
    while (!lines.some((line) => line.includes("exited at last")) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(lines.some((line) => line.includes("exited at last")), lines.join("\n"));
    const probe = await fetch(`${router.url}/health/ready`);
    assert.equal(probe.status, 200, await probe.text());
    assert.ok(!lines.some((line) => line.includes("exited; restarting it")), lines.join("\n"));
  } finally {
    await router.shutdown();
    await subgraph.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
