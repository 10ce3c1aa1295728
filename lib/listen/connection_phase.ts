/**
 * Where a client connection stands, from the bytes that cross it: the clock
 * the connection guard (`lib/listen/guarded_serve.ts`) holds each connection to.
 * `Deno.serve` has neither a header-read nor an idle timeout
 * (denoland/deno#3515), so a client could hold a connection (a file, a
 * buffer) for ever by sending a head byte by byte, or nothing at all.
 *
 * Phases, and the deadline each sets:
 * - `head`: the client owes a request head, from the connection's start or
 *   its first byte after an answer, until the empty line that ends the head:
 *   `traffic_shaping.router.header_read_timeout`. Bytes that trickle in do not
 *   extend it. The rest of a body the router answered early (a 413 before the
 *   body is in) is owed the same way, from the answer.
 * - `busy`: a head is in; the router works and answers. The request's own
 *   deadline (`traffic_shaping.router.request_timeout`) bounds it; a backstop
 *   past it (`answerTimeoutMs`) closes a connection that gets no answer at all.
 * - `idle`: the router's bytes went out; the next request may come within
 *   `traffic_shaping.router.keep_alive_timeout` of the last of them.
 * - `streaming`: an answer that stays open (`text/event-stream`,
 *   `multipart/mixed`) until its last chunk; then `idle`.
 * - `exempt`: a protocol switch (101) or HTTP/2 (its preface): no HTTP/1
 *   heads to watch, so only silence counts: `keep_alive_timeout` after the
 *   last byte either way (a request is answered within `request_timeout`,
 *   which is shorter by default).
 *
 * The client's bytes are framed as `Deno.serve` frames them
 * (`_request_framing.ts`): heads end at an empty line, bodies by
 * `Content-Length` or chunked. So a body is never read as a head (an empty
 * line in it once took a connection to `busy`, with no deadline, for ever),
 * and a head pipelined while the router works is still counted as one.
 *
 * Pure: bytes and the clock in, a deadline out.
 *
 * @module
 */

import { RequestFraming } from "./_request_framing.ts";

/** What the guard holds connections to (ms; 0 turns one off). */
export interface PhaseLimits {
  /** Longest wait for a complete request head. */
  readonly headerReadTimeoutMs: number;
  /** Longest wait for the next request after an answer. */
  readonly keepAliveTimeoutMs: number;
  /**
   * Longest wait for an answer to begin once a request head is in (or for more
   * of an answer while a pipelined request waits): a backstop past
   * `traffic_shaping.router.request_timeout`, so that no phase the client can
   * reach is without a deadline. @default {0} (none)
   */
  readonly answerTimeoutMs?: number;
}

/** The phase of a connection (see the module documentation). */
export type Phase = "head" | "busy" | "idle" | "streaming" | "exempt";

/** Why a connection's deadline passed. */
export type DeadlineReason = "header_read_timeout" | "keep_alive_timeout" | "answer_timeout";

const CR = 13;
const LF = 10;
const HTTP1 = [0x48, 0x54, 0x54, 0x50, 0x2f, 0x31, 0x2e]; // "HTTP/1."
const H2_PREFACE = [0x50, 0x52, 0x49, 0x20, 0x2a, 0x20]; // "PRI * "
/** An answer that stays open; checked in its head only. */
const STREAM_TYPE = /\r\ncontent-type:[ \t]*(?:text\/event-stream|multipart\/mixed)/i;
const latin1 = new TextDecoder("latin1");
/** Bytes of an answer's head searched for its content type. */
const HEAD_SNIFF_BYTES = 2_048;

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

