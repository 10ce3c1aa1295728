/**
 * Issue 43: a file upload streams through a router process (`main.ts serve`,
 * its RSS its own) to a subgraph running `graphql-upload`: a 50 MB and a
 * 150 MB file each grow the router's RSS by its stream buffers, not the file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnServe } from "./_cli.ts";
import { composedUploadGraph, multipart, randomBytes, UPLOAD } from "./_upload_subgraph.ts";

/** The router process's resident memory, bytes (Linux `/proc`). */
async function rss(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

Deno.test("issue 43: a 50 MB file streams through a router process whose RSS stays flat", async () => {
  const { sdl, media, avatars } = await composedUploadGraph();
  const dir = await Deno.makeTempDir({ prefix: "gw_upload_rss_" });
  await Deno.mkdir(join(dir, "ops"));
  await Deno.writeTextFile(join(dir, "super.graphql"), sdl);
  await Deno.writeTextFile(
    join(dir, "config.yaml"),
    `listen_addr: 127.0.0.1:0
supergraph_path: super.graphql
operations_dir: ops
mcp: { enabled: false }
dev_mode: false
file_uploads: { enabled: true, max_file_size: 500MB }
`,
  );
  const serve = spawnServe(join(dir, "config.yaml"));
  try {
    const url = JSON.parse(await serve.waitFor((l) => l.includes("GW Router listening"))).url;
    const draining = serve.waitFor(() => false).catch(() => {});
    const pid = serve.child.pid;
    // Warm: a small upload (plan cached, connections open), then the base.
    const warm = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "apollo-require-preflight": "true" },
      body: multipart(UPLOAD, { 0: ["variables.file"] }, { 0: new Blob([new Uint8Array(1000)]) }),
    });
    assert.equal(warm.status, 200);
    await warm.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const base = await rss(pid);
    const grew: number[] = [];
    // 50 MB, then three times that: the router's RSS grows by its stream buffers
    // (and garbage not yet collected), not by the file.
    for (const size of [50_000_000, 150_000_000]) {
      let peak = base;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          peak = Math.max(peak, await rss(pid).catch(() => 0));
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      const response = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "apollo-require-preflight": "true" },
        body: multipart(UPLOAD, { 0: ["variables.file"] }, { 0: new Blob([randomBytes(size)]) }),
        signal: AbortSignal.timeout(60_000),
      });
      const json = await response.json();
      sampling = false;
      await sampler;
      assert.equal(response.status, 200, JSON.stringify(json));
      assert.deepEqual(json, { data: { upload: { size } } });
      grew.push(peak - base);
      console.log(
        `${size / 1e6} MB upload: router RSS base ${(base / 1e6).toFixed(1)} MB, peak ${
          (peak / 1e6).toFixed(1)
        } MB, grew ${((peak - base) / 1e6).toFixed(1)} MB`,
      );
    }
    // Holding a file would add at least its size: 50 MB, then 150 MB.
    for (const bytes of grew) assert.ok(bytes < 50_000_000, `RSS grew ${bytes} bytes`);
    await serve.close();
    await draining;
  } finally {
    await serve.close();
    await Promise.all([media.close(), avatars.close()]);
    await Deno.remove(dir, { recursive: true });
  }
});
