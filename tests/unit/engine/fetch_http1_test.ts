/**
 * The subgraph HTTP/1.1 pool (`lib/engine/http1.ts`) on its own, against raw
 * TCP servers: connection reuse and expiry, the stale-connection retry of
 * queries (never of mutations), aborts, and request headers that could split
 * the request. The misbehaving-server cases run through the whole router in
 * `tests/e2e/subgraph_wire_test.ts`.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { createHttp1Pool, wholeBody } from "../../../lib/engine/fetch/http1.ts";

const OK = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";

/** A TCP server: `answer(index, request)` per request read; it counts connections. */
function rawServer(
  answer: (conn: Deno.Conn, request: { index: number; connection: number }) => Promise<void>,
) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  /** Connections accepted, requests read, connections still open on the server. */
  const state = { connections: 0, requests: 0, open: 0 };
  const loops: Promise<void>[] = [];
  const serve = async (conn: Deno.Conn, connection: number) => {
    const buffer = new Uint8Array(65_536);
    let text = "";
    state.open++;
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
      state.open--;
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
      // Each write goes out as its own segment (no Nagle wait of a delayed ACK's 40 ms).
      conn.setNoDelay(true);
      conns.add(conn);
      loops.push(serve(conn, state.connections++));
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/graphql`,
    state,
    /** Closes every connection it accepted (a restart), listening on. */
    drop() {
      for (const conn of conns) conn.close();
      conns.clear();
    },
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

Deno.test("http1: a query whose pooled connection closes unanswered goes again on a new one; a mutation is not sent twice", async () => {
  // The server answers the first request of each connection and closes on the
  // second without answering (an idle timeout meeting the request on its way).
  const seen = new Map<number, number>();
  const server = rawServer(async (conn, { connection }) => {
    const n = (seen.get(connection) ?? 0) + 1;
    seen.set(connection, n);
    if (n === 1) await write(conn, OK);
    else conn.close();
  });
  const pool = createHttp1Pool();
  try {
    await (await pool.post(server.url, post(true))).text();
    // The pooled connection closes unanswered: the query goes again on a fresh one.
    assert.equal(await (await pool.post(server.url, post(true))).text(), "{}");
    assert.equal(server.state.requests, 3);
    assert.equal(server.state.connections, 2);
    // A mutation on a pooled connection that closes unanswered fails: it is not sent again.
    await assert.rejects(pool.post(server.url, post(false)), /closed before any byte of an answer/);
    assert.equal(server.state.requests, 4, "the mutation reached the server once");
    assert.equal(server.state.connections, 2);
  } finally {
    pool.close();
    await server.close();
  }
});

Deno.test("http1: an answer arriving on an idle connection is not taken for the next request's (the connection is dropped)", async () => {
  // The first answer is followed, later, by a stray one: a faulty server, or
  // the rest of a body longer than its Content-Length.
  const server = rawServer(async (conn, { index }) => {
    const body = JSON.stringify({ request: index });
    await write(
      conn,
      `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    if (index === 0) {
      setTimeout(() => {
        write(conn, 'HTTP/1.1 200 OK\r\ncontent-length: 15\r\n\r\n{"stray":"you"}').catch(() => {});
      }, 20);
    }
  });
  const pool = createHttp1Pool();
  try {
    assert.equal(await (await pool.post(server.url, post(true))).text(), '{"request":0}');
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.deepEqual(
      pool.idle().connections,
      0,
      "the connection that spoke out of turn left the pool",
    );
    // Each later request gets its own answer, on a new connection.
    assert.equal(await (await pool.post(server.url, post(true))).text(), '{"request":1}');
    assert.equal(await (await pool.post(server.url, post(true))).text(), '{"request":2}');
    assert.equal(server.state.connections, 2);
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

Deno.test("http1: an idle connection keeps no large read buffer (a 60 KB head grew it)", async () => {
  const big = "HTTP/1.1 200 OK\r\n" + "x-pad: " + "a".repeat(60_000) +
    "\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
  const server = rawServer(async (conn) => void await write(conn, big));
  const pool = createHttp1Pool();
  try {
    assert.equal(await (await pool.post(server.url, post(true))).text(), "{}");
    assert.deepEqual(pool.idle(), { connections: 1, bufferBytes: 16_384 });
  } finally {
    pool.close();
    await server.close();
  }
});

Deno.test("http1: a body up to 256 KiB arriving in pieces is handed over whole; a larger one streams", async () => {
  let size = 100_000;
  const server = rawServer(async (conn) => {
    const body = "b".repeat(size);
    await write(conn, `HTTP/1.1 200 OK\r\ncontent-length: ${size}\r\n\r\n${body.slice(0, 1000)}`);
    // The rest later, in two writes: more than the 16 KiB read buffer holds.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await write(conn, body.slice(1000, 50_000));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await write(conn, body.slice(50_000));
  });
  const pool = createHttp1Pool();
  try {
    const small = await pool.post(server.url, post(true));
    const whole = wholeBody(small);
    assert.ok(whole instanceof Uint8Array, "the 100 KB body arrived whole");
    assert.equal(new TextDecoder().decode(whole), "b".repeat(size));
    assert.equal(await small.text(), "b".repeat(size), "the response carries it too");
    // The connection went back to the pool with a small buffer again.
    assert.deepEqual(pool.idle(), { connections: 1, bufferBytes: 16_384 });
    size = 300_000;
    const large = await pool.post(server.url, post(true));
    assert.equal(
      wholeBody(large),
      undefined,
      "over 256 KiB: streamed (the budget can hold it back)",
    );
    assert.equal((await large.text()).length, size);
  } finally {
    pool.close();
    await server.close();
  }
});

Deno.test("http1: buffered chunks are handed over together (10 000 one-byte chunks: a few pieces, not 10 000)", async () => {
  const text = "0123456789abcdefABCDEF".repeat(455).slice(0, 10_000);
  let body = "";
  for (const ch of text) body += `1\r\n${ch}\r\n`;
  // Sizes in upper and lower case hex, and one chunk with an extension (read by line).
  body += "A\r\n0123456789\r\nf;ext=1\r\n0123456789abcde\r\n0\r\n\r\n";
  const server = rawServer(async (conn) => {
    const bytes = new TextEncoder().encode(
      `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${body}`,
    );
    for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
  });
  const pool = createHttp1Pool();
  try {
    const response = await pool.post(server.url, post(true));
    const reader = response.body!.getReader();
    let pieces = 0;
    let got = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pieces++;
      got += new TextDecoder().decode(value);
    }
    assert.equal(got, `${text}01234567890123456789abcde`);
    assert.ok(pieces <= 20, `pieces: ${pieces}`);
  } finally {
    pool.close();
    await server.close();
  }
});

