/**
 * Subscriptions on `graphql_path`, the parts every client transport shares: which transport
 * a request asks for, starting a client's subscription (the identity's field rules, the
 * token's expiry), and the two HTTP streams: GraphQL over SSE (the `graphql-sse` protocol,
 * distinct connections mode) and Apollo's multipart HTTP subscriptions. WebSocket is in
 * `subscriptions_ws.ts`.
 *
 * Both HTTP streams are pulled: a result is taken from the subscription only when the
 * client's connection took the one before, so a client that does not read leaves its results
 * in the subscription's bounded buffer, and is dropped when it is full
 * (`SUBSCRIPTION_CLIENT_TOO_SLOW`).
 *
 * @module
 */
import type { ConnectSubscribe } from "../connect/mod.ts";
import type { GraphQLFormattedError } from "graphql";
import { authorizeOperation, type RequestAuthorization, type VerifiedToken } from "../auth/mod.ts";
import type { Config } from "../config/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { SupergraphCore } from "../supergraph/mod.ts";
import {
  type Engine,
  type EventStream,
  type EventTrace,
  type ExecutionResult,
  type PreparedOperation,
  subscribe,
} from "../engine/mod.ts";
import {
  MULTIPART_CLOSE,
  multipartContentType,
  multipartOpening,
  multipartPart,
} from "./multipart.ts";

/** The boundary of multipart subscriptions (Apollo Router's). */
const BOUNDARY = "graphql";
import { unrefTimer } from "../timers.ts";
import { PluginRefusal, type PluginRequest } from "../plugins/mod.ts";
import type { RouterError } from "../errors.ts";

/** What the subscription transports read (a part of the GraphQL facet's dependencies). */
export interface SubscriptionDeps {
  readonly config: Config;
  readonly engine: Engine;
  readonly log: Logger;
  /** Token verification; absent: every client is anonymous. */
  readonly authorization?: RequestAuthorization;
  /** Schema and access map the checks read. */
  readonly supergraph?: SupergraphCore;
}

/** The HTTP transports of a subscription. */
export type StreamTransport = "sse" | "multipart";

/**
 * The HTTP stream a request's `Accept` asks for: `text/event-stream` (GraphQL over SSE) or
 * `multipart/mixed` (Apollo's multipart subscriptions); null for neither.
 * @param accept The `Accept` header.
 * @returns The transport, or null.
 */
export function streamTransportOf(accept: string | null): StreamTransport | null {
  if (accept === null) return null;
  const lower = accept.toLowerCase();
  if (lower.includes("text/event-stream")) return "sse";
  if (lower.includes("multipart/mixed")) return "multipart";
  return null;
}

/** A client's subscription as its transport holds it. */
export interface ClientSubscription {
  readonly stream: EventStream;
  /** Ends it from the client's side (the client left); idempotent. */
  close(): void;
}

/** The error a subscription ends with when its token expires. */
export const TOKEN_EXPIRED: GraphQLFormattedError = {
  message: "The token the subscription was authorized with expired; subscribe again with a new one",
  extensions: { code: "SUBSCRIPTION_TOKEN_EXPIRED" },
};

/** setTimeout's longest delay (2^31 - 1 ms). */
const MAX_DELAY_MS = 2_147_483_647;

/** A client's subscription as it started, or the request errors it was refused with. */
export type StartedSubscription =
  | { readonly ok: true; readonly subscription: ClientSubscription }
  | {
    readonly ok: false;
    readonly errors: readonly GraphQLFormattedError[];
  };

/** What {@linkcode startClientSubscription} starts. */
export interface StartOptions {
  readonly operation: PreparedOperation;
  readonly variables: Readonly<Record<string, unknown>> | null | undefined;
  readonly headers: Headers;
  readonly identity: VerifiedToken | null;
  readonly requestId: string | null;
  /** Traces of the first events (ART), when the request is traced. */
  readonly traceEvent?: (index: number) => EventTrace | null;
  /** The request's plugin run (issue 40): its operation stage and subgraph stages. */
  readonly plugin?: PluginRequest | undefined;
  /** False: the facet ran the operation stage already (Connect). @default {true} */
  readonly operationStage?: boolean;
  /** The `@policy` names granted (by the facet's operation stage, or this one's). */
  readonly policies?: ReadonlySet<string>;
}

/**
 * Starts a client's subscription: `reject_operation_if_unauthorized` checked (the one
 * door), the plugins' operation stage run, protected fields removed for the identity, and
 * an end set at the token's expiry. Sync unless a plugin hooks the operation stage.
 * @param deps The GraphQL facet's dependencies.
 * @param options The prepared subscription, variables, connect headers, identity.
 * @returns The subscription, or the request errors.
 */
