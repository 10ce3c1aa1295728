/**
 * `@defer` benchmark: time to the first and the last part of a deferred query whose deferred
 * field comes from a subgraph delayed by 500 ms, GW side by side with Hive Gateway (npm
 * `@graphql-hive/gateway`, `deferStream: true`) on the same subgraphs and supergraph.
 *
 * ```sh
 * # once: Hive Gateway in a folder of its own (see /work/shared/bench/federation)
 * mkdir -p /tmp/hive && cp package.json package-lock.json /tmp/hive && (cd /tmp/hive && npm ci)
 * deno run -A bench/defer/run.ts --hive /tmp/hive [--rounds 20] [--delay 500] [--port 43100]
 * ```
 *
 * Subgraphs run in this process (ports `--port`+1..3); each gateway in its own process
 * (`--port`+10 GW, +11 Hive). Rounds alternate between the gateways, one request at a time,
 * after 3 warm-up requests each. Every run is printed, then min / median / max per gateway;
 * the parts of both are checked equal once merged, and their shapes (entries per part) shown.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { serveSubgraph } from "../../demo/subgraph.ts";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { deferArea } from "../../tests/e2e/defer/_graph.ts";
import { mergeParts } from "../../tests/e2e/federation/_incremental.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    hive: { type: "string" },
    rounds: { type: "string", default: "20" },
    delay: { type: "string", default: "500" },
    port: { type: "string", default: "43100" },
  },
});
const rounds = Number(values.rounds);
const delay = Number(values.delay);
const base = Number(values.port);
const QUERY = `{ products { id name ... @defer(label: "price") { price } } }`;
const ACCEPT = "multipart/mixed;deferSpec=20220824, application/json";

/** One request: when the first and the last part arrived (ms after sending), and the parts. */
interface Timed {
  readonly firstMs: number;
  readonly lastMs: number;
  readonly parts: Record<string, unknown>[];
}

async function timedRequest(url: string): Promise<Timed> {
  const t0 = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: ACCEPT },
    body: JSON.stringify({ query: QUERY }),
  });
  const type = response.headers.get("content-type") ?? "";
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1];
  if (boundary === undefined) throw new Error(`${url}: not multipart (${type})`);
  const delimiter = `\r\n--${boundary}`;
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const parts: Record<string, unknown>[] = [];
  let firstMs = NaN;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    buffer += r.value;
    // A part is complete when the delimiter after it has arrived (as Apollo Client reads).
    let at = buffer.indexOf(delimiter);
    while (at >= 0) {
      const chunk = buffer.slice(0, at);
      buffer = buffer.slice(at + delimiter.length);
      const body = chunk.indexOf("\r\n\r\n");
      if (body >= 0) {
        parts.push(JSON.parse(chunk.slice(body + 4)));
        if (parts.length === 1) firstMs = performance.now() - t0;
      }
      at = buffer.indexOf(delimiter);
    }
  }
  return { firstMs, lastMs: performance.now() - t0, parts };
}

async function waitReady(url: string, child: Deno.ChildProcess): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ products { id } }" }),
      });
      await r.body?.cancel();
      if (r.ok) return;
    } catch {
      // not yet listening
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  child.kill("SIGTERM");
  throw new Error(`${url} did not become ready`);
}

function stats(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return `min ${sorted[0]!.toFixed(1)}  median ${median.toFixed(1)}  max ${
    sorted.at(-1)!.toFixed(1)
  } ms`;
}

/** Entries per part: `[1, 3]` is the primary part then one part of three entries. */
function shape(parts: readonly Record<string, unknown>[]): number[] {
  return parts.map((p, i) => i === 0 ? 1 : ((p.incremental ?? []) as unknown[]).length);
}