/**
 * One connection's phase and deadline.
 *
 * @example A head sent whole, an answer, then silence
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConnectionPhase } from "./connection_phase.ts";
 * const bytes = (text: string) => new TextEncoder().encode(text);
 * const phase = new ConnectionPhase({ headerReadTimeoutMs: 10_000, keepAliveTimeoutMs: 75_000 }, 0);
 * assert.equal(phase.deadline, 10_000);
 * phase.fromClient(bytes("GET /health HTTP/1.1\r\nhost: a\r\n\r\n"), 5);
 * assert.equal(phase.phase, "busy");
 * assert.equal(phase.deadline, Infinity);
 * phase.fromServer(bytes("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"), 9);
 * assert.equal(phase.phase, "idle");
 * assert.equal(phase.deadline, 75_009);
 * assert.equal(phase.reason, "keep_alive_timeout");
 * ```
 *
 * @example A head that trickles in keeps its first deadline
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConnectionPhase } from "./connection_phase.ts";
 * const phase = new ConnectionPhase({ headerReadTimeoutMs: 10_000, keepAliveTimeoutMs: 75_000 }, 0);
 * phase.fromClient(new TextEncoder().encode("GET / HTTP/1.1\r\nx-a: 1\r\n"), 9_000);
 * assert.equal(phase.phase, "head");
 * assert.equal(phase.deadline, 10_000);
 * assert.equal(phase.reason, "header_read_timeout");
 * ```
 *
 * @example The rest of a body after an early answer is owed within header_read_timeout
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConnectionPhase } from "./connection_phase.ts";
 * const bytes = (text: string) => new TextEncoder().encode(text);
 * const phase = new ConnectionPhase({ headerReadTimeoutMs: 10_000, keepAliveTimeoutMs: 75_000 }, 0);
 * phase.fromClient(bytes("POST / HTTP/1.1\r\ncontent-length: 9000000\r\n\r\n{"), 1);
 * phase.fromServer(bytes("HTTP/1.1 413 Payload Too Large\r\ncontent-length: 0\r\n\r\n"), 2);
 * // An empty line in the body is no head.
 * phase.fromClient(bytes("\r\n\r\n"), 3);
 * assert.deepEqual([phase.phase, phase.deadline], ["head", 10_002]);
 * ```
 */
export class ConnectionPhase {
  /** The current phase. */
  phase: Phase = "head";
  /** When the connection is to be closed (ms on the caller's clock); Infinity: never. */
  deadline: number;
  /** What the deadline is for (null without one). */
  reason: DeadlineReason | null = null;
  /** The client's requests, framed as the inner server frames them. */
  readonly #framing = new RequestFraming();
  /** Request heads completed, and answers begun (at most as many). */
  #heads = 0;
  #answers = 0;
  /** When the head being read began (its first byte), ms. */
  #headStarted: number;
  /** No byte seen from the client yet (the HTTP/2 preface is looked for there). */
  #fresh = true;

  /**
   * A connection just accepted: it owes a request head.
   * @param limits The timeouts.
   * @param now The clock, ms.
   */
  constructor(readonly limits: PhaseLimits, now: number) {
    this.deadline = Infinity;
    this.#headStarted = now;
    this.#expect("head", now);
  }

