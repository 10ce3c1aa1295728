/**
 * Shape benchmarks (issue 33): each shape run against GW Router and Hive
 * Gateway + Rust query planner side by side in one run, each gateway pinned
 * to one CPU (`GATEWAY_CPUS`, default 1), load and subgraphs on the other
 * (`LOAD_CPUS`, 0). For each: req per CPU-second of the gateway's process
 * group (its `/proc/<pid>/stat` utime+stime over the window: noise from
 * other processes on a shared machine does not count), latency percentiles,
 * statuses, peak RSS of the process group (sampled every 100 ms).
 *
 *   deno run -A bench/shapes/run.ts [SHAPE ...]     shapes: query dedup query50 big held nested nestedheld unique slow50 many plans
 *
 * - `big`: one 8 MiB answer from one subgraph, one client (closed loop);
 * - `held`: 1, 4 and 10 clients (`HELD_CLIENTS`), each answer 8 MiB plus a
 *   field of a second subgraph that answers after 100 ms (the big answer is
 *   held that long);
 * - `nested` (issue 45): one ~8 MB answer of nested objects, four levels
 *   selected through named and inline fragments (`nested.ts`), one client;
 *   `nestedheld`: ten clients (`NESTED_HELD_CLIENTS`), a second subgraph adding
 *   `Region.weather` by an entity fetch answered after 100 ms. Every answer's
 *   `data` checked (`wrong`). A `floor` row first: the CPU of `JSON.parse` +
 *   `JSON.stringify` of the same answer's text in this process (ms per answer).
 *
 * Closed-loop rows (`big`, `held`) also give the warm idle RSS (the lowest of
 * ten samples over the second after the warm-up run) and the memory per
 * in-flight answer: (peak RSS − idle RSS) / (clients × answer bytes).
 * - `unique`: the federated benchmark query (`bench/load`, 16 fetches,
 *   subgraphs answering after 10 ms) at a fixed rate (`RATE`, 100/s), a
 *   unique `Authorization` per request, forwarded to the subgraphs (nothing
 *   can be shared);
 * - `slow50`: the same with subgraphs answering after 50 ms, at `RATE` and
 *   twice `RATE`: admission must not refuse below saturation;
 * - `many`: many small fetches: six chains of 17 entity hops over six small
 *   subgraphs (`manyQuery` in `subgraphs.ts`; 87 fetches per request for GW
 *   Router) at a fixed rate (`MANY_RATE`, 50/s), plans cached, every answer's
 *   `data` compared with the expected one (`wrong` in the row); the row
 *   also gives the subgraph requests per answered request (`fetches/req`);
 * - `plans`: many plans and many small fetches: seven overlapping subgraphs
 *   (`plans.ts`, after the Grafbase benchmark's many-plans scenario), a
 *   256-leaf query at a fixed rate (`PLANS_RATE`, 50/s), answers checked.
 *
 * - `query`: the Grafbase federation benchmark's "query" workload (`query.ts`:
 *   its four subgraphs' schemas and data shape, answering after 10 ms; an
 *   88 KB answer, every answer's `data` checked) at fixed rates
 *   (`QUERY_RATES`, "100 250"), a unique `Authorization` per request,
 *   forwarded; `dedup`: the same at `DEDUP_RATE` (200/s) with identical
 *   requests (one `Authorization`); `query50`: the same query with subgraphs
 *   answering after 50 ms at `RATE` and twice `RATE`.
 *
 * Over 600 lines: the table of shapes below is one entry of wiring per shape
 * (their subgraphs, data and expected answers live in their own modules), kept
 * in one place so that every shape runs the same way.
 *
 * Needs Hive Gateway installed under `HIVE_DIR` (default
 * /tmp/ps-fed: a copy of ../shared/bench/federation after `npm ci`);
 * `GATEWAYS=gw` runs GW Router alone; `gw16` is GW Router with the old
 * default admission (a fixed `engine.max_concurrent_operations: 16`),
 * `gwnobatch` without entity batching (`engine.batch_entity_fetches: false`),
 * `gwnoguard` without the connection guard (its three limits at 0: `Deno.serve` on TCP).
 * GW Router runs with the V8 flags of `deno task start` (`GW_V8_FLAGS` replaces them).
 * Ports: `PORT_BASE` (45000) + 10 (gateway), + 100 (shape subgraphs), + 200 (bench/load
 * subgraphs), + 300 (`query.ts` subgraphs), + 400 (`nested.ts` subgraphs).
 *
 * @module
 */
