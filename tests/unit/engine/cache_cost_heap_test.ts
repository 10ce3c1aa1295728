/**
 * Issue 34: the caches' configured bytes predict their heap within 2× for tiny
 * and large documents alike. A probe process (`--expose-gc`) fills both caches
 * with distinct documents and compares the heap they hold after GC with the
 * bytes `entryCost` charged for them. Heap bytes, not time: no timing here.
 */
import assert from "node:assert/strict";

async function probe(bytes: number, count: number) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--v8-flags=--expose-gc",
      new URL("./_cache_heap_probe.ts", import.meta.url).pathname,
      String(bytes),
      String(count),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(output.success, new TextDecoder().decode(output.stderr));
  return JSON.parse(new TextDecoder().decode(output.stdout)) as {
    heap: number;
    charged: number;
    entries: number;
    chars: number;
  };
}

for (const [label, bytes, count] of [["tiny", 20, 3_000], ["large", 1_500, 300]] as const) {
  Deno.test(`issue 34: the cache charge of ${label} documents is within 2× of their heap`, async () => {
    const { heap, charged, entries, chars } = await probe(bytes, count);
    const ratio = charged / heap;
    console.log(
      `${label} (${chars} chars): ${Math.round(heap / entries)} heap B/entry, ${
        Math.round(charged / entries)
      } charged B/entry, charged/heap ${ratio.toFixed(2)}`,
    );
    assert.equal(entries, 2 * count, "every document cached in both caches");
    assert.ok(ratio >= 0.5 && ratio <= 2, `charged/heap ${ratio.toFixed(2)} outside [0.5, 2]`);
  });
}
