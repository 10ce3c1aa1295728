/**
 * `tls.subgraphs` clients across reloads: a client a reload retires (its
 * files changed) keeps serving requests in flight for the drain period, then
 * is closed; a refused reload retires nothing; shutdown closes the draining
 * ones too. A real TLS server (`Deno.serve` with an `openssl`-made authority).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { subgraphTlsClients } from "../../lib/cli/subgraph_tls.ts";
import { issue, makeCa } from "../e2e/_tls.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function fixture() {
  const dir = await Deno.makeTempDir();
  const ca = await makeCa(dir);
  const other = await makeCa(dir, "other");
  const cert = await issue(dir, ca, { name: "subgraph", use: "server" });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: cert.cert, key: cert.key, onListen() {} },
    () => new Response("ok"),
  );
  const url = `https://127.0.0.1:${server.addr.port}/`;
  const caFile = join(dir, "trusted.pem");
  return {
    dir,
    url,
    caFile,
    /** Trust `ca` only, or `ca` and another authority (other file contents: a new client). */
    trust: (both: boolean) => Deno.writeTextFile(caFile, both ? ca.cert + other.cert : ca.cert),
    close: async () => {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function reaches(client: Deno.HttpClient, url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { client, signal: AbortSignal.timeout(5_000) });
    return (await response.text()) === "ok";
  } catch {
    return false;
  }
}

Deno.test("tls.subgraphs: a client a reload retires serves during the drain, then is closed", async () => {
  const f = await fixture();
  const clients = subgraphTlsClients({ drainMs: 300 });
  try {
    await f.trust(false);
    const entry = { ca_file: f.caFile, cert_file: "", key_file: "" };
    const first = (await clients.update({ all: entry })).get("all")!;
    assert.ok(await reaches(first, f.url));
    // The same files: the same client.
    assert.equal((await clients.update({ all: entry })).get("all"), first);

    await f.trust(true);
    const second = (await clients.update({ all: entry })).get("all")!;
    assert.notEqual(second, first);
    assert.ok(await reaches(first, f.url), "the retired client serves during its drain");
    await sleep(600);
    assert.equal(await reaches(first, f.url), false, "the retired client is closed after it");
    assert.ok(await reaches(second, f.url));
  } finally {
    clients.close();
    await f.close();
  }
});

Deno.test("tls.subgraphs: a refused reload retires nothing; shutdown closes draining clients", async () => {
  const f = await fixture();
  const clients = subgraphTlsClients({ drainMs: 200 });
  try {
    await f.trust(false);
    const entry = { ca_file: f.caFile, cert_file: "", key_file: "" };
    const first = (await clients.update({ all: entry })).get("all")!;
    await assert.rejects(
      clients.update({ all: { ...entry, ca_file: join(f.dir, "missing.pem") } }),
      /tls\.subgraphs\.all\.ca_file/,
    );
    await sleep(400);
    assert.ok(await reaches(first, f.url), "still in use after a refused reload");

    await f.trust(true);
    await clients.update({ all: entry });
    clients.close();
    assert.equal(await reaches(first, f.url), false, "closed at shutdown, not left to its timer");
  } finally {
    clients.close();
    await f.close();
  }
});
