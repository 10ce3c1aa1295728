/**
 * The subgraph side of a subscription: one upstream stream of events from a subgraph, over
 * GraphQL over WebSocket (`graphql-transport-ws`, the `graphql-ws` client) or GraphQL over
 * SSE (the `graphql-sse` client, distinct connections mode). The protocols are the
 * libraries'; this module only opens a stream, hands its events on and says how it ended.
 *
 * @module
 */
import { type Client as WsClient, createClient as createWsClient } from "graphql-ws";
import { createClient as createSseClient } from "graphql-sse";

/** How a subgraph serves subscriptions (`subscriptions.subgraphs.<name>.protocol`). */
export type SubscriptionProtocol = "ws" | "sse";

/** Where and how one subgraph's subscriptions are opened. */
export interface UpstreamTarget {
  /** `ws:`/`wss:` for `ws`, `http:`/`https:` for `sse`. */
  readonly url: string;
  readonly protocol: SubscriptionProtocol;
  /**
   * How long the subgraph may take to accept the stream (the `connection_ack`, the SSE
   * response's head), ms; past it the stream fails. @default 30000
   */
  readonly connectTimeoutMs?: number;
  /** The client the stream connects through (`tls.subgraphs`: authorities, client certificate). */
  readonly client?: Deno.HttpClient;
}

/** The request of an upstream stream. */
export interface UpstreamRequest {
  /** The printed subgraph subscription. */
  readonly query: string;
  readonly variables: Readonly<Record<string, unknown>>;
  /** Headers sent with the connect (the WebSocket upgrade, the SSE request): the header rules'. */
  readonly headers: Readonly<Record<string, string>>;
}

/** Why an upstream stream failed (never shown as is to clients: it may name hosts). */
export interface UpstreamFailure {
  /** A short reason for logs and the client's message (`closed with code 1011`). */
  readonly reason: string;
  /** GraphQL errors the subgraph answered the subscribe with, when it did. */
  readonly errors?: readonly unknown[];
}

/** Receives what an upstream stream produces. */
export interface UpstreamSink {
  /** One event: the subgraph's execution result (`{data, errors}`). */
  next(result: unknown): void;
  /** The stream ended: null when the subgraph completed it, else why it failed. Called once. */
  end(failure: UpstreamFailure | null): void;
}

/** Opens one upstream stream; returns the function that closes it (idempotent). */
export type OpenUpstream = (
  target: UpstreamTarget,
  request: UpstreamRequest,
  sink: UpstreamSink,
) => () => void;

/**
 * Opens a subgraph subscription stream with the `graphql-ws` or `graphql-sse` client: no
 * retries (a broken stream ends, and its clients are told), one connection per stream.
 *
 * @param target The subgraph's subscription URL and protocol.
 * @param request The subgraph subscription, its variables and the connect headers.
 * @param sink Events and the end.
 * @returns Closes the stream (the subgraph sees `complete` and the connection close).
 */
export function openUpstream(
  target: UpstreamTarget,
  request: UpstreamRequest,
  sink: UpstreamSink,
): () => void {
  let ended = false;
  const end = (failure: UpstreamFailure | null) => {
    if (ended) return;
    ended = true;
    sink.end(failure);
  };
  const payload = { query: request.query, variables: { ...request.variables } };
  const connectTimeoutMs = target.connectTimeoutMs ?? 30_000;
  const handlers = {
    next: (value: unknown) => {
      if (!ended) sink.next(value);
    },
    error: (error: unknown) => end(failureOf(error)),
    complete: () => end(null),
  };
  if (target.protocol === "sse") {
    const client = createSseClient({
      url: target.url,
      singleConnection: false,
      retryAttempts: 0,
      headers: { ...request.headers },
      fetchFn: fetchWithin(connectTimeoutMs, target.client),
    });
    const unsubscribe = client.subscribe(payload, handlers);
    return () => {
      ended = true;
      unsubscribe();
      client.dispose();
    };
  }
  const headers = { ...request.headers };
  // Deno's WebSocket takes headers for the upgrade request (a Deno extension of the
  // standard constructor): the header rules apply to the connect.
  class HeaderSocket extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      const list = protocols === undefined
        ? []
        : typeof protocols === "string"
        ? [protocols]
        : protocols;
      super(
        url,
        {
          protocols: list,
          headers,
          ...(target.client === undefined ? {} : { client: target.client }),
        } as unknown as string[],
      );
    }
  }
  const client: WsClient = createWsClient({
    url: target.url,
    webSocketImpl: HeaderSocket,
    lazy: true,
    lazyCloseTimeout: 0,
    connectionAckWaitTimeout: connectTimeoutMs,
    retryAttempts: 0,
    shouldRetry: () => false,
  });
  const unsubscribe = client.subscribe(payload, handlers);
  return () => {
    ended = true;
    unsubscribe();
    void client.dispose();
  };
}

/** `fetch` whose answer's head must arrive within `ms` (the body then streams unbounded in time). */
function fetchWithin(ms: number, client: Deno.HttpClient | undefined): typeof fetch {
  return async (input, init) => {
    const controller = new AbortController();
    const outer = init?.signal;
    const forward = () => controller.abort(outer?.reason);
    if (outer?.aborted) forward();
    outer?.addEventListener("abort", forward, { once: true });
    const timer = setTimeout(
      () =>
        controller.abort(new DOMException("The subgraph did not answer in time", "TimeoutError")),
      ms,
    );
    try {
      return await fetch(input, {
        ...init,
        signal: controller.signal,
        ...(client === undefined ? {} : { client }),
      });
    } finally {
      clearTimeout(timer);
    }
  };
}

/** What the close codes of `graphql-transport-ws` (and WebSocket's common ones) mean. */
const CLOSE_CODES: Readonly<Record<number, string>> = {
  1000: "closed by the subgraph",
  1001: "the subgraph is going away",
  1006: "the connection was lost",
  1011: "the subgraph failed",
  4400: "the subgraph found a message malformed",
  4401: "unauthorized",
  4403: "forbidden",
  4406: "subprotocol not acceptable",
  4408: "connection initialisation timeout",
  4500: "the subgraph failed",
  4504: "no connection_ack in time",
};

/** What a library reported as the end of a stream, as an {@linkcode UpstreamFailure}. */
function failureOf(error: unknown): UpstreamFailure {
  if (Array.isArray(error)) {
    return { reason: "the subgraph refused the subscription", errors: error };
  }
  if (typeof error === "object" && error !== null && "code" in error && "reason" in error) {
    // The subgraph's own close reason is not repeated (it may say more than clients should
    // see); the code and, for the protocol's codes, what it means.
    const code = Number((error as { code: unknown }).code);
    const meaning = CLOSE_CODES[code];
    return { reason: `the connection closed with code ${code}${meaning ? ` (${meaning})` : ""}` };
  }
  if (error instanceof DOMException && error.name === "TimeoutError") {
    return { reason: "the subgraph did not accept the stream in time" };
  }
  if (error instanceof Error) return { reason: "the stream failed" };
  return { reason: "the stream failed" };
}