Deno.test("http1: any chunking of a body, written in any pieces, reads back as the body (property)", async () => {
  /** What the server writes next: the answer's bytes, in pieces. */
  let pieces: Uint8Array[] = [];
  const server = rawServer(async (conn) => {
    for (const piece of pieces) {
      for (let at = 0; at < piece.length;) at += await conn.write(piece.subarray(at));
      // A turn of the event loop between pieces: the client may read in between.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  });
  const pool = createHttp1Pool();
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "binary", maxLength: 400 }),
        fc.array(fc.integer({ min: 1, max: 70 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 20 }),
        fc.boolean(),
        async (text, sizes, cuts, upper) => {
          const data = new TextEncoder().encode(text);
          let wire = "";
          // One character per byte (TextDecoder's "latin1" is windows-1252).
          const chars = (bytes: Uint8Array) => String.fromCharCode(...bytes);
          for (let at = 0, i = 0; at < data.length; i++) {
            const size = Math.min(sizes[i % sizes.length]!, data.length - at);
            const hex = size.toString(16);
            const ext = i % 5 === 4 ? ";x=1" : "";
            wire += `${upper ? hex.toUpperCase() : hex}${ext}\r\n${
              chars(data.subarray(at, at + size))
            }\r\n`;
            at += size;
          }
          wire += "0\r\n\r\n";
          const answer = `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${wire}`;
          const bytes = Uint8Array.from(answer, (c) => c.charCodeAt(0));
          pieces = [];
          for (let at = 0, i = 0; at < bytes.length; i++) {
            const n = cuts[i % cuts.length]!;
            pieces.push(bytes.subarray(at, at + n));
            at += n;
          }
          const response = await pool.post(server.url, post(true));
          const got = new Uint8Array(await response.arrayBuffer());
          assert.deepEqual(got, data);
        },
      ),
      { numRuns: 80 },
    );
  } finally {
    pool.close();
    await server.close();
  }
});

