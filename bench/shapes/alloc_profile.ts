/**
 * Issue 45: what one request of the `query` shape allocates and costs in the
 * router's own code: the shape's supergraph, query and unique `Authorization`
 * (forwarded), run through `createHandler` in this process with the four
 * subgraphs answering from memory (`query.ts`'s `querySubgraphs`, cached by
 * body), so neither sockets nor subgraphs count. Prints V8's bytes allocated
 * per request (`total_allocated_bytes`) and the process's CPU per request,
 * the median of interleaved rounds (ABBA order); `GW_LIB=/other/tree/lib` measures that
 * tree's router as well, in the same run, alternated. With `--profile`, V8's
 * sampling heap profiler (garbage included) over the rounds gives the
 * functions that allocate the most, by bytes.
 *
 *   deno run -A bench/shapes/alloc_profile.ts [ROUNDS=5] [REQUESTS=1000] [--profile] [--sockets]
 *
 * `--sockets`: the subgraphs in a child process (`query.ts`, no delay, port
 * `QUERY_SUBGRAPH_PORT` or 45390) reached through the router's HTTP/1 pool.
 *
 * The same figure over real sockets: `ALLOC=1 bench/shapes/ab_query.sh ...`.
 *
 * @module
 */
import v8 from "node:v8";
import process from "node:process";
import { Session } from "node:inspector";
import { fileURLToPath, pathToFileURL } from "node:url";
import { QUERY_TEXT, querySubgraphs, querySupergraphSdl } from "./query.ts";

/** V8's bytes allocated by this isolate so far (Deno's node:v8 has it; its types do not). */
function allocatedBytes(): number {
  return (v8.getHeapStatistics() as unknown as { total_allocated_bytes: number })
    .total_allocated_bytes;
}

const LIB = new URL("../../lib/", import.meta.url);
const OTHER = Deno.env.get("GW_LIB");
const args = Deno.args.filter((arg) => !arg.startsWith("--"));
const ROUNDS = Number(args[0] ?? 5);
const REQUESTS = Number(args[1] ?? 1000);
const PROFILE = Deno.args.includes("--profile");
/** The subgraphs over sockets (`query.ts` in a child process, no delay): the router's HTTP/1 pool. */
const SOCKETS = Deno.args.includes("--sockets");
const PORT = Number(Deno.env.get("QUERY_SUBGRAPH_PORT") ?? 45390);

const answer = await querySubgraphs();
const supergraphSdl = querySupergraphSdl(SOCKETS ? PORT : 1);
const server = SOCKETS
  ? new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", fileURLToPath(new URL("./query.ts", import.meta.url))],
    env: { QUERY_SUBGRAPH_PORT: String(PORT), QUERY_DELAY_MS: "0" },
    stdout: "null",
    stderr: "inherit",
  }).spawn()
  : null;
