/**
 * The connection guard's relay alone: a handler answering SIZE bytes of JSON
 * (the shared benchmark's answer is 87 KB), served through
 * {@linkcode serveGuarded} with the default limits (`guard`) or by `Deno.serve`
 * on TCP (`direct`). `guard_relay.sh` loads it with wrk and counts this
 * process's CPU per request: the difference is the relay's cost.
 *
 *   deno run -A bench/load/guard_relay.ts guard|direct PORT [SIZE=87000] [BURST_MS=0]
 *
 * With BURST_MS above 0 the answers waiting are released together every
 * BURST_MS, as single flight releases every operation waiting on one subgraph
 * answer at once: many answers then pass the relay at the same moment.
 *
 * @module
 */
import { serveGuarded } from "../../lib/listen/mod.ts";

const [mode = "guard", port = "15510", size = "87000", burstMs = "0"] = Deno.args;
let release = Promise.withResolvers<void>();
if (Number(burstMs) > 0) {
  setInterval(() => {
    release.resolve();
    release = Promise.withResolvers<void>();
  }, Number(burstMs));
}
const body = JSON.stringify({ data: { x: "y".repeat(Math.max(0, Number(size) - 20)) } });
const on = mode === "guard";
const limits = on
  ? { headerReadTimeoutMs: 10_000, keepAliveTimeoutMs: 75_000, maxConnections: 4_096 }
  : { headerReadTimeoutMs: 0, keepAliveTimeoutMs: 0, maxConnections: 0 };
const log = { debug() {}, info() {}, warn() {}, error() {} };
const server = await serveGuarded(
  { hostname: "127.0.0.1", port: Number(port), limits, log },
  async (request) => {
    await request.arrayBuffer();
    if (Number(burstMs) > 0) await release.promise;
    return new Response(body, { headers: { "content-type": "application/json" } });
  },
);
console.log(`ready ${Deno.pid}`);
Deno.addSignalListener("SIGTERM", () => void server.shutdown().then(() => Deno.exit(0)));
await server.finished;
