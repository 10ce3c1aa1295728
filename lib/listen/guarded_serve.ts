/**
 * The public listener with the connection limits `Deno.serve` lacks
 * (denoland/deno#3515): a request head owed within
 * `traffic_shaping.router.header_read_timeout`, the next request within
 * `traffic_shaping.router.keep_alive_timeout`, and at most
 * `traffic_shaping.router.max_connections` client connections (one more is
 * answered 503 `SERVICE_OVERLOADED` and closed). Without them a
 * client holds a connection for ever by sending a head byte by byte, or
 * nothing, and enough such clients take every file the process may open.
 *
 * How: the guard accepts TCP connections itself and relays each one's bytes to
 * `Deno.serve` listening on a unix socket in a private folder; the phase of
 * every connection (`lib/listen/connection_phase.ts`) says when it must end. A
 * client that goes away closes its relay, so the request's signal aborts as
 * with `Deno.serve` on TCP. The relay costs about 0.085 ms of CPU per 87 KB
 * answer over `Deno.serve` on TCP, mostly the kernel's copies of the bytes
 * (`bench/load/guard_relay.sh`); with all three limits at 0 the router serves
 * from `Deno.serve` directly.
 *
 * Over 600 lines: the accept loop, the relays, the refusals and the deadline
 * sweep share one set of connections and one set of counts; what is pure
 * (the phases, the framing) lives in `connection_phase.ts` and
 * `_request_framing.ts`, its own answers in `_guard_answers.ts`.
 *
 * @module
 */
import { ConnectionPhase, type DeadlineReason, type PhaseLimits } from "./connection_phase.ts";
import type { Config } from "../config/mod.ts";
import { isBare400, refusalAnswer, unreadableAnswer } from "./_guard_answers.ts";
import type { Logger } from "../log/mod.ts";
import { unrefTimer } from "../timers.ts";
import { PEER_HEADER } from "../request/mod.ts";
import type { Server as TlsServer, TLSSocket } from "node:tls";
import type { Socket } from "node:net";
import { nodeConn, type RelayConn } from "./_node_conn.ts";
import type { ServerTls } from "./server_tls.ts";
import { HANDSHAKE_TIMEOUT_MS, listenTls, secureContext, tlsAddress } from "./_tls_listener.ts";

/** The connection limits (0 turns one off). */
export interface ConnectionLimits extends PhaseLimits {
  /** Most client connections open at once; more are answered 503 and closed as they come. */
  readonly maxConnections: number;
}

/**
 * The limits `traffic_shaping.router` sets.
 * @param config The router's configuration.
 * @returns Its connection limits.
 */
export function connectionLimits(config: Config): ConnectionLimits {
  const router = config.traffic_shaping.router;
  return {
    headerReadTimeoutMs: router.header_read_timeout_ms,
    keepAliveTimeoutMs: router.keep_alive_timeout_ms,
    answerTimeoutMs: answerTimeout(router.request_timeout_ms),
    maxConnections: router.max_connections,
  };
}

/**
 * Slack of the answer backstop past `request_timeout`: a JWKS refetch waited
 * for before the deadline starts (`refresh_unknown_kid.max_wait`, 5 s), a busy
 * event loop. A request is answered by its own deadline; the backstop only
 * ends connections the inner server answers nothing on.
 */
const ANSWER_SLACK_MS = 30_000;

/**
 * The answer backstop (`PhaseLimits.answerTimeoutMs`): `request_timeout` and
 * {@linkcode ANSWER_SLACK_MS}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { answerTimeout } from "./guarded_serve.ts";
 * assert.equal(answerTimeout(60_000), 90_000);
 * ```
 * @param requestTimeoutMs `traffic_shaping.router.request_timeout`, ms.
 * @returns The longest wait for an answer to begin, ms.
 */
export function answerTimeout(requestTimeoutMs: number): number {
  return requestTimeoutMs + ANSWER_SLACK_MS;
}

/** Files one relayed connection holds: the client's, the relay's end and `Deno.serve`'s end. */
const FILES_PER_CONNECTION = 3;
/** Files kept for everything else: subgraph connections, listeners, logs, configuration. */
const FILES_RESERVED = 256;

