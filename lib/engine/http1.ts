/**
 * The subgraph transport: HTTP/1.1 POSTs over a keep-alive connection pool,
 * on `Deno.connect`. Deno's `fetch` costs 37–50 µs of CPU per call (its
 * Request/Response/stream objects and the hyper client behind them), which on
 * a query of six subgraph fetches was a third of the router's CPU; this client
 * costs about half (`bench/load/results.md`, session 9). It does only what a
 * router needs of its subgraphs, strictly: one POST, a JSON answer framed by
 * `Content-Length`, `chunked` or the connection's end, `gzip`/`deflate`
 * decoded as it streams. Anything else a server sends (a malformed status line
 * or header, conflicting lengths, an unknown transfer or content coding, a
 * header section over 64 KiB, 101) fails that request with
 * {@linkcode Http1ProtocolError} and closes the connection; a connection is
 * reused only after an answer that leaves it in a known state.
 *
 * Plain `http:` only: `https:` URLs and proxies stay with `fetch`
 * ({@linkcode http1Eligible}).
 *
 * Over 600 lines on purpose: the pool, a connection's read buffer and the
 * framing of an answer share one piece of state (where the unread bytes of a
 * connection start), which is safest read in one place.
 *
 * @module
 */
import { onAbort } from "../cancellation.ts";

/** The server broke HTTP/1.1 (or sent what this client does not speak). */
export class Http1ProtocolError extends Error {
  /**
   * A protocol error (the message names the rule broken).
   * @param message What was wrong, without the server's bytes.
   */
  constructor(message: string) {
    super(message);
    this.name = "Http1ProtocolError";
  }
}

/** A pooled connection closed before any byte of an answer (retried when safe). */
class StaleConnection extends Error {}

/** Options for {@linkcode createHttp1Pool}. */
export interface Http1PoolOptions {
  /**
   * Idle connections kept per origin; more are closed when released.
   * @default {256}
   */
  readonly maxIdlePerOrigin?: number;
  /**
   * A connection idle longer than this is not reused (servers close idle
   * connections: Node after 5 s), ms.
   * @default {4000}
   */
  readonly idleMs?: number;
  /**
   * Largest header section of an answer, bytes.
   * @default {65536}
   */
  readonly maxHeaderBytes?: number;
  /** Clock, ms. @default performance.now */
  readonly now?: () => number;
}

/** One POST. */
export interface Http1Post {
  /** Request headers (names lower case or not; CR, LF and NUL are refused). */
  readonly headers: Iterable<readonly [string, string]>;
  /** The body (UTF-8). */
  readonly body: string;
  /** Aborting closes the connection and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /**
   * A query: may be sent again on a new connection when a pooled one turns
   * out closed before answering. A mutation is sent only on a connection just
   * opened or used within the last second.
   */
  readonly idempotent: boolean;
}

/** The keep-alive pool of {@linkcode createHttp1Pool}. */
export interface Http1Pool {
  /**
   * Sends one POST and resolves with the answer once its head is read (the
   * body streams from the connection, or is already read when it arrived
   * with the head).
   */
  post(url: string, request: Http1Post): Promise<Response>;
  /** Closes the idle connections (the pool stays usable). */
  closeIdle(): void;
  /** Idle connections and the bytes of their read buffers (what the pool holds while idle). */
  idle(): { readonly connections: number; readonly bufferBytes: number };
  /** Closes the idle connections and every busy one once it is released. */
  close(): void;
}

/**
 * True when `url` can go over {@linkcode Http1Pool}: plain `http:`, and no
 * proxy configured in the environment (`fetch` honours `HTTP_PROXY` and
 * `ALL_PROXY`; this client does not).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { http1Eligible } from "./http1.ts";
 * assert.equal(http1Eligible("http://accounts:4001/graphql", {}), true);
 * assert.equal(http1Eligible("https://accounts/graphql", {}), false);
 * assert.equal(http1Eligible("http://accounts/graphql", { HTTP_PROXY: "http://p:3128" }), false);
 * ```
 * @param url The subgraph URL.
 * @param env The environment (proxy variables).
 * @returns Whether the pool may carry it.
 */
export function http1Eligible(
  url: string,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (!url.startsWith("http://")) return false;
  for (const name of ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]) {
    if (env[name]) return false;
  }
  return true;
}

