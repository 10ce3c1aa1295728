import assert from "node:assert/strict";
import fc from "fast-check";
import { ConnectionPhase } from "../../lib/http/connection_phase.ts";

const LIMITS = { headerReadTimeoutMs: 1_000, keepAliveTimeoutMs: 5_000 };
const encode = (text: string) => new TextEncoder().encode(text);

Deno.test("connection phase: a head split anywhere is complete exactly at its blank line", () => {
  const head = "POST /graphql HTTP/1.1\r\nhost: a\r\ncontent-length: 2\r\n\r\n";
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 1, max: head.length - 1 }), { maxLength: 8 }),
      (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), head.length];
        const phase = new ConnectionPhase(LIMITS, 0);
        for (let i = 1; i < points.length; i++) {
          phase.fromClient(encode(head.slice(points[i - 1], points[i])), i);
          assert.equal(phase.phase, points[i] === head.length ? "busy" : "head");
        }
        assert.equal(phase.deadline, Infinity);
      },
    ),
  );
});

Deno.test("connection phase: a lone CR LF pair, or CR LF CR then other bytes, ends no head", () => {
  const phase = new ConnectionPhase(LIMITS, 0);
  for (const part of ["GET / HTTP/1.1\r\n", "a: b\r\n\r", "x", "\n\r\n"]) {
    phase.fromClient(encode(part), 1);
  }
  assert.equal(phase.phase, "head");
  phase.fromClient(encode("\r\n"), 2);
  assert.equal(phase.phase, "busy");
});

Deno.test("connection phase: the next request's first byte owes a head again, its deadline from then", () => {
  const phase = new ConnectionPhase(LIMITS, 0);
  phase.fromClient(encode("GET / HTTP/1.1\r\n\r\n"), 1);
  phase.fromServer(encode("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"), 2);
  assert.deepEqual([phase.phase, phase.deadline, phase.reason], [
    "idle",
    5_002,
    "keep_alive_timeout",
  ]);
  phase.fromClient(encode("GET"), 100);
  assert.deepEqual([phase.phase, phase.deadline, phase.reason], [
    "head",
    1_100,
    "header_read_timeout",
  ]);
});

Deno.test("connection phase: interim answers keep the request busy; after 101 or HTTP/2 only silence counts", () => {
  const phase = new ConnectionPhase(LIMITS, 0);
  phase.fromClient(encode("POST / HTTP/1.1\r\nexpect: 100-continue\r\n\r\n"), 1);
  phase.fromServer(encode("HTTP/1.1 100 Continue\r\n\r\n"), 2);
  assert.equal(phase.phase, "busy");
  phase.fromServer(encode("HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n"), 3);
  assert.deepEqual([phase.phase, phase.deadline], ["exempt", 5_003]);
  // No heads to watch: any byte either way puts the silence deadline off.
  phase.fromClient(encode("\x81\x05hello"), 4);
  assert.deepEqual([phase.phase, phase.deadline], ["exempt", 5_004]);
  const h2 = new ConnectionPhase(LIMITS, 0);
  h2.fromClient(encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 1);
  assert.deepEqual([h2.phase, h2.deadline, h2.reason], ["exempt", 5_001, "keep_alive_timeout"]);
  h2.fromServer(encode("\x00\x00\x00\x04\x00\x00\x00\x00\x00"), 7);
  assert.equal(h2.deadline, 5_007);
});

Deno.test("connection phase: a stream has no deadline until its last chunk, then the keep-alive one", () => {
  const phase = new ConnectionPhase(LIMITS, 0);
  phase.fromClient(encode("GET /mcp HTTP/1.1\r\naccept: text/event-stream\r\n\r\n"), 1);
  phase.fromServer(
    encode(
      "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
    ),
    2,
  );
  assert.deepEqual([phase.phase, phase.deadline], ["streaming", Infinity]);
  phase.fromServer(encode("b\r\ndata: one\n\n\r\n"), 3);
  assert.equal(phase.phase, "streaming");
  phase.fromServer(encode("0\r\n\r\n"), 4);
  assert.deepEqual([phase.phase, phase.deadline], ["idle", 5_004]);
});

Deno.test("connection phase: a timeout at 0 sets no deadline", () => {
  const phase = new ConnectionPhase({ headerReadTimeoutMs: 0, keepAliveTimeoutMs: 0 }, 0);
  assert.deepEqual([phase.deadline, phase.reason], [Infinity, null]);
  phase.fromClient(encode("GET / HTTP/1.1\r\n\r\n"), 1);
  phase.fromServer(encode("HTTP/1.1 200 OK\r\n\r\n"), 2);
  assert.deepEqual([phase.phase, phase.deadline], ["idle", Infinity]);
});

Deno.test("connection phase: the rest of an earlier answer leaves a pipelined head's deadline and match alone", () => {
  const phase = new ConnectionPhase(LIMITS, 0);
  phase.fromClient(encode("GET /a HTTP/1.1\r\n\r\n"), 1);
  phase.fromServer(encode("HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\nxxxx"), 2);
  phase.fromClient(encode("GET /b HTTP/1.1\r\nhost: a\r\n\r"), 3);
  assert.deepEqual([phase.phase, phase.deadline], ["head", 1_003]);
  phase.fromServer(encode("x".repeat(1000)), 4);
  assert.deepEqual([phase.phase, phase.deadline], ["head", 1_003]);
  phase.fromClient(encode("\n"), 5);
  assert.equal(phase.phase, "busy");
});
