/**
 * The edge of an operation request (GraphQL, Connect, MCP POST): its body
 * read first, outside any slot (a client that sends it slowly holds none;
 * past the deadline: 408 `REQUEST_TIMEOUT`), then admission through the
 * engine's gate, the router deadline, and a slot released on every path.
 * Every outcome is an answer: admitted and done; refused by the
 * gate (503 `SERVICE_OVERLOADED` + `Retry-After`); past
 * `traffic_shaping.router.request_timeout`, queued or running (504
 * `GATEWAY_TIMEOUT`, the work's signal aborted so its subgraph fetches stop);
 * the client gone (the slot is freed at once; nobody reads the answer).
 *
 * @module
 */
import { Cancellation, onAbort } from "../cancellation.ts";
import type { AdmissionGate } from "../engine/mod.ts";
import { RouterError } from "../errors.ts";
import type { Logger } from "../log/mod.ts";
import { BODY_INTERRUPTED } from "./body.ts";
import { type EdgeErrorAnswer, errorResponse } from "./errors.ts";

/** Options of {@linkcode runAdmitted}. */
export interface RunAdmittedOptions {
  /** The engine's admission gate. */
  readonly gate: AdmissionGate;
  /** Puts a controller under the router deadline; returns its untrack function. */
  readonly track: (controller: AbortController) => () => void;
  /** Logs internal errors. */
  readonly log?: Logger;
  /** Aborts at the end of the shutdown grace period: a request still running gets 503. */
  readonly stop?: AbortSignal;
  /** The request's id, put into the errors this answers (`extensions.request_id`). */
  readonly requestId?: string;
  /** Told why the gate turned a request away (`queue_full`, `queue_wait`, `client_gone`, …). */
  readonly refused?: (reason: string) => void;
  /**
   * Runs before the request asks for a slot, under the same signal (client
   * gone, deadline, shutdown): reading its body. What it throws is the answer;
   * the deadline passing here is 408 `REQUEST_TIMEOUT` (the client was slow).
   */
  readonly prepare?: (signal: AbortSignal) => Promise<void>;
  /**
   * True once shutdown began: `Deno.serve` then stops reading request bodies,
   * so a body that breaks off is answered 503 `SHUTTING_DOWN` (send it again
   * elsewhere), not 400.
   */
  readonly draining?: () => boolean;
  /**
   * Builds the answer to a refusal here (body, queue, deadline, shutdown) in
   * the facet's shape.
   * @default {errorResponse}
   */
  readonly answer?: EdgeErrorAnswer;
}

/** The abort reason of a request past `traffic_shaping.router.request_timeout`. */
export class RequestTimeout extends DOMException {
  /** @param timeoutMs The deadline, ms. */
  constructor(readonly timeoutMs: number) {
    super(`The request took longer than ${timeoutMs} ms`, "TimeoutError");
  }
}

/** The abort reason of a request still running when the shutdown grace period ends. */
export class ShutdownAbort extends DOMException {
  constructor() {
    super("The router is shutting down", "AbortError");
  }
}

function shuttingDown(
  what = "the request did not complete within grace_period",
): RouterError {
  return new RouterError("SHUTTING_DOWN", `The router is shutting down and ${what}`, {
    details: { retry_after: 1 },
  });
}

/**
 * What a failed body read answers: 408 past the deadline, 503 once shutdown
 * cut it off (send it again elsewhere), the read's own error otherwise; null
 * when the client went away (nobody reads the answer). Also for the bodies of
 * requests that take no slot, read under the same deadline.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readFailure, RequestTimeout } from "./admit.ts";
 * const failure = readFailure(new RequestTimeout(300), { aborted: true, draining: false });
 * assert.equal((failure as { code: string }).code, "REQUEST_TIMEOUT");
 * assert.equal(readFailure(new Error("reset"), { aborted: true, draining: false }), null);
 * ```
 * @param error What the read threw (or the signal's reason once it aborted).
 * @param options Whether the request's signal aborted; whether shutdown began.
 * @returns The error to answer with, or null when nobody reads the answer.
 */
export function readFailure(
  error: unknown,
  options: { readonly aborted: boolean; readonly draining: boolean },
): unknown {
  if (error instanceof RequestTimeout) return requestTimeout(error);
  if (error instanceof ShutdownAbort) return shuttingDown();
  if (options.aborted) return null;
  const interrupted = error instanceof RouterError && error.details.reason === BODY_INTERRUPTED;
  return interrupted && options.draining
    ? shuttingDown("stopped reading the request body; send it again")
    : error;
}

