/**
 * Clients that stop reading, under the production settings (issue 39): the
 * router runs with `config.production.yaml`'s observability (dev mode off,
 * access logs written, Prometheus metrics on) and serves STALLED multipart
 * subscriptions and STALLED Connect server streams that never read a byte,
 * beside HEALTHY multipart subscriptions that read everything, while the feed
 * subgraph emits RATE events/s (each needing an entity fetch). Every
 * SAMPLE_S seconds it prints the router's RSS, the active subscriptions (from
 * its metrics) and the events the healthy clients got.
 *
 * What it shows: the stalled clients are dropped (`SUBSCRIPTION_CLIENT_TOO_SLOW`)
 * and their subscriptions end, memory stays flat, and the healthy clients get
 * every event. Before the fix the access log read each stream whole: RSS grew
 * without bound and nobody got an event.
 *
 *   deno run -A bench/subscriptions/stalled.ts
 *   STALLED=100 HEALTHY=10 RATE=100 DURATION_S=60 deno run -A bench/subscriptions/stalled.ts
 *
 * CONFIG_EXTRA adds top-level YAML lines to the router's config (A/B runs).
 *
 * Ports: 47101-47102 subgraphs, 47111 router, 47112 metrics (loopback only).
 *
 * @module
 */
import { SUBSCRIPTION } from "./subgraphs.ts";

const STALLED = Number(Deno.env.get("STALLED") ?? "50");
const HEALTHY = Number(Deno.env.get("HEALTHY") ?? "10");
const RATE = Number(Deno.env.get("RATE") ?? "100");
const DURATION_S = Number(Deno.env.get("DURATION_S") ?? "60");
/** Which stalled streams: `both` (half each), `multipart` or `connect`. */
const KIND = Deno.env.get("STALLED_KIND") ?? "both";
const SAMPLE_S = Number(Deno.env.get("SAMPLE_S") ?? "5");
const ROUTER = "http://127.0.0.1:47111";
const METRICS = "http://127.0.0.1:47112/metrics";
const here = new URL(".", import.meta.url).pathname;
const root = new URL("../../", import.meta.url).pathname;

function spawn(args: string[], env: Record<string, string> = {}): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args,
    env,
    cwd: root,
    stdout: "null",
    stderr: "inherit",
  }).spawn();
}

async function waitFor(url: string, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      const response = await fetch(url);
      await response.body?.cancel();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} did not start`);
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Timed out waiting for ${what}`);
}

function rssMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function activeSubscriptions(): Promise<number> {
  const text = await (await fetch(METRICS)).text();
  return Number(/^gw_router_subscriptions_active(?:\{[^}]*\})? (\S+)/m.exec(text)?.[1] ?? NaN);
}

const variables = { topic: "t" };
const dir = await Deno.makeTempDir({ prefix: "gw_stalled_" });
await Deno.mkdir(`${dir}/ops`);
await Deno.writeTextFile(`${dir}/ops/Tick.graphql`, SUBSCRIPTION);
await Deno.writeTextFile(
  `${dir}/config.yaml`,
  `listen_addr: 127.0.0.1:47111
supergraph_path: supergraph.graphql
operations_dir: ops
dev_mode: false
log_level: info
mcp: { enabled: false }
connect_rpc: { enabled: true, package: bench.v1, service: TickService }
telemetry: { metrics: { prometheus: { enabled: true, listen_addr: 127.0.0.1:47112 } } }
traffic_shaping: { router: { max_connections: 0 } }
${Deno.env.get("CONFIG_EXTRA") ?? ""}
`,
);
const compose = await new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", `${here}compose.ts`, `${dir}/supergraph.graphql`],
  cwd: root,
}).output();
if (!compose.success) throw new Error(new TextDecoder().decode(compose.stderr));
const subgraphs = spawn(["run", "-A", `${here}subgraphs.ts`], { RATE: String(RATE) });
// The router's access log goes to /dev/null: written (log_level info), as in production.
const router = spawn(["run", "-A", "main.ts", "serve", "--config", `${dir}/config.yaml`]);
// Responses are not awaited: before the fix, no response head came until a stream ended.
const stalled: Promise<Response>[] = [];
const readers: Promise<void>[] = [];
let healthyEvents = 0;
let failedStalled = 0;
try {
  await waitFor("http://127.0.0.1:47102/stats", "the subgraphs");
  await waitFor(`${ROUTER}/health/ready`, "the router");
  const multipart = () =>
    fetch(`${ROUTER}/graphql`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: 'multipart/mixed;subscriptionSpec="1.0"',
      },
      body: JSON.stringify({ query: SUBSCRIPTION, variables }),
    });
  const message = new TextEncoder().encode(JSON.stringify(variables));
  const envelope = new Uint8Array(5 + message.length);
  new DataView(envelope.buffer).setUint32(1, message.length);
  envelope.set(message, 5);
  const connect = () =>
    fetch(`${ROUTER}/bench.v1.TickService/Tick`, {
      method: "POST",
      headers: { "content-type": "application/connect+json", "connect-protocol-version": "1" },
      body: envelope,
    });
  for (let i = 0; i < STALLED; i++) {
    // Half multipart, half Connect; none is ever read.
    const pending = KIND === "multipart" || (KIND === "both" && i % 2 === 0)
      ? multipart()
      : connect();
    pending.catch(() => failedStalled++);
    stalled.push(pending);
  }
  for (let i = 0; i < HEALTHY; i++) {
    readers.push(
      (async () => {
        const response = await multipart();
        const decoder = new TextDecoder();
        for await (const chunk of response.body!) {
          healthyEvents += decoder.decode(chunk).split('"seq"').length - 1;
        }
      })().catch(() => {}),
    );
  }
  await until(
    async () => (await activeSubscriptions()) === STALLED + HEALTHY,
    "every subscription",
  );
  const idle = rssMiB(router.pid);
  await fetch("http://127.0.0.1:47101/start", { method: "POST" }).then((r) => r.body?.cancel());
  console.log(
    `stalled ${STALLED} (half multipart, half Connect), healthy ${HEALTHY}, ${RATE} events/s; ` +
      `router RSS before the feed: ${idle.toFixed(0)} MiB`,
  );
  console.log("| s | router RSS MiB | active subscriptions | events per healthy client |");
  console.log("| --- | --- | --- | --- |");
  for (let t = SAMPLE_S; t <= DURATION_S; t += SAMPLE_S) {
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_S * 1000));
    console.log(
      `| ${t} | ${rssMiB(router.pid).toFixed(0)} | ${await activeSubscriptions()} | ${
        Math.round(healthyEvents / HEALTHY)
      } |`,
    );
  }
  const emitted = RATE * DURATION_S;
  console.log(
    `feed emitted ~${emitted} events in ${DURATION_S} s; stalled requests that failed: ${failedStalled}`,
  );
} finally {
  await fetch("http://127.0.0.1:47101/stop", { method: "POST" }).then((r) => r.body?.cancel())
    .catch(() => {});
  for (const pending of stalled) {
    await pending.then((response) => response.body?.cancel()).catch(() => {});
  }
  router.kill("SIGTERM");
  subgraphs.kill("SIGTERM");
  await Promise.allSettled([router.status, subgraphs.status, ...readers]);
  await Deno.remove(dir, { recursive: true });
}
