/**
 * The subgraph HTTP client: JSON POST with propagated headers, a per-request
 * timeout, and single flight (identical in-flight requests share one response).
 *
 * Over 600 lines: one request's whole life with a subgraph — single flight,
 * the plugins' subgraph stages, the transport choice (HTTP/1 pool or fetch),
 * the timeout, the answer's bounded read and its refusal codes — kept together
 * so the order of those steps reads in one place; each function ≤ 120 lines.
 *
 * @module
 */
import type { SubgraphInfo } from "../../supergraph/mod.ts";
import type { SubgraphResponse } from "../execute/mod.ts";
import { headerPairs, type HeaderPropagator } from "./headers.ts";
import type {
  EngineEvents,
  FetchHook,
  FetchRequestRecord,
  MultipartBody,
  RequestHooks,
  StagedSubgraphRequest,
  StagedSubgraphResponse,
  SubgraphStages,
} from "../types.ts";
import { RouterError } from "../../errors.ts";
import type { BudgetTicket, MemoryBudget } from "../admission/mod.ts";
import { answered, type Resilience, resilientFetch, SubgraphTimeout } from "./resilient_fetch.ts";
import { readSubgraphBody } from "./subgraph_body.ts";
import { ClosedBeforeAnswer, type Http1Pool, Http1ProtocolError, wholeBody } from "./http1.ts";
import { clientFor } from "./http_clients.ts";
import { deadlineGroups } from "../../deadline_groups.ts";
import { onAbort } from "../../cancellation.ts";

function isCircuitOpen(error: unknown): boolean {
  return error instanceof RouterError && error.code === "SUBGRAPH_CIRCUIT_OPEN";
}

/** The headers of every subgraph request (header rules add to them). */
const BASE_HEADERS: [string, string][] = [
  ["content-type", "application/json"],
  ["accept", "application/graphql-response+json, application/json"],
];

/** Options for {@linkcode createSubgraphClient}. */
export interface SubgraphClientOptions {
  readonly subgraphs: ReadonlyMap<string, SubgraphInfo>;
  readonly propagators: ReadonlyMap<string, HeaderPropagator | null>;
  /**
   * An injected fetch (tests, traces) receives a `Request`; without one the
   * global `fetch` gets the URL and options, so only one `Request` is built
   * and the body goes out as bytes, not as a stream of another request.
   */
  readonly fetch?: (request: Request) => Promise<Response>;
  /**
   * The keep-alive HTTP/1.1 pool for plain `http:` subgraph URLs
   * (`engine.subgraph_transport: http1`); others, or without one, use `fetch`.
   * An injected `fetch` takes precedence.
   */
  readonly http1?: Http1Pool | null;
  /**
   * `tls.subgraphs`' clients by entry name (`all` for the rest): a subgraph
   * with one is fetched through it (its authorities, its client certificate).
   */
  readonly httpClients?: ReadonlyMap<string, Deno.HttpClient>;
  readonly singleFlight: boolean;
  readonly timeoutMs: number;
  /** Largest subgraph response body read, bytes (`engine.max_subgraph_response_bytes`). */
  readonly maxResponseBytes?: number;
  /** Fetch and single-flight events (metrics). */
  readonly events?: EngineEvents;
  /** The in-flight memory budget every answer's bytes are charged to as they stream. */
  readonly budget?: MemoryBudget;
  /** Retry policy and circuit breaker per subgraph (`traffic_shaping`); none: one attempt. */
  readonly resilience?: ReadonlyMap<string, Resilience>;
}

/** Per-request send options. */
export interface SendOptions {
  readonly headers?: Headers;
  readonly signal?: AbortSignal;
  readonly now?: () => number;
  /** Never share this request (mutations). */
  readonly unshared?: boolean;
  /** The request's telemetry hooks (trace context headers, spans). */
  readonly hooks?: RequestHooks;
  /** The request's extension stages (plugins, the coprocessor) around this fetch. */
  readonly stages?: SubgraphStages;
  /** The headers a request stage left (they replace the header rules' for this fetch). */
  readonly stagedHeaders?: ForwardedHeaders;
  /** The operation's share of the memory budget (charged as the answer streams). */
  readonly ticket?: BudgetTicket;
  /** A query's fetch: safe to retry (a mutation's never is). */
  readonly idempotent?: boolean;
  /**
   * The request's forwarded headers per subgraph, filled as its fetches go out: the
   * header rules run once per subgraph and request, not once per fetch. Only for
   * `headers` that do not change during the request.
   */
  readonly forwarded?: Map<string, ForwardedHeaders | null>;
}

