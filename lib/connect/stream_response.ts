/**
 * The body of a Connect server-streaming answer: GraphQL results (one per
 * subscription event, from the engine) in, an `application/connect+json`
 * {@linkcode Response} out. Each result with data becomes one enveloped
 * response message; the stream ends with the end-of-stream message: `{}` when
 * the results end, an error when a result carries GraphQL errors (the unary
 * rule: errors ride in a Connect error, `graphql_errors` included), when the
 * results fail, or when `Connect-Timeout-Ms` passes.
 *
 * Bounded by construction: the body is pulled, never pushed. The next result
 * is asked for only when the client has taken the previous message (a queue
 * of zero), so a client that does not read holds back its own results (the
 * engine's per-subscriber buffer bounds them) instead of growing memory here.
 * A client that leaves, or cancels, returns the iterator at once, which ends
 * the upstream subscription.
 *
 * @module
 */
import type { PluginRequest } from "../plugins/mod.ts";
import type { GraphQLFormattedError } from "graphql";
import { CONNECT_STREAM_JSON, encodeEndStream, encodeStreamMessage } from "./stream.ts";
import {
  codeOfGraphQLErrors,
  type ConnectFailure,
  connectFailure,
  failureOfRouterError,
  primaryError,
} from "./errors.ts";
import { encodeResponseMessage } from "./json.ts";
import type { PreparedOperation } from "../engine/mod.ts";
import type { VerifiedToken } from "../auth/mod.ts";
import type { MethodModel } from "./model.ts";

/** One result of a subscription event, as the engine shapes it. */
export interface StreamResult {
  readonly data?: Readonly<Record<string, unknown>> | null;
  readonly errors?: readonly GraphQLFormattedError[];
}

/** What the Connect facet hands the engine to start a subscription. */
export interface ConnectSubscribeRequest {
  /** The prepared subscription (from `prepare` of the method's operation text). */
  readonly operation: PreparedOperation;
  /** The decoded request message. */
  readonly variables: Readonly<Record<string, unknown>>;
  /** The verified caller, or null (anonymous): the per-field rules apply as for queries. */
  readonly identity: VerifiedToken | null;
  /** The client's request headers (header rules forward them to the subgraph). */
  readonly headers: Headers;
  /** The request's id. */
  readonly requestId: string | null;
  /**
   * Aborts when the stream ends for any reason (client gone, deadline, an
   * error): the subscription must then end and release its upstream.
   */
  readonly signal: AbortSignal;
  /** The call's plugin run (issue 40): the stages around its events' subgraph fetches. */
  readonly plugin?: PluginRequest | undefined;
  /** The `@policy` names the call's operation stage granted. */
  readonly policies?: ReadonlySet<string>;
}

/**
 * Starts a subscription: resolves to its results (one per event), or to one
 * result with errors when it cannot start (validation, authorization,
 * limits) -- graphql-js's `subscribe` shape. The stream's consumer returns the
 * iterator when it stops reading; a bounded buffer per consumer is the
 * engine's.
 */
export type ConnectSubscribe = (
  request: ConnectSubscribeRequest,
) => Promise<AsyncIterable<StreamResult> | StreamResult>;

/** How a Connect stream ended (for metrics and logs). */
export type StreamEnd =
  /** The results ended: the end-of-stream message is `{}`. */
  | { readonly kind: "completed"; readonly messages: number }
  /** The stream ended with an error in its end-of-stream message. */
  | {
    readonly kind: "failed";
    readonly messages: number;
    readonly failure: ConnectFailure;
    /** What was thrown, when the failure comes from an exception (logged, never sent). */
    readonly error?: unknown;
  }
  /** The client left or canceled: nothing more was sent. */
  | { readonly kind: "canceled"; readonly messages: number };