const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/;
const UNSAFE = /[\r\n\0]/;
/** A connection's read buffer while idle (it grows for a large head, up to maxHeaderBytes × 2). */
const BUFFER_BYTES = 16_384;
/** Interim (1xx) answers accepted before the real one. */
const MAX_INTERIM = 8;
/** A mutation rides a pooled connection only this fresh, ms. */
const FRESH_MS = 1_000;

interface Target {
  readonly origin: string;
  readonly hostname: string;
  readonly port: number;
  /** `Host` header value. */
  readonly host: string;
  /** Request target (path and query). */
  readonly path: string;
}

/** The parsed target of `url`, from the pool's cache (subgraph URLs are few: config). */
function targetOf(url: string, targets: Map<string, Target>): Target {
  let target = targets.get(url);
  if (target === undefined) {
    const parsed = new URL(url);
    const hostname = parsed.hostname.startsWith("[")
      ? parsed.hostname.slice(1, -1)
      : parsed.hostname;
    target = {
      origin: parsed.host,
      hostname,
      port: parsed.port === "" ? 80 : Number(parsed.port),
      host: parsed.host,
      path: `${parsed.pathname}${parsed.search}`,
    };
    if (targets.size > 1_000) targets.clear();
    targets.set(url, target);
  }
  return target;
}

/** A connection and the bytes read from it but not yet consumed. */
class Connection {
  buffer = new Uint8Array(BUFFER_BYTES);
  start = 0;
  end = 0;
  /** When it was last released to the pool. */
  idleSince = 0;
  /** Answers it carried. */
  uses = 0;
  closed = false;
  constructor(readonly tcp: Deno.TcpConn, readonly origin: string) {}

  /** Reads more bytes; false at the connection's end. */
  async fill(): Promise<boolean> {
    if (this.start === this.end) {
      this.start = 0;
      this.end = 0;
    } else if (this.end === this.buffer.length) {
      // Bounded by the callers: a head up to maxHeaderBytes, a chunk line up to 4 KiB.
      if (this.start > 0) {
        this.buffer.copyWithin(0, this.start, this.end);
        this.end -= this.start;
        this.start = 0;
      } else {
        const next = new Uint8Array(this.buffer.length * 2);
        next.set(this.buffer);
        this.buffer = next;
      }
    }
    const n = await this.tcp.read(this.buffer.subarray(this.end));
    if (n === null) return false;
    this.end += n;
    return true;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.tcp.close();
    } catch {
      // Closed already.
    }
  }
}

/** The parsed head of an answer. */
interface Head {
  readonly status: number;
  readonly minor: number;
  readonly headers: [string, string][];
}

/**
 * A keep-alive pool of HTTP/1.1 connections for subgraph POSTs.
 *
 * @example Against a local server
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHttp1Pool } from "./http1.ts";
 * const server = Deno.serve({ port: 0, onListen() {} }, async (r) => Response.json({ got: await r.text() }));
 * const pool = createHttp1Pool();
 * const response = await pool.post(`http://127.0.0.1:${server.addr.port}/graphql`, {
 *   headers: [["content-type", "application/json"]],
 *   body: "{}",
 *   idempotent: true,
 * });
 * assert.deepEqual(await response.json(), { got: "{}" });
 * pool.close();
 * await server.shutdown();
 * ```
 * @param options Pool bounds.
 * @returns The pool.
 */