/** The headers one subgraph gets for one request (name/value pairs, as `Headers` iterates). */
export type ForwardedHeaders = readonly (readonly [string, string])[];

/** The client. */
export interface SubgraphClient {
  /** Sends a JSON body to a subgraph. */
  send(subgraph: string, body: string, options: SendOptions): Promise<SubgraphResponse>;
  /**
   * Sends a streamed multipart body (file uploads) to a subgraph: never shared,
   * never retried (the stream is read once), under the subgraph's timeout.
   */
  upload(subgraph: string, body: MultipartBody, options: SendOptions): Promise<SubgraphResponse>;
  /** Whether identical in-flight requests share one response (`engine.enable_single_flight`). */
  readonly singleFlight: boolean;
  /** The request record of a send (for traces). */
  describe(subgraph: string, body: string, clientHeaders: Headers | undefined): FetchRequestRecord;
}

/** One subgraph request as it goes out. */
interface Outgoing {
  readonly subgraph: string;
  readonly url: string;
  readonly body: string;
  /** Null: the constant base headers (no header rules for this subgraph). */
  readonly headers: ForwardedHeaders | null;
  readonly now: (() => number) | undefined;
  /** The telemetry of the request that sends it. */
  readonly hook: FetchHook | undefined;
  readonly idempotent: boolean;
}

/** One shared in-flight subgraph request. */
interface Flight {
  readonly promise: Promise<SubgraphResponse>;
  readonly controller: AbortController;
  /** Callers still waiting (an aborted caller leaves). */
  waiters: number;
  /** The budget tickets of the callers waiting (bytes go to the first open one). */
  readonly tickets: Set<BudgetTicket>;
}

/** A pool's failure: a server that broke HTTP, or closed before answering, named; else as is. */
function poolFailure(error: unknown, subgraph: string): unknown {
  if (error instanceof Http1ProtocolError) {
    return new RouterError(
      "SUBGRAPH_ERROR",
      `The subgraph "${subgraph}" answered malformed HTTP: ${error.message}`,
      { cause: error, details: { serviceName: subgraph } },
    );
  }
  if (error instanceof ClosedBeforeAnswer) {
    return new RouterError(
      "SUBGRAPH_UNREACHABLE",
      `The subgraph "${subgraph}" closed the connection before answering`,
      { cause: error, details: { serviceName: subgraph } },
    );
  }
  return error;
}

/**
 * Builds the subgraph client.
 *
 * @example Identical concurrent requests share one fetch
 * ```ts
 * import assert from "node:assert/strict";
 * import { createSubgraphClient } from "./subgraph_client.ts";
 * let calls = 0;
 * const client = createSubgraphClient({
 *   subgraphs: new Map([["a", { name: "a", url: "http://a.test/graphql", enumValue: "A" }]]),
 *   propagators: new Map(),
 *   fetch: () => { calls++; return Promise.resolve(Response.json({ data: {} })); },
 *   singleFlight: true,
 *   timeoutMs: 1000,
 * });
 * const [x, y] = await Promise.all([client.send("a", "{}", {}), client.send("a", "{}", {})]);
 * assert.equal(calls, 1);
 * assert.equal(x.body, y.body);
 * assert.equal(y.deduplicated, true);
 * ```
 * @param options Subgraphs, header rules, fetch, single flight, timeout.
 * @returns The client.
 */
