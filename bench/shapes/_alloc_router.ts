/**
 * Runs a checkout's router (`DIR/main.ts`) and, on each `SIGUSR2`, writes the
 * isolate's bytes allocated so far and its collector's count to stderr (one
 * `alloc_bytes=N` line): `ab.sh` with `ALLOC=1` reads it before and after the
 * load window to give the bytes allocated per request.
 *
 *   deno run -A bench/shapes/_alloc_router.ts DIR serve --config FILE
 *
 * @module
 */
import v8 from "node:v8";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** V8's bytes allocated by this isolate so far (Deno's node:v8 has it; its types do not). */
function allocatedBytes(): number {
  return (v8.getHeapStatistics() as unknown as { total_allocated_bytes: number })
    .total_allocated_bytes;
}

const [dir, ...args] = Deno.args;
if (dir === undefined) {
  console.error("usage: _alloc_router.ts DIR serve --config FILE");
  Deno.exit(2);
}
Deno.addSignalListener("SIGUSR2", () => {
  console.error(`alloc_bytes=${allocatedBytes()}`);
});
const { main } = await import(pathToFileURL(resolve(dir, "main.ts")).href);
Deno.exit(await main(args));
