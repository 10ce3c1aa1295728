/**
 * Server-to-client streams of one replica: the `GET` SSE stream of each
 * session (revisions up to 2025-11-25) and the `subscriptions/listen` streams
 * of 2026-07-28. Every message a session is sent gets an event id and goes
 * into that session's buffer (bounded in events and bytes); a client that
 * reconnects with `Last-Event-ID` gets what it missed from the buffer. When
 * the buffer cannot prove that nothing was missed (evicted, another replica's
 * or an earlier process's id) and the tool list changed since, the client
 * gets a `notifications/tools/list_changed`, which is all it would have acted on.
 *
 * Sessions are signed and stateless across replicas; streams are not: a
 * stream lives on the replica that opened it, and a reload hands the hub to
 * the next state ({@linkcode McpStreamHub.adopt}).
 *
 * @module
 */
import { MAX_TIMER_DELAY_MS } from "../timers.ts";
import { type LogLevel, logNotification, passes } from "./logging.ts";
import {
  encodeEvent,
  eventId,
  KEEP_ALIVE,
  messageEvent,
  parseEventId,
  primingEvent,
} from "./sse.ts";

/** Bounds and timings of a hub. */
export interface StreamHubOptions {
  /** Open streams per replica (GET and listen together). Default 1000. */
  readonly maxStreams?: number;
  /** Open GET streams per session. Default 4. */
  readonly maxStreamsPerSession?: number;
  /**
   * Open streams (GET and listen) per token subject, across its sessions: one
   * caller cannot take every stream of the replica. Anonymous callers share
   * `maxStreams` only. Default 16.
   */
  readonly maxStreamsPerOwner?: number;
  /** Sessions remembered (buffer, log level), least recently used dropped first. Default 10000. */
  readonly maxSessions?: number;
  /** Events kept per session for resumption. Default 64. */
  readonly bufferEvents?: number;
  /** Bytes kept per session for resumption. Default 16384. */
  readonly bufferBytes?: number;
  /** Comment sent on idle streams this often, ms (0: never). Default 25000. */
  readonly keepAliveMs?: number;
  /** SSE `retry` hint, ms. Default 2000. */
  readonly retryMs?: number;
  /** Clock, ms. */
  readonly now?: () => number;
}

interface Sink {
  readonly controller: ReadableStreamDefaultController<Uint8Array>;
  readonly timers: ReturnType<typeof setTimeout>[];
  /** Sent on a graceful close (listen streams: the empty result). */
  readonly farewell: string | null;
  /** The listen request id (listen streams), else null. */
  readonly subscription: string | number | null;
  /** The session a GET stream belongs to, else null. */
  readonly session: Session | null;
  /** Who opened it (token issuer and subject), or null when anonymous. */
  readonly owner: string | null;
  closed: boolean;
}

interface BufferedEvent {
  readonly sequence: number;
  readonly text: string;
  readonly bytes: number;
}

interface Session {
  readonly events: BufferedEvent[];
  bytes: number;
  /** Highest sequence evicted from the buffer (0: none). */
  evicted: number;
  level: LogLevel | null;
  readonly sinks: Set<Sink>;
}

/**
 * The owner key of a caller's streams: its token's issuer and subject, or
 * null without a token (anonymous callers are bounded only per replica).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { streamOwner } from "./streams.ts";
 * assert.equal(streamOwner({ issuer: "idp", subject: "alice" }), '["idp","alice"]');
 * assert.equal(streamOwner(null), null);
 * ```
 * @param token The caller's verified token, or null.
 * @returns The key, or null.
 */
export function streamOwner(
  token: { readonly issuer: string; readonly subject: string } | null,
): string | null {
  return token === null ? null : JSON.stringify([token.issuer, token.subject]);
}

/** Why a stream was refused. */
export type OpenRefusal = "too_many_streams";

const TOOLS_CHANGED = Object.freeze({
  jsonrpc: "2.0",
  method: "notifications/tools/list_changed",
});
const SUBSCRIPTION_META = "io.modelcontextprotocol/subscriptionId";