/** Options for {@linkcode connectStreamResponse}. */
export interface StreamResponseOptions {
  /** The method: its response message shapes every result's data. */
  readonly method: MethodModel;
  /** `Connect-Timeout-Ms` of the call: the whole stream's deadline; null for none. */
  readonly timeoutMs?: number | null;
  /** Aborts when the client goes away (the request's signal). */
  readonly signal?: AbortSignal;
  /** Extra response headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Called once, when the stream has ended, with how. */
  readonly onEnd?: (end: StreamEnd) => void;
}

/**
 * The failure a result with GraphQL errors ends the stream with (the code of
 * its first error, as for unary calls).
 * @param errors The result's errors (at least one).
 * @param requestError Whether the result had no `data`.
 * @returns The failure.
 */
export function failureOfResultErrors(
  errors: readonly GraphQLFormattedError[],
  requestError: boolean,
): ConnectFailure {
  return connectFailure(
    codeOfGraphQLErrors(errors, { requestError }),
    primaryError(errors)?.message ?? "The subscription failed",
    { graphqlErrors: errors },
  );
}

/**
 * An answer that is only an end-of-stream message: a streaming call refused
 * after its protocol was agreed (authentication, a bad message, a subscription
 * that could not start) is HTTP 200 with the error in the stream, as Connect
 * clients expect.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectStreamFailure } from "./stream_response.ts";
 * const response = connectStreamFailure({ code: "unauthenticated", message: "No token" });
 * assert.equal(response.status, 200);
 * assert.equal(response.headers.get("content-type"), "application/connect+json");
 * const bytes = new Uint8Array(await response.arrayBuffer());
 * assert.equal(bytes[0], 2);
 * assert.deepEqual(JSON.parse(new TextDecoder().decode(bytes.subarray(5))), {
 *   error: { code: "unauthenticated", message: "No token" },
 * });
 * ```
 * @param failure The failure.
 * @returns The response.
 */
export function connectStreamFailure(failure: ConnectFailure): Response {
  const headers = new Headers(failure.headers);
  headers.set("content-type", CONNECT_STREAM_JSON);
  return new Response(encodeEndStream({ failure }) as Uint8Array<ArrayBuffer>, {
    status: 200,
    headers,
  });
}

const CANCELED = Symbol("canceled");

/**
 * Stream messages by the result data they encode and the method's response message: the data
 * of an event's result shared by several subscribers (the engine's `printOnce`) is encoded
 * once per response message and the same bytes written to each stream.
 */
const ENCODED = new WeakMap<object, WeakMap<object, Uint8Array>>();

/** The stream message of a result's data for one response message type (kept, see ENCODED). */
function encodedMessage(
  data: Record<string, unknown>,
  response: Parameters<typeof encodeResponseMessage>[0],
): Uint8Array {
  let byResponse = ENCODED.get(data);
  if (byResponse === undefined) ENCODED.set(data, byResponse = new WeakMap());
  let message = byResponse.get(response);
  if (message === undefined) {
    message = encodeStreamMessage(encodeResponseMessage(response, data));
    byResponse.set(response, message);
  }
  return message;
}

/** What a pull waits for: the next result, or why the stream was stopped. */
type Step = IteratorResult<StreamResult> | ConnectFailure | typeof CANCELED;

/** A thrown error as a failure: the engine's own refusals keep their code, anything else is internal. */
function failureOf(error: unknown): ConnectFailure {
  return failureOfRouterError(error) ?? connectFailure("internal", "Internal error");
}

/**
 * Streams GraphQL results as a Connect server stream (see the module header
 * for when it ends and how it is bounded).
 *
 * @example Two events, then the end
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectStreamResponse } from "./stream_response.ts";
 * import type { MethodModel } from "./model.ts";
 * const method = { response: { name: "R", fullName: "R", description: null, nested: [], fields: [] } };
 * async function* events() {
 *   yield { data: {} };
 *   yield { data: {} };
 * }
 * const response = connectStreamResponse(events(), { method: method as unknown as MethodModel });
 * const bytes = new Uint8Array(await response.arrayBuffer());
 * assert.deepEqual([...bytes], [0, 0, 0, 0, 2, 123, 125, 0, 0, 0, 0, 2, 123, 125, 2, 0, 0, 0, 2, 123, 125]);
 * ```
 * @param results The subscription's results, one per event.
 * @param options Method, deadline, client signal, headers, end callback.
 * @returns The streaming response (HTTP 200, `application/connect+json`).
 */
