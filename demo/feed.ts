/**
 * A small in-process event feed for the demo subgraphs' subscriptions: every
 * published value goes to every listener whose filter accepts it. Bounded: a
 * listener that falls `maxQueued` events behind is ended with an error
 * (`FEED_LISTENER_TOO_SLOW`), never buffered without end.
 *
 * @example Two events to one listener
 * ```ts
 * import assert from "node:assert/strict";
 * import { createFeed } from "./feed.ts";
 * const feed = createFeed<number>();
 * const listener = feed.listen();
 * feed.publish(1);
 * feed.publish(2);
 * assert.deepEqual(await listener.next(), { value: 1, done: false });
 * assert.deepEqual(await listener.next(), { value: 2, done: false });
 * await listener.return();
 * assert.equal(feed.listeners(), 0);
 * ```
 *
 * @module
 */

/** Options for {@linkcode createFeed}. */
export interface FeedOptions {
  /** Events a listener may have unread before it is ended; default 1000. */
  readonly maxQueued?: number;
}

/** A feed of values of type `T`. */
export interface Feed<T> {
  /** Sends `value` to every listener whose filter accepts it. */
  publish(value: T): void;
  /**
   * A new listener: the values published from now on that `accept` lets
   * through. Returning (a `for await` loop's `break`, graphql-js ending a
   * subscription) removes it.
   */
  listen(accept?: (value: T) => boolean): AsyncGenerator<T, void, undefined>;
  /** How many listeners are attached (tests check that clients leaving detach them). */
  listeners(): number;
}

/**
 * Creates a feed.
 * @param options The per-listener bound.
 * @returns The feed.
 */
export function createFeed<T>(options: FeedOptions = {}): Feed<T> {
  const maxQueued = options.maxQueued ?? 1000;
  const sinks = new Set<(value: T) => void>();
  return {
    publish(value) {
      for (const sink of [...sinks]) sink(value);
    },
    listeners: () => sinks.size,
    listen(accept = () => true) {
      const queue: T[] = [];
      let waiting: PromiseWithResolvers<IteratorResult<T, void>> | null = null;
      let state: "open" | "overflow" | "done" = "open";
      const settle = (result: IteratorResult<T, void> | Error) => {
        const pending = waiting;
        waiting = null;
        if (pending === null) return;
        if (result instanceof Error) pending.reject(result);
        else pending.resolve(result);
      };
      const sink = (value: T) => {
        if (!accept(value)) return;
        if (waiting !== null) return settle({ value, done: false });
        if (queue.length < maxQueued) return void queue.push(value);
        state = "overflow";
        sinks.delete(sink);
      };
      sinks.add(sink);
      const tooSlow = () =>
        Object.assign(new Error(`The listener fell more than ${maxQueued} events behind`), {
          code: "FEED_LISTENER_TOO_SLOW",
        });
      // Hand-written rather than a generator: return() must detach at once, even while
      // a next() waits for an event (a generator would wait for that event first).
      const iterator: AsyncGenerator<T, void, undefined> = {
        next() {
          if (queue.length > 0) return Promise.resolve({ value: queue.shift()!, done: false });
          if (state === "overflow") {
            state = "done";
            return Promise.reject(tooSlow());
          }
          if (state === "done") return Promise.resolve({ value: undefined, done: true });
          waiting = Promise.withResolvers();
          return waiting.promise;
        },
        return() {
          state = "done";
          queue.length = 0;
          sinks.delete(sink);
          settle({ value: undefined, done: true });
          return Promise.resolve({ value: undefined, done: true });
        },
        throw(error) {
          iterator.return();
          return Promise.reject(error);
        },
        [Symbol.asyncIterator]() {
          return iterator;
        },
        [Symbol.asyncDispose]() {
          return iterator.return().then(() => {});
        },
      };
      return iterator;
    },
  };
}
