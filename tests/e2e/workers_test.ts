/**
 * Multi-worker mode (`workers: N`, `lib/cli/workers.ts`): N isolates share one
 * listener (SO_REUSEPORT), port 0 included; all of them answer; shutdown stops
 * them all (Deno's op and resource sanitizers prove nothing leaks).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startWorkers } from "../../lib/cli/workers.ts";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { createLogger } from "../../lib/log/mod.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';

async function workspace(workers: number): Promise<string> {
  const composed = composeSupergraph([{
    name: "greetings",
    url: "http://127.0.0.1:9/graphql",
    sdl: `${LINK}\ntype Query { hello: String }`,
  }]);
  if (!composed.ok) throw new Error("does not compose");
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(join(dir, "ops"));
  await Deno.writeTextFile(join(dir, "super.graphql"), composed.supergraphSdl);
  await Deno.writeTextFile(
    join(dir, "config.yaml"),
    `listen_addr: 127.0.0.1:0
supergraph_path: super.graphql
operations_dir: ops
log_level: error
workers: ${workers}
mcp: { enabled: false }
`,
  );
  return dir;
}

/** One HTTP/1.1 request on a fresh connection (so the kernel picks an isolate each time). */
async function getOnNewConnection(port: number, path: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(
      new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
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
  const dir = await workspace(2);
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

Deno.test("DESIGN 5: workers: 1 is the plain router (no extra isolate), reloading its config file", async () => {
  const dir = await workspace(1);
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