const area = deferArea({ pricesDelayMs: delay });
const subgraphs = area.subgraphs.map((def, i) =>
  serveSubgraph(def.name, { typeDefs: def.typeDefs, resolvers: def.resolvers ?? {} }, {
    port: base + 1 + i,
  })
);
const dir = await Deno.makeTempDir();
const children: Deno.ChildProcess[] = [];
try {
  const composed = composeSupergraph(
    subgraphs.map((s, i) => ({ name: s.name, url: s.url, sdl: area.subgraphs[i]!.typeDefs })),
  );
  if (!composed.ok) throw new Error("composition failed");
  const supergraph = join(dir, "supergraph.graphql");
  await Deno.writeTextFile(supergraph, composed.supergraphSdl);
  await Deno.mkdir(join(dir, "ops"));
  await Deno.writeTextFile(
    join(dir, "config.yaml"),
    `listen_addr: 127.0.0.1:${base + 10}\nsupergraph_path: ${supergraph}\n` +
      `operations_dir: ${join(dir, "ops")}\nmcp: { enabled: false }\nlog_level: error\n`,
  );
  const root = new URL("../../", import.meta.url).pathname;
  const gw = new Deno.Command("deno", {
    args: ["run", "-A", "main.ts", "serve", "--config", join(dir, "config.yaml")],
    cwd: root,
    stdout: "null",
    stderr: "null",
  }).spawn();
  children.push(gw);
  const targets: { name: string; url: string }[] = [
    { name: "gw", url: `http://127.0.0.1:${base + 10}/graphql` },
  ];
  if (values.hive) {
    await Deno.writeTextFile(
      join(dir, "gateway.config.mjs"),
      "export const gatewayConfig = { deferStream: true };\n",
    );
    const hive = new Deno.Command("node", {
      args: [
        join(values.hive, "node_modules/@graphql-hive/gateway/dist/bin.js"),
        "supergraph",
        supergraph,
        "--host",
        "127.0.0.1",
        "--port",
        String(base + 11),
        "--fork",
        "1",
      ],
      cwd: dir,
      env: { NODE_ENV: "production" },
      stdout: "null",
      stderr: "null",
    }).spawn();
    children.push(hive);
    targets.push({ name: "hive-gateway", url: `http://127.0.0.1:${base + 11}/graphql` });
  }
  for (const [i, t] of targets.entries()) await waitReady(t.url, children[i]!);
  for (const t of targets) for (let i = 0; i < 3; i++) await timedRequest(t.url);
  const results = new Map<string, Timed[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const t of targets) {
      const timed = await timedRequest(t.url);
      results.get(t.name)!.push(timed);
      console.log(
        `round ${round + 1} ${t.name.padEnd(12)} first ${timed.firstMs.toFixed(1)} ms  last ${
          timed.lastMs.toFixed(1)
        } ms  parts ${JSON.stringify(shape(timed.parts))}`,
      );
    }
  }
  console.log(`\n${QUERY}\nprices delayed ${delay} ms, ${rounds} rounds each, alternating\n`);
  const merged: string[] = [];
  const sent: string[] = [];
  for (const [name, list] of results) {
    console.log(`${name.padEnd(12)} first part: ${stats(list.map((t) => t.firstMs))}`);
    console.log(`${"".padEnd(12)} last part:  ${stats(list.map((t) => t.lastMs))}`);
    console.log(`${"".padEnd(12)} parts:      ${JSON.stringify(list[0]!.parts)}`);
    merged.push(JSON.stringify(mergeParts(list[0]!.parts)));
    sent.push(JSON.stringify(list[0]!.parts));
  }
  if (merged.length > 1) {
    console.log(`\nsame parts: ${sent.every((m) => m === sent[0])}`);
    console.log(`merged answers equal: ${merged.every((m) => m === merged[0])}`);
  }
} finally {
  for (const child of children) {
    try {
      child.kill("SIGTERM");
    } catch {
      // already gone
    }
    await child.status;
  }
  await Promise.all(subgraphs.map((s) => s.close()));
  await Deno.remove(dir, { recursive: true });
}