export function createSubgraphClient(options: SubgraphClientOptions): SubgraphClient {
  const inflight = new Map<string, Flight>();
  // Without header rules every request carries the same two headers: pass them
  // as a plain list (no Headers object to build, iterate and copy per request).
  const headersFor = (subgraph: string, client: Headers | undefined): Headers | null => {
    const propagate = options.propagators.get(subgraph);
    if (!propagate) return null;
    const headers = new Headers(BASE_HEADERS);
    propagate(client, headers);
    return headers;
  };
  // The pairs once per subgraph and request (`SendOptions.forwarded`): a plain
  // list iterates fast when the request line and the single-flight key are built.
  const forwardedFor = (subgraph: string, sendOptions: SendOptions): ForwardedHeaders | null => {
    const memo = sendOptions.forwarded;
    const known = memo?.get(subgraph);
    if (known !== undefined) return known;
    const propagate = options.propagators.get(subgraph);
    const pairs = propagate ? headerPairs(propagate, sendOptions.headers, BASE_HEADERS) : null;
    memo?.set(subgraph, pairs);
    return pairs;
  };
  const urlOf = (subgraph: string): string => {
    const info = options.subgraphs.get(subgraph);
    if (!info) throw new TypeError(`Unknown subgraph "${subgraph}"`);
    return info.url;
  };
  const limit = options.maxResponseBytes ?? Infinity;
  const budget = options.budget;
  const tooLargeFor = (subgraph: string) => () =>
    new RouterError(
      "SUBGRAPH_ERROR",
      `The subgraph "${subgraph}" answered more than ${limit} bytes (engine.max_subgraph_response_bytes)`,
      { details: { serviceName: subgraph, limit } },
    );
  const notUtf8For = (subgraph: string) => () =>
    new RouterError(
      "SUBGRAPH_ERROR",
      `The subgraph "${subgraph}" answered a body that is not valid UTF-8`,
      { details: { serviceName: subgraph } },
    );
  // The subgraph was reached: a body that fails on its own (a reset, a chunked
  // body cut short, a malformed content coding) says so; the deadline and the
  // client going away (the signal) keep their own errors.
  const brokenBody = (
    cause: unknown,
    at: { readonly signal: AbortSignal; readonly subgraph: string; readonly status: number | null },
  ): unknown =>
    at.signal.aborted ? cause : new RouterError(
      "SUBGRAPH_ERROR",
      `The subgraph "${at.subgraph}" answered HTTP ${at.status}, but its body broke off or could not be decoded`,
      { cause, details: { serviceName: at.subgraph } },
    );
  const events = options.events;
  // How one request goes out: the HTTP/1.1 pool for a plain `http:` subgraph
  // (when the router fetches), else `fetch` with the subgraph's TLS client.
  const transportFor = (
    out: Outgoing,
    headers: HeadersInit,
    signal: AbortSignal,
  ): { readonly send: () => Promise<Response>; readonly pooled: boolean } => {
    const { url, body } = out;
    // A subgraph's redirect is not followed: it would re-send the query, its
    // variables and every forwarded header but Authorization to another host.
    // TLS settings matter to `https:` only: a plain `http:` subgraph keeps the HTTP/1.1 pool.
    const client = tlsClient(out.subgraph, url);
    const init: RequestInit = {
      method: "POST",
      headers,
      body,
      signal,
      redirect: "manual",
      ...(client === undefined ? {} : { client }),
    };
    const pool = options.fetch === undefined && options.http1 && url.startsWith("http://") &&
        client === undefined
      ? options.http1
      : null;
    if (pool === null) {
      return {
        send: () =>
          options.fetch === undefined ? fetch(url, init) : options.fetch(new Request(url, init)),
        pooled: false,
      };
    }
    return {
      send: () =>
        pool.post(url, {
          // A Headers object or the base list: both iterate name/value pairs.
          headers: headers as Iterable<[string, string]>,
          body,
          signal,
          idempotent: out.idempotent,
        }).catch((error) => {
          throw poolFailure(error, out.subgraph);
        }),
      pooled: true,
    };
  };
  async function once(
    out: Outgoing,
    signal: AbortSignal,
    tickets: Iterable<BudgetTicket> | null,
  ): Promise<SubgraphResponse> {
    const { now, hook } = out;
    let headers = (out.headers ?? BASE_HEADERS) as HeadersInit;
    if (hook?.headers) {
      const traced = new Headers(headers);
      for (const [name, value] of hook.headers) traced.set(name, value);
      headers = traced;
    }
    const { send, pooled } = transportFor(out, headers, signal);
    const resilience = options.resilience?.get(out.subgraph);
    const start = events ? performance.now() : 0;
    let status: number | null = null;
    let text: string;
    let firstByteNs: number | undefined;
    let responseHeaders: Headers;
    const breaker = resilience?.breaker ?? null;
    /** A success status whose verdict waits for the body (the breaker's). */
    let pending = false;
    /** The body broke off or could not be decoded (not the deadline, not the client). */
    let broke = false;
    try {
      const response = resilience === undefined ? await send() : await resilientFetch(send, {
        subgraph: out.subgraph,
        resilience,
        idempotent: out.idempotent,
        signal,
        verdictAfterBody: true,
        ...(events
          ? {
            onRetry: () => events.retried?.(out.subgraph),
            onCircuitOpen: () => events.circuitOpen?.(out.subgraph),
            onRetryBudgetExhausted: () => events.retryBudgetExhausted?.(out.subgraph),
          }
          : {}),
      });
      status = response.status;
      pending = breaker !== null && answered(status);
      responseHeaders = response.headers;
      firstByteNs = now?.();
      const whole = pooled ? wholeBody(response) : undefined;
      text = await readSubgraphBody(response, {
        limit,
        ...(whole === undefined ? {} : { whole }),
        tooLarge: tooLargeFor(out.subgraph),
        notUtf8: notUtf8For(out.subgraph),
        broken: (cause) => {
          broke = !signal.aborted;
          return brokenBody(cause, { signal, subgraph: out.subgraph, status });
        },
        ...(budget && tickets
          ? {
            charge: (n: number) => budget.charge(n, { tickets, signal }),
            reserve: (n: number) => budget.reserve(n, { tickets, signal }),
          }
          : {}),
      });
    } catch (error) {
      // A body that broke off, or never ended before the subgraph's deadline, is
      // a failure; one the client stopped waiting for (or over a limit) says nothing.
      if (pending && (broke || signal.reason instanceof SubgraphTimeout)) breaker!.record(false);
      // A breaker refusal was counted by `circuitOpen` (the last attempt sent nothing).
      if (!isCircuitOpen(error)) {
        events?.fetched(out.subgraph, {
          seconds: (performance.now() - start) / 1000,
          status,
          error,
        });
      }
      hook?.end(status, error, false);
      throw error;
    }
    if (pending) breaker!.record(true);
    events?.fetched(out.subgraph, {
      seconds: (performance.now() - start) / 1000,
      status,
      error: null,
    });
    hook?.end(status, null, false);
    return {
      status,
      headers: responseHeaders,
      body: text,
      deduplicated: false,
      // Filled by the first caller that parses it; shared by every caller of this response.
      parsed: {},
      ...(firstByteNs === undefined ? {} : { firstByteNs }),
    };
  }
  const track = deadlineGroups(options.timeoutMs, {
    reason: () => new SubgraphTimeout(),
  });
  // A fetch of its own (no sharing): its timeout, and the client's signal.
  async function unshared(out: Outgoing, sendOptions: SendOptions): Promise<SubgraphResponse> {
    const controller = new AbortController();
    const untrack = track(controller);
    const signal = sendOptions.signal;
    if (signal?.aborted) controller.abort(signal.reason);
    // A callback, not an event listener, on the request's path (cancellation.ts).
    const off = signal ? onAbort(signal, () => controller.abort(signal.reason)) : null;
    try {
      const ticket = sendOptions.ticket;
      return await once(out, controller.signal, ticket ? [ticket] : null);
    } finally {
      untrack();
      off?.();
    }
  }
  /** `tls.subgraphs`' client of a subgraph: it matters to `https:` only. */
  function tlsClient(subgraph: string, url: string): Deno.HttpClient | undefined {
    return options.httpClients === undefined || !url.startsWith("https:")
      ? undefined
      : clientFor(options.httpClients, subgraph);
  }
  /**
   * A fetch with extension stages: the request stage sees the headers the rules
   * made (and may change them and the body), the response stage the answer.
   */
  async function staged(
    subgraph: string,
    body: string,
    sendOptions: SendOptions & { readonly stages: SubgraphStages },
  ): Promise<SubgraphResponse> {
    const { stages, ...rest } = sendOptions;
    let options: SendOptions = rest;
    if (stages.request !== undefined) {
      // The headers are copied only when a stage reads them (then what it leaves is sent).
      const request = new StagedRequest(
        { subgraph, url: urlOf(subgraph), body },
        forwardedFor(subgraph, sendOptions) ?? BASE_HEADERS,
      );
      const pending = stages.request(request);
      if (pending) await pending;
      if (request.made !== null) options = { ...rest, stagedHeaders: [...request.made] };
      body = request.body;
    }
    const response = await client.send(subgraph, body, options);
    if (stages.response === undefined) return response;
    const answer = new StagedResponse(response, subgraph);
    const pending = stages.response(answer);
    if (pending) await pending;
    if (answer.copied === null && answer.body === response.body) return response;
    return {
      ...response,
      headers: answer.copied ?? response.headers,
      ...(answer.body === response.body ? {} : { body: answer.body, parsed: {} }),
    };
  }
  const client: SubgraphClient = {
    send(subgraph, body, sendOptions) {
      if (sendOptions.stages !== undefined) {
        return staged(subgraph, body, sendOptions as SendOptions & { stages: SubgraphStages });
      }
      const url = urlOf(subgraph);
      const headers = sendOptions.stagedHeaders ?? forwardedFor(subgraph, sendOptions);
      const hook = sendOptions.hooks?.fetch(subgraph);
      const out: Outgoing = {
        subgraph,
        url,
        body,
        headers,
        now: sendOptions.now,
        hook,
        idempotent: sendOptions.idempotent ?? false,
      };
      if (!options.singleFlight || sendOptions.unshared) return unshared(out, sendOptions);
      let key = `${url}\n${body}`;
      if (headers) {
        for (const [name, value] of headers) key += `\n${name}:${value}`;
      }
      let flight = inflight.get(key);
      const joined = flight !== undefined;
      if (flight === undefined) {
        const controller = new AbortController();
        const untrack = track(controller);
        const tickets = new Set<BudgetTicket>();
        const created: Flight = {
          promise: once(out, controller.signal, tickets),
          controller,
          waiters: 0,
          tickets,
        };
        const clear = () => {
          untrack();
          if (inflight.get(key) === created) inflight.delete(key);
        };
        created.promise.then(clear, clear);
        inflight.set(key, created);
        flight = created;
      }
      const current = flight;
      current.waiters++;
      if (joined) events?.shared(subgraph);
      const ticket = sendOptions.ticket;
      if (ticket) current.tickets.add(ticket);
      const result = joined
        ? current.promise.then((r) => {
          hook?.end(r.status, null, true);
          return { ...r, deduplicated: true };
        }, (error) => {
          hook?.end(null, error, true);
          throw error;
        })
        : current.promise;
      const signal = sendOptions.signal;
      if (signal === undefined) return result;
      // A shared fetch is cancelled only once every caller waiting on it is gone.
      const leave = () => {
        if (ticket) current.tickets.delete(ticket);
        current.waiters--;
        if (current.waiters > 0) return;
        if (inflight.get(key) === current) inflight.delete(key);
        current.controller.abort(signal.reason);
      };
      if (signal.aborted) {
        leave();
        result.catch(() => {});
        return Promise.reject(signal.reason);
      }
      return new Promise<SubgraphResponse>((resolve, reject) => {
        // A callback, not an event listener, on the request's path (cancellation.ts).
        const off = onAbort(signal, () => {
          leave();
          reject(signal.reason);
        });
        result.then((r) => {
          off();
          resolve(r);
        }, (error) => {
          off();
          reject(error);
        });
      });
    },
    async upload(subgraph, multipart, sendOptions) {
      const url = urlOf(subgraph);
      const tls = tlsClient(subgraph, url);
      const headers = new Headers(
        (forwardedFor(subgraph, sendOptions) ?? BASE_HEADERS) as HeadersInit,
      );
      headers.set("content-type", multipart.contentType);
      // The router checked the client's request for CSRF (multipart/form-data is a simple
      // type); a subgraph that checks too (Apollo Server's csrfPrevention) reads this header.
      headers.set("apollo-require-preflight", "true");
      const controller = new AbortController();
      const untrack = track(controller);
      const signal = sendOptions.signal;
      if (signal?.aborted) controller.abort(signal.reason);
      const off = signal ? onAbort(signal, () => controller.abort(signal.reason)) : null;
      const hook = sendOptions.hooks?.fetch(subgraph);
      const start = events ? performance.now() : 0;
      let status: number | null = null;
      try {
        const init: RequestInit = {
          method: "POST",
          headers,
          body: multipart.stream,
          signal: controller.signal,
          redirect: "manual",
          ...(tls === undefined ? {} : { client: tls }),
        };
        const response = options.fetch === undefined
          ? await fetch(url, init)
          : await options.fetch(new Request(url, init));
        status = response.status;
        const ticket = sendOptions.ticket;
        const text = await readSubgraphBody(response, {
          limit,
          tooLarge: tooLargeFor(subgraph),
          notUtf8: notUtf8For(subgraph),
          broken: (cause) =>
            brokenBody(cause, { signal: controller.signal, subgraph, status: response.status }),
          ...(budget && ticket
            ? {
              charge: (n: number) =>
                budget.charge(n, { tickets: [ticket], signal: controller.signal }),
              reserve: (n: number) =>
                budget.reserve(n, { tickets: [ticket], signal: controller.signal }),
            }
            : {}),
        });
        events?.fetched(subgraph, {
          seconds: (performance.now() - start) / 1000,
          status,
          error: null,
        });
        hook?.end(status, null, false);
        return { status, headers: response.headers, body: text, deduplicated: false, parsed: {} };
      } catch (error) {
        events?.fetched(subgraph, { seconds: (performance.now() - start) / 1000, status, error });
        hook?.end(status, error, false);
        throw error;
      } finally {
        untrack();
        off?.();
      }
    },
    singleFlight: options.singleFlight,
    describe(subgraph, body, clientHeaders) {
      return {
        method: "POST",
        url: urlOf(subgraph),
        headers: headersFor(subgraph, clientHeaders) ?? new Headers(BASE_HEADERS),
        body,
      };
    },
  };
  return client;
}

