/**
 * One client's subscription: the events of its upstream stream, each run through the rest of
 * the plan (the fetches after the root fetch, with the event as the root fetch's answer) and
 * shaped like a query's answer, delivered in arrival order through a bounded buffer.
 *
 * A client that takes its results slower than they come has at most `maxBuffered` of them
 * waiting (queued or still executing); one more ends its subscription with
 * `SUBSCRIPTION_CLIENT_TOO_SLOW`, its buffer dropped: memory stays flat whatever the client does.
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import type { ExecutionResult } from "../types.ts";
import type { UpstreamEvent } from "../fetch/subscription_hub.ts";

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
  readonly #queue: Promise<ExecutionResult>[] = [];
  #final: ExecutionResult | null = null;
  #ended = false;
  #waiter: (() => void) | null = null;

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
    if (this.#queue.length >= this.#options.maxBuffered) {
      this.#queue.length = 0;
      this.end(tooSlowError(this.#options.maxBuffered));
      return;
    }
    const running = this.#options.run(event).catch((): ExecutionResult => ({
      errors: [{ message: "The event could not be executed", extensions: { code: "INTERNAL" } }],
    }));
    this.#queue.push(running);
    this.#wake();
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
  }

  /** The next result (in event order), or done once the stream ended and all were taken. */
  async next(): Promise<IteratorResult<ExecutionResult>> {
    while (true) {
      const head = this.#queue.shift();
      if (head !== undefined) {
        const value = await head;
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
