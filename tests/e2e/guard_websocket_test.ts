/**
 * WebSockets through the connection guard (`lib/listen/guarded_serve.ts`):
 * after the 101 the relay passes the frames on as bytes (issue 45). Many
 * subscribers get every frame whole and in order, small and large ones (past
 * the relay's 256 KiB bulk reads); a client that stops reading holds the
 * relay to one read's bytes: the rest waits in the server's WebSocket, where
 * `subscriptions.max_unsent_bytes` counts it
 * (`tests/e2e/subscriptions_ws_test.ts` shows that bound through the guard);
 * and the router itself, with the production profile and the guard's default
 * limits, passes every graphql-ws event in order to 100 subscribers.
 *
 * Every test has a deadline: a lost frame fails it, never hangs it.
 */
import assert from "node:assert/strict";
import { createClient } from "graphql-ws";
import { type ConnectionLimits, serveGuarded } from "../../lib/listen/guarded_serve.ts";
import { review, until, withFixture } from "./_subscription_fixture.ts";

const QUIET = { debug() {}, info() {}, warn() {}, error() {} };
/** The router's defaults (traffic_shaping.router): the guard on, as operators run it. */
const LIMITS: ConnectionLimits = {
  headerReadTimeoutMs: 10_000,
  keepAliveTimeoutMs: 75_000,
  maxConnections: 4_096,
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fails with `what` past `ms`. */
function deadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not within ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Frame `seq`'s text: its number, then small, 40 KB, or (every eighth) 300 KB: past one bulk read. */
function frameText(seq: number): string {
  const size = seq % 8 === 7 ? 300_000 : [120, 40_000, 300, 200][seq % 4]!;
  const head = `${seq}:`;
  // Each frame's filler differs, so a frame cut, doubled or mixed with another shows.
  return head + String.fromCharCode(97 + (seq % 26)).repeat(size - head.length);
}

Deno.test("guard: 200 WebSocket subscribers get every frame, small and large, whole and in order", async () => {
  const FRAMES = 40;
  const SUBSCRIBERS = 200;
  const sockets = new Set<WebSocket>();
  const server = await serveGuarded(
    { hostname: "127.0.0.1", port: 0, limits: LIMITS, log: QUIET },
    (request) => {
      const { socket, response } = Deno.upgradeWebSocket(request);
      socket.onopen = () => sockets.add(socket);
      socket.onclose = () => sockets.delete(socket);
      return response;
    },
  );
  const clients: WebSocket[] = [];
  try {
    const received: string[][] = [];
    const done: Promise<void>[] = [];
    for (let i = 0; i < SUBSCRIBERS; i++) {
      const socket = new WebSocket(`ws://127.0.0.1:${server.addr.port}/`);
      clients.push(socket);
      const frames: string[] = [];
      received.push(frames);
      const all = Promise.withResolvers<void>();
      done.push(all.promise);
      // Awaited below, with the others; a close before then is that test's failure.
      all.promise.catch(() => {});
      socket.onmessage = (event) => {
        frames.push(event.data as string);
        if (frames.length === FRAMES) all.resolve();
      };
      socket.onclose = () => all.reject(new Error(`subscriber ${i} closed`));
    }
    await deadline(
      (async () => {
        while (sockets.size < SUBSCRIBERS) await sleep(10);
      })(),
      20_000,
      "every subscriber open",
    );
    // Bursts as a fan-out sends them: one frame to every socket in one tick.
    for (let seq = 0; seq < FRAMES; seq++) {
      const text = frameText(seq);
      for (const socket of sockets) socket.send(text);
      if (seq % 4 === 3) await sleep(1);
    }
    await deadline(Promise.all(done), 60_000, "every frame at every subscriber");
    for (const [i, frames] of received.entries()) {
      for (let seq = 0; seq < FRAMES; seq++) {
        if (frames[seq] !== frameText(seq)) {
          assert.fail(
            `subscriber ${i}: frame ${seq} is not the one sent (${frames[seq]?.slice(0, 12)}…)`,
          );
        }
      }
    }
  } finally {
    for (const socket of clients) socket.onclose = null;
    for (const socket of clients) socket.close();
    await deadline(
      (async () => {
        while (sockets.size > 0) await sleep(10);
      })(),
      10_000,
      "the sockets closed",
    ).catch(() => {});
    await deadline(server.shutdown(), 5_000, "the shutdown").catch(() => {});
  }
});

Deno.test("guard: a WebSocket client that stops reading holds the relay to bounded bytes; the rest stays unsent in the server", async () => {
  const SENT = 48 * 1024 * 1024;
  const opened = Promise.withResolvers<WebSocket>();
  const server = await serveGuarded(
    { hostname: "127.0.0.1", port: 0, limits: LIMITS, log: QUIET },
    (request) => {
      const { socket, response } = Deno.upgradeWebSocket(request);
      socket.onopen = () => opened.resolve(socket);
      return response;
    },
  );
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  try {
    await conn.write(new TextEncoder().encode(
      `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    ));
    const socket = await deadline(opened.promise, 10_000, "the upgrade");
    // The 101, then never another read.
    await conn.read(new Uint8Array(1_024));
    const chunk = new Uint8Array(1024 * 1024);
    for (let sent = 0; sent < SENT; sent += chunk.length) socket.send(chunk);
    // What left the server's WebSocket sits in socket buffers and the relay's one
    // read, never in a queue of the relay's own; give the relay time to drain what it can.
    let before = -1;
    await deadline(
      (async () => {
        while (socket.bufferedAmount !== before) {
          before = socket.bufferedAmount;
          await sleep(500);
        }
      })(),
      30_000,
      "the relay to stop taking bytes",
    );
    const taken = SENT - socket.bufferedAmount;
    // Kernel buffers on loopback (two unix ones and a TCP pair) take a few MiB; a
    // relay that read on while its client does not would take all 48.
    assert.ok(taken < 24 * 1024 * 1024, `the relay took ${taken} bytes from the server`);
    assert.ok(taken > 0, "some bytes left the server");
  } finally {
    conn.close();
    await deadline(server.shutdown(), 5_000, "the shutdown").catch(() => {});
  }
});

Deno.test("guard: 100 graphql-ws subscribers of the router (production profile, guard on) get every event in order, 300 KB ones too", async () => {
  const EVENTS = 24;
  const body = (i: number) => String.fromCharCode(97 + (i % 26)).repeat(i % 3 === 2 ? 300_000 : 40);
  await withFixture({}, async (fixture) => {
    const clients = Array.from({ length: 100 }, () =>
      createClient({
        url: fixture.wsUrl,
        retryAttempts: 0,
        lazy: false,
        // The connection closing at the end of the test is expected.
        onNonLazyError: () => {},
      }));
    try {
      const received: { id: string; body: string }[][] = clients.map(() => []);
      const failures: unknown[] = [];
      for (const [i, client] of clients.entries()) {
        client.subscribe({ query: "subscription { reviewAdded { id body } }" }, {
          next: (value) => {
            const added = (value.data as { reviewAdded: { id: string; body: string } }).reviewAdded;
            received[i]!.push(added);
          },
          error: (error) =>
            void failures.push(
              error instanceof CloseEvent ? `closed ${error.code}: ${error.reason}` : error,
            ),
          complete: () => {},
        });
      }
      await until(
        () => fixture.router.state().engine.subscriptions.active.size === 100,
        "100 subscriptions",
      );
      for (let i = 0; i < EVENTS; i++) {
        fixture.feed.publish(review(`r${i}`, { body: body(i) }));
        // Small events in bursts; a 300 KB one goes out whole before the next, within the
        // default subscriptions.max_unsent_bytes of a reading client.
        if (i % 3 === 2) {
          await until(
            () => failures.length > 0 || received.every((events) => events.length === i + 1),
            `event ${i} at every subscriber`,
          );
        }
      }
      await until(
        () => failures.length > 0 || received.every((events) => events.length === EVENTS),
        "every event at every subscriber",
      );
      assert.deepEqual(failures, []);
      for (const [i, events] of received.entries()) {
        for (let n = 0; n < EVENTS; n++) {
          if (events[n]!.id !== `r${n}` || events[n]!.body !== body(n)) {
            assert.fail(`subscriber ${i}: event ${n} is ${events[n]!.id}, not r${n} whole`);
          }
        }
      }
    } finally {
      await Promise.all(clients.map((client) => client.dispose()));
    }
  });
});