import { join } from "node:path";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { manyExpected, manyQuery, SDLS } from "./subgraphs.ts";
import { plansExpected, plansQuery } from "./plans.ts";
import { QUERY_TEXT, queryExpected, querySupergraphSdl } from "./query.ts";
import {
  nestedExpected,
  nestedQuery,
  nestedSupergraphSdl,
  parseStringifyFloorMs,
} from "./nested.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const HERE = new URL("./", import.meta.url).pathname;
const HIVE_DIR = Deno.env.get("HIVE_DIR") ?? "/tmp/ps-fed";
const GATEWAY_CPUS = Deno.env.get("GATEWAY_CPUS") ?? "1";
const LOAD_CPUS = Deno.env.get("LOAD_CPUS") ?? "0";
const SECONDS = Number(Deno.env.get("SECONDS_PER_RUN") ?? "20");
const WARMUP = Number(Deno.env.get("WARMUP_S") ?? "5");
const RATE = Number(Deno.env.get("RATE") ?? "100");
const GATEWAYS = (Deno.env.get("GATEWAYS") ?? "gw hive").split(/\s+/).filter(Boolean);
const MANY_RATE = Number(Deno.env.get("MANY_RATE") ?? "50");
const PLANS_RATE = Number(Deno.env.get("PLANS_RATE") ?? "50");
const QUERY_RATES = (Deno.env.get("QUERY_RATES") ?? "100 250").split(/\s+/).filter(Boolean)
  .map(Number);
const DEDUP_RATE = Number(Deno.env.get("DEDUP_RATE") ?? "200");
const PORT_BASE = Number(Deno.env.get("PORT_BASE") ?? "45000");
const SHAPES_PORT = PORT_BASE + 100;
const FED_PORT = PORT_BASE + 200;
const QUERY_PORT = PORT_BASE + 300;
const NESTED_PORT = PORT_BASE + 400;
const GATEWAY_PORT = PORT_BASE + 10;
const CLK_TCK = 100;

const out = await Deno.makeTempDir({ prefix: "shapes-" });

interface Started {
  readonly pid: number;
  stop(): Promise<void>;
}