Deno.test("http1: a few interim answers are skipped; an endless run of them is refused", async () => {
  const interim = (n: number) => "HTTP/1.1 100 Continue\r\n\r\n".repeat(n) + OK;
  let n = 3;
  const server = rawServer(async (conn) => void await write(conn, interim(n)));
  const pool = createHttp1Pool();
  try {
    assert.equal(await (await pool.post(server.url, post(true))).text(), "{}");
    n = 50;
    await assert.rejects(pool.post(server.url, post(true)), /more than 8 interim answers/);
  } finally {
    pool.close();
    await server.close();
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

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Idle connections to `server`: `n` concurrent posts, each answered once all arrived. */
async function burst(pool: ReturnType<typeof createHttp1Pool>, url: string, n: number) {
  const answers = await Promise.all(Array.from({ length: n }, () => pool.post(url, post(true))));
  await Promise.all(answers.map((answer) => answer.text()));
}

/** A server that answers a connection's requests only once `n` connections are open. */
function gatedServer(n: number) {
  const opened = Promise.withResolvers<void>();
  const server = rawServer(async (conn) => {
    if (server.state.connections >= n) opened.resolve();
    await opened.promise;
    await write(conn, OK);
  });
  return server;
}

Deno.test("http1: a connect that hangs (the subgraph's accept queue full) ends with the signal", async () => {
  // A listener that never accepts: once its queue is full, connects wait for good.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const queued: Deno.Conn[] = [];
  const pool = createHttp1Pool();
  try {
    for (;;) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), 100);
      try {
        queued.push(await Deno.connect({ hostname: "127.0.0.1", port, signal: controller.signal }));
      } catch {
        break;
      } finally {
        clearTimeout(timer);
      }
    }
    const controller = new AbortController();
    const start = performance.now();
    const pending = pool.post(`http://127.0.0.1:${port}/`, post(true, controller.signal));
    setTimeout(() => controller.abort(new DOMException("late", "TimeoutError")), 100);
    const settled = await Promise.race([
      pending.then(() => "answered", (error) => error.name),
      tick(2_000).then(() => "hung"),
    ]);
    assert.equal(settled, "TimeoutError");
    assert.ok(performance.now() - start < 1_000);
  } finally {
    pool.close();
    for (const conn of queued) conn.close();
    listener.close();
  }
});

Deno.test("http1: a mutation leaves the idle connections too old for it to the queries", async () => {
  let clock = 0;
  const server = gatedServer(3);
  const pool = createHttp1Pool({ now: () => clock });
  try {
    await burst(pool, server.url, 3);
    assert.equal(server.state.connections, 3);
    clock += 1_500; // past the mutation's 1 s, within the queries' 4 s
    await (await pool.post(server.url, post(false))).text();
    assert.equal(server.state.connections, 4, "the mutation went on a new connection");
    // The four idle connections carry four concurrent queries: none opened.
    await burst(pool, server.url, 4);
    assert.equal(server.state.connections, 4, "the older idle connections were kept");
  } finally {
    pool.close();
    await server.close();
  }
});

Deno.test("http1: connections idle past idleMs are closed, not only those at the top of the pool", async () => {
  let clock = 0;
  const server = gatedServer(3);
  const pool = createHttp1Pool({ now: () => clock });
  try {
    await burst(pool, server.url, 3);
    // A steady trickle reuses the freshest connection; the other two expire.
    for (let i = 0; i < 3; i++) {
      clock += 3_000;
      await (await pool.post(server.url, post(true))).text();
    }
    await tick(50);
    assert.equal(server.state.connections, 3);
    assert.equal(server.state.open, 1, "the expired connections were closed");
  } finally {
    pool.close();
    await server.close();
  }
});

Deno.test("http1: after a subgraph restart (every connection closed) the pool has seen the closes: a mutation goes on a new connection", async () => {
  const server = gatedServer(3);
  const pool = createHttp1Pool();
  try {
    await burst(pool, server.url, 3);
    assert.equal(pool.idle().connections, 3);
    server.drop();
    await tick(50);
    assert.equal(pool.idle().connections, 0, "each close was seen while idle");
    assert.equal(await (await pool.post(server.url, post(false))).text(), "{}");
    assert.equal(await (await pool.post(server.url, post(true))).text(), "{}");
  } finally {
    pool.close();
    await server.close();
  }
});

Deno.test("http1: a server that answers before reading the whole body (413, close): its answer, not the write's error", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const served = (async () => {
    const conn = await listener.accept();
    await conn.read(new Uint8Array(65_536));
    await write(conn, "HTTP/1.1 413 Payload Too Large\r\ncontent-length: 2\r\n\r\n{}");
    await tick(50);
    conn.close(); // with the body unread: a reset
  })();
  const pool = createHttp1Pool();
  try {
    const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/`;
    // Far more than the socket buffers take: the write fails once the server is gone.
    const response = await pool.post(url, {
      headers: [],
      body: "x".repeat(64_000_000),
      idempotent: true,
    });
    assert.equal(response.status, 413);
    assert.equal(await response.text(), "{}");
    await served;
  } finally {
    pool.close();
    listener.close();
  }
});
