/**
 * Issue 34 over real sockets, with the router as its own process (`main.ts
 * serve`, defaults) so that its RSS is its own: large subgraph answers are
 * all answered (200, or 503 + `Retry-After`), none slowly, within the
 * in-flight memory budget, and no reader is cut off (8 clients read 15 MB
 * answers at once, 120 MB against 64 MB of `max_unsent_answer_bytes`: before
 * issue 33 some of their answers were ended).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnServe } from "./_cli.ts";
import { oneSubgraphWorkspace } from "./_workspace.ts";

/** The router process's resident memory now, bytes (Linux `/proc`). */
async function rss(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return Number(kb ?? 0) * 1024;
}

/** Samples the RSS every 50 ms until stopped; returns the peak. */
function sampleRss(pid: number): { stop: () => Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      peak = Math.max(peak, await rss(pid).catch(() => 0));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return peak;
    },
  };
}

const SDL =
  "type Query { small: String items: [Item] } type Item { id: ID name: String value: Int }";

/** A 15 MB answer: 150 000 items of about 100 bytes (under the 16 MB subgraph cap). */
function bigAnswer(): Uint8Array<ArrayBuffer> {
  const items = Array.from({ length: 150_000 }, (_, i) => ({
    id: `item-${i}`,
    name: `name ${"n".repeat(48)} ${i}`,
    value: i,
  }));
  return new TextEncoder().encode(JSON.stringify({ data: { items } }));
}

/** `deno task start:lean`'s flags (docs/memory.md), as the document caches' RSS test runs. */
const LEAN_V8_FLAGS = "--v8-flags=--max-semi-space-size=16,--max-old-space-size=256";

async function started(extra = "") {
  const big = bigAnswer();
  assert.ok(big.length > 14_000_000 && big.length < 16_000_000, `${big.length} bytes`);
  const sub = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (request) => {
    const body = await request.text();
    if (body.includes("items")) {
      return new Response(big, { headers: { "content-type": "application/json" } });
    }
    return Response.json({ data: { small: "ok" } });
  });
  const dir = await oneSubgraphWorkspace(`http://127.0.0.1:${sub.addr.port}/graphql`, {
    profile: false,
    sdl: SDL,
    extra,
  });
  const serve = spawnServe(join(dir, "config.yaml"), { denoFlags: [LEAN_V8_FLAGS] });
  const url = JSON.parse(await serve.waitFor((l) => l.includes("GW Router listening"))).url;
  // Its log (an access-log line per request) is read on, or the pipe fills and the router blocks.
  const draining = serve.waitFor(() => false).catch(() => {});
  return {
    url: url as string,
    pid: serve.child.pid,
    async close() {
      await serve.close();
      await draining;
      await sub.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

function post(url: string, query: string) {
  return fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });
}

Deno.test("issue 34: 8 clients × 3 rounds of 15 MB answers: every request answered (200 or 503 + Retry-After) within 15 s, RSS within base + 3 × max_in_flight_bytes", async () => {
  const router = await started();
  try {
    // Warm: plan cached, pools open; then the base.
    assert.equal((await (await post(router.url, "{ small }")).json()).data.small, "ok");
    const idle = await rss(router.pid);
    const warm = await post(router.url, "{ items { id name value } }");
    assert.equal(warm.status, 200);
    await warm.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const base = await rss(router.pid);
    const sampler = sampleRss(router.pid);
    const outcomes: { status: number; ms: number; retryAfter: string | null; items: number }[] = [];
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let round = 0; round < 3; round++) {
        const start = performance.now();
        const response = await post(router.url, "{ items { id name value } }");
        const body = await response.json();
        outcomes.push({
          status: response.status,
          ms: performance.now() - start,
          retryAfter: response.headers.get("retry-after"),
          items: body.data?.items?.length ?? 0,
        });
      }
    }));
    const peak = await sampler.stop();
    assert.equal(outcomes.length, 24);
    for (const outcome of outcomes) {
      assert.ok(outcome.ms < 15_000, `answered in ${Math.round(outcome.ms)} ms`);
      if (outcome.status === 200) assert.equal(outcome.items, 150_000);
      else {
        assert.equal(outcome.status, 503);
        assert.equal(outcome.retryAfter, "1");
      }
    }
    const ok = outcomes.filter((o) => o.status === 200).length;
    assert.ok(ok >= 8, `most are served: ${ok} of 24`);
    const mb = (n: number) => Math.round(n / 1e6);
    console.log(
      `large answers: ${ok}/24 × 200, idle ${mb(idle)} MB, base ${mb(base)} MB, peak ${
        mb(peak)
      } MB, slowest ${Math.round(Math.max(...outcomes.map((o) => o.ms)))} ms`,
    );
    assert.ok(
      peak <= base + 3 * 64_000_000,
      `RSS peak ${mb(peak)} MB over base ${mb(base)} MB + 3 × 64 MB`,
    );
  } finally {
    await router.close();
  }
});