/** Starts a command in its own process group (setsid), pinned to `cpus`. */
function start(
  cmd: string[],
  options: { cpus: string; env?: Record<string, string>; log: string; cwd?: string },
): Started {
  const child = new Deno.Command("setsid", {
    args: ["taskset", "-c", options.cpus, ...cmd],
    env: options.env ?? {},
    cwd: options.cwd ?? ROOT,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const file = Deno.openSync(options.log, { write: true, create: true, truncate: true });
  const done = Promise.all([
    child.stdout.pipeTo(new WritableStream({ write: (c) => void file.writeSync(c) })),
    child.stderr.pipeTo(new WritableStream({ write: (c) => void file.writeSync(c) })),
  ]).catch(() => {});
  return {
    pid: child.pid,
    async stop() {
      // The group led by the child (setsid made it a session and group leader).
      await new Deno.Command("kill", { args: ["-TERM", "--", `-${child.pid}`] }).output();
      const timer = setTimeout(() => {
        new Deno.Command("kill", { args: ["-KILL", "--", `-${child.pid}`] }).output();
      }, 5000);
      await child.status;
      clearTimeout(timer);
      await done;
      file.close();
    },
  };
}

/** The fields of `/proc/<pid>/stat` after the command name, or null when it is gone. */
function statFields(pid: string | number): string[] | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** The pids of a process group. */
function group(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (/^\d+$/.test(entry.name) && Number(statFields(entry.name)?.[2]) === pgid) {
      pids.push(Number(entry.name));
    }
  }
  return pids;
}

/** CPU ticks (utime + stime) of a process group. */
function cpuTicks(pgid: number): number {
  let ticks = 0;
  for (const pid of group(pgid)) {
    const fields = statFields(pid);
    if (fields) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks;
}

/** Resident bytes of a process group. */
function rssBytes(pgid: number): number {
  let bytes = 0;
  for (const pid of group(pgid)) {
    try {
      const kb = /VmRSS:\s+(\d+)/.exec(Deno.readTextFileSync(`/proc/${pid}/status`))?.[1];
      bytes += Number(kb ?? 0) * 1024;
    } catch {
      // Gone.
    }
  }
  return bytes;
}

/**
 * The warm idle RSS of a process group: the lowest of ten samples over the
 * second after a warm-up run (nothing in flight).
 */
async function idleRss(pgid: number): Promise<number> {
  let low = Infinity;
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    low = Math.min(low, rssBytes(pgid));
  }
  return low;
}

/**
 * Memory per in-flight answer (issue 33): (peak RSS − warm idle RSS) over
 * (answers in flight × answer bytes). A closed loop of N clients keeps at
 * most N answers in flight.
 */
function memoryPerAnswer(
  peak: number,
  idle: number,
  clients: number,
  result: Record<string, unknown>,
): string {
  const bytes = Number(result.answer_bytes ?? 0);
  const ratio = bytes > 0 ? (peak - idle) / (clients * bytes) : NaN;
  return `idle ${Math.round(idle / 1048576)} MiB | mem/answer ${ratio.toFixed(2)}× of ${
    (bytes / 1048576).toFixed(1)
  } MiB`;
}

async function waitOk(url: string, body?: string, seconds = 90): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(
        url,
        body === undefined ? {} : {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        },
      );
      await response.body?.cancel();
      if (response.status === 200) return;
    } catch {
      // Not yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not answer 200`);
}

