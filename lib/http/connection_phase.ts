/**
 * Where a client connection stands, from the bytes that cross it: the clock
 * the connection guard (`lib/cli/guarded_serve.ts`) holds each connection to.
 * `Deno.serve` has neither a header-read nor an idle timeout
 * (denoland/deno#3515), so a client could hold a connection (a file, a
 * buffer) for ever by sending a head byte by byte, or nothing at all.
 *
 * Phases, and the deadline each sets:
 * - `head`: the client owes a request head, from the connection's start or
 *   its first byte after an answer, until the blank line that ends the head
 *   (`\r\n\r\n`): `traffic_shaping.router.header_read_timeout`. Bytes that
 *   trickle in do not extend it.
 * - `busy`: the head is in; the router works and answers. No deadline here:
 *   `traffic_shaping.router.request_timeout` bounds the request itself.
 * - `idle`: the router's bytes went out; the next request may come within
 *   `traffic_shaping.router.keep_alive_timeout` of the last of them.
 * - `streaming`: an answer that stays open (`text/event-stream`,
 *   `multipart/mixed`) until its last chunk; then `idle`.
 * - `exempt`: a protocol switch (101) or HTTP/2 (its preface): no HTTP/1
 *   heads to watch, so only silence counts: `keep_alive_timeout` after the
 *   last byte either way (a request is answered within `request_timeout`,
 *   which is shorter by default).
 *
 * Pure: bytes and the clock in, a deadline out.
 *
 * @module
 */

/** The scheme `Deno.serve` gives requests it reads from a unix socket. */
const UNIX_SCHEME = "http+unix:";

/**
 * The URL a client used, for a request `Deno.serve` read from a unix socket
 * (the guard's relay, a supervised thread): `http+unix:` there, plain `http:`
 * on the client's connection.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { spokenUrl } from "./connection_phase.ts";
 * assert.equal(spokenUrl("http+unix://127.0.0.1:4000/graphql"), "http://127.0.0.1:4000/graphql");
 * assert.equal(spokenUrl("http://a/graphql"), "http://a/graphql");
 * ```
 * @param url A request's URL.
 * @returns The URL with the scheme the client spoke.
 */
export function spokenUrl(url: string): string {
  return url.startsWith(UNIX_SCHEME) ? `http:${url.slice(UNIX_SCHEME.length)}` : url;
}

/** What the guard holds connections to (ms; 0 turns one off). */
export interface PhaseLimits {
  /** Longest wait for a complete request head. */
  readonly headerReadTimeoutMs: number;
  /** Longest wait for the next request after an answer. */
  readonly keepAliveTimeoutMs: number;
}

/** The phase of a connection (see the module documentation). */
export type Phase = "head" | "busy" | "idle" | "streaming" | "exempt";

/** Why a connection's deadline passed. */
export type DeadlineReason = "header_read_timeout" | "keep_alive_timeout";

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
 * Searches `\r\n\r\n` in `bytes`, continuing a match of `carry` bytes begun
 * at the end of the previous chunk.
 * @returns -1 when found, else the bytes of a match begun at the end (0–3).
 */
function headEnd(bytes: Uint8Array, carry: number): number {
  const pattern = [CR, LF, CR, LF];
  let i = 0;
  for (let m = carry; m > 0; i++, m++) {
    // The chunk ended inside the match: it goes on in the next one.
    if (i === bytes.length) return m;
    if (bytes[i] !== pattern[m]) break;
    if (m === 3) return -1;
  }
  for (let at = bytes.indexOf(CR, i); at >= 0; at = bytes.indexOf(CR, at + 1)) {
    let k = 1;
    while (k < 4 && at + k < bytes.length && bytes[at + k] === pattern[k]) k++;
    if (k === 4) return -1;
    if (at + k === bytes.length) return k;
  }
  return 0;
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
 */
export class ConnectionPhase {
  /** The current phase. */
  phase: Phase = "head";
  /** When the connection is to be closed (ms on the caller's clock); Infinity: never. */
  deadline: number;
  /** What the deadline is for (null without one). */
  reason: DeadlineReason | null = null;
  /** Bytes of `\r\n\r\n` matched at the end of the last client chunk. */
  #carry = 0;
  /** No byte seen from the client yet (the HTTP/2 preface is looked for there). */
  #fresh = true;

  /**
   * A connection just accepted: it owes a request head.
   * @param limits The timeouts.
   * @param now The clock, ms.
   */
  constructor(readonly limits: PhaseLimits, now: number) {
    this.deadline = Infinity;
    this.#expect("head", now);
  }

  #expect(phase: Phase, now: number): void {
    this.phase = phase;
    const ms = phase === "head"
      ? this.limits.headerReadTimeoutMs
      : phase === "idle" || phase === "exempt"
      ? this.limits.keepAliveTimeoutMs
      : 0;
    this.deadline = ms > 0 ? now + ms : Infinity;
    this.reason = ms <= 0 ? null : phase === "head" ? "header_read_timeout" : "keep_alive_timeout";
  }

  /**
   * Bytes the client sent.
   * @param bytes The chunk.
   * @param now The clock, ms.
   */
  fromClient(bytes: Uint8Array, now: number): void {
    if (this.#fresh && bytes.length > 0) {
      this.#fresh = false;
      if (startsWith(bytes, H2_PREFACE)) return this.#expect("exempt", now);
    }
    if (this.phase === "exempt") return this.#expect("exempt", now);
    if (this.phase === "busy") return;
    if (this.phase !== "head") {
      // The first byte of the next request: its head is owed from now.
      this.#expect("head", now);
      this.#carry = 0;
    }
    const carry = headEnd(bytes, this.#carry);
    if (carry < 0) {
      this.#carry = 0;
      this.#expect("busy", now);
    } else {
      this.#carry = carry;
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
      const sniffed = bytes.subarray(0, Math.min(bytes.length, HEAD_SNIFF_BYTES));
      const end = indexOfHeadEnd(sniffed);
      const head = latin1.decode(end < 0 ? sniffed : sniffed.subarray(0, end));
      if (STREAM_TYPE.test(head)) {
        return this.#expect("streaming", now);
      }
      return this.#expect("idle", now);
    }
    if (this.phase === "streaming") {
      // The last chunk of a chunked stream ends it.
      if (endsWithLastChunk(bytes)) this.#expect("idle", now);
      return;
    }
    // More of an earlier answer while the client sends its next head (pipelining):
    // that head keeps its deadline and what it matched.
    if (this.phase === "head") return;
    // More of an answer: the keep-alive wait counts from its last byte.
    this.#expect("idle", now);
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