/** A subgraph request as a stage sees it: its headers copied on first read (a prototype getter). */
class StagedRequest implements StagedSubgraphRequest {
  readonly subgraph: string;
  readonly url: string;
  body: string;
  /** The headers a stage read (and may have changed); null: not read. */
  made: Headers | null = null;
  readonly #forwarded: readonly (readonly [string, string])[];

  constructor(
    request: { readonly subgraph: string; readonly url: string; readonly body: string },
    forwarded: readonly (readonly [string, string])[],
  ) {
    this.subgraph = request.subgraph;
    this.url = request.url;
    this.body = request.body;
    this.#forwarded = forwarded;
  }

  get headers(): Headers {
    return this.made ??= new Headers(this.#forwarded as [string, string][]);
  }
}

/** A subgraph answer as a stage sees it: its headers copied on first read. */
class StagedResponse implements StagedSubgraphResponse {
  readonly subgraph: string;
  readonly status: number;
  body: string;
  /** The headers a stage read (and may have changed); null: not read. */
  copied: Headers | null = null;
  readonly #headers: Headers;

  constructor(response: SubgraphResponse, subgraph: string) {
    this.subgraph = subgraph;
    this.status = response.status;
    this.body = response.body;
    this.#headers = response.headers;
  }

  get headers(): Headers {
    return this.copied ??= new Headers(this.#headers);
  }
}
