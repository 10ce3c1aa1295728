/**
 * The subgraph HTTP client: JSON POST with propagated headers, a per-request
 * timeout, and single flight (identical in-flight requests share one response).
 *
 * @module
 */
import type { SubgraphInfo } from "../supergraph/types.ts";
import type { SubgraphResponse } from "./execute.ts";
import type { HeaderPropagator } from "./headers.ts";
import type { EngineEvents, FetchHook, FetchRequestRecord, RequestHooks } from "./types.ts";
import { RouterError } from "../errors.ts";
import { readLimited } from "../limited_body.ts";

/** The headers of every subgraph request (header rules add to them). */
const BASE_HEADERS: [string, string][] = [
  ["content-type", "application/json"],
  ["accept", "application/graphql-response+json, application/json"],
];

/** Granularity of subgraph request timeouts, ms (see `deadlineTracker`). */
const TIMEOUT_SLACK_MS = 50;

/**
 * Times out fetches in groups: the fetches started within one TIMEOUT_SLACK_MS
 * window share one timer, which aborts those still running with a
 * `TimeoutError` after `timeoutMs` (+ up to the slack). A finished fetch leaves
 * its group at once, so nothing of it outlives the fetch: a timer or a
 * dependent `AbortSignal` per fetch would keep it for the whole timeout (30 s),
 * which under load is most of the router's old-generation heap.
 * @param timeoutMs The subgraph request timeout.
 * @returns `track(controller)`, which returns the function that untracks it.
 */
function deadlineTracker(timeoutMs: number): (controller: AbortController) => () => void {
  let group: { readonly started: Set<AbortController>; readonly timer: number } | null = null;
  let groupEnd = 0;
  return (controller) => {
    const now = performance.now();
    let current = group;
    if (current === null || now >= groupEnd) {
      const started = new Set<AbortController>();
      // Number(): Deno's timer id (the npm packages' Node typings say `Timeout`).
      const timer = Number(setTimeout(() => {
        const reason = new DOMException("The subgraph request timed out", "TimeoutError");
        for (const c of started) c.abort(reason);
        started.clear();
      }, timeoutMs + TIMEOUT_SLACK_MS));
      current = { started, timer };
      group = current;
      groupEnd = now + TIMEOUT_SLACK_MS;
    }
    const { started, timer } = current;
    started.add(controller);
    // The timer keeps the process alive only while a fetch of its group runs.
    if (started.size === 1) Deno.refTimer(timer);
    return () => {
      if (started.delete(controller) && started.size === 0) Deno.unrefTimer(timer);
    };
  };
}

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
  readonly singleFlight: boolean;
  readonly timeoutMs: number;
  /** Largest subgraph response body read, bytes (`engine.max_subgraph_response_bytes`). */
  readonly maxResponseBytes?: number;
  /** Fetch and single-flight events (metrics). */
  readonly events?: EngineEvents;
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
}

/** The client. */
export interface SubgraphClient {
  /** Sends a JSON body to a subgraph. */
  send(subgraph: string, body: string, options: SendOptions): Promise<SubgraphResponse>;
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
  readonly headers: Headers | null;
  readonly now: (() => number) | undefined;
  /** The telemetry of the request that sends it. */
  readonly hook: FetchHook | undefined;
}

/** One shared in-flight subgraph request. */
interface Flight {
  readonly promise: Promise<SubgraphResponse>;
  readonly controller: AbortController;
  /** Callers still waiting (an aborted caller leaves). */
  waiters: number;
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
  const urlOf = (subgraph: string): string => {
    const info = options.subgraphs.get(subgraph);
    if (!info) throw new TypeError(`Unknown subgraph "${subgraph}"`);
    return info.url;
  };
  const limit = options.maxResponseBytes ?? Infinity;
  const decoder = new TextDecoder();
  // A declared length within the limit takes the fast native read (Deno holds
  // the body to its Content-Length); otherwise the bytes are counted as they come.
  async function readText(response: Response, subgraph: string): Promise<string> {
    const declared = response.headers.get("content-length");
    if (declared !== null && Number(declared) <= limit) return await response.text();
    const tooLarge = () =>
      new RouterError(
        "SUBGRAPH_ERROR",
        `The subgraph "${subgraph}" answered more than ${limit} bytes (engine.max_subgraph_response_bytes)`,
        { details: { serviceName: subgraph, limit } },
      );
    const bytes = await readLimited(response, limit, {
      tooLarge,
      broken: (cause) => cause instanceof Error ? cause : new Error(String(cause)),
    });
    return bytes === null ? "" : decoder.decode(bytes);
  }
  const events = options.events;
  async function once(out: Outgoing, signal: AbortSignal): Promise<SubgraphResponse> {
    const { url, body, now, hook } = out;
    let headers: HeadersInit = out.headers ?? BASE_HEADERS;
    if (hook?.headers) {
      const traced = new Headers(headers);
      for (const [name, value] of hook.headers) traced.set(name, value);
      headers = traced;
    }
    const init: RequestInit = { method: "POST", headers, body, signal };
    const start = events ? performance.now() : 0;
    let status: number | null = null;
    let text: string;
    let firstByteNs: number | undefined;
    let responseHeaders: Headers;
    try {
      const response = await (options.fetch === undefined
        ? fetch(url, init)
        : options.fetch(new Request(url, init)));
      status = response.status;
      responseHeaders = response.headers;
      firstByteNs = now?.();
      text = await readText(response, out.subgraph);
    } catch (error) {
      events?.fetched(out.subgraph, { seconds: (performance.now() - start) / 1000, status, error });
      hook?.end(status, error, false);
      throw error;
    }
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
  const track = deadlineTracker(options.timeoutMs);
  // A fetch of its own (no sharing): its timeout, and the client's signal.
  async function unshared(out: Outgoing, sendOptions: SendOptions): Promise<SubgraphResponse> {
    const controller = new AbortController();
    const untrack = track(controller);
    const signal = sendOptions.signal;
    const onAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    try {
      return await once(out, controller.signal);
    } finally {
      untrack();
      signal?.removeEventListener("abort", onAbort);
    }
  }
  return {
    send(subgraph, body, sendOptions) {
      const url = urlOf(subgraph);
      const headers = headersFor(subgraph, sendOptions.headers);
      const hook = sendOptions.hooks?.fetch(subgraph);
      const out: Outgoing = { subgraph, url, body, headers, now: sendOptions.now, hook };
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
        const created: Flight = {
          promise: once(out, controller.signal),
          controller,
          waiters: 0,
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
        const onAbort = () => {
          leave();
          reject(signal.reason);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        result.then((r) => {
          signal.removeEventListener("abort", onAbort);
          resolve(r);
        }, (error) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        });
      });
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
}
