/**
 * Issue 33 over real sockets: admission sized by what the process can do.
 * Operations that wait on slow subgraphs cost no CPU, so a steady stream of
 * them is admitted however many wait at once; a fixed count (the old default
 * of 16) refuses the same stream although the CPU is idle.
 *
 * The router reads its CPU from a steady source that says "idle" and tolerates
 * an event-loop delay of 250 ms (`engine.adaptive_concurrency.target_delay`):
 * the machine's own load (parallel test files, other processes) is not what
 * these tests check, and on a loaded machine the real figures rightly say
 * "busy" (222 of 400 refused in a full parallel run). The figures themselves
 * are tested in `tests/unit/thread_cpu_test.ts` and `adaptive_limit.ts`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startRouter } from "../../lib/cli/serve.ts";
import { createLogger } from "../../lib/log/mod.ts";
import type { CpuSource } from "../../lib/state/mod.ts";
import { oneSubgraphWorkspace } from "./_workspace.ts";

/** A serving thread that never wants the CPU: the machine's load does not count. */
const IDLE_CPU: CpuSource = { time: () => 0, cores: 1 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends `rate` requests per second for `seconds` (open loop); returns their statuses. */
async function steady(url: string, rate: number, seconds: number): Promise<number[]> {
  const sent: Promise<number>[] = [];
  const start = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 1) await sleep(wait);
    sent.push(
      fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer caller-${i}` },
        body: JSON.stringify({ query: "query($n: Int) { hello(n: $n) }", variables: { n: i } }),
      }).then(async (response) => {
        await response.body?.cancel();
        return response.status;
      }),
    );
  }
  return await Promise.all(sent);
}

async function run(extra: string): Promise<{ statuses: number[]; limit: number }> {
  // A subgraph that takes 300 ms: ~60 operations wait on it at once at 200 req/s.
  const sub = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async () => {
    await sleep(300);
    return Response.json({ data: { hello: "slow" } });
  });
  const dir = await oneSubgraphWorkspace(`http://127.0.0.1:${sub.addr.port}/graphql`, {
    sdl: "type Query { hello(n: Int): String }",
    extra: `heap: { max_young_generation_mb: 0, max_old_generation_mb: 0 }\n${extra}`,
  });
  const router = await startRouter({
    configPath: join(dir, "config.yaml"),
    log: createLogger({ level: "error", write: () => {} }),
    cpu: IDLE_CPU,
  });
  try {
    const statuses = await steady(router.url, 200, 2);
    return { statuses, limit: router.state().engine.admission.limit };
  } finally {
    await router.shutdown();
    await sub.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

Deno.test("issue 33: by default, operations waiting on slow subgraphs are admitted while the CPU keeps up (no 503)", async () => {
  const { statuses, limit } = await run(
    "engine: { adaptive_concurrency: { target_delay: 250ms } }\n",
  );
  assert.equal(count(statuses, 200), statuses.length, `statuses: ${count(statuses, 503)} × 503`);
  assert.ok(limit > 32, `the limit grew past its start (32): ${limit}`);
});

Deno.test("issue 33: the same stream under a fixed engine.max_concurrent_operations of 16 is refused in part", async () => {
  // The guard's counterpart: the old default sheds this idle-CPU load.
  const { statuses, limit } = await run("engine: { max_concurrent_operations: 16 }\n");
  assert.equal(limit, 16);
  assert.ok(count(statuses, 503) > 0, "a fixed count refuses work the CPU could do");
});