/**
 * The open-file soft limit in `/proc/self/limits` text, or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openFileLimit } from "./guarded_serve.ts";
 * assert.equal(openFileLimit("Max open files            1024                 524288               files"), 1024);
 * assert.equal(openFileLimit("Max open files            unlimited            unlimited            files"), null);
 * ```
 * @param text The limits file.
 * @returns The soft limit, or null when there is none or it cannot be read.
 */
export function openFileLimit(text: string): number | null {
  const match = /^Max open files\s+(\d+)\s/m.exec(text);
  return match ? Number(match[1]) : null;
}

/**
 * `max_connections` as the open-file limit allows: relayed connections take
 * three files each, and a router out of files cannot reach its subgraphs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectionsWithin } from "./guarded_serve.ts";
 * assert.equal(connectionsWithin(4096, 1024), 256);
 * assert.equal(connectionsWithin(4096, 20_000), 4096);
 * assert.equal(connectionsWithin(4096, null), 4096);
 * ```
 * @param configured `traffic_shaping.router.max_connections` (0: no limit, kept).
 * @param fileLimit The open-file soft limit, or null when unknown.
 * @returns The limit to hold connections to.
 */
export function connectionsWithin(configured: number, fileLimit: number | null): number {
  if (configured <= 0 || fileLimit === null) return configured;
  const fit = Math.max(16, Math.floor((fileLimit - FILES_RESERVED) / FILES_PER_CONNECTION));
  return Math.min(configured, fit);
}

/** The process's open-file soft limit (Linux), or null. */
function processFileLimit(): number | null {
  try {
    return openFileLimit(Deno.readTextFileSync("/proc/self/limits"));
  } catch {
    return null;
  }
}

/** Options of {@linkcode serveGuarded}. */
export interface GuardedServeOptions {
  /** Host to listen on. */
  readonly hostname: string;
  /** Port (0: any free one). */
  readonly port: number;
  /** Bind with `SO_REUSEPORT`. @default {false} */
  readonly reusePort?: boolean;
  /** The limits. */
  readonly limits: ConnectionLimits;
  /** Where connections closed by a limit are reported. */
  readonly log: Logger;
  /** The open-file soft limit (tests); absent: read from `/proc/self/limits`, null: unknown. */
  readonly fileLimit?: number | null;
  /**
   * Serve HTTPS (HTTP/2 by ALPN beside HTTP/1.1) with this certificate; the
   * guard then runs even with every limit at 0 (it terminates TLS).
   */
  readonly tls?: ServerTls;
}

/** What the guard did, for whoever reports it. */
export interface GuardCounts {
  /** Client connections open now. */
  readonly open: number;
  /** Of those, the ones relayed to the inner server (a complete request head came). */
  readonly relayed: number;
  /** Closed without a complete request head in time. */
  readonly headerReadTimeouts: number;
  /** Closed after waiting past the keep-alive timeout for a next request. */
  readonly keepAliveTimeouts: number;
  /** Closed after a request head got no answer within the answer backstop (`answerTimeoutMs`). */
  readonly answerTimeouts: number;
  /** Refused (answered 503 `SERVICE_OVERLOADED` and closed), `max_connections` being open. */
  readonly refused: number;
  /** Refused connections still held while their 503 is read (at most 32). */
  readonly refusing: number;
  /** TLS handshakes that failed or timed out (0 without `tls.server`). */
  readonly tlsHandshakeFailures: number;
  /** Bulk read buffers the relays share (256 KiB each, made on need, at most 64). */
  readonly bulkBuffers: number;
}

/** The listener (the part of `Deno.HttpServer` the router uses). */
export interface GuardedServer {
  /** The bound TCP address. */
  readonly addr: Deno.NetAddr;
  /** Stops accepting, lets in-flight requests finish, closes idle connections. */
  shutdown(): Promise<void>;
  /** Resolves once the server has stopped. */
  readonly finished: Promise<void>;
  /** The guard's counts; null without a guard (`Deno.serve` counts nothing). */
  counts(): GuardCounts | null;
  /**
   * Serves a new certificate to connections from now on (open ones keep
   * theirs); null on a plain HTTP listener.
   */
  readonly setTls: ((tls: ServerTls) => void) | null;
}

/** A relay's read buffer, per direction: a request head, or the start of an answer. */
const RELAY_BUFFER_BYTES = 8_192;
/**
 * Larger reads while an answer flows, taken from a shared free list (not held
 * while idle): most answers pass in two reads.
 */
