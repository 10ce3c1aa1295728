/**
 * TLS termination's cost (issue 44): the router's CPU per request on the shared
 * benchmark's query (`fixtures/federated.request.json`, 16 subgraph fetches)
 * served three ways in one run — plain HTTP/1.1, HTTPS over HTTP/1.1, HTTPS
 * over HTTP/2 — by the same client (`h2load`, `apt-get install nghttp2-client`),
 * the router pinned to `GATEWAY_CPUS`, the subgraphs and the client to
 * `LOAD_CPUS`. CPU ms per request is the router process's user + system time
 * over the measured window divided by the requests it answered (the figure to
 * compare on a noisy machine).
 *
 * ```sh
 * deno run -A bench/load/tls_cost.ts            # WARMUP_S=5 MEASURE_S=15 CONNECTIONS=20
 * ```
 *
 * @module
 */
import { join } from "node:path";
import { issue, makeCa } from "../../tests/e2e/_tls.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const HERE = new URL("./", import.meta.url).pathname;
const WARMUP_S = Number(Deno.env.get("WARMUP_S") ?? 5);
const MEASURE_S = Number(Deno.env.get("MEASURE_S") ?? 15);
const CONNECTIONS = Number(Deno.env.get("CONNECTIONS") ?? 20);
const GATEWAY_CPUS = Deno.env.get("GATEWAY_CPUS") ?? "1";
const LOAD_CPUS = Deno.env.get("LOAD_CPUS") ?? "0";
const TICKS = 100; // clock ticks per second (getconf CLK_TCK on Linux)

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

function pinned(cpus: string, command: string, args: string[]) {
  return new Deno.Command("taskset", {
    args: ["-c", cpus, command, ...args],
    stdout: "piped",
    stderr: "null",
  });
}

/** utime + stime of a process and its threads, in clock ticks. */
async function cpuTicks(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 90 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function h2load(url: string, seconds: number, h1: boolean): Promise<string> {
  const output = await pinned(LOAD_CPUS, "h2load", [
    ...(h1 ? ["--h1"] : []),
    "-c",
    String(CONNECTIONS),
    "-m",
    "1",
    "-D",
    String(seconds),
    "-d",
    join(HERE, "fixtures/federated.request.json"),
    "-H",
    "content-type: application/json",
    url,
  ]).output();
  return new TextDecoder().decode(output.stdout);
}

const dir = await Deno.makeTempDir({ prefix: "gw-tls-cost-" });
const ca = await makeCa(dir);
const cert = await issue(dir, ca, { name: "server", use: "server" });
const subgraphPort = freePort();
const subgraphs = new Deno.Command("taskset", {
  args: [
    "-c",
    LOAD_CPUS,
    Deno.execPath(),
    "run",
    "-A",
    "--config",
    join(ROOT, "deno.json"),
    join(HERE, "subgraphs/server.ts"),
  ],
  env: { SUBGRAPH_PORT: String(subgraphPort) },
  stdout: "null",
  stderr: "null",
}).spawn();
const results: string[] = [];
try {
  await waitFor("subgraphs", async () => {
    const response = await fetch(`http://127.0.0.1:${subgraphPort}/health`);
    await response.body?.cancel();
    return response.ok;
  });
  const supergraph = (await Deno.readTextFile(join(HERE, "fixtures/supergraph.graphql")))
    .replace(/http:\/\/127\.0\.0\.1:\d+\//g, `http://127.0.0.1:${subgraphPort}/`);
  await Deno.writeTextFile(join(dir, "supergraph.graphql"), supergraph);
  for (
    const mode of [
      { name: "plain HTTP/1.1", tls: false, h1: true },
      { name: "HTTPS HTTP/1.1", tls: true, h1: true },
      { name: "HTTPS HTTP/2  ", tls: true, h1: false },
    ]
  ) {
    const port = freePort();
    const config = join(dir, "config.yaml");
    await Deno.writeTextFile(
      config,
      `listen_addr: 127.0.0.1:${port}
supergraph_path: ${join(dir, "supergraph.graphql")}
operations_dir: ${join(dir, "ops")}
log_level: warn
${mode.tls ? `tls: { server: { cert_file: ${cert.certFile}, key_file: ${cert.keyFile} } }` : ""}
`,
    );
    const router = pinned(GATEWAY_CPUS, Deno.execPath(), [
      "run",
      "-A",
      "--unstable-net",
      join(ROOT, "main.ts"),
      "serve",
      "--config",
      config,
    ]).spawn();
    const url = `${mode.tls ? "https" : "http"}://localhost:${port}/graphql`;
    const client = Deno.createHttpClient({ caCerts: [ca.cert] });
    try {
      await waitFor("router", async () => {
        const response = await fetch(url.replace("/graphql", "/health/ready"), { client });
        await response.body?.cancel();
        return response.ok;
      });
      await h2load(url, WARMUP_S, mode.h1);
      const before = await cpuTicks(router.pid);
      const text = await h2load(url, MEASURE_S, mode.h1);
      const after = await cpuTicks(router.pid);
      const done = Number(/requests: \d+ total, \d+ started, (\d+) done/.exec(text)?.[1] ?? 0);
      const ok = Number(/(\d+) succeeded/.exec(text)?.[1] ?? 0);
      const status2xx = Number(/status codes: (\d+) 2xx/.exec(text)?.[1] ?? 0);
      const protocol = /Application protocol: (\S+)/.exec(text)?.[1] ?? "?";
      const cpuMs = ((after - before) / TICKS) * 1_000;
      results.push(
        `${mode.name}  protocol ${protocol.padEnd(8)} rps ${
          (done / MEASURE_S).toFixed(1).padStart(7)
        }  ` +
          `cpu ${((cpuMs / (MEASURE_S * 1_000)) * 100).toFixed(0).padStart(3)}%  ` +
          `${(cpuMs / Math.max(1, done)).toFixed(3)} ms/req  2xx ${status2xx}/${ok}/${done}`,
      );
      console.log(results.at(-1));
    } finally {
      client.close();
      router.kill("SIGTERM");
      await router.status;
      await router.stdout.cancel().catch(() => {});
    }
  }
} finally {
  subgraphs.kill("SIGTERM");
  await subgraphs.status;
  await Deno.remove(dir, { recursive: true });
}
console.log(
  `\n${new Date().toISOString()} c=${CONNECTIONS} warmup ${WARMUP_S}s measure ${MEASURE_S}s\n${
    results.join("\n")
  }`,
);
