/**
 * The connection guard (`lib/listen/guarded_serve.ts`): what `Deno.serve` lacks
 * (denoland/deno#3515). Raw TCP clients hold connections the way an attacker
 * would: a head sent byte by byte, nothing at all, an idle keep-alive, more
 * connections than allowed. Answers that take long or stream stay open.
 *
 * Timing: a test waits for the guard's counters (`until`), not for a fixed
 * sleep, and its upper bounds are several times the timeout it checks (a
 * loaded machine runs timers late; a guard that is missing never closes, and
 * `readToEnd` gives up after 5 s). Lower bounds stay exact: load only delays.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type ConnectionLimits,
  type GuardCounts,
  serveGuarded,
} from "../../lib/listen/guarded_serve.ts";
import { startRouter } from "../../lib/cli/serve.ts";
import { oneSubgraphWorkspace } from "./_workspace.ts";

const QUIET = { debug() {}, info() {}, warn() {}, error() {} };
const encode = (text: string) => new TextEncoder().encode(text);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** An upper bound for a close due at a timeout of a few hundred ms, on a loaded machine. */
const LATE = 4_000;

/** Waits until `done()` holds (checked every 10 ms); fails after `ms`. */
async function until(done: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(10);
  }
}

async function withGuard(
  limits: Partial<ConnectionLimits>,
  handler: (request: Request) => Response | Promise<Response>,
  run: (port: number, counts: () => GuardCounts) => Promise<void>,
): Promise<void> {
  const server = await serveGuarded({
    hostname: "127.0.0.1",
    port: 0,
    limits: { headerReadTimeoutMs: 0, keepAliveTimeoutMs: 0, maxConnections: 0, ...limits },
    log: QUIET,
  }, handler);
  try {
    await run(server.addr.port, () => server.counts()!);
  } finally {
    // A failed test may leave a client connection open: shutdown would wait for
    // it for ever. Past 5 s the test ends (and the sanitizers name what leaked).
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([server.shutdown(), new Promise((done) => timer = setTimeout(done, 5_000))]);
    clearTimeout(timer);
  }
}

/** Reads until the connection ends (or `ms` pass): the text, and when it ended. */
async function readToEnd(
  conn: Deno.Conn,
  ms = 5_000,
): Promise<{ text: string; ended: boolean; at: number }> {
  const start = performance.now();
  const buffer = new Uint8Array(65_536);
  let text = "";
  const timer = setTimeout(() => conn.close(), ms);
  try {
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) return { text, ended: true, at: performance.now() - start };
      text += new TextDecoder().decode(buffer.subarray(0, n));
    }
  } catch {
    return { text, ended: false, at: performance.now() - start };
  } finally {
    clearTimeout(timer);
  }
}

/** Reads one answer (head and a Content-Length body) from a kept-alive connection. */
async function readAnswer(conn: Deno.Conn): Promise<string> {
  const buffer = new Uint8Array(65_536);
  let text = "";
  for (;;) {
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) {
      const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (text.length >= end + 4 + length) return text;
    }
    const n = await conn.read(buffer);
    if (n === null) throw new Error(`closed after ${JSON.stringify(text)}`);
    text += new TextDecoder().decode(buffer.subarray(0, n));
  }
}

const ok = () => new Response("ok");

Deno.test("guard: a head sent byte by byte is cut at header_read_timeout; others are served meanwhile", async () => {
  await withGuard({ headerReadTimeoutMs: 300 }, ok, async (port, counts) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(encode("GET / HTTP/1.1\r\nHost: a\r\n"));
    // One more header byte every 50 ms: the deadline does not move.
    let sending = true;
    const trickle = (async () => {
      while (sending) {
        await sleep(50);
        await conn.write(encode("x")).catch(() => sending = false);
      }
    })();
    const response = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await response.text(), "ok", "another client is served");
    const { ended, at, text } = await readToEnd(conn);
    sending = false;
    await trickle;
    assert.ok(ended, "the connection was closed");
    assert.equal(text, "", "without an answer");
    assert.ok(at < LATE, `closed after ${at} ms`);
    assert.equal(counts().headerReadTimeouts, 1);
    conn.close();
  });
});