export function createHttp1Pool(options: Http1PoolOptions = {}): Http1Pool {
  const maxIdle = options.maxIdlePerOrigin ?? 256;
  const idleMs = options.idleMs ?? 4_000;
  const maxHeaderBytes = options.maxHeaderBytes ?? 65_536;
  const now = options.now ?? (() => performance.now());
  const idle = new Map<string, Connection[]>();
  const targets = new Map<string, Target>();
  let closed = false;

  // An origin's idle list is in release order: the oldest first, the freshest last.
  function release(conn: Connection): void {
    if (conn.closed) return;
    if (closed) return conn.close();
    let list = idle.get(conn.origin);
    if (list === undefined) idle.set(conn.origin, list = []);
    const at = now();
    expire(list, at);
    if (list.length >= maxIdle) return conn.close();
    // An idle connection keeps no large buffer: maxIdle of them at 128 KiB each was 32 MiB.
    if (conn.buffer.length > BUFFER_BYTES) conn.buffer = new Uint8Array(BUFFER_BYTES);
    conn.start = 0;
    conn.end = 0;
    conn.idleSince = at;
    list.push(conn);
  }

  /**
   * Closes the connections idle past `idleMs` at the bottom of `list`. Taking
   * from the top alone would leave them open for good after a burst: a
   * steady load reuses only the freshest few, and the rest hold their file
   * descriptors (closed by the server, in CLOSE_WAIT) until the pool closes.
   */
  function expire(list: Connection[], at: number): void {
    let n = 0;
    while (n < list.length && at - list[n]!.idleSince > idleMs) list[n++]!.close();
    if (n > 0) list.splice(0, n);
  }

  /**
   * The most recently used idle connection fresh enough, or null. One too
   * old for a mutation (`freshMs` below `idleMs`) stays for the queries.
   */
  function take(origin: string, freshMs: number): Connection | null {
    const list = idle.get(origin);
    if (list === undefined) return null;
    const at = now();
    expire(list, at);
    const conn = list.at(-1);
    if (conn === undefined || at - conn.idleSince > freshMs) return null;
    list.pop();
    return conn;
  }

  /**
   * Closes the idle connections of `origin`: one of them turned out closed by
   * the server, and the others are older (a restarted subgraph closed them all;
   * an idle timeout closes the oldest first). Otherwise each would fail a mutation.
   */
  function dropIdle(origin: string): void {
    const list = idle.get(origin);
    if (list === undefined) return;
    for (const conn of list) conn.close();
    idle.delete(origin);
  }

  async function open(target: Target, signal: AbortSignal | undefined): Promise<Connection> {
    let tcp: Deno.TcpConn;
    try {
      // A connect can hang (a full accept queue, a host that drops SYNs): the
      // signal (the subgraph timeout, the client gone) ends it too.
      tcp = await Deno.connect({
        hostname: target.hostname,
        port: target.port,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw error;
    }
    try {
      tcp.setNoDelay(true);
    } catch {
      // Not a TCP socket option here: fine.
    }
    return new Connection(tcp, target.origin);
  }

  async function exchange(
    conn: Connection,
    bytes: Uint8Array,
    signal: AbortSignal | undefined,
  ): Promise<Response> {
    const reused = conn.uses > 0;
    // Aborting closes the connection: every pending read and write then fails.
    const off = signal ? onAbort(signal, () => conn.close()) : null;
    let streaming = false;
    try {
      /** A failed write, the server having stopped reading: its answer may say why. */
      let unsent: { readonly error: unknown } | null = null;
      try {
        await writeAll(conn.tcp, bytes);
      } catch (error) {
        if (conn.closed) throw error;
        unsent = { error };
      }
      let head: Head;
      try {
        for (let interim = 0;; interim++) {
          // After an interim answer the server has answered: no longer a stale connection.
          head = await readHead(conn, { maxHeaderBytes, reused: reused && interim === 0 });
          // Interim answers (100 Continue, 103 Early Hints) precede the real one; a few.
          if (head.status >= 200 || head.status === 101) break;
          if (interim === MAX_INTERIM) {
            throw new Http1ProtocolError(`more than ${MAX_INTERIM} interim answers`);
          }
        }
      } catch (error) {
        // No answer: a pooled connection is stale (readHead says so), a new one failed to write.
        if (unsent === null || conn.closed || reused) throw error;
        throw unsent.error;
      }
      if (head.status === 101) throw new Http1ProtocolError("101 Switching Protocols");
      conn.uses++;
      const answer = answerOf(conn, head, {
        // The request was cut short: the server's next read would be its rest.
        release: unsent === null ? release : (c) => c.close(),
        onStreamEnd: () => off?.(),
        signal,
      });
      streaming = answer.streaming;
      return answer.response;
    } catch (error) {
      conn.close();
      if (signal?.aborted) throw signal.reason;
      throw error;
    } finally {
      if (!streaming) off?.();
    }
  }

  return {
    async post(url, request) {
      if (closed) throw new TypeError("The subgraph connection pool is closed");
      const target = targetOf(url, targets);
      const bytes = requestBytes(target, request);
      request.signal?.throwIfAborted();
      const pooled = take(target.origin, request.idempotent ? idleMs : FRESH_MS);
      if (pooled !== null) {
        try {
          return await exchange(pooled, bytes, request.signal);
        } catch (error) {
          if (error instanceof StaleConnection) dropIdle(target.origin);
          // A server may close an idle connection as we send: the answer never
          // started, so a query goes again on a new connection.
          if (!(error instanceof StaleConnection) || !request.idempotent) {
            throw error instanceof StaleConnection
              ? new Http1ProtocolError("the connection closed before an answer")
              : error;
          }
        }
      }
      const conn = await open(target, request.signal);
      try {
        return await exchange(conn, bytes, request.signal);
      } catch (error) {
        throw error instanceof StaleConnection
          ? new Http1ProtocolError("the connection closed before an answer")
          : error;
      }
    },
    closeIdle() {
      for (const list of idle.values()) for (const conn of list) conn.close();
      idle.clear();
    },
    idle() {
      let connections = 0;
      let bufferBytes = 0;
      for (const list of idle.values()) {
        for (const conn of list) {
          connections++;
          bufferBytes += conn.buffer.length;
        }
      }
      return { connections, bufferBytes };
    },
    close() {
      closed = true;
      this.closeIdle();
    },
  };
}

function requestBytes(target: Target, request: Http1Post): Uint8Array {
  const body = encoder.encode(request.body);
  let head =
    `POST ${target.path} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-length: ${body.length}\r\n`;
  for (const [name, value] of request.headers) {
    const lower = name.toLowerCase();
    if (lower === "host" || lower === "content-length" || lower === "transfer-encoding") continue;
    if (!TOKEN.test(name) || UNSAFE.test(value)) {
      throw new TypeError(`Invalid request header "${name.slice(0, 100)}"`);
    }
    head += `${name}: ${value}\r\n`;
  }
  head += "\r\n";
  // Header values are byte strings (as `Headers` keeps them): one byte per
  // character, as fetch sends them; a character above U+00FF is no byte.
  const bytes = new Uint8Array(head.length + body.length);
  for (let i = 0; i < head.length; i++) {
    const code = head.charCodeAt(i);
    if (code > 0xff) throw new TypeError("Invalid request header: a character above U+00FF");
    bytes[i] = code;
  }
  bytes.set(body, head.length);
  return bytes;
}

async function writeAll(tcp: Deno.TcpConn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await tcp.write(bytes.subarray(written));
}

/** Reads one answer head; the connection's buffer then starts at the body. */
async function readHead(
  conn: Connection,
  options: { readonly maxHeaderBytes: number; readonly reused: boolean },
): Promise<Head> {
  /** Unread bytes already searched (offsets move when `fill` compacts the buffer). */
  let searched = 0;
  let sawByte = conn.end > conn.start;
  for (;;) {
    const at = indexOfHeadEnd(conn.buffer, conn.start + searched, conn.end);
    if (at >= 0) {
      const text = latin1.decode(conn.buffer.subarray(conn.start, at));
      conn.start = at + 4;
      return parseHead(text);
    }
    if (conn.end - conn.start > options.maxHeaderBytes) {
      throw new Http1ProtocolError(`a header section over ${options.maxHeaderBytes} bytes`);
    }
    searched = Math.max(0, conn.end - conn.start - 3);
    let more: boolean;
    try {
      more = await conn.fill();
    } catch (error) {
      if (options.reused && !sawByte && !conn.closed) throw new StaleConnection(String(error));
      throw error;
    }
    if (!more) {
      if (options.reused && !sawByte) throw new StaleConnection("closed");
      throw new Http1ProtocolError(
        sawByte ? "the connection closed inside the answer's head" : "the connection closed",
      );
    }
    sawByte = true;
  }
}

function indexOfHeadEnd(buffer: Uint8Array, from: number, to: number): number {
  for (let i = buffer.indexOf(13, from); i >= 0 && i + 3 < to; i = buffer.indexOf(13, i + 1)) {
    if (buffer[i + 1] === 10 && buffer[i + 2] === 13 && buffer[i + 3] === 10) return i;
  }
  return -1;
}

function parseHead(text: string): Head {
  const lines = text.split("\r\n");
  const match = STATUS_LINE.exec(lines[0]!);
  if (match === null) throw new Http1ProtocolError("a malformed status line");
  const headers: [string, string][] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    // No obs-fold (RFC 9112 §5.2), no name without a colon, no bare CR or LF.
    if (colon <= 0 || line.includes("\r") || line.includes("\n")) {
      throw new Http1ProtocolError("a malformed header line");
    }
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) throw new Http1ProtocolError("a malformed header name");
    headers.push([name.toLowerCase(), line.slice(colon + 1).trim()]);
  }
  return { status: Number(match[2]), minor: Number(match[1]), headers };
}

