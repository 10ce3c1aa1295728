/**
 * One client's subscription: the events of its upstream stream, each run through the rest of
 * the plan (the fetches after the root fetch, with the event as the root fetch's answer) and
 * shaped like a query's answer, delivered in arrival order through a bounded buffer.
 *
 * A client that takes its results slower than they come has at most `maxBuffered` of them
 * waiting; one more ends its subscription with `SUBSCRIPTION_CLIENT_TOO_SLOW`, its buffer
 * dropped: memory stays flat whatever the client does. The client is blamed only when it is
 * the slow one (issue 39): its oldest result is ready and untaken, it is not waiting for an
 * earlier one still executing, and the router keeps up (`behind` false). When the router is the slow one (the oldest result is still executing,
 * or the serving thread is saturated) the buffer may hold up to {@linkcode BEHIND_FACTOR}
 * times as many, and past that the subscription ends with `SUBSCRIPTION_LIMIT_REACHED`
 * (the router's capacity, not the client, is what ran out).
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import type { ExecutionResult } from "../types.ts";
import type { UpstreamEvent } from "./upstream_hub.ts";

/** Options of {@linkcode EventStream}. */
export interface EventStreamOptions {
  /** Results (queued or executing) a client may leave untaken (`subscriptions.max_buffered_events`). */
  readonly maxBuffered: number;
  /** Runs one event through the plan and shapes it. */
  readonly run: (event: UpstreamEvent) => Promise<ExecutionResult>;
  /** Called once when the stream ends, whatever ended it (leaves the upstream). */
  readonly onEnd: () => void;
  /** Counts each result handed to the client. */
  readonly onDelivered?: () => void;
  /** True while the router is behind its events (the serving thread saturated). @default () => false */
  readonly behind?: () => boolean;
  /** Told why a full buffer ended the stream. */
  readonly onDropped?: (reason: "client_too_slow" | "router_behind") => void;
}

/**
 * How many times `maxBuffered` results a subscription may fall behind while the router, not the
 * client, is the slow one.
 */
export const BEHIND_FACTOR = 4;

/** A result waiting in a stream's buffer. */
interface Pending {
  readonly result: Promise<ExecutionResult>;
  /** True once executed: from then on only the client's taking it is awaited. */
  ready: boolean;
  /** The result, once ready. */
  value: ExecutionResult | null;
}

/** Where a pushed stream's results go ({@linkcode EventStream.pushTo}). */
export interface ResultSink {
  /** One result, in event order, as soon as it and every earlier one are ready. */
  next(result: ExecutionResult): void;
  /** The stream is done: every result was handed to `next`. */
  done(): void;
}

/** The error of an event whose execution failed. */
const INTERNAL: ExecutionResult = {
  errors: [{ message: "The event could not be executed", extensions: { code: "INTERNAL" } }],
};

/**
 * The error a subscription ends with when the router fell too far behind its events.
 * @param behind Results it fell behind by.
 * @returns `SUBSCRIPTION_LIMIT_REACHED`.
 */
export function routerBehindError(behind: number): GraphQLFormattedError {
  return {
    message:
      `The router fell ${behind} results behind this subscription's events: it serves more subscriptions than it can deliver events to; the subscription ended, subscribe again later`,
    extensions: { code: "SUBSCRIPTION_LIMIT_REACHED" },
  };
}

/** The error a slow client's subscription ends with. */
export function tooSlowError(maxBuffered: number): GraphQLFormattedError {
  return {
    message:
      `The subscription fell behind its events: ${maxBuffered} results were waiting to be executed or taken by the client (subscriptions.max_buffered_events); it ended`,
    extensions: { code: "SUBSCRIPTION_CLIENT_TOO_SLOW" },
  };
}

/**
 * The results of one client's subscription, as an async iterator: the transport pulls them
 * (`for await`), `return()` ends the subscription from the client's side.
 */
export class EventStream implements AsyncIterableIterator<ExecutionResult> {
  readonly #options: EventStreamOptions;
  readonly #queue: Pending[] = [];
  #final: ExecutionResult | null = null;
  #ended = false;
  #waiter: (() => void) | null = null;
  /** True while the client waits for a result still executing. */
  #taking = false;
  /** Set by `pushTo`: results are handed over as they are ready, not pulled. */
  #sink: ResultSink | null = null;