Deno.test("guard: a connection holds no inner connection until its request head is complete", async () => {
  await withGuard({ headerReadTimeoutMs: 5_000 }, ok, async (port, counts) => {
    const conns = await Promise.all(
      Array.from({ length: 5 }, () => Deno.connect({ hostname: "127.0.0.1", port })),
    );
    for (const conn of conns) await conn.write(encode("GET / HTTP/1.1\r\nHost: a\r\n"));
    await until(() => counts().open === 5, "5 connections open");
    await sleep(100);
    assert.deepEqual([counts().open, counts().relayed], [5, 0]);
    await conns[0]!.write(encode("\r\n"));
    assert.match(await readAnswer(conns[0]!), /^HTTP\/1\.1 200[^]*ok$/);
    assert.deepEqual([counts().open, counts().relayed], [5, 1]);
    for (const conn of conns) conn.close();
  });
});

Deno.test("guard: a head past 32 KiB is not held by the relay but passed on (its bytes are bounded)", async () => {
  await withGuard({ headerReadTimeoutMs: 5_000 }, ok, async (port, counts) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(encode("GET / HTTP/1.1\r\nx-pad: " + "a".repeat(40_000)));
    await until(() => counts().relayed === 1, "the long head relayed");
    assert.deepEqual([counts().open, counts().relayed], [1, 1]);
    conn.close();
  });
});

Deno.test("guard: a connection that sends nothing is closed at header_read_timeout", async () => {
  await withGuard({ headerReadTimeoutMs: 200 }, ok, async (port, counts) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const { ended, at } = await readToEnd(conn);
    assert.ok(ended && at < LATE, `closed after ${at} ms`);
    assert.equal(counts().headerReadTimeouts, 1);
    conn.close();
  });
});

Deno.test("guard: a kept-alive connection serves its next request in time and is closed at keep_alive_timeout", async () => {
  await withGuard({ keepAliveTimeoutMs: 600 }, ok, async (port, counts) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    for (let i = 0; i < 2; i++) {
      await conn.write(encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
      assert.match(await readAnswer(conn), /^HTTP\/1\.1 200[^]*ok$/);
      await sleep(50);
    }
    const { ended, at } = await readToEnd(conn);
    assert.ok(ended && at >= 400 && at < LATE, `closed after ${at} ms`);
    assert.equal(counts().keepAliveTimeouts, 1);
    conn.close();
  });
});

Deno.test("guard: HTTP/2 (prior knowledge) is served, and a silent HTTP/2 connection is closed at keep_alive_timeout", async () => {
  await withGuard(
    { headerReadTimeoutMs: 200, keepAliveTimeoutMs: 400 },
    ok,
    async (port, counts) => {
      const client = Deno.createHttpClient({ http1: false, http2: true });
      try {
        const response = await fetch(`http://127.0.0.1:${port}/`, { client });
        assert.equal(await response.text(), "ok");
      } finally {
        client.close();
      }
      // The preface, then nothing: no HTTP/1 head to wait for, only silence.
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
      const { ended, at } = await readToEnd(conn);
      assert.ok(ended, "closed");
      assert.ok(at >= 300 && at < LATE, `closed after ${Math.round(at)} ms`);
      assert.equal(counts().keepAliveTimeouts, 1);
      conn.close();
    },
  );
});