type Framing =
  | { readonly kind: "none" }
  | { readonly kind: "length"; readonly length: number }
  | { readonly kind: "chunked" }
  | { readonly kind: "close" };

/** How the body is delimited (RFC 9112 §6.3), and whether the connection may be reused. */
function framingOf(head: Head): { framing: Framing; reusable: boolean; coding: string | null } {
  let lengths: string[] = [];
  let transfer: string[] = [];
  const codings: string[] = [];
  let connection = "";
  for (const [name, value] of head.headers) {
    if (name === "content-length") lengths = lengths.concat(value.split(","));
    else if (name === "transfer-encoding") transfer = transfer.concat(value.split(","));
    else if (name === "content-encoding") codings.push(...value.split(","));
    else if (name === "connection") connection += `,${value.toLowerCase()}`;
  }
  const tokens = connection.split(",").map((t) => t.trim());
  let reusable = head.minor === 1 ? !tokens.includes("close") : tokens.includes("keep-alive");
  const coding = contentCoding(codings);
  let framing: Framing;
  if (head.status === 204 || head.status === 304) {
    framing = { kind: "none" };
  } else if (transfer.length > 0) {
    const list = transfer.map((t) => t.trim().toLowerCase()).filter((t) => t !== "");
    if (list.length !== 1 || list[0] !== "chunked") {
      throw new Http1ProtocolError("a transfer coding other than chunked");
    }
    framing = { kind: "chunked" };
    // Both framings (a smuggling shape): chunked wins, the connection is not reused.
    if (lengths.length > 0) reusable = false;
  } else if (lengths.length > 0) {
    const values = new Set(lengths.map((l) => l.trim()));
    const [only] = values;
    if (values.size !== 1 || !/^\d{1,15}$/.test(only!)) {
      throw new Http1ProtocolError("an invalid or conflicting Content-Length");
    }
    framing = { kind: "length", length: Number(only) };
  } else {
    framing = { kind: "close" };
    reusable = false;
  }
  return { framing, reusable, coding };
}