/**
 * The streams of one replica.
 *
 * @example A session's stream receives list_changed; a stream resumed from before it replays it
 * ```ts
 * import assert from "node:assert/strict";
 * import { McpStreamHub } from "./streams.ts";
 * const hub = new McpStreamHub({ keepAliveMs: 0 });
 * const read = (stream: ReadableStream<Uint8Array>) =>
 *   stream.pipeThrough(new TextDecoderStream()).getReader();
 * const opened = hub.open("s1", { lastEventId: null });
 * if (!opened.ok) throw new Error(opened.reason);
 * const reader = read(opened.stream);
 * const priming = (await reader.read()).value!;
 * hub.toolsChanged();
 * assert.match((await reader.read()).value!, /notifications\/tools\/list_changed/);
 * await reader.cancel();
 * const again = hub.open("s1", { lastEventId: /^id: (\S+)/.exec(priming)![1]! });
 * if (!again.ok) throw new Error(again.reason);
 * const resumed = read(again.stream);
 * await resumed.read(); // priming
 * assert.match((await resumed.read()).value!, /notifications\/tools\/list_changed/);
 * hub.closeAll();
 * assert.equal((await resumed.read()).done, true);
 * ```
 */
export class McpStreamHub {
  readonly #replica = crypto.randomUUID().replace(/-/g, "").slice(0, 12);
  readonly #options: Required<Omit<StreamHubOptions, "now">>;
  readonly #now: () => number;
  #sessions = new Map<string, Session>();
  #listeners = new Set<Sink>();
  #sequence = 0;
  /** Sequence of the last tools/list_changed (0: none yet). */
  #toolsChangedAt = 0;
  #open = 0;
  /** Open streams per owner (see `maxStreamsPerOwner`). */
  #owners = new Map<string, number>();
  /** Set once a reload handed this hub's streams to the next state's hub. */
  #successor: McpStreamHub | null = null;