if (server !== null) {
  for (let i = 0; i < 300; i++) {
    const up = await fetch(`http://127.0.0.1:${PORT}/health`).then((r) => r.text(), () => null);
    if (up !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
const BODY = JSON.stringify({ query: QUERY_TEXT });
const JSON_HEADERS = { "content-type": "application/json" };

async function subgraphs(request: Request): Promise<Response> {
  const bytes = await answer(new URL(request.url).pathname, await request.text());
  return bytes === null
    ? new Response("not found", { status: 404 })
    : new Response(bytes, { headers: JSON_HEADERS });
}

type Handle = (request: Request) => Promise<Response>;

/** A handler over a state of `lib` (this tree's, or another's). */
async function handlerOf(lib: URL): Promise<Handle> {
  const { parseConfig } = await import(new URL("config/mod.ts", lib).href);
  const { createHandler } = await import(new URL("http/mod.ts", lib).href);
  const { silentLogger } = await import(new URL("log/mod.ts", lib).href);
  const { buildState } = await import(new URL("state/mod.ts", lib).href);
  const config = {
    mcp: { enabled: false },
    access_logs: { enabled: false },
    headers: { all: { request: [{ op: "propagate", named: "Authorization" }] } },
  };
  const state = await buildState({
    config: parseConfig(config, {
      env: {},
      baseDir: fileURLToPath(new URL("./", import.meta.url)),
    }),
    log: silentLogger,
    supergraphSdl,
    operationFiles: [],
    traceKeyPem: null,
    ...(SOCKETS ? {} : { fetch: subgraphs }),
  });
  return createHandler(() => state);
}

let sent = 0;
let _sink: unknown;

async function one(handle: Handle): Promise<void> {
  const response = await handle(
    new Request("http://router.bench/graphql", {
      method: "POST",
      headers: { ...JSON_HEADERS, authorization: `Bearer caller-${sent++}` },
      body: BODY,
    }),
  );
  const bytes = await response.arrayBuffer();
  if (response.status !== 200 || bytes.byteLength < 80_000) {
    throw new Error(`status ${response.status}, ${bytes.byteLength} bytes`);
  }
  _sink = bytes;
}

/** Bytes allocated and CPU µs per request of `count` sequential requests. */
async function measure(handle: Handle, count: number): Promise<[number, number]> {
  const bytes = allocatedBytes();
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) await one(handle);
  const used = process.cpuUsage(cpu);
  return [
    (allocatedBytes() - bytes) / count,
    (used.user + used.system) / count,
  ];
}

const variants: [string, Handle][] = [["this tree", await handlerOf(LIB)]];
if (OTHER) {
  variants.push([OTHER, await handlerOf(pathToFileURL(`${OTHER.replace(/\/$/, "")}/`))]);
}
for (const [, handle] of variants) await measure(handle, 300);

const session = new Session();
const post = (method: string, params: object = {}) =>
  new Promise<unknown>((resolve, reject) =>
    session.post(method, params, (error, result) => error ? reject(error) : resolve(result))
  );
if (PROFILE) {
  session.connect();
  await post("HeapProfiler.startSampling", {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}
const samples: [number, number][][] = variants.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  // A B, then B A: a variant's place in the round (the collector's debt of the one before) evens out.
  const order = [...variants.keys()];
  if (round % 2 === 1) order.reverse();
  for (const i of order) samples[i]!.push(await measure(variants[i]![1], REQUESTS));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
console.log(`the query shape in process, ${ROUNDS} interleaved rounds of ${REQUESTS} requests`);
for (const [i, [name]] of variants.entries()) {
  const kb = median(samples[i]!.map(([bytes]) => bytes)) / 1024;
  const cpu = median(samples[i]!.map(([, cpu]) => cpu));
  console.log(
    `${name.padEnd(24)} ${kb.toFixed(0).padStart(5)} KB allocated/request  ${
      cpu.toFixed(0).padStart(5)
    } µs CPU/request`,
  );
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}
if (PROFILE) {
  const { profile } = await post("HeapProfiler.stopSampling") as { profile: { head: ProfileNode } };
  const bySite = new Map<string, number>();
  let total = 0;
  const siteOf = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    return `${functionName || "(anonymous)"} ${
      url.replace(/^.*\/(lib|node_modules|bench)\//, "$1/")
    }:${lineNumber + 1}`;
  };
  // The runtime's own functions (ext:, builtins) are counted under the router's nearest caller.
  const visit = (node: ProfileNode, caller: string) => {
    const own = node.callFrame.url.includes("/lib/") || node.callFrame.url.includes("/bench/");
    const site = own ? siteOf(node) : `${siteOf(node)} < ${caller}`;
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) visit(child, own ? siteOf(node) : caller);
  };
  visit(profile.head, "(root)");
  console.log("\nallocation by function (sampled, garbage included, all variants):");
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
    console.log(`${(100 * bytes / total).toFixed(1).padStart(5)} %  ${site}`);
  }
}
server?.kill();
Deno.exit(0);