/** The single content coding to undo ("gzip", "deflate") or null; others are refused. */
function contentCoding(codings: readonly string[]): string | null {
  const list = codings.map((c) => c.trim().toLowerCase()).filter((c) =>
    c !== "" && c !== "identity"
  );
  if (list.length === 0) return null;
  if (list.length === 1 && (list[0] === "gzip" || list[0] === "x-gzip")) return "gzip";
  if (list.length === 1 && list[0] === "deflate") return "deflate";
  throw new Http1ProtocolError("a content coding other than gzip or deflate");
}

/** The answer as a `Response`: the body from the buffer when it is all there, else streamed. */
function answerOf(
  conn: Connection,
  head: Head,
  hooks: {
    readonly release: (conn: Connection) => void;
    readonly onStreamEnd: () => void;
    readonly signal: AbortSignal | undefined;
  },
): { response: Response; streaming: boolean } {
  const { framing, reusable, coding } = framingOf(head);
  const headers = new Headers();
  for (const [name, value] of head.headers) {
    // The decoded body has neither the coding nor the coded length.
    if (coding !== null && (name === "content-encoding" || name === "content-length")) continue;
    headers.append(name, value);
  }
  const init = { status: head.status, headers };
  const finish = () => {
    // Bytes after the answer were never asked for: the connection is not trusted again.
    if (reusable && conn.start === conn.end) hooks.release(conn);
    else conn.close();
  };
  if (framing.kind === "none") {
    finish();
    return { response: new Response(null, init), streaming: false };
  }
  if (framing.kind === "length" && coding === null && conn.end - conn.start >= framing.length) {
    const body = conn.buffer.slice(conn.start, conn.start + framing.length);
    conn.start += framing.length;
    finish();
    return { response: new Response(body, init), streaming: false };
  }
  let stream = bodyStream(conn, framing, {
    signal: hooks.signal,
    done: () => {
      hooks.onStreamEnd();
      finish();
    },
    failed: () => {
      hooks.onStreamEnd();
      conn.close();
    },
  });
  if (coding !== null) {
    stream = stream.pipeThrough(
      new DecompressionStream(coding as CompressionFormat) as unknown as TransformStream<
        Uint8Array,
        Uint8Array
      >,
    );
  }
  return { response: new Response(stream, init), streaming: true };
}