  #expect(phase: Phase, now: number, from = now): void {
    this.phase = phase;
    const ms = phase === "head"
      ? this.limits.headerReadTimeoutMs
      : phase === "idle" || phase === "exempt"
      ? this.limits.keepAliveTimeoutMs
      : phase === "busy"
      ? this.limits.answerTimeoutMs ?? 0
      : 0;
    this.deadline = ms > 0 ? from + ms : Infinity;
    this.reason = ms <= 0
      ? null
      : phase === "head"
      ? "header_read_timeout"
      : phase === "busy"
      ? "answer_timeout"
      : "keep_alive_timeout";
  }

  /**
   * Bytes the client sent.
   * @param bytes The chunk.
   * @param now The clock, ms.
   * @param requestLineEnds Told where request lines end in the chunk (see `RequestFraming.push`).
   */
  fromClient(bytes: Uint8Array, now: number, requestLineEnds?: number[]): void {
    if (this.#fresh && bytes.length > 0) {
      this.#fresh = false;
      if (startsWith(bytes, H2_PREFACE)) return this.#expect("exempt", now);
    }
    if (this.phase === "exempt") return this.#expect("exempt", now);
    const before = this.#framing.at;
    const heads = this.#framing.push(bytes, requestLineEnds);
    this.#heads += heads;
    if (this.#framing.http2) return this.#expect("exempt", now);
    // A head begun in this chunk (and still unfinished) is owed from its first byte.
    if (before !== "head" && this.#framing.at === "head") this.#headStarted = now;
    // The router owes an answer (or streams one): what the client sends meanwhile
    // (its body, pipelined requests) is read, and the phase stays.
    if (this.phase === "busy" || this.phase === "streaming") return;
    if (heads > 0) return this.#expect("busy", now);
    if (this.phase === "idle" && this.#framing.at === "head") {
      // The first byte of the next request: its head is owed from now.
      this.#expect("head", now);
    } else if (this.#heads > 0 && before !== "head" && this.#framing.at === "head") {
      // The rest of an answered body is in and the next head began: owed from its first byte.
      this.#expect("head", now);
    }
  }

  /**
   * Bytes the router sent.
   * @param bytes The chunk.
   * @param now The clock, ms.
   */
  fromServer(bytes: Uint8Array, now: number): void {
    if (this.phase === "exempt") return this.#expect("exempt", now);
    if (startsWith(bytes, HTTP1) && bytes.length > 9) {
      // An answer's head: its status and its content type say what follows.
      const status = bytes[9];
      if (status === 0x31) {
        // "1xx": 101 switches protocols; 100 and 103 precede the answer.
        if (bytes[10] === 0x30 && bytes[11] === 0x31) this.#expect("exempt", now);
        return;
      }
      this.#answers = Math.min(this.#answers + 1, this.#heads);
      const sniffed = bytes.subarray(0, Math.min(bytes.length, HEAD_SNIFF_BYTES));
      const end = indexOfHeadEnd(sniffed);
      const head = latin1.decode(end < 0 ? sniffed : sniffed.subarray(0, end));
      if (STREAM_TYPE.test(head)) {
        return this.#expect("streaming", now);
      }
      return this.#answered(now);
    }
    if (this.phase === "streaming") {
      // The last chunk of a chunked stream ends it.
      if (endsWithLastChunk(bytes)) this.#answered(now);
      return;
    }
    // More of an earlier answer while the client sends its next head (pipelining):
    // that head keeps its deadline.
    if (this.phase === "head") return;
    // More of an answer while a pipelined request waits: the wait for its answer
    // counts from this byte.
    if (this.phase === "busy") return this.#expect("busy", now);
    // More of an answer: the keep-alive wait counts from its last byte.
    this.#expect("idle", now);
  }

  /** An answer is out: what the client owes next sets the phase. */
  #answered(now: number): void {
    // A pipelined request whose head is in: the router owes its answer.
    if (this.#heads > this.#answers) return this.#expect("busy", now);
    switch (this.#framing.at) {
      case "boundary":
        return this.#expect("idle", now);
      case "head":
        // A pipelined head arriving: owed from its first byte.
        return this.#expect("head", now, this.#headStarted);
      default:
        // The rest of a body the router answered early (413, 401, 404…), or
        // bytes it reads as no request: owed within header_read_timeout from
        // now, however they trickle; then the next head, as ever.
        return this.#expect("head", now);
    }
  }
}

/** Where `\r\n\r\n` starts in `bytes`, or -1. */
function indexOfHeadEnd(bytes: Uint8Array): number {
  for (
    let at = bytes.indexOf(CR);
    at >= 0 && at + 3 < bytes.length;
    at = bytes.indexOf(CR, at + 1)
  ) {
    if (bytes[at + 1] === LF && bytes[at + 2] === CR && bytes[at + 3] === LF) return at;
  }
  return -1;
}

const LAST_CHUNK = [0x30, CR, LF, CR, LF]; // "0\r\n\r\n"

function endsWithLastChunk(bytes: Uint8Array): boolean {
  const n = bytes.length;
  if (n < LAST_CHUNK.length) return false;
  for (let i = 0; i < LAST_CHUNK.length; i++) {
    if (bytes[n - LAST_CHUNK.length + i] !== LAST_CHUNK[i]) return false;
  }
  // A chunk-size line starts the line: the byte before is LF (or the chunk starts here).
  return n === LAST_CHUNK.length || bytes[n - LAST_CHUNK.length - 1] === LF;
}
