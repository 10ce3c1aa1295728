/**
 * Deduplicated upstream streams: identical subgraph subscriptions (same subgraph, document,
 * variables and forwarded headers) share one upstream stream, fanned out to every listener.
 * The stream opens with its first listener and closes when its last one leaves.
 *
 * @module
 */
import type {
  OpenUpstream,
  UpstreamFailure,
  UpstreamRequest,
  UpstreamTarget,
} from "./upstream_stream.ts";

/** One event of an upstream stream, shared by its listeners (never mutated). */
export interface UpstreamEvent {
  /** The event's JSON text (the subgraph's execution result). */
  readonly body: string;
  /** The parse of `body`, made once by the first listener that reads it. */
  readonly parsed: { value?: unknown };
  /**
   * What listeners made of this event, by a key of theirs: listeners whose work on it is the
   * same (the engine's key: plan, variables, forwarded headers) share one result.
   */
  readonly shared: Map<string, unknown>;
}

/** A listener of an upstream stream. */
export interface HubListener {
  next(event: UpstreamEvent): void;
  /** The upstream ended (null: completed by the subgraph); the listener is removed. */
  end(failure: UpstreamFailure | null): void;
}

interface Stream {
  readonly listeners: Set<HubListener>;
  close: () => void;
}

/** Options of {@linkcode SubscriptionHub}. */
export interface SubscriptionHubOptions {
  /** Opens one upstream stream (`openUpstream`, or a test's). */
  readonly open: OpenUpstream;
  /** Share identical upstream streams (`subscriptions.deduplicate`). @default true */
  readonly deduplicate?: boolean;
}

/**
 * The upstream streams of one engine, keyed by what makes two subscriptions identical.
 *
 * @example Two identical listeners, one upstream
 * ```ts
 * import assert from "node:assert/strict";
 * import { SubscriptionHub } from "./upstream_hub.ts";
 * let opened = 0;
 * const hub = new SubscriptionHub({ open: () => (opened++, () => {}) });
 * const target = { url: "ws://sub/graphql", protocol: "ws" as const };
 * const request = { query: "subscription{tick}", variables: {}, headers: {} };
 * const listener = { next() {}, end() {} };
 * const leaveA = hub.listen("a", { target, request, listener });
 * const leaveB = hub.listen("a", { target, request, listener: { ...listener } });
 * assert.equal(opened, 1);
 * leaveA();
 * leaveB();
 * assert.equal(hub.upstreams, 0);
 * ```
 */
export class SubscriptionHub {
  readonly #streams = new Map<string, Stream>();
  readonly #open: OpenUpstream;
  readonly #deduplicate: boolean;
  #unshared = 0;
  /** Events received from subgraphs, in total. */
  eventsIn = 0;
  /** Upstream streams opened, in total. */
  opened = 0;

  /** @param options How streams open; whether identical ones are shared. */
  constructor(options: SubscriptionHubOptions) {
    this.#open = options.open;
    this.#deduplicate = options.deduplicate ?? true;
  }

  /** Upstream streams open now. */
  get upstreams(): number {
    return this.#streams.size;
  }

  /**
   * Adds a listener to the upstream stream of a subgraph subscription, opening it when it is
   * the first.
   * @param subgraph The subgraph's name.
   * @param options Its subscription target, the request and the listener.
   * @returns Removes the listener (closing the stream when it was the last); idempotent.
   */
  listen(
    subgraph: string,
    options: {
      readonly target: UpstreamTarget;
      readonly request: UpstreamRequest;
      readonly listener: HubListener;
    },
  ): () => void {
    const { target, request, listener } = options;
    const key = this.#deduplicate
      ? JSON.stringify([
        subgraph,
        request.query,
        request.variables,
        Object.entries(request.headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      ])
      : `\u0000${this.#unshared++}`;
    let stream = this.#streams.get(key);
    if (stream === undefined) {
      const created: Stream = { listeners: new Set(), close: () => {} };
      stream = created;
      this.#streams.set(key, created);
      this.opened++;
      created.close = this.#open(target, request, {
        next: (result) => {
          this.eventsIn++;
          const event: UpstreamEvent = {
            body: JSON.stringify(result),
            parsed: {},
            shared: new Map(),
          };
          for (const l of [...created.listeners]) l.next(event);
        },
        end: (failure) => {
          if (this.#streams.get(key) === created) this.#streams.delete(key);
          const listeners = [...created.listeners];
          created.listeners.clear();
          for (const l of listeners) l.end(failure);
        },
      });
    }
    const joined = stream;
    joined.listeners.add(listener);
    return () => {
      if (!joined.listeners.delete(listener) || joined.listeners.size > 0) return;
      if (this.#streams.get(key) === joined) this.#streams.delete(key);
      joined.close();
    };
  }

  /** Closes every upstream stream; their listeners are told nothing (the caller ends them). */
  closeAll(): void {
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    for (const s of streams) {
      s.listeners.clear();
      s.close();
    }
  }
}