Deno.test("guard: large answers to many connections at once pass whole and unmixed (the relay's reused read buffers)", async () => {
  // Each answer is its request's own bytes, 300 KB: a buffer handed to another
  // relay while its bytes are still being written would show here.
  const answer = (id: string) => id.repeat(300_000 / id.length);
  const handler = (request: Request) =>
    new Response(answer(new URL(request.url).searchParams.get("id")!));
  await withGuard({ keepAliveTimeoutMs: 60_000 }, handler, async (port, counts) => {
    const one = async (client: number) => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      try {
        for (let round = 0; round < 3; round++) {
          const id = `<${String(client).padStart(3, "0")}-${round}>`;
          await conn.write(
            encode(`GET /?id=${encodeURIComponent(id)} HTTP/1.1\r\nHost: a\r\n\r\n`),
          );
          const text = await readAnswer(conn);
          assert.equal(text.slice(text.indexOf("\r\n\r\n") + 4), answer(id), id);
        }
      } finally {
        conn.close();
      }
    };
    await Promise.all(Array.from({ length: 80 }, (_, client) => one(client)));
    assert.ok(counts().bulkBuffers > 0 && counts().bulkBuffers <= 64, `${counts().bulkBuffers}`);
  });
});

Deno.test("guard: the relays' bulk read buffers are bounded (64): answers past them go on in small reads", async () => {
  // 80 clients that do not read yet: each relay's write waits with its buffer.
  const big = new Uint8Array(8_000_000).fill(0x78);
  await withGuard({ keepAliveTimeoutMs: 60_000 }, () => new Response(big), async (port, counts) => {
    const conns = await Promise.all(
      Array.from({ length: 80 }, () => Deno.connect({ hostname: "127.0.0.1", port })),
    );
    try {
      for (const conn of conns) await conn.write(encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
      await until(() => counts().bulkBuffers >= 64, "64 bulk buffers in use");
      // Unbounded, the other 16 relays would make theirs now.
      await sleep(300);
      assert.equal(counts().bulkBuffers, 64);
      // Every answer arrives (counted, not decoded: 640 MB in all).
      const readBytes = async (conn: Deno.Conn) => {
        const buffer = new Uint8Array(262_144);
        let total = 0;
        while (total < big.length) {
          const n = await conn.read(buffer);
          if (n === null) break;
          total += n;
        }
        return total;
      };
      const totals = await Promise.all(conns.map(readBytes));
      assert.ok(totals.every((total) => total >= big.length), "every answer arrives (8 MB each)");
    } finally {
      for (const conn of conns) conn.close();
    }
  });
});

Deno.test("guard: a client that stops reading a large answer is closed at keep_alive_timeout", async () => {
  const big = () => new Response("x".repeat(32_000_000));
  await withGuard({ keepAliveTimeoutMs: 300 }, big, async (port, counts) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      await conn.write(encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
      // Read nothing: the socket buffers fill and the relay's write waits.
      await until(
        () => counts().keepAliveTimeouts === 1 && counts().open === 0,
        "closed while its answer could not move",
      );
    } finally {
      conn.close();
    }
  });
});

Deno.test("guard: an answer slower than both timeouts is delivered (the request's own deadline bounds it)", async () => {
  const slow = async () => {
    await sleep(700);
    return new Response("late");
  };
  await withGuard({ headerReadTimeoutMs: 200, keepAliveTimeoutMs: 200 }, slow, async (port) => {
    const response = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await response.text(), "late");
  });
});

Deno.test("guard: an empty line in a body answered early (413) does not make the connection busy for ever", async () => {
  // Deno.serve reads the rest of the body after the answer; the guard took its
  // bytes for the next head, and its empty line for that head's end: a
  // connection held with no deadline at all by two packets and then silence.
  const early = () => new Response("too large", { status: 413 });
  await withGuard(
    { headerReadTimeoutMs: 300, keepAliveTimeoutMs: 300, answerTimeoutMs: 60_000 },
    early,
    async (port, counts) => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(encode("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100000000\r\n\r\n{"));
      assert.match(await readAnswer(conn), /^HTTP\/1\.1 413/);
      await conn.write(encode("\r\n\r\n"));
      const { ended, at } = await readToEnd(conn, 5_000);
      assert.ok(ended && at < LATE, `closed after ${Math.round(at)} ms (ended: ${ended})`);
      assert.equal(counts().headerReadTimeouts, 1);
      conn.close();
    },
  );
});