/** The body as it arrives: counted to its length, de-chunked, or to the end. */
function bodyStream(
  conn: Connection,
  framing: Exclude<Framing, { kind: "none" }>,
  hooks: {
    readonly done: () => void;
    readonly failed: () => void;
    /** Its abort closed the connection: the body fails with its reason. */
    readonly signal: AbortSignal | undefined;
  },
): ReadableStream<Uint8Array> {
  let left = framing.kind === "length" ? framing.length : 0;
  /** Chunked: bytes left in the current chunk; -1 between chunks. */
  let chunkLeft = -1;
  let settled = false;
  const settle = (ok: boolean) => {
    if (settled) return;
    settled = true;
    if (ok) hooks.done();
    else hooks.failed();
  };
  /** Takes up to `max` buffered bytes, reading when none are buffered; null at the end. */
  async function take(max: number): Promise<Uint8Array | null> {
    if (conn.start === conn.end && !(await conn.fill())) return null;
    const n = Math.min(max, conn.end - conn.start);
    const bytes = conn.buffer.slice(conn.start, conn.start + n);
    conn.start += n;
    return bytes;
  }
  /** Reads one CRLF-terminated line (chunk sizes, trailers), bounded. */
  async function line(): Promise<string> {
    for (;;) {
      const at = conn.buffer.subarray(conn.start, conn.end).indexOf(10);
      if (at >= 0) {
        const end = conn.start + at;
        if (at === 0 || conn.buffer[end - 1] !== 13) {
          throw new Http1ProtocolError("a malformed chunk line");
        }
        const text = latin1.decode(conn.buffer.subarray(conn.start, end - 1));
        conn.start = end + 1;
        return text;
      }
      if (conn.end - conn.start > 4_096) throw new Http1ProtocolError("a chunk line over 4 KiB");
      if (!(await conn.fill())) {
        throw new Http1ProtocolError("the connection closed inside a chunk");
      }
    }
  }
  async function next(): Promise<Uint8Array | null> {
    if (framing.kind === "length") {
      if (left === 0) return null;
      const bytes = await take(left);
      if (bytes === null) throw new Http1ProtocolError("the connection closed inside the body");
      left -= bytes.length;
      return bytes;
    }
    if (framing.kind === "close") return await take(Infinity);
    for (;;) {
      if (chunkLeft > 0) {
        const bytes = await take(chunkLeft);
        if (bytes === null) throw new Http1ProtocolError("the connection closed inside a chunk");
        chunkLeft -= bytes.length;
        if (chunkLeft === 0) {
          if ((await line()) !== "") throw new Http1ProtocolError("a chunk longer than its size");
          chunkLeft = -1;
        }
        return bytes;
      }
      const size = (await line()).split(";")[0]!.trim();
      if (!/^[0-9A-Fa-f]{1,12}$/.test(size)) throw new Http1ProtocolError("a malformed chunk size");
      chunkLeft = parseInt(size, 16);
      if (chunkLeft === 0) {
        // Trailers, up to the empty line.
        for (let n = 0; (await line()) !== ""; n++) {
          if (n > 64) throw new Http1ProtocolError("more than 64 trailer lines");
        }
        return null;
      }
    }
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const bytes = await next();
        if (bytes === null) {
          controller.close();
          settle(true);
        } else {
          controller.enqueue(bytes);
        }
      } catch (error) {
        settle(false);
        controller.error(hooks.signal?.aborted ? hooks.signal.reason : error);
      }
    },
    cancel() {
      settle(false);
    },
  }, { highWaterMark: 0 });
}