const BULK_BUFFER_BYTES = 262_144;
/**
 * Bulk buffers the relays share, made on first need and reused for ever (16
 * MiB at most); when all are in use, an answer goes on in the connection's own
 * 8 KiB reads. A buffer made per answer and dropped after it (as when 16 were
 * kept for 50 busy connections) is zero-filled by V8, counted as external
 * memory and collected by full GCs: about 40 % of the relay's CPU on 87 KB
 * answers (`bench/load/guard_relay.sh`, `bench/load/results.md`).
 */
const BULK_BUFFERS_MAX = 64;
/**
 * Head bytes held before the inner connection opens; a head still unfinished
 * past them is passed on (`Deno.serve` then judges its size).
 */
const HELD_HEAD_BYTES = 32_768;
/** How long a shutdown lets the relays pass on the last answers, ms. */
const RELAY_FLUSH_MS = 1_000;
/** Accepting again after running out of files waits this long, ms. */
const ACCEPT_RETRY_MS = 100;
/**
 * Refused connections being answered at once; past them a refused connection
 * is closed without its 503. They use files of the 256 kept beside the
 * relayed connections, so a flood of refusals leaves the subgraphs theirs.
 */
const REFUSALS_ANSWERING_MAX = 32;
/** How long a refused connection may take to read its 503, ms. */
const REFUSAL_LINGER_MS = 500;
/** What a refused connection may still send while its 503 is read (then it is closed). */
const REFUSAL_DRAIN_BYTES = 65_536;

/** EMFILE / ENFILE: the process or the system is out of files. */
function outOfFiles(error: unknown): boolean {
  return /\(os error 2[34]\)|too many open files/i.test(String(error));
}

/** True when no limit is set: `Deno.serve` serves by itself. */
function unguarded(limits: ConnectionLimits): boolean {
  return limits.headerReadTimeoutMs <= 0 && limits.keepAliveTimeoutMs <= 0 &&
    limits.maxConnections <= 0;
}

/**
 * Serves `handler` on `hostname:port` behind the connection limits.
 *
 * @example Limits off: `Deno.serve` itself
 * ```ts
 * import assert from "node:assert/strict";
 * import { serveGuarded } from "./guarded_serve.ts";
 * const log = { debug() {}, info() {}, warn() {}, error() {} };
 * const limits = { headerReadTimeoutMs: 0, keepAliveTimeoutMs: 0, maxConnections: 0 };
 * const server = await serveGuarded({ hostname: "127.0.0.1", port: 0, limits, log }, () => new Response("ok"));
 * const response = await fetch(`http://127.0.0.1:${server.addr.port}/`);
 * assert.equal(await response.text(), "ok");
 * await server.shutdown();
 * ```
 * @param options Address, limits, log.
 * @param handler The request handler.
 * @returns The running server.
 */