  /** @param options Bounds and timings. */
  constructor(options: StreamHubOptions = {}) {
    this.#options = {
      maxStreams: options.maxStreams ?? 1000,
      maxStreamsPerSession: options.maxStreamsPerSession ?? 4,
      maxStreamsPerOwner: options.maxStreamsPerOwner ?? 16,
      maxSessions: options.maxSessions ?? 10_000,
      bufferEvents: options.bufferEvents ?? 64,
      bufferBytes: options.bufferBytes ?? 16_384,
      keepAliveMs: options.keepAliveMs ?? 25_000,
      retryMs: options.retryMs ?? 2000,
    };
    this.#now = options.now ?? Date.now;
  }

  /** Open streams (GET and listen). */
  get openStreams(): number {
    return this.#successor?.openStreams ?? this.#open;
  }

  /**
   * Takes over the sessions, streams and sequence of the previous state's hub;
   * calls on the previous hub (requests still running on the old state) are
   * forwarded here.
   * @param previous The hub of the state being replaced.
   */
  adopt(previous: McpStreamHub): void {
    if (previous === this) return;
    this.#sessions = previous.#sessions;
    this.#listeners = previous.#listeners;
    this.#sequence = previous.#sequence;
    this.#toolsChangedAt = previous.#toolsChangedAt;
    this.#open = previous.#open;
    this.#owners = previous.#owners;
    previous.#successor = this;
  }

  #session(id: string, create: boolean): Session | undefined {
    let session = this.#sessions.get(id);
    if (session !== undefined) {
      // Least recently used first: re-insert on use.
      this.#sessions.delete(id);
      this.#sessions.set(id, session);
      return session;
    }
    if (!create) return undefined;
    // Nothing sent before the entry existed is in its buffer: resuming from earlier is incomplete.
    session = { events: [], bytes: 0, evicted: this.#sequence, level: null, sinks: new Set() };
    this.#sessions.set(id, session);
    for (const [old, entry] of this.#sessions) {
      if (this.#sessions.size <= this.#options.maxSessions) break;
      if (entry.sinks.size > 0) continue;
      this.#sessions.delete(old);
    }
    return session;
  }

  #sink(
    controller: ReadableStreamDefaultController<Uint8Array>,
    options: {
      readonly expiresAt: number | null;
      readonly farewell: string | null;
      readonly subscription: string | number | null;
      readonly session: Session | null;
      readonly owner: string | null;
    },
  ): Sink {
    const sink: Sink = { controller, timers: [], ...options, closed: false };
    if (this.#options.keepAliveMs > 0) {
      sink.timers.push(setInterval(() => this.#write(sink, KEEP_ALIVE), this.#options.keepAliveMs));
    }
    if (options.expiresAt !== null) {
      // A stream never outlives the token that opened it; the client reconnects with a fresh one.
      const delay = Math.max(0, options.expiresAt - this.#now());
      sink.timers.push(
        setTimeout(() => this.#close(sink, false), Math.min(delay, MAX_TIMER_DELAY_MS)),
      );
    }
    return sink;
  }

  #write(sink: Sink, text: string): void {
    if (sink.closed) return;
    try {
      sink.controller.enqueue(encodeEvent(text));
    } catch {
      this.#close(sink, false);
    }
  }

  #close(sink: Sink, graceful: boolean): void {
    if (sink.closed) return;
    if (graceful && sink.farewell !== null) this.#write(sink, sink.farewell);
    sink.closed = true;
    for (const timer of sink.timers) clearTimeout(timer);
    this.#open--;
    if (sink.owner !== null) {
      const left = (this.#owners.get(sink.owner) ?? 1) - 1;
      if (left <= 0) this.#owners.delete(sink.owner);
      else this.#owners.set(sink.owner, left);
    }
    this.#listeners.delete(sink);
    sink.session?.sinks.delete(sink);
    try {
      sink.controller.close();
    } catch {
      // Already cancelled by the client.
    }
  }

  /**
   * Opens a session's GET stream: the priming event, then (with
   * `lastEventId`) what the session missed, then live messages.
   * @param session The (verified) session id.
   * @param options `Last-Event-ID`, when the caller's token expires (ms), and who opens it.
   * @returns The stream, or why not.
   */
  open(
    session: string,
    options: {
      readonly lastEventId: string | null;
      readonly expiresAt?: number | null;
      /** Token issuer and subject (see {@linkcode streamOwner}); null or absent: anonymous. */
      readonly owner?: string | null;
    },
  ):
    | { readonly ok: true; readonly stream: ReadableStream<Uint8Array> }
    | { readonly ok: false; readonly reason: OpenRefusal } {
    if (this.#successor !== null) return this.#successor.open(session, options);
    const entry = this.#session(session, true)!;
    const owner = options.owner ?? null;
    if (!this.#admit(owner) || entry.sinks.size >= this.#options.maxStreamsPerSession) {
      return { ok: false, reason: "too_many_streams" };
    }
    this.#take(owner);
    let sink: Sink;
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        sink = this.#sink(controller, {
          expiresAt: options.expiresAt ?? null,
          farewell: null,
          subscription: null,
          session: entry,
          owner,
        });
        const latest = entry.events.at(-1)?.sequence ?? this.#sequence;
        this.#write(sink, primingEvent(eventId(this.#replica, latest), this.#options.retryMs));
        if (options.lastEventId !== null) this.#replay(sink, entry, options.lastEventId);
        entry.sinks.add(sink);
      },
      cancel: () => this.#close(sink, false),
    });
    return { ok: true, stream };
  }

  /** Room for one more stream: below the replica's bound and the owner's. */
  #admit(owner: string | null): boolean {
    if (this.#open >= this.#options.maxStreams) return false;
    return owner === null || (this.#owners.get(owner) ?? 0) < this.#options.maxStreamsPerOwner;
  }

  #take(owner: string | null): void {
    this.#open++;
    if (owner !== null) this.#owners.set(owner, (this.#owners.get(owner) ?? 0) + 1);
  }

  #replay(sink: Sink, entry: Session, lastEventId: string): void {
    const parsed = parseEventId(lastEventId);
    // null: another replica's or an earlier process's id (or malformed).
    const from = parsed !== null && parsed.replica === this.#replica ? parsed.sequence : null;
    let toolsSent = false;
    if (from !== null) {
      for (const event of entry.events) {
        if (event.sequence <= from) continue;
        this.#write(sink, event.text);
        toolsSent ||= event.text.includes('"notifications/tools/list_changed"');
      }
    }
    const complete = from !== null && entry.evicted <= from;
    if (!toolsSent && !complete && (from === null || this.#toolsChangedAt > from)) {
      this.#write(sink, messageEvent(TOOLS_CHANGED, null));
    }
  }

  /**
   * Sends a message to one session: buffered, then written to one of its
   * open streams (the newest), never to several.
   * @param session The session id.
   * @param message The JSON-RPC message.
   * @returns True when a stream took it (false: buffered only, or unknown session).
   */
  send(session: string, message: unknown): boolean {
    if (this.#successor !== null) return this.#successor.send(session, message);
    const entry = this.#session(session, false);
    return entry === undefined ? false : this.#deliver(entry, JSON.stringify(message));
  }

  /** `json`: the message, serialized once for every session it goes to. */
  #deliver(entry: Session, json: string): boolean {
    const sequence = ++this.#sequence;
    const text = `id: ${eventId(this.#replica, sequence)}\nevent: message\ndata: ${json}\n\n`;
    const bytes = text.length * 3; // UTF-8 upper bound, no encoding pass.
    entry.events.push({ sequence, text, bytes });
    entry.bytes += bytes;
    while (
      entry.events.length > this.#options.bufferEvents ||
      (entry.bytes > this.#options.bufferBytes && entry.events.length > 0)
    ) {
      const dropped = entry.events.shift()!;
      entry.bytes -= dropped.bytes;
      entry.evicted = dropped.sequence;
    }
    let newest: Sink | undefined;
    for (const sink of entry.sinks) newest = sink;
    if (newest === undefined) return false;
    this.#write(newest, text);
    return true;
  }

  /**
   * Records a session's `logging/setLevel`.
   * @param session The session id.
   * @param level The threshold.
   */
  setLevel(session: string, level: LogLevel): void {
    if (this.#successor !== null) return this.#successor.setLevel(session, level);
    this.#session(session, true)!.level = level;
  }

  /**
   * A session's log threshold (null: none set).
   * @param session The session id.
   * @returns The level.
   */
  level(session: string): LogLevel | null {
    if (this.#successor !== null) return this.#successor.level(session);
    return this.#sessions.get(session)?.level ?? null;
  }

  /**
   * Sends `notifications/tools/list_changed` to every session this replica
   * knows and to every listen stream that asked for it.
   */
  toolsChanged(): void {
    if (this.#successor !== null) return this.#successor.toolsChanged();
    const json = JSON.stringify(TOOLS_CHANGED);
    for (const entry of this.#sessions.values()) this.#deliver(entry, json);
    this.#toolsChangedAt = this.#sequence;
    for (const sink of this.#listeners) {
      const meta = { [SUBSCRIPTION_META]: sink.subscription };
      this.#write(sink, messageEvent({ ...TOOLS_CHANGED, params: { _meta: meta } }, null));
    }
  }

  /**
   * Sends a `notifications/message` to every session whose threshold it passes.
   * @param level The level.
   * @param data The payload.
   */
  log(level: LogLevel, data: unknown): void {
    if (this.#successor !== null) return this.#successor.log(level, data);
    const json = JSON.stringify(logNotification(level, data));
    for (const entry of this.#sessions.values()) {
      if (passes(level, entry.level)) this.#deliver(entry, json);
    }
  }

  /**
   * Opens a 2026-07-28 `subscriptions/listen` stream: the acknowledgement
   * (the honoured filter), then the requested notifications stamped with the
   * subscription id; closed gracefully with the empty result.
   * @param subscription The listen request's id.
   * @param options Whether tool-list changes were asked for, token expiry, and who opens it.
   * @returns The stream, or why not.
   */
  listen(
    subscription: string | number,
    options: {
      readonly toolsListChanged: boolean;
      readonly expiresAt?: number | null;
      /** Token issuer and subject (see {@linkcode streamOwner}); null or absent: anonymous. */
      readonly owner?: string | null;
    },
  ):
    | { readonly ok: true; readonly stream: ReadableStream<Uint8Array> }
    | { readonly ok: false; readonly reason: OpenRefusal } {
    if (this.#successor !== null) return this.#successor.listen(subscription, options);
    const owner = options.owner ?? null;
    if (!this.#admit(owner)) return { ok: false, reason: "too_many_streams" };
    this.#take(owner);
    const meta = { [SUBSCRIPTION_META]: subscription };
    const honored = options.toolsListChanged ? { toolsListChanged: true } : {};
    const farewell = messageEvent({
      jsonrpc: "2.0",
      id: subscription,
      result: { resultType: "complete", _meta: meta },
    }, null);
    let sink: Sink;
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        sink = this.#sink(controller, {
          expiresAt: options.expiresAt ?? null,
          farewell,
          subscription,
          session: null,
          owner,
        });
        this.#write(
          sink,
          messageEvent({
            jsonrpc: "2.0",
            method: "notifications/subscriptions/acknowledged",
            params: { notifications: honored, _meta: meta },
          }, null),
        );
        if (!options.toolsListChanged) return this.#close(sink, true);
        this.#listeners.add(sink);
      },
      cancel: () => this.#close(sink, false),
    });
    return { ok: true, stream };
  }

  /**
   * Ends a session on this replica (DELETE): its open GET streams close and
   * what it kept (buffer, log level) is dropped, so an ended session is sent
   * nothing more.
   * @param session The session id.
   */
  end(session: string): void {
    if (this.#successor !== null) return this.#successor.end(session);
    const entry = this.#sessions.get(session);
    if (entry === undefined) return;
    this.#sessions.delete(session);
    for (const sink of [...entry.sinks]) this.#close(sink, true);
  }

  /** Closes every stream (shutdown; listen streams get their empty result first). */
  closeAll(): void {
    if (this.#successor !== null) return this.#successor.closeAll();
    for (const sink of [...this.#listeners]) this.#close(sink, true);
    for (const entry of this.#sessions.values()) {
      for (const sink of [...entry.sinks]) this.#close(sink, true);
    }
  }
}