Deno.test("guard: a request pipelined behind another is answered, however long it takes past keep_alive_timeout", async () => {
  const handler = async (request: Request) => {
    if (new URL(request.url).pathname === "/slow") await sleep(900);
    return new Response(new URL(request.url).pathname);
  };
  await withGuard({ headerReadTimeoutMs: 300, keepAliveTimeoutMs: 300 }, handler, async (port) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    // Both heads in one packet; the second one's answer comes 900 ms after the first's.
    await conn.write(
      encode("GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /slow HTTP/1.1\r\nHost: a\r\n\r\n"),
    );
    const { text } = await readToEnd(conn, 10_000);
    assert.match(text, /\/a[^]*HTTP\/1\.1 200[^]*\/slow$/, text);
    conn.close();
  });
});

Deno.test("guard: a connection whose request gets no answer at all is closed at the answer backstop", async () => {
  // Answers only once its client is gone (a handler stuck until then).
  const never = (request: Request) =>
    new Promise<Response>((resolve) =>
      request.signal.addEventListener("abort", () => resolve(new Response(null)))
    );
  await withGuard(
    { headerReadTimeoutMs: 300, answerTimeoutMs: 400 },
    never,
    async (port, counts) => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
      const { ended, at } = await readToEnd(conn, 5_000);
      assert.ok(ended && at < LATE, `closed after ${Math.round(at)} ms (ended: ${ended})`);
      assert.equal(counts().answerTimeouts, 1);
      conn.close();
    },
  );
});

