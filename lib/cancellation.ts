/**
 * Abort callbacks without `EventTarget` listeners, for the per-request hot
 * path. A {@linkcode Cancellation} is an `AbortController` (its signal goes
 * to `fetch` and to anything else that takes a signal) that also keeps
 * callbacks in a `Set`; {@linkcode onAbort} uses that set for such a signal
 * and falls back to `addEventListener` for any other.
 *
 * Why not `addEventListener`: every call allocates its listener record from
 * one object literal inside Deno's `EventTarget`, so V8 tracks one allocation
 * site for all of them. Records that live as long as a request (the queue
 * wait, the deadline, each subgraph fetch waiting on a shared response)
 * survive young collections often enough that V8, at some warm-up, decides to
 * pretenure that site: from then on every record is born in the old
 * generation and keeps its callback's closure (and the request state it
 * holds) alive through every young collection, which promotes it too. The
 * load benchmark then ran in a slow regime for the life of the process (see
 * `bench/load/results.md`, "GC regimes": about 5 MB promoted per young
 * collection instead of 0.3 MB, 25 full collections in 15 s instead of 5,
 * ~20 % more CPU per request, 20 MiB more RSS). A `Set` entry and a closure
 * are not allocation-site tracked.
 *
 * @module
 */

/** The callbacks of a {@linkcode Cancellation}'s signal (a key nobody else reads). */
const CALLBACKS: unique symbol = Symbol("gw.abortCallbacks");

type Callbacks = Set<() => void>;

/**
 * An `AbortController` whose abort also runs the callbacks registered with
 * {@linkcode onAbort} (each once, in registration order, after the signal's
 * own `abort` event).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Cancellation, onAbort } from "./cancellation.ts";
 * const cancel = new Cancellation();
 * const seen: unknown[] = [];
 * const off = onAbort(cancel.signal, () => seen.push("kept"));
 * onAbort(cancel.signal, () => seen.push("removed"))();
 * cancel.abort(new Error("late"));
 * cancel.abort(new Error("twice"));
 * assert.deepEqual(seen, ["kept"]);
 * assert.equal((cancel.signal.reason as Error).message, "late");
 * off(); // after the abort: nothing left to remove
 * ```
 */
export class Cancellation extends AbortController {
  readonly #callbacks: Callbacks = new Set();

  constructor() {
    super();
    (this.signal as unknown as { [CALLBACKS]: Callbacks })[CALLBACKS] = this.#callbacks;
  }

  /**
   * Aborts the signal, then runs the registered callbacks (once). As with
   * event listeners, a callback that throws is reported (`reportError`, the
   * global `error` event) and the others still run; `abort` itself never throws.
   * @param reason The abort reason (default: an `AbortError` DOMException).
   */
  override abort(reason?: unknown): void {
    if (this.signal.aborted) return;
    super.abort(reason);
    const callbacks = [...this.#callbacks];
    this.#callbacks.clear();
    for (const callback of callbacks) {
      try {
        callback();
      } catch (error) {
        reportError(error);
      }
    }
  }
}

/**
 * Runs `callback` once when `signal` aborts. For a {@linkcode Cancellation}'s
 * signal the callback goes into its set; any other signal gets an `abort`
 * event listener. Call the returned function to unregister (safe after the
 * abort and more than once). Nothing is registered on an aborted signal.
 *
 * @example A plain signal
 * ```ts
 * import assert from "node:assert/strict";
 * import { onAbort } from "./cancellation.ts";
 * const controller = new AbortController();
 * let calls = 0;
 * onAbort(controller.signal, () => calls++);
 * controller.abort();
 * controller.abort();
 * assert.equal(calls, 1);
 * ```
 * @param signal The signal.
 * @param callback Runs once on abort (read `signal.reason` for why).
 * @returns Unregisters the callback.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) return NOTHING;
  const callbacks = (signal as unknown as { [CALLBACKS]?: Callbacks })[CALLBACKS];
  if (callbacks !== undefined) {
    callbacks.add(callback);
    return () => void callbacks.delete(callback);
  }
  signal.addEventListener("abort", callback, { once: true });
  return () => signal.removeEventListener("abort", callback);
}

function NOTHING(): void {}

/** The signal a request copy was made with (see {@linkcode withSignal}). */
const SIGNAL: unique symbol = Symbol("gw.requestSignal");

/**
 * Marks a request copy with the signal it was made with. `new Request(url,
 * {signal})` gives the copy a dependent signal of its own, which
 * {@linkcode onAbort} can only reach through an event listener; our own code
 * reads the original through {@linkcode signalOf}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Cancellation, signalOf, withSignal } from "./cancellation.ts";
 * const cancel = new Cancellation();
 * const copy = withSignal(new Request("http://x.test/", { signal: cancel.signal }), cancel.signal);
 * assert.equal(signalOf(copy), cancel.signal);
 * assert.notEqual(copy.signal, cancel.signal);
 * const plain = new Request("http://x.test/");
 * assert.equal(signalOf(plain), plain.signal);
 * ```
 * @param request The copy.
 * @param signal The signal it was made with.
 * @returns The same request.
 */
export function withSignal(request: Request, signal: AbortSignal): Request {
  (request as unknown as { [SIGNAL]: AbortSignal })[SIGNAL] = signal;
  return request;
}

/**
 * The signal to follow for a request: the one it was made with
 * ({@linkcode withSignal}), else its own.
 * @param request The request.
 * @returns The signal.
 */
export function signalOf(request: Request): AbortSignal {
  return (request as unknown as { [SIGNAL]?: AbortSignal })[SIGNAL] ?? request.signal;
}
