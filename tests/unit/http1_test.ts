/**
 * The subgraph HTTP/1.1 pool (`lib/engine/http1.ts`) on its own, against raw
 * TCP servers: connection reuse and expiry, the stale-connection retry of
 * queries (never of mutations), aborts, and request headers that could split
 * the request. The misbehaving-server cases run through the whole router in
 * `tests/e2e/subgraph_wire_test.ts`.
 */
import assert from "node:assert/strict";
import { createHttp1Pool } from "../../lib/engine/http1.ts";

const OK = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";

/** A TCP server: `answer(index, request)` per request read; it counts connections. */
function rawServer(
  answer: (conn: Deno.Conn, request: { index: number; connection: number }) => Promise<void>,
) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const state = { connections: 0, requests: 0 };
  const loops: Promise<void>[] = [];
  const serve = async (conn: Deno.Conn, connection: number) => {
    const buffer = new Uint8Array(65_536);
    let text = "";
    try {
      for (;;) {
        const n = await conn.read(buffer);
        if (n === null) break;
        text += new TextDecoder().decode(buffer.subarray(0, n));
        for (;;) {
          const end = text.indexOf("\r\n\r\n");
          if (end < 0) break;
          const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
          if (text.length < end + 4 + length) break;
          text = text.slice(end + 4 + length);
          await answer(conn, { index: state.requests++, connection });
        }
      }
    } catch {
      // Closed by the test.
    } finally {
      conns.delete(conn);
      try {
        conn.close();
      } catch {
        // Closed already.
      }
    }
  };
  const accepting = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      loops.push(serve(conn, state.connections++));
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/graphql`,
    state,
    async close() {
      listener.close();
      for (const conn of conns) conn.close();
      await accepting.catch(() => {});
      await Promise.all(loops);
    },
  };
}

const write = (conn: Deno.Conn, text: string) => conn.write(new TextEncoder().encode(text));
const post = (idempotent: boolean, signal?: AbortSignal) => ({
  headers: [["content-type", "application/json"]] as [string, string][],
  body: "{}",
  idempotent,
  ...(signal ? { signal } : {}),
});

Deno.test("http1: sequential posts share one connection; an idle one past idleMs is not reused", async () => {
  let clock = 0;
  const server = rawServer(async (conn) => void await write(conn, OK));
  const pool = createHttp1Pool({ idleMs: 1_000, now: () => clock });
  try {
    for (let i = 0; i < 5; i++) {
      assert.equal(await (await pool.post(server.url, post(true))).text(), "{}");
    }
    assert.equal(server.state.connections, 1);
    clock += 1_001;
    await (await pool.post(server.url, post(true))).text();
    assert.equal(server.state.connections, 2, "an expired idle connection is replaced");
  } finally {
    pool.close();
    await server.close();
  }
});

Deno.test("http1: a query meeting a pooled connection the server closed goes again on a new one; a mutation is not sent twice", async () => {
  // The server answers, then closes each connection after its first answer.
  const server = rawServer(async (conn) => {
    await write(conn, OK);
    conn.close();
  });
  const pool = createHttp1Pool();
  try {
    await (await pool.post(server.url, post(true))).text();
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The pooled connection is closed: the query is retried on a fresh one.
    assert.equal(await (await pool.post(server.url, post(true))).text(), "{}");
    assert.equal(server.state.requests, 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // A mutation takes only a connection used within the last second (this one
    // is): it fails on the closed one instead of being sent again.
    await assert.rejects(pool.post(server.url, post(false)), /closed before an answer/);
    assert.equal(server.state.requests, 2, "the mutation reached no server twice");
  } finally {
    pool.close();
    await server.close();
  }
});

Deno.test("http1: an abort closes the connection and rejects with the signal's reason", async () => {
  const never = Promise.withResolvers<void>();
  const server = rawServer(() => never.promise);
  const pool = createHttp1Pool();
  try {
    const controller = new AbortController();
    const pending = pool.post(server.url, post(true, controller.signal));
    while (server.state.requests === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new DOMException("late", "TimeoutError"));
    await assert.rejects(pending, { name: "TimeoutError" });
  } finally {
    never.resolve();
    pool.close();
    await server.close();
  }
});

Deno.test("http1: a header name or value that could split the request is refused before sending", async () => {
  const server = rawServer(async (conn) => void await write(conn, OK));
  const pool = createHttp1Pool();
  try {
    for (
      const header of [
        ["x-a", "1\r\nx-injected: yes"],
        ["x-a", "1\nx"],
        ["x-a\r\nx-b", "1"],
        ["x a", "1"],
      ] as [string, string][]
    ) {
      await assert.rejects(
        pool.post(server.url, { headers: [header], body: "{}", idempotent: true }),
        /Invalid request header/,
      );
    }
    assert.equal(server.state.connections, 0, "nothing was sent");
  } finally {
    pool.close();
    await server.close();
  }
});

Deno.test("http1: header values go out byte for byte, as fetch sends them (Latin-1 byte strings)", async () => {
  let head = new Uint8Array();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const served = (async () => {
    const conn = await listener.accept();
    const buffer = new Uint8Array(4096);
    const n = (await conn.read(buffer)) ?? 0;
    head = buffer.slice(0, n);
    await write(conn, OK);
    conn.close();
  })();
  const pool = createHttp1Pool();
  try {
    // "é" as Deno's Headers hold it when a client sent the byte 0xE9.
    const response = await pool.post(`http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/`, {
      headers: [["x-name", "Jos\u00e9"]],
      body: "{}",
      idempotent: true,
    });
    await response.text();
    await served;
    const at = new TextDecoder("latin1").decode(head).indexOf("x-name: ");
    assert.deepEqual([...head.subarray(at + 8, at + 12)], [0x4a, 0x6f, 0x73, 0xe9]);
    await assert.rejects(
      pool.post("http://127.0.0.1:9/", {
        headers: [["x-name", "\u20ac"]],
        body: "",
        idempotent: true,
      }),
      /above U\+00FF/,
    );
  } finally {
    pool.close();
    listener.close();
  }
});

Deno.test("http1: a closed pool refuses posts and closes the connections it held", async () => {
  const server = rawServer(async (conn) => void await write(conn, OK));
  const pool = createHttp1Pool();
  try {
    await (await pool.post(server.url, post(true))).text();
    pool.close();
    await assert.rejects(pool.post(server.url, post(true)), /pool is closed/);
  } finally {
    await server.close();
  }
});
