/**
 * A registry's answer is bounded (`supergraph_source.max_bytes`,
 * `supergraph_source.timeout`): an endless body, a body that stops coming, an
 * Uplink error with a huge message — each a failed poll within its bound, its
 * log line short, and the registry's key never in it. Real local registries
 * (`Deno.serve`). And the kept schema, served while the registry is away, keeps
 * its time (not written again).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseConfig } from "../../lib/config/mod.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { createSupergraphSource } from "../../lib/cli/supergraph_source.ts";
import { firstPoll, pollFailure } from "./_supergraph_poll.ts";

/** Resolved when a test ends: stalled bodies end then. */
let ended = Promise.withResolvers<void>();

/** A registry answering every request with `answer`. */
function registry(answer: (request: Request) => Response) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, answer);
  return {
    base: `http://127.0.0.1:${server.addr.port}`,
    close: () => {
      ended.resolve();
      ended = Promise.withResolvers<void>();
      return server.shutdown();
    },
  };
}

/** A body of `chunk` repeated until cancelled; `stall`: one chunk, then nothing. */
function body(chunk: string, stall = false): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(chunk);
  let sent = false;
  return new ReadableStream({
    async pull(controller) {
      if (stall && sent) {
        // Nothing more until the test ends (then the body ends: the registry can shut down).
        await ended.promise;
        return controller.close();
      }
      sent = true;
      controller.enqueue(bytes);
    },
  }, { highWaterMark: 0 });
}

Deno.test("supergraph_source: an endless body is cut at max_bytes, naming it", async () => {
  const endless = registry(() => new Response(body("type Query { a: Int }\n".repeat(100))));
  try {
    const { sdl, lines } = await firstPoll({
      kind: "url",
      url: `${endless.base}/supergraph.graphql`,
      max_bytes: 10_000,
      timeout: "20s",
    });
    assert.equal(sdl, null);
    assert.match(pollFailure(lines)!.reason, /over supergraph_source\.max_bytes \(10000 bytes\)/);
  } finally {
    await endless.close();
  }
});

Deno.test("supergraph_source: a body that stops coming fails at the timeout", async () => {
  const stalled = registry(() => new Response(body("type Query {", true)));
  try {
    const { sdl, lines } = await firstPoll({
      kind: "hive_cdn",
      endpoint: `${stalled.base}/artifacts/v1/target`,
      key: "cdn-secret-key",
      timeout: "300ms",
    });
    assert.equal(sdl, null);
    assert.ok(pollFailure(lines), lines.join("\n"));
    assert.doesNotMatch(lines.join("\n"), /cdn-secret-key/);
  } finally {
    await stalled.close();
  }
});

Deno.test("supergraph_source: an Uplink error's huge message is cut in the log; the key is not logged", async () => {
  const uplink = registry(() =>
    Response.json({
      data: {
        routerConfig: { __typename: "FetchError", code: "X", message: "m".repeat(100_000) },
      },
    })
  );
  try {
    const { sdl, lines } = await firstPoll({
      kind: "apollo_uplink",
      endpoints: [`${uplink.base}/`],
      key: "service:uplink-secret",
      graph_ref: "g@prod",
      timeout: "5s",
    });
    assert.equal(sdl, null);
    const reason: string = pollFailure(lines)!.reason;
    assert.match(reason, /^X: m+…$/);
    assert.ok(reason.length < 300, `${reason.length} characters`);
    assert.doesNotMatch(lines.join("\n"), /uplink-secret/);
  } finally {
    await uplink.close();
  }
});

Deno.test("supergraph_source: a url's query and user info (a token) are not logged", async () => {
  const refusing = registry(() => new Response("no", { status: 404 }));
  try {
    const url = new URL(`${refusing.base}/supergraph.graphql?token=url-secret`);
    url.username = "user";
    url.password = "pass-secret";
    const { sdl, lines } = await firstPoll({ kind: "url", url: url.href, timeout: "5s" });
    assert.equal(sdl, null);
    assert.equal(pollFailure(lines)!.registry, `${refusing.base}/supergraph.graphql?…`);
    assert.doesNotMatch(lines.join("\n"), /secret/);
  } finally {
    await refusing.close();
  }
});

Deno.test("supergraph_source: the kept schema served while the registry is away is not written again (its age stays)", async () => {
  const down = registry(() => new Response("down", { status: 503 }));
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "kept.graphql");
    await Deno.writeTextFile(path, "type Query { a: Int }");
    const old = new Date(Date.now() - 86_400_000);
    await Deno.utime(path, old, old);
    const config = parseConfig({
      listen_addr: "127.0.0.1:0",
      supergraph_path: path,
      supergraph_source: { kind: "url", url: `${down.base}/s.graphql`, poll_interval: "1h" },
    }, { env: {}, baseDir: dir });
    const source = createSupergraphSource(config.supergraph_source, {
      path,
      log: () => createLogger({ write: () => {} }),
      env: {},
    });
    assert.equal(await source.first(), "type Query { a: Int }");
    source.start(() => Promise.resolve(true));
    source.stop();
    // A write, had one started, is done within this.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await Deno.stat(path)).mtime?.getTime(), old.getTime());
    assert.equal(source.status().loadedAt, old.getTime());
  } finally {
    await down.close();
    await Deno.remove(dir, { recursive: true });
  }
});