export function startClientSubscription(
  deps: SubscriptionDeps,
  options: StartOptions,
): StartedSubscription | Promise<StartedSubscription> {
  const { identity } = options;
  // The one authorization door (reject_operation_if_unauthorized), before anything runs.
  const refused = authorizeOperation(options.operation, {
    identity,
    authorization: deps.supergraph === undefined ? undefined : deps.authorization,
    supergraph: deps.engine.model,
    subject: "The subscription",
  });
  if (refused !== null) {
    return {
      ok: false,
      errors: [{ message: refused.message, extensions: { code: refused.code } }],
    };
  }
  const plugin = options.plugin;
  if (plugin?.has("onOperation") && options.operationStage !== false) {
    return plugin.operation(options.operation, {
      identity,
      variables: options.variables,
    }).then(({ error, policies }) =>
      error === null
        ? begin(deps, policies ? { ...options, policies } : options)
        : { ok: false, errors: formattedErrors(error) }
    );
  }
  return begin(deps, options);
}

/**
 * A refusal's errors as GraphQL errors (a plugin's refusal keeps its own).
 * @param error The refusal.
 * @returns The errors.
 */
export function formattedErrors(error: RouterError): readonly GraphQLFormattedError[] {
  return error instanceof PluginRefusal
    ? error.errors
    : [{ message: error.message, extensions: { code: error.code } }];
}

/** Starts an authorized subscription in the engine. */
function begin(deps: SubscriptionDeps, options: StartOptions): StartedSubscription {
  const { identity } = options;
  const stages = options.plugin?.stages;
  const started = subscribe(deps.engine, options.operation, {
    variables: options.variables,
    headers: options.headers,
    requestId: options.requestId,
    identity,
    ...(options.traceEvent ? { traceEvent: options.traceEvent } : {}),
    ...(stages ? { stages } : {}),
    ...(options.policies ? { policies: options.policies } : {}),
  });
  if (!started.ok) return { ok: false, errors: started.result.errors ?? [] };
  const stream = started.stream;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const exp = identity?.claims.exp;
  if (typeof exp === "number") {
    const delay = Math.max(0, Math.min(MAX_DELAY_MS, exp * 1000 - Date.now()));
    const expiry = setTimeout(() => stream.end(TOKEN_EXPIRED), delay);
    unrefTimer(expiry);
    timer = expiry;
  }
  return {
    ok: true,
    subscription: {
      stream,
      close() {
        if (timer !== null) clearTimeout(timer);
        timer = null;
        void stream.return();
      },
    },
  };
}

/**
 * The Connect facet's way to start a subscription (its server-streaming methods): the same
 * start as the GraphQL transports' (authorization, field removal, token expiry), handed to the
 * facet by the edge so that `lib/connect` never imports `lib/http`.
 * @param deps The state's subscription dependencies.
 * @returns The `subscribe` of `ConnectDeps`.
 */
export function connectSubscribeOf(deps: SubscriptionDeps): ConnectSubscribe {
  return async (request) => {
    const started = await startClientSubscription(deps, {
      operation: request.operation,
      variables: request.variables,
      headers: request.headers,
      identity: request.identity,
      requestId: request.requestId,
      // Connect ran the operation stage with its authorization (lib/connect/handler.ts).
      plugin: request.plugin,
      operationStage: false,
      ...(request.policies ? { policies: request.policies } : {}),
    });
    if (!started.ok) return { errors: started.errors };
    const subscription = started.subscription;
    // The stream's end (client gone, deadline, error) releases the upstream.
    if (request.signal.aborted) subscription.close();
    else request.signal.addEventListener("abort", () => subscription.close(), { once: true });
    return subscription.stream;
  };
}

/** Options of the HTTP streams. */
export interface StreamOptions {
  /** Heartbeat interval, ms (`subscriptions.heartbeat_interval`). */
  readonly heartbeatMs: number;
  /** The request's signal: the client left. */
  readonly signal: AbortSignal;
  /** Prints one result (request id added, etc.). */
  readonly print: (result: ExecutionResult) => string;
}

const encoder = new TextEncoder();

/**
 * The frame of a result, as bytes: for a result without errors (whose frame is the same for
 * every client: no request id in it) encoded once and kept with the result, so that every
 * subscriber sharing an event's result (`printOnce`) is written the same bytes; a result with
 * errors is framed for its client alone.
 */
function framed(
  frames: WeakMap<ExecutionResult, Uint8Array>,
  result: ExecutionResult,
  frame: (result: ExecutionResult) => string,
): Uint8Array {
  if (result.errors !== undefined) return encoder.encode(frame(result));
  let bytes = frames.get(result);
  if (bytes === undefined) frames.set(result, bytes = encoder.encode(frame(result)));
  return bytes;
}

