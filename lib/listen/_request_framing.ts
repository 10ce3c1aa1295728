/**
 * Where a client's HTTP/1 byte stream stands: in a request head, in a body, or
 * between requests, read as `Deno.serve` (hyper) frames it. Heads end at an
 * empty line (lines end in LF, CR LF or bare, as hyper accepts); a body is
 * `Content-Length` bytes or chunked (`Transfer-Encoding` ending in `chunked`);
 * a request with neither has none. The connection guard's phase
 * (`connection_phase.ts`) needs it: body bytes after an early answer (a 413
 * before the body is in) are no head, even where they hold an empty line, and
 * a pipelined head that arrives while the router works is still a head.
 *
 * Framing hyper refuses (both `Content-Length` and `Transfer-Encoding`, a
 * coding list not ending in `chunked`, lengths that disagree or are no
 * number) is answered 400 and the connection closed: it is `opaque` here,
 * as is what follows an HTTP/2 preface.
 *
 * @module
 */

const CR = 13;
const LF = 10;
const SEMICOLON = 0x3b;

/**
 * Head bytes kept to read the framing from: more than `Deno.serve` accepts
 * (65 540 bytes with its empty line, measured on Deno 2.9; a longer head is a 400).
 */
const HEAD_KEEP_BYTES = 73_728;
const latin1 = new TextDecoder("latin1");
const CONTENT_LENGTH = /\ncontent-length:[ \t]*([^\r\n]*)/gi;
const TRANSFER_ENCODING = /\ntransfer-encoding:[ \t]*([^\r\n]*)/gi;
const H2_REQUEST_LINE = /^PRI \* HTTP\/2\.0\r?\n/;

/** Where the stream stands. */
export type FramingAt = "boundary" | "head" | "body" | "opaque";

type State =
  | "boundary"
  | "head"
  | "length"
  | "chunk-size"
  | "chunk-ext"
  | "chunk-data"
  | "chunk-end"
  | "trailers"
  | "opaque";

/**
 * The framing of one client connection's requests.
 *
 * @example A body holding an empty line is no head; the next request is
 * ```ts
 * import assert from "node:assert/strict";
 * import { RequestFraming } from "./_request_framing.ts";
 * const framing = new RequestFraming();
 * const bytes = (text: string) => new TextEncoder().encode(text);
 * assert.equal(framing.push(bytes("POST / HTTP/1.1\r\ncontent-length: 8\r\n\r\nab")), 1);
 * assert.equal(framing.at, "body");
 * assert.equal(framing.push(bytes("\r\n\r\n")), 0);
 * assert.equal(framing.push(bytes("xxGET / HTTP/1.1\n\n")), 1);
 * assert.equal(framing.at, "boundary");
 * ```
 */
export class RequestFraming {
  #state: State = "boundary";
  /** In a head or trailers: 1 after a LF (a line starts), 2 after LF CR, else 0. */
  #line = 0;
  /** The head so far (up to {@linkcode HEAD_KEEP_BYTES}), as latin1 text. */
  #head = "";
  /** Body bytes, or chunk bytes, still to come. */
  #remaining = 0;
  /** In a head whose request line has not ended yet. */
  #inRequestLine = false;
  /** True once an HTTP/2 preface came as a request line. */
  http2 = false;

  /** Where the stream stands. */
  get at(): FramingAt {
    switch (this.#state) {
      case "boundary":
        return "boundary";
      case "head":
        return "head";
      case "opaque":
        return "opaque";
      default:
        return "body";
    }
  }