export async function serveGuarded(
  options: GuardedServeOptions,
  handler: (request: Request) => Response | Promise<Response>,
): Promise<GuardedServer> {
  const { log } = options;
  let limits = options.limits;
  // The relay needs unix sockets: on Windows `Deno.serve` listens by itself.
  const relayable = Deno.build.os !== "windows";
  if (!relayable && options.tls !== undefined) {
    throw new Error("HTTPS (tls.server) needs unix sockets: not available on Windows");
  }
  if (!relayable && !unguarded(limits)) {
    log.warn("Connection limits need unix sockets: serving without them on Windows", {
      header_read_timeout_ms: limits.headerReadTimeoutMs,
      keep_alive_timeout_ms: limits.keepAliveTimeoutMs,
      max_connections: limits.maxConnections,
    });
  }
  if (!relayable || (unguarded(limits) && options.tls === undefined)) {
    const server = Deno.serve({
      hostname: options.hostname,
      port: options.port,
      ...(options.reusePort ? { reusePort: true } : {}),
      onListen: () => {},
    }, handler);
    return {
      addr: server.addr,
      shutdown: () => server.shutdown(),
      finished: server.finished,
      counts: () => null,
      setTls: null,
    };
  }
  const fileLimit = options.fileLimit === undefined ? processFileLimit() : options.fileLimit;
  const maxConnections = connectionsWithin(limits.maxConnections, fileLimit);
  if (maxConnections !== limits.maxConnections) {
    log.warn("traffic_shaping.router.max_connections lowered to fit the open-file limit", {
      max_connections: limits.maxConnections,
      held_to: maxConnections,
      open_file_limit: fileLimit,
      hint: "raise the limit (ulimit -n, LimitNOFILE=) to allow more",
    });
    limits = { ...limits, maxConnections };
  }
  // Only this user can enter the folder, so only the relay reaches the socket.
  const dir = await Deno.makeTempDir({ prefix: "gw-router-edge-" });
  const path = `${dir}/edge.sock`;
  const inner = Deno.serve({ path, onListen: () => {} }, handler);
  let listener: { close(): void };
  let tcpListener: Deno.TcpListener | null = null;
  let tlsServer: TlsServer | null = null;
  try {
    if (options.tls === undefined) {
      listener = tcpListener = Deno.listen({
        hostname: options.hostname,
        port: options.port,
        ...(options.reusePort ? { reusePort: true } : {}),
      });
    } else {
      listener = tlsServer = await listenTls(options, options.tls);
    }
  } catch (error) {
    await inner.shutdown();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  }
  const guard = createGuard({
    limits,
    log,
    path,
    refusal: await refusalAnswer(),
    unreadable: await unreadableAnswer(),
  });
  const accepting = tcpListener !== null ? guard.accept(tcpListener) : guard.acceptTls(tlsServer!);
  let stopping: Promise<void> | null = null;
  const finished = Promise.withResolvers<void>();
  function shutdown(): Promise<void> {
    stopping ??= (async () => {
      try {
        // A node server's close waits for its connections: the relays end them below.
        listener.close();
      } catch {
        // Closed already.
      }
      await accepting;
      // In-flight requests finish; the idle inner connections close, and so their relays.
      await inner.shutdown();
      // The relays pass on the last answers, then see the inner ends; what is left
      // after that holds no request (a switched protocol).
      await guard.closeAll(RELAY_FLUSH_MS);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      finished.resolve();
    })();
    return stopping;
  }
  return {
    addr: tcpListener?.addr ?? tlsAddress(tlsServer!),
    shutdown,
    finished: finished.promise,
    counts: () => guard.counts(),
    setTls: tlsServer === null ? null : (tls) => tlsServer!.setSecureContext(secureContext(tls)),
  };
}

const PEER_LINE_ENCODER = new TextEncoder();

/**
 * A client chunk with the peer's header line added after each request line
 * that ends in it (`lineEnds`: offsets just after those lines' LF).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withPeerLines } from "./guarded_serve.ts";
 * const text = new TextEncoder().encode("GET / HTTP/1.1\r\nhost: a\r\n\r\n");
 * const out = withPeerLines(text, [16], new TextEncoder().encode("x-gw-peer: 1.2.3.4\r\n"));
 * assert.equal(new TextDecoder().decode(out), "GET / HTTP/1.1\r\nx-gw-peer: 1.2.3.4\r\nhost: a\r\n\r\n");
 * ```
 * @param bytes The chunk as the client sent it.
 * @param lineEnds Where its request lines end.
 * @param line The header line.
 * @returns A new chunk.
 */
export function withPeerLines(
  bytes: Uint8Array,
  lineEnds: readonly number[],
  line: Uint8Array,
): Uint8Array {
  const out = new Uint8Array(bytes.length + lineEnds.length * line.length);
  let from = 0;
  let to = 0;
  for (const end of lineEnds) {
    out.set(bytes.subarray(from, end), to);
    to += end - from;
    out.set(line, to);
    to += line.length;
    from = end;
  }
  out.set(bytes.subarray(from), to);
  return out;
}

/** What the relay uses of a client connection: a TCP one, or a TLS one ({@linkcode nodeConn}). */
type ClientConn = Pick<Deno.Conn, "read" | "write" | "close" | "closeWrite"> | RelayConn;

interface Relay {
  readonly client: ClientConn;
  upstream: Deno.UnixConn | null;
  readonly phase: ConnectionPhase;
  closed: boolean;
}

function closeRelay(relay: Relay): void {
  if (relay.closed) return;
  relay.closed = true;
  for (const conn of [relay.client, relay.upstream]) {
    try {
      conn?.close();
    } catch {
      // Closed already.
    }
  }
}

