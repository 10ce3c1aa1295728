/**
 * Issue 15, the client side of "every request answered": a client that sends
 * its body slowly (or never finishes it) holds no admission slot, is answered
 * 408 `REQUEST_TIMEOUT` at the router deadline, and the bodies all clients
 * hold are bounded by `traffic_shaping.router.max_buffered_body_bytes`.
 * Real sockets: a raw TCP client for the slow bodies, `fetch` for the others.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { oneSubgraphWorkspace } from "./_workspace.ts";

async function withRouter(
  extra: string,
  test: (router: RunningRouter) => Promise<void>,
): Promise<void> {
  const sub = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => Response.json({ data: { hello: "hi" } }),
  );
  const dir = await oneSubgraphWorkspace(`http://127.0.0.1:${sub.addr.port}/graphql`, {
    sdl: "type Query { hello(pad: String): String }",
    extra,
  });
  const router = await startRouter({
    configPath: join(dir, "config.yaml"),
    log: createLogger({ level: "error", write: () => {} }),
  });
  try {
    await test(router);
  } finally {
    await router.shutdown();
    await sub.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
}

const encoder = new TextEncoder();

/** Opens a connection and sends a POST whose body stops after `sent` (of `length` declared). */
async function partialPost(router: RunningRouter, sent: string, length: number) {
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: Number(new URL(router.url).port),
  });
  await conn.write(encoder.encode(
    `POST /graphql HTTP/1.1\r\nHost: router\r\nContent-Type: application/json\r\n` +
      `Accept: application/json\r\nContent-Length: ${length}\r\n\r\n${sent}`,
  ));
  return conn;
}

/** Reads from the connection until it closes, `until` appears, or `ms` pass. */
async function readUntil(conn: Deno.Conn, until: string, ms: number): Promise<string> {
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(4096);
  let text = "";
  const deadline = Date.now() + ms;
  while (!text.includes(until) && Date.now() < deadline) {
    const n = await Promise.race([
      conn.read(buffer),
      new Promise<"late">((resolve) => setTimeout(() => resolve("late"), deadline - Date.now())),
    ]);
    if (n === "late" || n === null) break;
    text += decoder.decode(buffer.subarray(0, n));
  }
  return text;
}

function post(router: RunningRouter, pad = "") {
  return fetch(`${router.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ query: "query($pad: String) { hello(pad: $pad) }", variables: { pad } }),
  });
}

Deno.test("issue 15: clients that send their bodies slowly hold no slot; the others are served", async () => {
  // One slot and no queue: a slow body holding the slot would turn every other request away.
  const extra = `engine: { max_concurrent_operations: 1 }
traffic_shaping: { router: { max_queue_size: 0 } }
`;
  await withRouter(extra, async (router) => {
    const slow = await Promise.all(
      Array.from({ length: 4 }, () => partialPost(router, '{"query":', 100)),
    );
    try {
      for (let i = 0; i < 3; i++) {
        const response = await post(router);
        const body = await response.json();
        assert.equal(response.status, 200, JSON.stringify(body));
        assert.equal(body.data.hello, "hi");
      }
      const ready = await fetch(`${router.url}/health/ready`);
      assert.equal(ready.status, 200);
      await ready.body?.cancel();
      assert.equal(router.state().engine.admission.active, 0);
    } finally {
      for (const conn of slow) conn.close();
    }
  });
});

Deno.test("issue 15: a body that does not arrive within request_timeout is answered 408 REQUEST_TIMEOUT", async () => {
  await withRouter("traffic_shaping: { router: { request_timeout: 300ms } }\n", async (router) => {
    const conn = await partialPost(router, '{"query":"{ hel', 200);
    try {
      const started = Date.now();
      const answer = await readUntil(conn, "REQUEST_TIMEOUT", 5_000);
      assert.match(answer, /^HTTP\/1\.1 408/, answer);
      assert.match(answer, /"code":"REQUEST_TIMEOUT"/);
      assert.match(
        answer,
        /did not arrive within 300 ms \(traffic_shaping\.router\.request_timeout\)/,
      );
      assert.ok(Date.now() - started < 3_000, "answered at the deadline");
      assert.equal(router.state().engine.admission.bodyBytes, 0, "its bytes were released");
    } finally {
      conn.close();
    }
  });
});

Deno.test("issue 15: a body sent to a route that runs no operation is read under request_timeout too (408, never a hang)", async () => {
  // A 404 or the readiness probe reads its body as well: without the deadline a
  // body that never ends held the request, and its connection, for ever.
  await withRouter("traffic_shaping: { router: { request_timeout: 300ms } }\n", async (router) => {
    const port = Number(new URL(router.url).port);
    for (const path of ["/no-such-route", "/health/ready"]) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      try {
        await conn.write(encoder.encode(
          `POST ${path} HTTP/1.1\r\nHost: router\r\nContent-Length: 100000\r\n\r\nabc`,
        ));
        const started = Date.now();
        const answer = await readUntil(conn, "REQUEST_TIMEOUT", 5_000);
        assert.match(answer, /^HTTP\/1\.1 408/, `${path}: ${answer}`);
        assert.match(answer, /did not arrive within 300 ms/);
        assert.ok(Date.now() - started < 3_000, "answered at the deadline");
      } finally {
        conn.close();
      }
    }
  });
});

Deno.test("issue 15: request bodies held are bounded by max_buffered_body_bytes (503 + Retry-After, then served)", async () => {
  await withRouter(
    "traffic_shaping: { router: { max_buffered_body_bytes: 1000 } }\n",
    async (router) => {
      // 800 bytes of a 900-byte body arrive, then the client waits.
      const conn = await partialPost(router, `{"query":"${" ".repeat(790)}`, 900);
      try {
        const gate = router.state().engine.admission;
        const deadline = Date.now() + 5_000;
        while (gate.bodyBytes < 800 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        assert.equal(gate.bodyBytes, 800);
        const refused = await post(router, "x".repeat(300));
        const body = await refused.json();
        assert.equal(refused.status, 503, JSON.stringify(body));
        assert.equal(refused.headers.get("retry-after"), "1");
        assert.equal(body.errors[0].extensions.code, "SERVICE_OVERLOADED");
        assert.match(body.errors[0].message, /traffic_shaping\.router\.max_buffered_body_bytes/);
        // A small body still fits.
        const small = await post(router);
        assert.equal(small.status, 200);
        assert.equal((await small.json()).data.hello, "hi");
      } finally {
        conn.close();
      }
      // The slow client gone, its bytes are released and a large body fits again.
      const deadline = Date.now() + 5_000;
      while (router.state().engine.admission.bodyBytes > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const served = await post(router, "x".repeat(300));
      assert.equal(served.status, 200);
      assert.equal((await served.json()).data.hello, "hi");
    },
  );
});