function requestTimeout(reason: RequestTimeout): RouterError {
  return new RouterError(
    "REQUEST_TIMEOUT",
    `The request body did not arrive within ${reason.timeoutMs} ms (traffic_shaping.router.request_timeout)`,
    { details: { timeoutMs: reason.timeoutMs } },
  );
}

function gatewayTimeout(reason: RequestTimeout): RouterError {
  return new RouterError(
    "GATEWAY_TIMEOUT",
    `The request did not complete within ${reason.timeoutMs} ms (traffic_shaping.router.request_timeout)`,
    { details: { timeoutMs: reason.timeoutMs } },
  );
}

/**
 * Runs `work` for an admitted request under the router deadline.
 *
 * @example A full gate with no queue answers 503 with Retry-After
 * ```ts
 * import assert from "node:assert/strict";
 * import { createAdmissionGate } from "../engine/admission/queue.ts";
 * import { runAdmitted } from "./admit.ts";
 * const gate = createAdmissionGate(1, { maxQueueSize: 0 });
 * await gate.enter();
 * const response = await runAdmitted(new Request("http://r/graphql"), () => {
 *   throw new Error("not run");
 * }, { gate, track: () => () => {} });
 * assert.equal(response.status, 503);
 * assert.equal(response.headers.get("retry-after"), "1");
 * ```
 * @param request The client's request.
 * @param work Builds the answer; gets the signal that aborts when the client goes or the deadline passes.
 * @param options Gate, deadline tracker, logger.
 * @returns The answer.
 */
export async function runAdmitted(
  request: Request,
  work: (signal: AbortSignal) => Promise<Response>,
  options: RunAdmittedOptions,
): Promise<Response> {
  const { gate } = options;
  // Callbacks, not event listeners, on the request's path (see cancellation.ts).
  const controller = new Cancellation();
  const signal = controller.signal;
  const clientGone = () => controller.abort(request.signal.reason);
  if (request.signal.aborted) clientGone();
  const offClient = onAbort(request.signal, clientGone);
  const untrack = options.track(controller);
  const stop = options.stop;
  const stopped = () => controller.abort(new ShutdownAbort());
  if (stop?.aborted) stopped();
  const offStop = stop ? onAbort(stop, stopped) : null;
  const answerOptions = {
    ...(options.log ? { log: options.log } : {}),
    ...(options.requestId ? { requestId: options.requestId } : {}),
  };
  const answer = options.answer ?? errorResponse;
  const answerOf = (reason: unknown): Response =>
    reason instanceof RequestTimeout
      ? answer(gatewayTimeout(reason), answerOptions)
      : reason instanceof ShutdownAbort
      ? answer(shuttingDown(), answerOptions)
      : answer(reason, answerOptions);
  try {
    if (options.prepare) {
      try {
        await options.prepare(signal);
        if (signal.aborted) throw signal.reason;
      } catch (error) {
        const failure = readFailure(signal.aborted ? signal.reason : error, {
          aborted: signal.aborted,
          draining: options.draining?.() ?? false,
        });
        if (failure instanceof RouterError && failure.code === "SERVICE_OVERLOADED") {
          options.refused?.(refusalReason(failure));
        }
        // The client went away: nobody reads this answer.
        if (failure === null) return new Response(null, { status: 503 });
        return answer(failure, answerOptions);
      }
    }
    try {
      await gate.enter(signal);
    } catch (error) {
      // Refused (503 + Retry-After), past the deadline (504), or the client
      // went away while waiting (nobody reads this answer).
      options.refused?.(refusalReason(error));
      return error instanceof RouterError || error instanceof RequestTimeout ||
          error instanceof ShutdownAbort
        ? answerOf(error)
        : new Response(null, { status: 503 });
    }
    const aborted = Promise.withResolvers<Response>();
    const offAborted = onAbort(signal, () =>
      aborted.resolve(
        signal.reason instanceof RequestTimeout || signal.reason instanceof ShutdownAbort
          ? answerOf(signal.reason)
          : new Response(null, { status: 503 }), // the client went away
      ));
    try {
      const running = work(signal);
      // The answer is sent at the deadline; the work ends by its aborted signal.
      running.catch(() => {});
      return await Promise.race([running, aborted.promise]);
    } catch (error) {
      return answerOf(error);
    } finally {
      offAborted();
      // Freed when the answer is built, the deadline passes or the client goes.
      gate.leave();
    }
  } finally {
    untrack();
    offStop?.();
    offClient();
  }
}

function refusalReason(error: unknown): string {
  if (error instanceof RequestTimeout) return "deadline";
  if (error instanceof ShutdownAbort) return "shutdown";
  if (error instanceof RouterError) {
    const reason = error.details.reason;
    return typeof reason === "string" ? reason : error.code.toLowerCase();
  }
  return "client_gone";
}