/** The accept loop, the relays and the deadline sweep. */
function createGuard(
  options: {
    readonly limits: ConnectionLimits;
    readonly log: Logger;
    readonly path: string;
    readonly refusal: Uint8Array;
    readonly unreadable: Uint8Array;
  },
) {
  const { limits, log, path, refusal, unreadable } = options;
  const relays = new Set<Relay>();
  const running = new Set<Promise<void>>();
  const bulkFree: Uint8Array[] = [];
  /** Bulk buffers made so far (never more than {@linkcode BULK_BUFFERS_MAX}). */
  let bulkMade = 0;
  const count = {
    headerReadTimeouts: 0,
    keepAliveTimeouts: 0,
    answerTimeouts: 0,
    refused: 0,
    tlsHandshakeFailures: 0,
  };
  /** TLS connections open, handshaking ones included (what `max_connections` counts then). */
  let tlsOpen = 0;
  /** TLS connections in their handshake, by peer address and port: closed past their deadline. */
  const handshakes = new Map<string, { readonly socket: Socket; readonly deadline: number }>();
  const handshakeMs = limits.headerReadTimeoutMs > 0
    ? limits.headerReadTimeoutMs
    : HANDSHAKE_TIMEOUT_MS;
  let answeringRefusals = 0;
  /** Closed or refused since the last report (one log line per sweep at most). */
  const pending = {
    header_read_timeout: 0,
    keep_alive_timeout: 0,
    answer_timeout: 0,
    refused: 0,
    acceptFailed: 0,
    acceptError: "",
    tlsFailed: 0,
    tlsError: "",
  };
  const timeouts = [limits.headerReadTimeoutMs, limits.keepAliveTimeoutMs, handshakeMs].filter((
    ms,
  ) => ms > 0);
  // A quarter of the shortest timeout, within [25 ms, 1 s]: deadlines hold to that.
  const sweepMs = Math.min(1_000, Math.max(25, Math.floor(Math.min(...timeouts, 4_000) / 4)));
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [peer, handshake] of handshakes) {
      if (handshake.deadline > now) continue;
      handshakes.delete(peer);
      count.tlsHandshakeFailures++;
      pending.tlsFailed++;
      pending.tlsError = `no TLS handshake within ${handshakeMs} ms`;
      handshake.socket.destroy();
    }
    for (const relay of relays) {
      if (relay.phase.deadline > now) continue;
      const reason = relay.phase.reason as DeadlineReason;
      if (reason === "header_read_timeout") count.headerReadTimeouts++;
      else if (reason === "answer_timeout") count.answerTimeouts++;
      else count.keepAliveTimeouts++;
      pending[reason]++;
      closeRelay(relay);
    }
    report();
  }, sweepMs);
  unrefTimer(sweep);

  function report(): void {
    const lines: [number, "debug" | "info" | "warn", string, Record<string, unknown>][] = [
      [
        pending.header_read_timeout,
        "info",
        "Closed connections that sent no complete request head in time",
        { header_read_timeout_ms: limits.headerReadTimeoutMs },
      ],
      [
        pending.keep_alive_timeout,
        "debug",
        "Closed idle keep-alive connections",
        { keep_alive_timeout_ms: limits.keepAliveTimeoutMs },
      ],
      [
        pending.answer_timeout,
        "warn",
        "Closed connections whose request got no answer in time (request_timeout and 30 s)",
        { answer_timeout_ms: limits.answerTimeoutMs ?? 0 },
      ],
      [
        pending.refused,
        "warn",
        "Refused connections (503): traffic_shaping.router.max_connections are open",
        { max_connections: limits.maxConnections },
      ],
      [
        pending.acceptFailed,
        "warn",
        "Accepting connections failed",
        { error: pending.acceptError },
      ],
      [
        pending.tlsFailed,
        "info",
        "TLS handshakes failed or timed out (the last reason shown)",
        { error: pending.tlsError },
      ],
    ];
    for (const [connections, level, msg, fields] of lines) {
      if (connections > 0) log[level](msg, { connections, ...fields });
    }
    pending.acceptFailed = 0;
    pending.tlsFailed = 0;
    pending.header_read_timeout = 0;
    pending.keep_alive_timeout = 0;
    pending.answer_timeout = 0;
    pending.refused = 0;
  }

  /** The rest of `bytes` past `written` (a short write: rare). */
  async function writeRest(
    to: ClientConn | Deno.Conn,
    bytes: Uint8Array,
    written: number,
  ): Promise<void> {
    while (written < bytes.length) written += await to.write(bytes.subarray(written));
  }

  async function writeAll(to: ClientConn | Deno.Conn, bytes: Uint8Array): Promise<void> {
    await writeRest(to, bytes, 0);
  }

  /** A free bulk buffer, or a new one while fewer than the most exist, or null. */
  function takeBulk(): Uint8Array | null {
    const free = bulkFree.pop();
    if (free !== undefined) return free;
    if (bulkMade >= BULK_BUFFERS_MAX) return null;
    bulkMade++;
    return new Uint8Array(BULK_BUFFER_BYTES);
  }

  async function pump(
    from: Deno.Conn,
    to: ClientConn,
    seen: (bytes: Uint8Array) => void,
  ): Promise<void> {
    const own: Uint8Array = new Uint8Array(RELAY_BUFFER_BYTES);
    let buffer: Uint8Array = own;
    try {
      for (;;) {
        const n = await from.read(buffer);
        if (n === null) return;
        const bytes = buffer.subarray(0, n);
        seen(bytes);
        // One write op and no extra promise for the usual whole write.
        const out = isBare400(bytes) ? unreadable : bytes;
        const written = await to.write(out);
        if (written < out.length) await writeRest(to, out, written);
        if (n === buffer.length && buffer === own) {
          // A full read: more is coming (a large answer); read it in bulk.
          buffer = takeBulk() ?? own;
        } else if (n < buffer.length && buffer !== own) {
          bulkFree.push(buffer);
          buffer = own;
        }
      }
    } catch {
      // Reset or closed (by the other side, or by a deadline).
    } finally {
      if (buffer !== own) bulkFree.push(buffer);
    }
  }

  /**
   * One client connection. The inner connection is opened only once a request
   * head is complete (or past {@linkcode HELD_HEAD_BYTES}): until then a client
   * holds one file and its head's bytes, not three files and two buffers.
   */
  async function relay(client: ClientConn, peer: string): Promise<void> {
    const entry: Relay = {
      client,
      upstream: null,
      phase: new ConnectionPhase(limits, performance.now()),
      closed: false,
    };
    relays.add(entry);
    let down: Promise<void> | null = null;
    try {
      const buffer = new Uint8Array(RELAY_BUFFER_BYTES);
      const peerLine = PEER_LINE_ENCODER.encode(
        `${PEER_HEADER}: ${peer}\r\n`,
      );
      let held: Uint8Array[] = [];
      let heldBytes = 0;
      for (;;) {
        const n = await client.read(buffer);
        if (n === null) return;
        const lineEnds: number[] = [];
        entry.phase.fromClient(buffer.subarray(0, n), performance.now(), lineEnds);
        // Each request carries its peer's address to the router (rate_limit's client_ip).
        const bytes = lineEnds.length === 0
          ? buffer.subarray(0, n)
          : withPeerLines(buffer.subarray(0, n), lineEnds, peerLine);
        if (entry.upstream !== null) {
          const written = await entry.upstream.write(bytes);
          if (written < bytes.length) await writeRest(entry.upstream, bytes, written);
          continue;
        }
        held.push(bytes.slice());
        heldBytes += n;
        if (entry.phase.phase === "head" && heldBytes < HELD_HEAD_BYTES) continue;
        const upstream = await Deno.connect({ transport: "unix", path });
        entry.upstream = upstream;
        if (entry.closed) return void upstream.close();
        // The inner server's end (an answer with `Connection: close`, a shutdown) ends the client's.
        down = pump(upstream, client, (chunk) => entry.phase.fromServer(chunk, performance.now()))
          .finally(() => closeRelay(entry));
        for (const chunk of held) await writeAll(upstream, chunk);
        held = [];
      }
    } catch {
      // Reset or closed (by a deadline, the inner end), or the inner server is gone.
    } finally {
      // A client's end ends the inner connection: the server reads it as the client going away.
      closeRelay(entry);
      await down;
      relays.delete(entry);
    }
  }

  /**
   * A connection past `max_connections`: its 503, then a close once the client
   * has read it (a close with unread request bytes would reset the connection,
   * and a reset may discard the answer before the client reads it). Bounded in
   * time, bytes and number ({@linkcode REFUSALS_ANSWERING_MAX}).
   */
  async function refuse(client: Deno.TcpConn): Promise<void> {
    const close = () => {
      try {
        client.close();
      } catch {
        // Closed already (by the timer).
      }
    };
    if (answeringRefusals >= REFUSALS_ANSWERING_MAX) return close();
    answeringRefusals++;
    const timer = setTimeout(close, REFUSAL_LINGER_MS);
    try {
      await writeAll(client, refusal);
      await client.closeWrite();
      const sink = new Uint8Array(RELAY_BUFFER_BYTES);
      for (let drained = 0; drained < REFUSAL_DRAIN_BYTES;) {
        const n = await client.read(sink);
        if (n === null) break;
        drained += n;
      }
    } catch {
      // Reset, or closed by the timer.
    } finally {
      clearTimeout(timer);
      close();
      answeringRefusals--;
    }
  }

  return {
    async accept(listener: Deno.TcpListener): Promise<void> {
      for (;;) {
        let client: Deno.TcpConn;
        try {
          client = await listener.accept();
        } catch (error) {
          if (
            error instanceof Deno.errors.BadResource || error instanceof Deno.errors.Interrupted
          ) {
            return;
          }
          // Reported once per sweep. A connection reset before it was accepted
          // fails only itself: the next one is taken at once (a pause there would
          // let a client slow every accept down by resetting its own connections).
          pending.acceptFailed++;
          pending.acceptError = String(error);
          if (outOfFiles(error)) {
            // No file for it: wait a little rather than spin.
            await new Promise((resolve) => setTimeout(resolve, ACCEPT_RETRY_MS));
          }
          continue;
        }
        if (limits.maxConnections > 0 && relays.size >= limits.maxConnections) {
          count.refused++;
          pending.refused++;
          const refusing = refuse(client);
          running.add(refusing);
          void refusing.finally(() => running.delete(refusing));
          continue;
        }
        try {
          client.setNoDelay(true);
        } catch {
          // Not a TCP socket option here: fine.
        }
        const task = relay(client, (client.remoteAddr as Deno.NetAddr).hostname);
        running.add(task);
        void task.finally(() => running.delete(task));
      }
    },
    /**
     * The TLS listener's connections: counted from their TCP accept (so
     * handshaking ones take their place under `max_connections`), relayed once
     * their handshake is done. Resolves at once: the server's own close waits
     * for its connections, which the relays end.
     */
    acceptTls(server: TlsServer): Promise<void> {
      server.on("connection", (socket: Socket) => {
        if (limits.maxConnections > 0 && tlsOpen >= limits.maxConnections) {
          // A 503 would need a handshake first: the connection is closed.
          count.refused++;
          pending.refused++;
          socket.destroy();
          return;
        }
        tlsOpen++;
        // On the TCP socket itself: the TLS socket's setNoDelay may not reach it, and
        // Nagle's algorithm then holds an answer's last record for the client's delayed ACK.
        socket.setNoDelay(true);
        const peer = `${socket.remoteAddress}:${socket.remotePort}`;
        handshakes.set(peer, { socket, deadline: performance.now() + handshakeMs });
        socket.once("close", () => {
          tlsOpen--;
          if (handshakes.get(peer)?.socket === socket) handshakes.delete(peer);
        });
      });
      server.on("secureConnection", (socket: TLSSocket) => {
        handshakes.delete(`${socket.remoteAddress}:${socket.remotePort}`);
        socket.setNoDelay(true);
        const client = nodeConn(socket);
        const task = relay(client, client.peer);
        running.add(task);
        void task.finally(() => running.delete(task));
      });
      server.on("tlsClientError", (error: Error, socket: TLSSocket) => {
        count.tlsHandshakeFailures++;
        pending.tlsFailed++;
        pending.tlsError = error.message;
        socket.destroy();
      });
      return Promise.resolve();
    },
    counts(): GuardCounts {
      let relayed = 0;
      for (const entry of relays) if (entry.upstream !== null) relayed++;
      return {
        open: relays.size,
        relayed,
        refusing: answeringRefusals,
        bulkBuffers: bulkMade,
        ...count,
      };
    },
    /** Waits up to `flushMs` for the relays to end by themselves, then closes the rest. */
    async closeAll(flushMs: number): Promise<void> {
      clearInterval(sweep);
      // Handshakes still going on hold no request: they end now.
      for (const handshake of handshakes.values()) handshake.socket.destroy();
      handshakes.clear();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all(running),
        new Promise((resolve) => timer = setTimeout(resolve, flushMs)),
      ]);
      clearTimeout(timer);
      for (const entry of relays) closeRelay(entry);
      await Promise.all(running);
      report();
    },
  };
}
