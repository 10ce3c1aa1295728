/**
 * Issue 40: the CPU a request costs with no plugin, with one no-op plugin on
 * every stage, and with a local coprocessor on subgraph requests (its own
 * process: only the router's CPU is counted), in one process and one run: a
 * federated query (a root fetch and an entity fetch, answered in-process)
 * through `createHandler`.
 *
 * Run: `deno run -A bench/plugins_bench.ts [rounds] [requests]`: the process's
 * CPU time and V8's bytes allocated per request, variants interleaved round by
 * round, median of the rounds (the bytes are steady where the CPU on a shared
 * machine is not). `GW_LIB=/path/to/other/lib` measures the no-plugin and no-op plugin variants of
 * another tree as well (today's main), in the same run.
 * `deno bench -A bench/plugins_bench.ts`: wall time per request.
 */
import process from "node:process";
import v8 from "node:v8";
import { fileURLToPath, pathToFileURL } from "node:url";
import { TWO_SUBGRAPHS_QUERY, TWO_SUBGRAPHS_SDL, twoSubgraphsFetch } from "./_two_subgraphs.ts";

const LIB = new URL("../lib/", import.meta.url);
const OTHER = Deno.env.get("GW_LIB");

const QUERY = JSON.stringify({
  query: TWO_SUBGRAPHS_QUERY,
});

type Handle = (request: Request) => Promise<Response>;

/** A handler over a state of `lib` (this tree's, or another's) with this config. */
async function handlerWith(lib: URL, config: Record<string, unknown>): Promise<Handle> {
  const { parseConfig } = await import(new URL("config/mod.ts", lib).href);
  const { createHandler } = await import(new URL("http/mod.ts", lib).href);
  const { silentLogger } = await import(new URL("log/mod.ts", lib).href);
  const { buildState } = await import(new URL("state/mod.ts", lib).href);
  const state = await buildState({
    config: parseConfig({ engine: { max_concurrent_operations: 0 }, ...config }, {
      env: {},
      baseDir: fileURLToPath(new URL("./", import.meta.url)),
    }),
    log: silentLogger,
    supergraphSdl: TWO_SUBGRAPHS_SDL,
    operationFiles: [],
    traceKeyPem: null,
    fetch: twoSubgraphsFetch,
  });
  return createHandler(() => state);
}

/** The coprocessor, in its own process. */
async function startCoprocessor(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", fileURLToPath(new URL("plugins/_coprocessor_server.ts", import.meta.url))],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const { value } = await reader.read();
  reader.releaseLock();
  return {
    url: (value ?? "").trim(),
    stop: async () => {
      child.kill();
      await child.status;
      await child.stdout.cancel().catch(() => {});
    },
  };
}

/** Another tree's `lib/` as a URL. */
function otherLib(path: string): URL {
  return pathToFileURL(`${path.replace(/\/$/, "")}/`);
}

const coprocessor = await startCoprocessor();
const variants: [string, Promise<Handle>][] = [
  ["no plugin", handlerWith(LIB, {})],
  [
    "one no-op plugin (every stage)",
    handlerWith(LIB, { plugins: [{ path: "plugins/_noop_plugin.ts" }] }),
  ],
  [
    "coprocessor on subgraph requests",
    handlerWith(LIB, {
      coprocessor: {
        url: coprocessor.url,
        subgraph: { all: { request: { headers: true, body: true } } },
      },
    }),
  ],
  ...(OTHER
    ? [
      [`no plugin (${OTHER})`, handlerWith(otherLib(OTHER), {})],
      [
        `one no-op plugin (${OTHER})`,
        handlerWith(otherLib(OTHER), { plugins: [{ path: "plugins/_noop_plugin.ts" }] }),
      ],
    ] as [string, Promise<Handle>][]
    : []),
];
const handles = await Promise.all(variants.map(([, handle]) => handle));

let _sink: unknown;

async function one(handle: Handle): Promise<void> {
  const response = await handle(
    new Request("http://router.bench/graphql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: QUERY,
    }),
  );
  if (response.status !== 200) {
    throw new Error(`status ${response.status}: ${await response.text()}`);
  }
  _sink = await response.arrayBuffer();
}

/** V8's bytes allocated by this isolate so far (Deno's node:v8 has it; its types do not). */
function allocatedBytes(): number {
  return (v8.getHeapStatistics() as unknown as { total_allocated_bytes: number })
    .total_allocated_bytes;
}

/** Bytes allocated per request of the last {@linkcode cpuPerRequest}, by handle. */
const allocated = new Map<Handle, number[]>();

/** CPU microseconds per request of `count` sequential requests (and the bytes, in `allocated`). */
async function cpuPerRequest(handle: Handle, count: number): Promise<number> {
  const bytes = allocatedBytes();
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) await one(handle);
  const used = process.cpuUsage(start);
  const perRequest = (allocatedBytes() - bytes) / count;
  allocated.set(handle, [...allocated.get(handle) ?? [], perRequest]);
  return (used.user + used.system) / count;
}

if (import.meta.main && !Deno.args.includes("--bench")) {
  const args = Deno.args.filter((arg) => !arg.startsWith("--"));
  const rounds = Number(args[0] ?? 7);
  const count = Number(args[1] ?? 2000);
  const samples: number[][] = variants.map(() => []);
  for (let i = 0; i < 3; i++) for (const handle of handles) await cpuPerRequest(handle, 300);
  allocated.clear();
  for (let round = 0; round < rounds; round++) {
    // Forward, then backward: a variant's place in the round (the collector's debt of the one
    // before it) evens out over the rounds.
    const order = [...handles.keys()];
    if (round % 2 === 1) order.reverse();
    for (const i of order) samples[i]!.push(await cpuPerRequest(handles[i]!, count));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const base = samples[0]!;
  console.log(`CPU µs per request (router process), ${rounds} interleaved rounds of ${count}`);
  const baseBytes = median(allocated.get(handles[0]!) ?? []);
  for (const [i, [name]] of variants.entries()) {
    const xs = samples[i]!;
    // Each round's variants run back to back: the median of per-round differences drops drift.
    const added = median(xs.map((x, round) => x - base[round]!));
    const bytes = median(allocated.get(handles[i]!) ?? []);
    console.log(
      `${name.padEnd(40)} median ${median(xs).toFixed(1).padStart(7)} µs  added ${
        i === 0 ? "(baseline)" : `${added >= 0 ? "+" : ""}${added.toFixed(1)} µs`
      }  ${(bytes / 1024).toFixed(1)} KB allocated${
        i === 0
          ? ""
          : ` (${bytes >= baseBytes ? "+" : ""}${((bytes - baseBytes) / 1024).toFixed(1)} KB)`
      }`,
    );
  }
  await coprocessor.stop();
  Deno.exit(0);
}

for (const [i, [name]] of variants.entries()) {
  Deno.bench(name, { group: "plugins", baseline: i === 0 }, async () => await one(handles[i]!));
}
