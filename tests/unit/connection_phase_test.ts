import assert from "node:assert/strict";
import fc from "fast-check";
import { ConnectionPhase } from "../../lib/listen/connection_phase.ts";

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
  for (const part of ["GET / HTTP/1.1\r\n", "a: b\r\n\r", "x", "\r\n"]) {
    phase.fromClient(encode(part), 1);
  }
  assert.equal(phase.phase, "head");
  phase.fromClient(encode("\r\n"), 2);
  assert.equal(phase.phase, "busy");
});

Deno.test("connection phase: heads with bare LF line ends are heads, as Deno.serve reads them", () => {
  for (const head of ["GET / HTTP/1.1\nhost: a\n\n", "GET / HTTP/1.1\nhost: a\n\r\n"]) {
    const phase = new ConnectionPhase(LIMITS, 0);
    phase.fromClient(encode(head), 1);
    assert.equal(phase.phase, "busy", JSON.stringify(head));
  }
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

Deno.test("connection phase: body bytes after an early answer are no head, however they hold empty lines", () => {
  for (
    const [head, rest] of [
      ["POST / HTTP/1.1\r\ncontent-length: 1000000\r\n\r\n{", "\r\n\r\n"],
      ["POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n", "4\r\n\r\n\r\n\r\n0;x\r\n\r\n"],
    ] as const
  ) {
    const phase = new ConnectionPhase(LIMITS, 0);
    phase.fromClient(encode(head), 1);
    phase.fromServer(encode("HTTP/1.1 413 Payload Too Large\r\ncontent-length: 0\r\n\r\n"), 2);
    phase.fromClient(encode(rest), 3);
    // Before: "busy", with no deadline at all, for ever.
    assert.deepEqual([phase.phase, phase.deadline, phase.reason], [
      "head",
      1_002,
      "header_read_timeout",
    ], JSON.stringify(head));
  }
});

Deno.test("connection phase: a chunked body read to its end, then the next head owes its own deadline", () => {
  const phase = new ConnectionPhase(LIMITS, 0);
  phase.fromClient(encode("POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n"), 1);
  phase.fromServer(encode("HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n"), 2);
  phase.fromClient(encode("3;ext=1\r\na\r\n\r\n0\r\ntrailer: 1\r\n\r\n"), 3);
  assert.deepEqual([phase.phase, phase.deadline], ["head", 1_002]);
  phase.fromClient(encode("GET /next HTTP/1.1\r\n"), 500);
  assert.deepEqual([phase.phase, phase.deadline], ["head", 1_500]);
  phase.fromClient(encode("\r\n"), 501);
  assert.equal(phase.phase, "busy");
});

Deno.test("connection phase: a pipelined request keeps the connection busy past the first answer", () => {
  const phase = new ConnectionPhase(LIMITS, 0);
  phase.fromClient(encode("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n"), 1);
  phase.fromServer(encode("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"), 2);
  // Before: "idle" (closed at keep_alive_timeout while /b ran).
  assert.equal(phase.phase, "busy");
  phase.fromServer(encode("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"), 3);
  assert.deepEqual([phase.phase, phase.deadline], ["idle", 5_003]);
});

Deno.test("connection phase: a pipelined head split at its empty line, across the first answer, is a head", () => {
  const phase = new ConnectionPhase(LIMITS, 0);
  phase.fromClient(encode("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\nhost: a\r\n\r"), 1);
  phase.fromServer(encode("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"), 2);
  assert.deepEqual([phase.phase, phase.deadline], ["head", 1_001]);
  phase.fromClient(encode("\n"), 3);
  // Before: still "head" (the match begun in the busy phase was lost), cut while /b ran.
  assert.equal(phase.phase, "busy");
});

Deno.test("connection phase: a busy connection gets no answer within answerTimeoutMs: it has a deadline", () => {
  const phase = new ConnectionPhase({ ...LIMITS, answerTimeoutMs: 9_000 }, 0);
  phase.fromClient(encode("GET / HTTP/1.1\r\n\r\n"), 1);
  assert.deepEqual([phase.phase, phase.deadline, phase.reason], ["busy", 9_001, "answer_timeout"]);
});

Deno.test("connection phase: an HTTP/2 preface split across reads is HTTP/2", () => {
  const phase = new ConnectionPhase(LIMITS, 0);
  phase.fromClient(encode("P"), 1);
  phase.fromClient(encode("RI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 2);
  assert.deepEqual([phase.phase, phase.deadline], ["exempt", 5_002]);
});

Deno.test("connection phase (property): a body split anywhere completes no head; the next request does", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom("\r\n", "\r\n\r\n", "\n\n", "a", "GET / HTTP/1.1\r\n\r\n"), {
        maxLength: 12,
      }),
      fc.boolean(),
      fc.uniqueArray(fc.integer({ min: 1, max: 400 }), { maxLength: 6 }),
      (pieces, chunked, cuts) => {
        const body = pieces.join("");
        const framed = chunked
          ? `transfer-encoding: chunked\r\n\r\n${
            body.length > 0 ? `${body.length.toString(16)}\r\n${body}\r\n` : ""
          }0\r\n\r\n`
          : `content-length: ${body.length}\r\n\r\n${body}`;
        const text = `POST / HTTP/1.1\r\n${framed}GET /next HTTP/1.1\r\n\r\n`;
        const phase = new ConnectionPhase(LIMITS, 0);
        // The first head, then an early answer: only the second head may end the wait.
        const first = text.indexOf("\r\n\r\n") + 4;
        phase.fromClient(encode(text.slice(0, first)), 1);
        phase.fromServer(encode("HTTP/1.1 413 Payload Too Large\r\n\r\n"), 2);
        const points = [first, ...cuts.filter((c) => c > first && c < text.length), text.length]
          .sort((a, b) => a - b);
        for (let i = 1; i < points.length; i++) {
          phase.fromClient(encode(text.slice(points[i - 1], points[i])), 3);
          assert.equal(phase.phase, points[i] === text.length ? "busy" : "head");
        }
      },
    ),
  );
});

Deno.test("connection phase: the longest head Deno.serve takes (65 540 bytes) is framed, and the next request after it", () => {
  const start = "POST / HTTP/1.1\r\ncontent-length: 4\r\nx-big: ";
  const head = `${start}${"a".repeat(65_540 - start.length - 4)}\r\n\r\n`;
  assert.equal(head.length, 65_540);
  const phase = new ConnectionPhase(LIMITS, 0);
  phase.fromClient(encode(head), 1);
  phase.fromServer(encode("HTTP/1.1 413 Payload Too Large\r\ncontent-length: 0\r\n\r\n"), 2);
  phase.fromClient(encode("\r\n\r\nGET / HTTP/1.1\r\n\r\n"), 3);
  assert.equal(phase.phase, "busy");
});
