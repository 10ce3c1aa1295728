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
 * reused only after an answer that leaves it in a known state, and leaves the
 * pool as soon as anything arrives on it while idle (a stray answer would
 * otherwise be read as the next request's).
 *
 * Plain `http:` only: `https:` URLs and proxies stay with `fetch`
 * ({@linkcode http1Eligible}).
 *
 * The answer side (a connection's buffer, heads, framing, bodies) is
 * `_http1_wire.ts`.
 *
 * @module
 */
import { onAbort } from "../../cancellation.ts";
import {
  answerOf,
  BUFFER_BYTES,
  ClosedBeforeAnswer,
  Connection,
  type Head,
  Http1ProtocolError,
  readHead,
  StaleConnection,
  TOKEN,
  wholeBody,
} from "./_http1_wire.ts";

export { ClosedBeforeAnswer, Http1ProtocolError, wholeBody };

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
const UNSAFE = /[\r\n\0]/;
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
    conn.idleSince = at;
    list.push(conn);
    conn.watch(unusable);
  }

  /** Something arrived on an idle connection (stray bytes, its end): out of the pool. */
  function unusable(conn: Connection): void {
    conn.close();
    const list = idle.get(conn.origin);
    const at = list?.indexOf(conn) ?? -1;
    if (at >= 0) list!.splice(at, 1);
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
    conn.idle = false;
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
      const answer = await answerOf(conn, head, {
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
            throw error instanceof StaleConnection ? new ClosedBeforeAnswer() : error;
          }
        }
      }
      const conn = await open(target, request.signal);
      try {
        return await exchange(conn, bytes, request.signal);
      } catch (error) {
        throw error instanceof StaleConnection ? new ClosedBeforeAnswer() : error;
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