Deno.test("guard: an event stream quieter than keep_alive_timeout stays open until it ends", async () => {
  const stream = () =>
    new Response(
      new ReadableStream({
        async start(controller) {
          controller.enqueue(encode("data: one\n\n"));
          await sleep(700);
          controller.enqueue(encode("data: two\n\n"));
          controller.close();
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  await withGuard({ keepAliveTimeoutMs: 200 }, stream, async (port) => {
    const response = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await response.text(), "data: one\n\ndata: two\n\n");
  });
});

/** Asserts the guard's refusal: 503 `SERVICE_OVERLOADED`, `Retry-After`, `Connection: close`. */
function assertRefusal(text: string): void {
  const end = text.indexOf("\r\n\r\n");
  assert.ok(end > 0, `an answer: ${JSON.stringify(text)}`);
  const head = text.slice(0, end);
  const body = text.slice(end + 4);
  assert.match(head, /^HTTP\/1\.1 503 /);
  assert.match(head, /\r\nretry-after: 1\r\n/i);
  assert.match(head, /\r\nconnection: close(\r\n|$)/i);
  assert.equal(Number(/content-length: (\d+)/i.exec(head)?.[1]), encode(body).length);
  const error = JSON.parse(body).errors[0];
  assert.equal(error.extensions.code, "SERVICE_OVERLOADED");
  assert.match(error.message, /traffic_shaping\.router\.max_connections/);
}

Deno.test("guard: past max_connections a new connection is answered 503 and closed; one closing makes room", async () => {
  await withGuard({ maxConnections: 2 }, ok, async (port, counts) => {
    const held = [
      await Deno.connect({ hostname: "127.0.0.1", port }),
      await Deno.connect({ hostname: "127.0.0.1", port }),
    ];
    await until(() => counts().open === 2, "two connections held");
    const third = await Deno.connect({ hostname: "127.0.0.1", port });
    // A request sent before the answer is read. (The guard reads what the client
    // sent before closing, so the close is no reset; Linux would deliver the 503
    // ahead of a reset anyway, so only clients elsewhere would see the difference.)
    await third.write(encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n")).catch(() => {});
    const { ended, text } = await readToEnd(third);
    assert.ok(ended);
    assertRefusal(text);
    assert.equal(counts().refused, 1);
    third.close();
    held.pop()!.close();
    await until(() => counts().open === 1 && counts().refusing === 0, "room for one");
    const fourth = await Deno.connect({ hostname: "127.0.0.1", port });
    await fourth.write(encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
    assert.match(await readAnswer(fourth), /^HTTP\/1\.1 200/);
    fourth.close();
    held.pop()!.close();
  });
});

Deno.test("guard: max_connections is lowered to what the open-file limit allows, and says so", async () => {
  const warnings: [string, Record<string, unknown> | undefined][] = [];
  const log = {
    ...QUIET,
    warn: (msg: string, fields?: Record<string, unknown>) => warnings.push([msg, fields]),
  };
  const server = await serveGuarded({
    hostname: "127.0.0.1",
    port: 0,
    // Room for 20 relayed connections (3 files each) beside the 256 kept for the rest.
    fileLimit: 256 + 3 * 20,
    limits: { headerReadTimeoutMs: 5_000, keepAliveTimeoutMs: 0, maxConnections: 4_096 },
    log,
  }, ok);
  try {
    assert.deepEqual(warnings[0]?.[1], {
      max_connections: 4_096,
      held_to: 20,
      open_file_limit: 316,
      hint: "raise the limit (ulimit -n, LimitNOFILE=) to allow more",
    });
    const port = server.addr.port;
    const held = await Promise.all(
      Array.from({ length: 20 }, () => Deno.connect({ hostname: "127.0.0.1", port })),
    );
    await until(() => server.counts()?.open === 20, "20 connections held");
    const over = await Deno.connect({ hostname: "127.0.0.1", port });
    const { ended, text } = await readToEnd(over);
    assert.ok(ended, "the 21st is closed at once");
    assertRefusal(text);
    assert.equal(server.counts()?.refused, 1);
    over.close();
    for (const conn of held) conn.close();
  } finally {
    await server.shutdown();
  }
});

Deno.test("guard: refusals hold at most 32 files at once, each for at most 500 ms", async () => {
  await withGuard({ maxConnections: 1 }, ok, async (port, counts) => {
    const held = await Deno.connect({ hostname: "127.0.0.1", port });
    await until(() => counts().open === 1, "one connection held");
    // 100 refused clients that never read nor close: each is owed a 503.
    const flood: Deno.Conn[] = [];
    for (let i = 0; i < 100; i++) flood.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    let most = 0;
    for (let waited = 0; waited < 150; waited += 10) {
      most = Math.max(most, counts().refusing);
      await sleep(10);
    }
    assert.ok(most > 0 && most <= 32, `refused connections held at once: ${most}`);
    // Each ends 500 ms after it began (later on a loaded machine, never unbounded).
    await until(() => counts().refusing === 0 && counts().refused === 100, "refusals ended", 5_000);
    let answered = 0;
    for (const conn of flood) {
      const { text } = await readToEnd(conn, 1_000);
      if (text.startsWith("HTTP/1.1 503")) answered++;
      conn.close();
    }
    assert.ok(answered >= 32, `answered: ${answered}`);
    held.close();
  });
});

Deno.test("guard: a head Deno.serve cannot read (200 header fields, a 70 KB field, a bad request line) gets a 400 that says so, with a code", async () => {
  await withGuard({ headerReadTimeoutMs: 5_000 }, ok, async (port) => {
    const heads = [
      `GET / HTTP/1.1\r\nhost: a\r\n${
        Array.from({ length: 200 }, (_, i) => `x-${i}: 1\r\n`).join("")
      }\r\n`,
      `GET / HTTP/1.1\r\nhost: a\r\nx-a: ${"a".repeat(70_000)}\r\n\r\n`,
      `GET /\x01 HTTP/1.1\r\nhost: a\r\n\r\n`,
    ];
    for (const head of heads) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(encode(head)).catch(() => {});
      const { text } = await readToEnd(conn);
      conn.close();
      const end = text.indexOf("\r\n\r\n");
      assert.match(text, /^HTTP\/1\.1 400 /, JSON.stringify(text.slice(0, 200)));
      assert.match(text.slice(0, end), /\r\ncontent-type: application\/json/i);
      const error = JSON.parse(text.slice(end + 4)).errors[0];
      assert.equal(error.extensions.code, "BAD_REQUEST");
      assert.match(error.message, /could not be read/);
    }
  });
});

Deno.test("guard: connections reset before they are accepted do not slow the next ones down", async () => {
  await withGuard({ headerReadTimeoutMs: 5_000 }, ok, async (port) => {
    // Another process (so that the resets race the accept loop, as a remote
    // client's would): 300 connections, each reset (RST) as soon as it is up.
    // Those reset while still waiting to be accepted fail their accept.
    const script = `
      import net from "node:net";
      for (let i = 0; i < 300; i++) {
        await new Promise((resolve) => {
          const socket = net.connect(${port}, "127.0.0.1", () => { socket.resetAndDestroy(); resolve(); });
          socket.on("error", resolve);
        });
      }`;
    const flood = await new Deno.Command(Deno.execPath(), { args: ["eval", script] }).output();
    assert.ok(flood.success, new TextDecoder().decode(flood.stderr));
    const start = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await response.text(), "ok");
    // A pause after each failed accept would keep this one waiting behind them.
    const took = performance.now() - start;
    assert.ok(took < 1_000, `took ${Math.round(took)} ms`);
  });
});

Deno.test("guard: a client that goes away aborts its request's signal, as with Deno.serve", async () => {
  const aborted = Promise.withResolvers<void>();
  const waits = (request: Request) =>
    new Promise<Response>((resolve) => {
      request.signal.addEventListener("abort", () => {
        aborted.resolve();
        resolve(new Response("gone"));
      });
    });
  await withGuard({ headerReadTimeoutMs: 5_000 }, waits, async (port) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
    await sleep(100);
    conn.close();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      aborted.promise,
      new Promise((_, reject) => timer = setTimeout(() => reject(new Error("no abort")), 10_000)),
    ]);
    clearTimeout(timer);
  });
});