async function deno(
  args: string[],
  cpus: string,
  env?: Record<string, string>,
): Promise<Record<string, unknown>> {
  const output = await new Deno.Command("taskset", {
    args: ["-c", cpus, Deno.execPath(), "run", "-A", ...args],
    cwd: ROOT,
    env: env ?? {},
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const text = new TextDecoder().decode(output.stdout).trim().split("\n").at(-1) ?? "{}";
  return JSON.parse(text);
}

/**
 * The V8 flags the router ships with: those of `deno task start` (the same as `deno task
 * compile` bakes in), so the gateway runs as operators run it. `GW_V8_FLAGS` overrides them
 * (empty: V8's defaults).
 */
const SHIPPED_V8_FLAGS: string[] = (() => {
  const given = Deno.env.get("GW_V8_FLAGS");
  if (given !== undefined) return given === "" ? [] : [given];
  const tasks = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).tasks;
  const flags = /--v8-flags=\S+/.exec(String(tasks.start))?.[0];
  return flags === undefined ? [] : [flags];
})();

/** Writes the supergraph of the shape subgraphs. */
function shapeSupergraph(): string {
  const link =
    'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@shareable"])';
  const composed = composeSupergraph(
    Object.entries(SDLS).map(([name, sdl]) => ({
      name,
      url: `http://127.0.0.1:${SHAPES_PORT}/${name}`,
      sdl: `${link}\n${sdl}`,
    })),
  );
  if (!composed.ok) throw new Error("the shape subgraphs do not compose");
  const file = join(out, "shapes.graphql");
  Deno.writeTextFileSync(file, composed.supergraphSdl);
  return file;
}

/** Writes the supergraph of the `query` shape's subgraphs. */
function querySupergraph(): string {
  const file = join(out, "query.graphql");
  Deno.writeTextFileSync(file, querySupergraphSdl(QUERY_PORT));
  return file;
}

function fedSupergraph(): string {
  const text = Deno.readTextFileSync(join(ROOT, "bench/load/fixtures/supergraph.graphql"))
    .replace(/http:\/\/127\.0\.0\.1:\d+\//g, `http://127.0.0.1:${FED_PORT}/`);
  const file = join(out, "federated.graphql");
  Deno.writeTextFileSync(file, text);
  return file;
}

/** GW Router builds by name: the defaults, and one setting changed. */
const GW_VARIANTS: Record<string, string> = {
  gw: "",
  gw16: "engine: { max_concurrent_operations: 16 }",
  gwnobatch: "engine: { batch_entity_fetches: false }",
  gwnoguard:
    "traffic_shaping: { router: { header_read_timeout_ms: 0, keep_alive_timeout_ms: 0, max_connections: 0 } }",
};

function startGateway(name: string, supergraph: string, tag: string): Started {
  const log = join(out, `${tag}-${name}.log`);
  if (name in GW_VARIANTS) {
    const config = join(out, `${tag}-gw.yaml`);
    Deno.writeTextFileSync(
      config,
      `listen_addr: 127.0.0.1:${GATEWAY_PORT}
supergraph_path: ${supergraph}
mcp: { enabled: false }
headers: { all: { request: [ { op: propagate, named: Authorization } ] } }
access_logs: { enabled: false }
${GW_VARIANTS[name]}
${Deno.env.get("GW_CONFIG_EXTRA") ?? ""}
`,
    );
    return start([
      Deno.execPath(),
      "run",
      "-A",
      ...SHIPPED_V8_FLAGS,
      "main.ts",
      "serve",
      "--config",
      config,
    ], {
      cpus: GATEWAY_CPUS,
      log,
      env: { LOG_LEVEL: "warn" },
    });
  }
  const config = join(out, "hive.config.mjs");
  Deno.writeTextFileSync(
    config,
    `export const gatewayConfig = {
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) => ({ authorization: request.headers.get("authorization") ?? "" }),
  },
};
`,
  );
  return start([
    "node",
    join(HIVE_DIR, "node_modules/@graphql-hive/gateway/dist/bin.js"),
    "supergraph",
    supergraph,
    "--host",
    "127.0.0.1",
    "--port",
    String(GATEWAY_PORT),
    "--fork",
    "1",
    "--hive-router-runtime",
    "--config-path",
    config,
  ], { cpus: GATEWAY_CPUS, log, env: { NODE_ENV: "production" }, cwd: HIVE_DIR });
}

interface Shape {
  readonly name: string;
  readonly supergraph: () => string;
  readonly subgraphs: () => Started;
  readonly body: string;
  /** Load runs (one row each). */
  readonly loads: readonly {
    readonly label: string;
    readonly args: string[];
    readonly env?: Record<string, string>;
  }[];
  /** Subgraph requests served so far (to report fetches per request). */
  readonly served?: () => Promise<number>;
}

const gatewayUrl = `http://127.0.0.1:${GATEWAY_PORT}/graphql`;
const bigQuery = JSON.stringify({ query: "{ bigItems { id name value tags } }" });
const heldQuery = JSON.stringify({ query: "{ bigItems { id name value tags } slow }" });
const fedBody = Deno.readTextFileSync(join(ROOT, "bench/load/fixtures/federated.request.json"));
const bodyFile = (name: string, body: string) => {
  const file = join(out, `${name}.json`);
  Deno.writeTextFileSync(file, body);
  return file;
};
const shapeSubgraphs = () =>
  start([Deno.execPath(), "run", "-A", join(HERE, "subgraphs.ts")], {
    cpus: LOAD_CPUS,
    log: join(out, "shape-subgraphs.log"),
    env: { SHAPES_SUBGRAPH_PORT: String(SHAPES_PORT) },
  });
const fedSubgraphs = (delay: number) => () =>
  start([Deno.execPath(), "run", "-A", join(ROOT, "bench/load/subgraphs/server.ts")], {
    cpus: LOAD_CPUS,
    log: join(out, `fed-subgraphs-${delay}.log`),
    env: { SUBGRAPH_PORT: String(FED_PORT), SUBGRAPH_DELAY_MS: String(delay) },
  });
const minBig = 8_000_000;
const HELD_CLIENTS = (Deno.env.get("HELD_CLIENTS") ?? "1 4 10").split(/\s+/).filter(Boolean)
  .map(Number);
const MANY_LEVELS = 17;
const manyBody = JSON.stringify({ query: manyQuery(MANY_LEVELS) });
const plansBody = JSON.stringify({ query: plansQuery });
const countAt = (port: number) => async () => {
  const response = await fetch(`http://127.0.0.1:${port}/count`);
  return Number((await response.json()).served);
};
const served = countAt(SHAPES_PORT);
const queryBody = JSON.stringify({ query: QUERY_TEXT });
const querySubgraphs = (delay: number) => () =>
  start([Deno.execPath(), "run", "-A", join(HERE, "query.ts")], {
    cpus: LOAD_CPUS,
    log: join(out, `query-subgraphs-${delay}.log`),
    env: { QUERY_SUBGRAPH_PORT: String(QUERY_PORT), QUERY_DELAY_MS: String(delay) },
  });
/** The `query` shape's open-loop runs at `rates`, every answer checked. */
const queryLoads = (rates: number[], env: Record<string, string> = {}) =>
  rates.map((rate) => ({
    label: `${rate}/s`,
    args: [
      "openloop.ts",
      gatewayUrl,
      bodyFile("query", queryBody),
      String(rate),
      String(SECONDS),
      String(WARMUP),
    ],
    env: { EXPECT_DATA_FILE: bodyFile("query-expected", JSON.stringify(queryExpected())), ...env },
  }));

/** Every shape, in the order run without arguments. */
const ALL_SHAPES = [
  ...["query", "dedup", "query50", "big", "held", "nested", "nestedheld"],
  ...["unique", "slow50", "many", "plans"],
];
const names = Deno.args.length > 0 ? Deno.args : ALL_SHAPES;
/** The `nested` shapes' bodies and expected data (built only when one runs: seconds of graphql-js). */
const nested = names.some((name) => name.startsWith("nested"))
  ? {
    body: JSON.stringify({ query: nestedQuery() }),
    heldBody: JSON.stringify({ query: nestedQuery(true) }),
    expected: await nestedExpected(),
    heldExpected: await nestedExpected(true),
  }
  : undefined;
const nestedLoad = (name: string, clients: number, body: string, expected: unknown) => ({
  label: `${clients} client${clients === 1 ? "" : "s"}`,
  args: ["closedloop.ts", gatewayUrl, bodyFile(name, body), String(clients), String(SECONDS), "0"],
  env: { EXPECT_DATA_FILE: bodyFile(`${name}-expected`, JSON.stringify(expected)) },
});
const nestedSubgraphs = () =>
  start([Deno.execPath(), "run", "-A", join(HERE, "nested.ts")], {
    cpus: LOAD_CPUS,
    log: join(out, "nested-subgraphs.log"),
    env: { NESTED_SUBGRAPH_PORT: String(NESTED_PORT) },
  });
const nestedSupergraph = () => {
  const file = join(out, "nested.graphql");
  Deno.writeTextFileSync(file, nestedSupergraphSdl(NESTED_PORT));
  return file;
};
const NESTED_HELD_CLIENTS = Number(Deno.env.get("NESTED_HELD_CLIENTS") ?? "10");

const SHAPES: Record<string, Shape> = {
  query: {
    name: "query",
    supergraph: querySupergraph,
    subgraphs: querySubgraphs(10),
    body: queryBody,
    served: countAt(QUERY_PORT),
    loads: queryLoads(QUERY_RATES),
  },
  dedup: {
    name: "dedup",
    supergraph: querySupergraph,
    subgraphs: querySubgraphs(10),
    body: queryBody,
    served: countAt(QUERY_PORT),
    loads: queryLoads([DEDUP_RATE], { SAME_AUTHORIZATION: "Bearer one-caller" }),
  },
  query50: {
    name: "query50",
    supergraph: querySupergraph,
    subgraphs: querySubgraphs(50),
    body: queryBody,
    served: countAt(QUERY_PORT),
    loads: queryLoads([RATE, 2 * RATE]),
  },
  big: {
    name: "big",
    supergraph: shapeSupergraph,
    subgraphs: shapeSubgraphs,
    body: bigQuery,
    loads: [{
      label: "1 client",
      args: [
        "closedloop.ts",
        gatewayUrl,
        bodyFile("big", bigQuery),
        "1",
        String(SECONDS),
        String(minBig),
      ],
    }],
  },
  held: {
    name: "held",
    supergraph: shapeSupergraph,
    subgraphs: shapeSubgraphs,
    body: heldQuery,
    loads: HELD_CLIENTS.map((clients) => ({
      label: `${clients} client${clients === 1 ? "" : "s"}`,
      args: [
        "closedloop.ts",
        gatewayUrl,
        bodyFile("held", heldQuery),
        String(clients),
        String(SECONDS),
        String(minBig),
      ],
    })),
  },
  nested: {
    name: "nested",
    supergraph: nestedSupergraph,
    subgraphs: nestedSubgraphs,
    body: nested?.body ?? "",
    loads: nested ? [nestedLoad("nested", 1, nested.body, nested.expected)] : [],
  },
  nestedheld: {
    name: "nestedheld",
    supergraph: nestedSupergraph,
    subgraphs: nestedSubgraphs,
    body: nested?.heldBody ?? "",
    loads: nested
      ? [nestedLoad("nestedheld", NESTED_HELD_CLIENTS, nested.heldBody, nested.heldExpected)]
      : [],
  },
  unique: {
    name: "unique",
    supergraph: fedSupergraph,
    subgraphs: fedSubgraphs(10),
    body: fedBody,
    loads: [{
      label: `${RATE}/s`,
      args: [
        "openloop.ts",
        gatewayUrl,
        bodyFile("fed", fedBody),
        String(RATE),
        String(SECONDS),
        String(WARMUP),
      ],
    }],
  },
  slow50: {
    name: "slow50",
    supergraph: fedSupergraph,
    subgraphs: fedSubgraphs(50),
    body: fedBody,
    loads: [RATE, 2 * RATE].map((rate) => ({
      label: `${rate}/s`,
      args: [
        "openloop.ts",
        gatewayUrl,
        bodyFile("fed", fedBody),
        String(rate),
        String(SECONDS),
        String(WARMUP),
      ],
    })),
  },
  many: {
    name: "many",
    supergraph: shapeSupergraph,
    subgraphs: shapeSubgraphs,
    body: manyBody,
    served,
    loads: [{
      label: `${MANY_RATE}/s`,
      args: [
        "openloop.ts",
        gatewayUrl,
        bodyFile("many", manyBody),
        String(MANY_RATE),
        String(SECONDS),
        String(WARMUP),
      ],
      env: {
        EXPECT_DATA_FILE: bodyFile("many-expected", JSON.stringify(manyExpected(MANY_LEVELS))),
      },
    }],
  },
  plans: {
    name: "plans",
    supergraph: shapeSupergraph,
    subgraphs: shapeSubgraphs,
    body: plansBody,
    served,
    loads: [{
      label: `${PLANS_RATE}/s`,
      args: [
        "openloop.ts",
        gatewayUrl,
        bodyFile("plans", plansBody),
        String(PLANS_RATE),
        String(SECONDS),
        String(WARMUP),
      ],
      env: { EXPECT_DATA_FILE: bodyFile("plans-expected", JSON.stringify(plansExpected)) },
    }],
  },
};

const rows: string[] = [];
console.log(`results in ${out}`);
if (nested) {
  const text = JSON.stringify({ data: nested.expected });
  const ms = parseStringifyFloorMs(text);
  const row = [
    "nested",
    "floor",
    `JSON.parse + JSON.stringify of the ${(text.length / 1e6).toFixed(1)} MB answer`,
    `cpu/answer ${ms.toFixed(1)} ms`,
    `req/core·s ${(1000 / ms).toFixed(1)}`,
  ].join(" | ");
  rows.push(row);
  console.log(row);
}
for (const shapeName of names) {
  const shape = SHAPES[shapeName];
  if (!shape) throw new Error(`unknown shape ${shapeName}`);
  const subgraphs = shape.subgraphs();
  try {
    const supergraph = shape.supergraph();
    for (const gateway of GATEWAYS) {
      const gw = startGateway(gateway, supergraph, shape.name);
      try {
        await waitOk(gatewayUrl, shape.body);
        for (const load of shape.loads) {
          // Closed-loop shapes warm up with a short run of the same load first.
          const closed = load.args[0] === "closedloop.ts";
          if (closed) {
            const warm = [...load.args];
            warm[4] = String(WARMUP);
            await deno(warm.map((a, i) => i === 0 ? join(HERE, a) : a), LOAD_CPUS);
          }
          const idle = await idleRss(gw.pid);
          let peak = 0;
          const sampler = setInterval(() => peak = Math.max(peak, rssBytes(gw.pid)), 100);
          const served0 = await shape.served?.();
          const t0 = cpuTicks(gw.pid);
          const w0 = performance.now();
          const result = await deno(
            load.args.map((a, i) => i === 0 ? join(HERE, a) : a),
            LOAD_CPUS,
            load.env,
          );
          // The open loop's warm-up is inside its run: its CPU and requests both count.
          const cpuS = (cpuTicks(gw.pid) - t0) / CLK_TCK;
          const wallS = (performance.now() - w0) / 1000;
          clearInterval(sampler);
          const ok = Number(result.ok ?? (result.statuses as Record<string, number>)?.["200"] ?? 0);
          const sent = Number(result.sent ?? ok);
          // Open loop: CPU covers warm-up + window; requests = the window's + warm-up's at the rate.
          const requests = load.args[0] === "openloop.ts"
            ? sent + Math.round(Number(load.args[3]) * WARMUP)
            : ok;
          const perCore = cpuS > 0 ? requests / cpuS : NaN;
          const fetches = served0 === undefined ? undefined : (await shape.served!()) - served0;
          const row = [
            shape.name,
            load.label,
            gateway,
            `req/core·s ${perCore.toFixed(1)}`,
            `cpu ${(100 * cpuS / wallS).toFixed(0)}%`,
            ...(closed ? [`cpu/answer ${(1000 * cpuS / requests).toFixed(1)} ms`] : []),
            `p50 ${result.p50_ms} ms p90 ${result.p90_ms} p99 ${result.p99_ms}`,
            `ok ${ok}`,
            `statuses ${JSON.stringify(result.statuses)}`,
            `503+Retry-After ${result.retry_after_503 ?? "-"}`,
            `errors ${
              Number(result.graphql_errors ?? 0) + Number(result.short_bodies ?? 0) +
              Number(result.socket_errors ?? 0)
            }`,
            ...(result.wrong_answers === undefined ? [] : [`wrong ${result.wrong_answers}`]),
            ...(fetches === undefined ? [] : [`fetches/req ${(fetches / requests).toFixed(1)}`]),
            `RSS peak ${Math.round(peak / 1048576)} MiB`,
            ...(closed ? [memoryPerAnswer(peak, idle, Number(load.args[3]), result)] : []),
          ].join(" | ");
          rows.push(row);
          console.log(row);
        }
      } finally {
        await gw.stop();
      }
    }
  } finally {
    await subgraphs.stop();
  }
}
console.log("\n" + rows.join("\n"));