/**
 * A pulled text stream over a subscription's results: `frame` writes each (the same bytes
 * for every stream of these `frames`), `heartbeat` is written when nothing else is waiting,
 * `end` closes it.
 */
function pulledStream(
  subscription: ClientSubscription | null,
  options: StreamOptions & {
    readonly first: readonly string[];
    readonly frame: (result: ExecutionResult) => string;
    readonly frames: WeakMap<ExecutionResult, Uint8Array>;
    readonly heartbeat: string;
    readonly end: string;
  },
): ReadableStream<Uint8Array> {
  let interval: ReturnType<typeof setInterval> | null = null;
  const finish = () => {
    if (interval !== null) clearInterval(interval);
    interval = null;
    subscription?.close();
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const text of options.first) controller.enqueue(encoder.encode(text));
      if (subscription === null) {
        controller.enqueue(encoder.encode(options.end));
        controller.close();
        return;
      }
      const beat = setInterval(() => {
        // Only when the client took everything: a client that does not read gets no more.
        if ((controller.desiredSize ?? 0) > 0) {
          controller.enqueue(encoder.encode(options.heartbeat));
        }
      }, options.heartbeatMs);
      unrefTimer(beat);
      interval = beat;
      options.signal.addEventListener("abort", finish, { once: true });
    },
    async pull(controller) {
      if (subscription === null) return;
      const next = await subscription.stream.next();
      if (next.done) {
        finish();
        controller.enqueue(encoder.encode(options.end));
        controller.close();
        return;
      }
      controller.enqueue(framed(options.frames, next.value, options.frame));
    },
    cancel: finish,
  }, { highWaterMark: 1 });
}

/** SSE `next` frames of results shared by several subscribers. */
const SSE_FRAMES = new WeakMap<ExecutionResult, Uint8Array>();
/** Multipart parts of results shared by several subscribers. */
const MULTIPART_FRAMES = new WeakMap<ExecutionResult, Uint8Array>();

/**
 * GraphQL over SSE, distinct connections mode: `next` events, then `complete`; `:` comment
 * heartbeats. Request errors are one `next` with the errors, then `complete` (as the
 * `graphql-sse` server sends them).
 * @param started The subscription, or the errors it was refused with.
 * @param options Heartbeat, signal, printer.
 * @returns The response.
 */
export function sseResponse(
  started: ClientSubscription | readonly GraphQLFormattedError[],
  options: StreamOptions,
): Response {
  const subscription = Array.isArray(started) ? null : started as ClientSubscription;
  const first = subscription === null
    ? [
      `event: next\ndata: ${
        options.print({ errors: [...started as GraphQLFormattedError[]] })
      }\n\n`,
    ]
    : [];
  const body = pulledStream(subscription, {
    ...options,
    first,
    frame: (result) => `event: next\ndata: ${options.print(result)}\n\n`,
    frames: SSE_FRAMES,
    heartbeat: ":\n\n",
    end: "event: complete\ndata:\n\n",
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    },
  });
}

/**
 * Apollo's multipart HTTP subscriptions (`subscriptionSpec="1.0"`): each result a part
 * `{"payload": result}`, heartbeat parts `{}`, and an ending error as a part with top-level
 * `errors` and a null `payload`.
 * @param started The subscription, or the errors it was refused with.
 * @param options Heartbeat, signal, printer.
 * @returns The response.
 */
export function multipartResponse(
  started: ClientSubscription | readonly GraphQLFormattedError[],
  options: StreamOptions,
): Response {
  const subscription = Array.isArray(started) ? null : started as ClientSubscription;
  // Each part is followed by its delimiter (the opening one goes first), so a client reads a
  // part when it arrives, not when the next heartbeat does.
  const frame = (result: ExecutionResult) =>
    multipartPart(
      "data" in result
        ? `{"payload":${options.print(result)}}`
        : `{"payload":null,"errors":${
          JSON.stringify(JSON.parse(options.print(result)).errors ?? [])
        }}`,
      BOUNDARY,
    );
  const heartbeat = multipartPart("{}", BOUNDARY);
  const first = subscription === null
    ? [multipartOpening(BOUNDARY) + frame({ errors: [...started as GraphQLFormattedError[]] })]
    : [multipartOpening(BOUNDARY) + heartbeat];
  const body = pulledStream(subscription, {
    ...options,
    first,
    frame,
    frames: MULTIPART_FRAMES,
    heartbeat,
    end: MULTIPART_CLOSE,
  });
  return new Response(body, {
    headers: {
      "content-type": multipartContentType(BOUNDARY, { subscriptionSpec: '"1.0"' }),
      "cache-control": "no-cache",
    },
  });
}