  /** @param options Buffer bound, per-event run, end hook. */
  constructor(options: EventStreamOptions) {
    this.#options = options;
  }

  /** True once the stream ended (results may still be waiting to be taken). */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * An upstream event: its execution starts now; its result is delivered in order.
   * @param event The event.
   */
  push(event: UpstreamEvent): void {
    if (this.#ended) return;
    const waiting = this.#queue.length;
    const { maxBuffered } = this.#options;
    if (waiting >= maxBuffered) {
      // The client is the slow one when its oldest result is ready and not asked for (the
      // client is not waiting on an earlier one still executing) and the router keeps up.
      const clientSlow = !this.#taking && this.#queue[0]!.ready &&
        !(this.#options.behind?.() ?? false);
      if (clientSlow || waiting >= maxBuffered * BEHIND_FACTOR) {
        this.#queue.length = 0;
        this.#options.onDropped?.(clientSlow ? "client_too_slow" : "router_behind");
        this.end(clientSlow ? tooSlowError(maxBuffered) : routerBehindError(waiting));
        return;
      }
    }
    const pending: Pending = {
      result: this.#options.run(event).then((result) => {
        pending.ready = true;
        pending.value = result;
        if (this.#sink !== null) this.#flush();
        return result;
      }, () => {
        pending.ready = true;
        pending.value = INTERNAL;
        if (this.#sink !== null) this.#flush();
        return INTERNAL;
      }),
      ready: false,
      value: null,
    };
    this.#queue.push(pending);
    this.#wake();
  }

  /**
   * Hands every result to `sink` as soon as it is ready (in event order) instead of being
   * pulled with `next()`: for a transport that writes without waiting (a WebSocket, whose
   * unsent bytes it bounds itself), one callback per result and no promise per result. Called
   * once, before the first `next()`; `return()` still ends the stream.
   * @param sink Where the results go.
   */
  pushTo(sink: ResultSink): void {
    this.#sink = sink;
    this.#flush();
  }

  /** Hands the ready head of the queue to the sink; the end once all were handed. */
  #flush(): void {
    const sink = this.#sink!;
    while (this.#queue.length > 0 && this.#queue[0]!.ready) {
      const head = this.#queue.shift()!;
      this.#options.onDelivered?.();
      sink.next(head.value!);
    }
    if (this.#ended && this.#queue.length === 0 && this.#sink !== null) {
      const last = this.#final;
      this.#final = null;
      this.#sink = null;
      if (last !== null) sink.next(last);
      sink.done();
    }
  }

  /**
   * Ends the stream: the results queued are still delivered, then `error` (if any) as the
   * last result, then the end.
   * @param error The error the client is told the subscription ended with; null: completed.
   */
  end(error: GraphQLFormattedError | null): void {
    if (this.#ended) return;
    this.#ended = true;
    if (error !== null) this.#final = { errors: [error] };
    this.#options.onEnd();
    this.#wake();
    if (this.#sink !== null) this.#flush();
  }

  /** The next result (in event order), or done once the stream ended and all were taken. */
  async next(): Promise<IteratorResult<ExecutionResult>> {
    while (true) {
      const head = this.#queue.shift();
      if (head !== undefined) {
        // While it waits here for a result still executing, the client is not the slow one.
        this.#taking = true;
        const value = await head.result;
        this.#taking = false;
        this.#options.onDelivered?.();
        return { done: false, value };
      }
      if (this.#ended) {
        const last = this.#final;
        this.#final = null;
        if (last !== null) return { done: false, value: last };
        return { done: true, value: undefined };
      }
      await new Promise<void>((resolve) => (this.#waiter = resolve));
    }
  }

  /** The client left: the subscription ends, nothing more is delivered. */
  return(): Promise<IteratorResult<ExecutionResult>> {
    this.#queue.length = 0;
    this.#final = null;
    this.end(null);
    return Promise.resolve({ done: true, value: undefined });
  }

  /** This iterator. */
  [Symbol.asyncIterator](): AsyncIterableIterator<ExecutionResult> {
    return this;
  }

  #wake(): void {
    const waiter = this.#waiter;
    this.#waiter = null;
    waiter?.();
  }
}