export function connectStreamResponse(
  results: AsyncIterable<StreamResult>,
  options: StreamResponseOptions,
): Response {
  const iterator = results[Symbol.asyncIterator]();
  // Why the stream was stopped (deadline, client gone), once it was. A pull in
  // flight is woken by `wake`, its own short-lived promise: racing every event
  // against one long-lived promise would leave a reaction, holding that event's
  // result, on it per event until the stream ends (a stream's memory grew with
  // its length, fastest for a client that had stopped reading).
  let stopped: ConnectFailure | typeof CANCELED | null = null;
  let wake: ((why: ConnectFailure | typeof CANCELED) => void) | null = null;
  let ended = false;
  let messages = 0;
  const timeoutMs = options.timeoutMs ?? null;
  let pulling = false;
  let streamController: ReadableStreamDefaultController<Uint8Array> | null = null;
  // A stop settles a pull in flight through the race; with none in flight (the client is
  // not reading), it ends the stream now, so the subscription does not outlive it.
  const stop = (why: ConnectFailure | typeof CANCELED) => {
    stopped ??= why;
    wake?.(stopped);
    if (pulling || ended || streamController === null) return;
    if (why === CANCELED) {
      streamController.close();
      end({ kind: "canceled", messages });
    } else {
      fail(streamController, why);
    }
  };
  const timer = timeoutMs === null ? undefined : setTimeout(() => {
    stop(connectFailure(
      "deadline_exceeded",
      `The stream exceeded its deadline (Connect-Timeout-Ms: ${timeoutMs})`,
    ));
  }, timeoutMs);
  const onClientGone = () => stop(CANCELED);
  options.signal?.addEventListener("abort", onClientGone, { once: true });
  const end = (how: StreamEnd) => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onClientGone);
    // Returning ends the upstream; a generator paused in an await settles it later.
    void Promise.resolve().then(() => iterator.return?.()).catch(() => {});
    options.onEnd?.(how);
  };
  const fail = (
    controller: ReadableStreamDefaultController<Uint8Array>,
    failure: ConnectFailure,
    error?: unknown,
  ) => {
    controller.enqueue(encodeEndStream({ failure }));
    controller.close();
    end({ kind: "failed", messages, failure, ...(error === undefined ? {} : { error }) });
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      streamController = controller;
    },
    async pull(controller) {
      if (ended) return;
      let step: Step;
      pulling = true;
      try {
        step = stopped ?? await new Promise<Step>((resolve, reject) => {
          wake = resolve;
          iterator.next().then(resolve, reject);
        });
      } catch (error) {
        if (!ended) fail(controller, failureOf(error), error);
        return;
      } finally {
        pulling = false;
        wake = null;
      }
      if (ended) return;
      if (step === CANCELED) {
        controller.close();
        end({ kind: "canceled", messages });
        return;
      }
      if ("code" in step) return fail(controller, step);
      if (step.done) {
        controller.enqueue(encodeEndStream());
        controller.close();
        end({ kind: "completed", messages });
        return;
      }
      const result = step.value;
      if (result.errors !== undefined && result.errors.length > 0) {
        return fail(controller, failureOfResultErrors(result.errors, !("data" in result)));
      }
      if (result.data === null || result.data === undefined) {
        return fail(controller, connectFailure("internal", "A subscription event had no data"));
      }
      let message: Uint8Array;
      try {
        message = encodedMessage(result.data, options.method.response);
      } catch (error) {
        return fail(controller, failureOf(error), error);
      }
      controller.enqueue(message);
      messages++;
    },
    cancel() {
      end({ kind: "canceled", messages });
    },
  }, { highWaterMark: 0 });
  return new Response(body, {
    status: 200,
    headers: { ...options.headers, "content-type": CONNECT_STREAM_JSON },
  });
}