Deno.test("guard: the router keeps traffic_shaping.router.header_read_timeout on listen_addr, and counts it in its metrics", async () => {
  const subgraph = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => Response.json({ data: { hello: "hi" } }),
  );
  const dir = await oneSubgraphWorkspace(`http://127.0.0.1:${subgraph.addr.port}/graphql`, {
    sdl: "type Query { hello: String }",
    extra: "log_level: error\ntraffic_shaping:\n  router:\n    header_read_timeout: 300ms\n" +
      "telemetry:\n  metrics:\n    prometheus:\n      enabled: true\n      listen_addr: 127.0.0.1:0\n",
  });
  const router = await startRouter({ configPath: join(dir, "config.yaml") });
  try {
    const port = Number(new URL(router.url).port);
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(encode("POST /graphql HTTP/1.1\r\nHost: a\r\n"));
    const response = await fetch(`${router.url}/graphql?query=%7Bhello%7D`, {
      headers: { "apollo-require-preflight": "true" },
    });
    assert.deepEqual(await response.json(), { data: { hello: "hi" } });
    const { ended, at } = await readToEnd(conn);
    assert.ok(ended && at < LATE, `closed after ${at} ms`);
    conn.close();
    const metrics = await (await fetch(router.metricsUrl!)).text();
    assert.match(
      metrics,
      /\ngw_router_client_connections_closed_total\{limit="header_read_timeout"\} 1\n/,
    );
    assert.match(
      metrics,
      /\ngw_router_client_connections_closed_total\{limit="max_connections"\} 0\n/,
    );
    assert.match(metrics, /\ngw_router_client_connections \d+\n/);
  } finally {
    await router.shutdown();
    await subgraph.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