  /**
   * Reads bytes the client sent.
   * @param bytes The chunk.
   * @param requestLineEnds Where told, the offsets in `bytes` just after each
   *   request line that ends in it (an HTTP/2 preface's excepted): where the
   *   connection guard adds the peer's address (`x-gw-peer`).
   * @returns How many request heads it completed.
   */
  push(bytes: Uint8Array, requestLineEnds?: number[]): number {
    let heads = 0;
    let i = 0;
    const n = bytes.length;
    while (i < n) {
      switch (this.#state) {
        case "opaque":
          return heads;
        case "boundary": {
          // Empty lines before a request line are skipped (RFC 9112 §2.2).
          const byte = bytes[i]!;
          if (byte === CR || byte === LF) {
            i++;
            break;
          }
          this.#state = "head";
          this.#line = 0;
          this.#head = "";
          this.#inRequestLine = true;
          break;
        }
        case "head": {
          if (this.#inRequestLine) {
            const at = bytes.indexOf(LF, i);
            if (at >= 0) {
              this.#inRequestLine = false;
              const start = this.#head + latin1.decode(bytes.subarray(i, Math.min(at, i + 4)));
              if (requestLineEnds !== undefined && !start.startsWith("PRI ")) {
                requestLineEnds.push(at + 1);
              }
            }
          }
          const end = this.#lineEnd(bytes, i);
          this.#keep(bytes.subarray(i, end < 0 ? n : end));
          if (end < 0) return heads;
          i = end;
          heads++;
          this.#framing();
          break;
        }
        case "length": {
          const take = Math.min(this.#remaining, n - i);
          this.#remaining -= take;
          i += take;
          if (this.#remaining === 0) this.#state = "boundary";
          break;
        }
        case "chunk-size": {
          const byte = bytes[i++]!;
          const digit = hexValue(byte);
          if (digit >= 0) {
            this.#remaining = this.#remaining * 16 + digit;
            if (this.#remaining > Number.MAX_SAFE_INTEGER) this.#state = "opaque";
          } else if (byte === LF) {
            this.#endSizeLine();
          } else if (byte === SEMICOLON || byte === CR || byte === 0x20 || byte === 0x09) {
            this.#state = "chunk-ext";
          } else {
            this.#state = "opaque";
          }
          break;
        }
        case "chunk-ext": {
          // Extensions run to the end of the size line.
          const at = bytes.indexOf(LF, i);
          if (at < 0) return heads;
          i = at + 1;
          this.#endSizeLine();
          break;
        }
        case "chunk-data": {
          const take = Math.min(this.#remaining, n - i);
          this.#remaining -= take;
          i += take;
          if (this.#remaining === 0) this.#state = "chunk-end";
          break;
        }
        case "chunk-end": {
          // The CR LF after a chunk's data.
          const at = bytes.indexOf(LF, i);
          if (at < 0) return heads;
          i = at + 1;
          this.#state = "chunk-size";
          this.#remaining = 0;
          break;
        }
        case "trailers": {
          const end = this.#lineEnd(bytes, i);
          if (end < 0) return heads;
          i = end;
          this.#state = "boundary";
          break;
        }
      }
    }
    return heads;
  }

  /**
   * Where the empty line that ends a head (or trailers) ends in `bytes` from
   * `from`, or -1, carrying a match begun at the end of the chunk.
   */
  #lineEnd(bytes: Uint8Array, from: number): number {
    let i = from;
    const n = bytes.length;
    for (;;) {
      if (this.#line === 0) {
        const at = bytes.indexOf(LF, i);
        if (at < 0) return -1;
        i = at + 1;
        this.#line = 1;
      }
      if (i === n) return -1;
      const byte = bytes[i]!;
      if (byte === LF) {
        this.#line = 0;
        return i + 1;
      }
      if (byte === CR && this.#line === 1) {
        this.#line = 2;
        i++;
        continue;
      }
      this.#line = 0;
    }
  }

  #keep(part: Uint8Array): void {
    const room = HEAD_KEEP_BYTES - this.#head.length;
    if (room <= 0 || part.length === 0) return;
    this.#head += latin1.decode(part.length > room ? part.subarray(0, room) : part);
  }

  #endSizeLine(): void {
    if (this.#remaining === 0) {
      this.#state = "trailers";
      this.#line = 1;
    } else {
      this.#state = "chunk-data";
    }
  }

  /** Reads the finished head's framing: what follows it. */
  #framing(): void {
    const head = this.#head;
    this.#head = "";
    if (head.length >= HEAD_KEEP_BYTES) return void (this.#state = "opaque");
    if (H2_REQUEST_LINE.test(head)) {
      this.http2 = true;
      return void (this.#state = "opaque");
    }
    const codings: string[] = [];
    for (const match of head.matchAll(TRANSFER_ENCODING)) codings.push(match[1]!);
    const lengths: string[] = [];
    for (const match of head.matchAll(CONTENT_LENGTH)) lengths.push(match[1]!.trim());
    if (codings.length > 0) {
      const last = codings.join(",").split(",").at(-1)!.trim().toLowerCase();
      if (last !== "chunked" || lengths.length > 0) return void (this.#state = "opaque");
      this.#state = "chunk-size";
      this.#remaining = 0;
      return;
    }
    if (lengths.length === 0) return void (this.#state = "boundary");
    const first = lengths[0]!;
    if (!/^\d{1,15}$/.test(first) || lengths.some((length) => length !== first)) {
      return void (this.#state = "opaque");
    }
    this.#remaining = Number(first);
    this.#state = this.#remaining === 0 ? "boundary" : "length";
  }
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}
