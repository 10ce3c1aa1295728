/**
 * Issue 34 with the router as its own process (`main.ts serve`): 40 000
 * distinct small valid documents over 4 keep-alive connections, with the
 * document and plan caches at 16 MB + 16 MB. Once the caches are full (the
 * first 20 000 fill them), the RSS stays flat: it grows by at most 10 MB over
 * the second 20 000, with the lean profile's V8 flags (see the comment at the spawn).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnServe } from "./_cli.ts";
import { oneSubgraphWorkspace } from "./_workspace.ts";

/** `/proc/<pid>/status` and `smaps_rollup` fields, kB. */
async function memory(pid: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const text = (await Deno.readTextFile(`/proc/${pid}/status`)) +
    (await Deno.readTextFile(`/proc/${pid}/smaps_rollup`).catch(() => ""));
  for (const [, key, kb] of text.matchAll(/^(\w+):\s+(\d+) kB/gm)) out[key!] = Number(kb);
  return out;
}

/** `deno task start:lean`'s V8 flags (deno.json). */
const LEAN_V8_FLAGS = "--v8-flags=--max-semi-space-size=16,--max-old-space-size=256";

const SDL = "type Query { small(n: Int): String }";

Deno.test("issue 34: 40 000 distinct small documents: RSS grows at most 10 MB over the second 20 000 (lean V8 flags)", async () => {
  const sub = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (request) => {
    // Answers each field of the query under its alias (`a1: small(n: 1)`).
    const { query } = await request.json() as { query: string };
    const data: Record<string, string> = {};
    for (const [, alias, field] of query.matchAll(/(?:(\w+)\s*:\s*)?\b(small)\b/g)) {
      data[alias ?? field!] = "ok";
    }
    return Response.json({ data });
  });
  const dir = await oneSubgraphWorkspace(`http://127.0.0.1:${sub.addr.port}/graphql`, {
    sdl: SDL,
    extra: [
      "engine:",
      "  parse_cache_max_bytes: 16MB",
      "  execution_plan_cache_max_bytes: 16MB",
    ].join("\n"),
  });
  // The lean profile (docs/memory.md). With V8's defaults the young generation grows to two
  // 32 MiB semi-spaces only once the traffic has run a while, and old-generation garbage waits
  // for the next mark-compact: RSS then rose 6-14 MB over the second 20 000 (5 runs) while the
  // live heap did not (--trace-gc), which is heap sizing, not memory kept per document.
  const serve = spawnServe(join(dir, "config.yaml"), { denoFlags: [LEAN_V8_FLAGS] });
  try {
    const url = JSON.parse(await serve.waitFor((l) => l.includes("GW Router listening"))).url;
    const draining = serve.waitFor(() => false).catch(() => {});
    const pid = serve.child.pid;
    let next = 0;
    let failed = 0;
    const send = async (end: number) => {
      while (next < end) {
        const i = next++;
        // Distinct text and shape: an alias and an argument per document; half of them
        // named (operation names are metric labels: a bounded set).
        const query = i % 2 === 0
          ? `{ a${i}: small(n: ${i}) b: small }`
          : `query Op${i} { a${i}: small(n: ${i}) b: small }`;
        const response = await fetch(`${url}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ query }),
        });
        const body = await response.json();
        if (response.status !== 200 || body.data?.b !== "ok") {
          if (failed++ === 0) console.error(response.status, JSON.stringify(body).slice(0, 300));
        }
      }
    };
    const run = (end: number) => Promise.all(Array.from({ length: 4 }, () => send(end)));
    const settle = () => new Promise((resolve) => setTimeout(resolve, 1_000));
    await run(20_000);
    await settle();
    const half = await memory(pid);
    await run(40_000);
    await settle();
    const full = await memory(pid);
    assert.equal(failed, 0, "every document answered");
    const mb = (kb: number) => Math.round(kb / 100) / 10;
    const growth = full.VmRSS! - half.VmRSS!;
    console.log(
      `distinct documents: RSS ${mb(half.VmRSS!)} -> ${mb(full.VmRSS!)} MB (+${mb(growth)}), ` +
        `anon ${mb(half.RssAnon!)} -> ${mb(full.RssAnon!)}, file ${mb(half.RssFile!)} -> ${
          mb(full.RssFile!)
        }`,
    );
    assert.ok(growth <= 10_000, `RSS grew ${mb(growth)} MB over the second 20 000 (limit 10 MB)`);
    await serve.close();
    await draining;
  } finally {
    await serve.close().catch(() => {});
    await sub.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
