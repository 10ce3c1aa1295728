/**
 * A local look at subscription fan-out (issue 29), not the peer benchmark: one process holds
 * the router, the subgraphs (tests/e2e/_subscription_fixture.ts) and 1 000 graphql-ws
 * subscribers on 20 connections; the reviews subgraph publishes 500 events at 100/s, each
 * needing one entity fetch (products). Prints delivered events, delivery latency p50/p99
 * (publish to receipt), the process's CPU seconds (router + subgraphs + clients) and RSS.
 *
 * Run: `deno run -A bench/subscriptions_fanout_local.ts [nodedup]` (router on 127.0.0.1:41001).
 *
 * @module
 */
import { createClient } from "graphql-ws";
import { review, startSubscriptionFixture, until } from "../tests/e2e/_subscription_fixture.ts";

function cpuSeconds(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat").split(") ")[1]!.split(" ");
  return (Number(stat[11]) + Number(stat[12])) / 100;
}
const dedup = Deno.args[0] !== "nodedup";
const f = await startSubscriptionFixture({
  subscriptions: { deduplicate: dedup, max_per_connection: 1000 },
  config: { listen_addr: "127.0.0.1:41001" },
});
const SUBS = 1000, CONNS = 20, EVENTS = 500, RATE = 100;
const latencies: number[] = [];
let received = 0;
let ended = 0;
let errors = 0;
const clients = Array.from(
  { length: CONNS },
  () => createClient({ url: f.wsUrl, retryAttempts: 0, lazy: false, onNonLazyError: () => {} }),
);
for (let i = 0; i < SUBS; i++) {
  clients[i % CONNS]!.subscribe(
    { query: "subscription { reviewAdded { body product { name } } }" },
    {
      next: (v) => {
        if (!v.data) return void errors++;
        const body = (v.data as { reviewAdded: { body: string } }).reviewAdded.body;
        latencies.push(performance.now() - Number(body));
        received++;
      },
      error: () => {},
      complete: () => void ended++,
    },
  );
}
await until(() => f.router.state().engine.subscriptions.active.size === SUBS, "subs");
await until(() => f.feed.open === (dedup ? 1 : SUBS), "upstreams");
const rss0 = Deno.memoryUsage().rss;
const cpu0 = cpuSeconds();
for (let e = 0; e < EVENTS; e++) {
  f.feed.publish(review(`r${e}`, { body: String(performance.now()) }));
  await new Promise((r) => setTimeout(r, 1000 / RATE));
}
for (let i = 0; i < 500 && received < SUBS * EVENTS; i++) {
  await new Promise((r) => setTimeout(r, 10));
}
const cpu = cpuSeconds() - cpu0;
latencies.sort((a, b) => a - b);
const q = (p: number) => latencies[Math.floor(p * (latencies.length - 1))]!.toFixed(1);
console.log(JSON.stringify({
  dedup,
  upstreams: f.feed.opened,
  delivered: received,
  expected: SUBS * EVENTS,
  p50_ms: q(0.5),
  p99_ms: q(0.99),
  cpu_s: cpu.toFixed(2),
  cpu_s_per_million: (cpu / received * 1e6).toFixed(1),
  rss_mb: (Deno.memoryUsage().rss / 1e6).toFixed(0),
  ended_early: ended,
  error_results: errors,
  rss_delta_mb: ((Deno.memoryUsage().rss - rss0) / 1e6).toFixed(0),
}));
await Promise.all(clients.map((c) => c.dispose()));
await f.close();
Deno.exit(0);
