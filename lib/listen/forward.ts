/**
 * The supervisor's answer path (supervised mode, `lib/cli/workers.ts`): the
 * supervising isolate owns the client sockets and forwards each request to a
 * serving isolate over that isolate's private unix socket. So a request never
 * depends on an isolate's survival for its answer: when the isolate it went to
 * ends (it exited, or the watchdog ended it while its event loop was blocked),
 * the supervisor answers 503 `ISOLATE_ENDED` at once, in the shape of the facet
 * the request was for; once the shutdown grace is over it answers 503
 * `SHUTTING_DOWN`; an isolate that loses a request without ending is bounded by
 * a deadline (504 `GATEWAY_TIMEOUT`). Readiness turns 503 while an isolate is
 * missing or the router drains.
 *
 * Everything else (limits, admission, authentication, every facet) stays in
 * the serving isolate, which sees the request as the client sent it (URL and
 * headers but the hop-by-hop ones).
 *
 * @module
 */
import { PEER_HEADER, peerAddress, spokenUrl } from "../request/mod.ts";
import { Cancellation, onAbort } from "../cancellation.ts";
import { RouterError } from "../errors.ts";
import { errorResponse } from "../http/errors.ts";
import { connectEdgeError, mcpEdgeError } from "../http/facet_errors.ts";
import type { Logger } from "../log/mod.ts";

/** Liveness and readiness paths (as `lib/http/handler.ts` serves them). */
const HEALTH_LIVE_PATH = "/health/live";
const HEALTH_READY_PATH = "/health/ready";

/** Hop-by-hop headers (RFC 9110 §7.6.1): one connection's, never forwarded. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** One serving isolate, as the supervisor forwards to it. */
export interface Upstream {
  /** Which isolate (for logs). */
  readonly index: number;
  /** Sends a request to the isolate's listener (a client bound to its unix socket). */
  readonly fetch: (url: string, init: RequestInit) => Promise<Response>;
  /**
   * Aborted when the isolate ended or was ended: its requests still waiting
   * for their answer are answered 503 `ISOLATE_ENDED` at once.
   */
  readonly ended: AbortSignal;
  /** Requests forwarded to it whose answer (status and headers) has not come yet. */
  waiting: number;
}

/** Where the facets live: a refusal is answered in the shape of the facet asked. */
export interface FacetPaths {
  /** The MCP endpoint, or null when MCP is off. */
  readonly mcp: string | null;
  /** The Connect RPC prefix (`/<package>.<Service>/`), or null when Connect is off. */
  readonly connectPrefix: string | null;
}

/** Options for {@linkcode createForwarder}. */
export interface ForwarderOptions {
  /** The isolates that serve now (an ended one is left out by the caller). */
  readonly upstreams: () => readonly Upstream[];
  /** True while every configured isolate serves (readiness). */
  readonly complete: () => boolean;
  /** True once shutdown began: readiness 503, `Connection: close` on every answer. */
  readonly draining: () => boolean;
  /** Aborted when the shutdown grace is over: requests still waiting get 503 `SHUTTING_DOWN`. */
  readonly stop: AbortSignal;
  /**
   * The longest wait for an isolate's answer to start, ms (the isolate's own
   * `traffic_shaping.router.request_timeout` answers first; this catches a
   * request an isolate lost).
   */
  readonly timeoutMs: number;
  /** The facets' paths now (they change with a reload). */
  readonly paths: () => FacetPaths;
  /** Where unexpected failures are logged. */
  readonly log?: Logger;
}

/**
 * The supervisor's request handler: forwards to the least busy serving
 * isolate and answers for it when it cannot.
 *
 * @example No isolate serves yet: readiness and requests get 503
 * ```ts
 * import assert from "node:assert/strict";
 * import { createForwarder } from "./forward.ts";
 * const handle = createForwarder({
 *   upstreams: () => [],
 *   complete: () => false,
 *   draining: () => false,
 *   stop: new AbortController().signal,
 *   timeoutMs: 1000,
 *   paths: () => ({ mcp: null, connectPrefix: null }),
 * });
 * assert.equal((await handle(new Request("http://r/health/live"))).status, 200);
 * assert.equal((await handle(new Request("http://r/health/ready"))).status, 503);
 * const response = await handle(new Request("http://r/graphql", { method: "POST" }));
 * assert.equal(response.status, 503);
 * assert.equal((await response.json()).errors[0].extensions.code, "ISOLATE_ENDED");
 * ```
 * @param options The isolates, the router's state, the deadline.
 * @returns The handler for the supervisor's `Deno.serve`.
 */
export function createForwarder(
  options: ForwarderOptions,
): (request: Request, info?: Deno.ServeHandlerInfo) => Promise<Response> {
  let turn = 0;
  function pick(): Upstream | null {
    const all = options.upstreams();
    let best: Upstream | null = null;
    // Least waiting first; ties rotate, so an idle router spreads its requests.
    for (let i = 0; i < all.length; i++) {
      const candidate = all[(turn + i) % all.length]!;
      if (candidate.ended.aborted) continue;
      if (best === null || candidate.waiting < best.waiting) best = candidate;
    }
    turn++;
    return best;
  }
  return async function forward(
    request: Request,
    info?: Deno.ServeHandlerInfo,
  ): Promise<Response> {
    const draining = options.draining();
    const path = pathOf(request.url);
    if (path === HEALTH_LIVE_PATH) return closing(Response.json({ status: "live" }), draining);
    if (path === HEALTH_READY_PATH && (draining || !options.complete())) {
      const status = draining ? "draining" : "restarting";
      return closing(Response.json({ status }, { status: 503 }), draining);
    }
    const refuse = (error: RouterError): Response =>
      closing(refusal(error, path, options.paths()), options.draining());
    if (options.stop.aborted) return refuse(shuttingDown());
    const upstream = pick();
    if (upstream === null) {
      return refuse(
        new RouterError("ISOLATE_ENDED", "No serving isolate is running; send the request again", {
          details: { retry_after: 1 },
        }),
      );
    }
    const controller = new AbortController();
    let why: RouterError | null = null;
    const end = (error: RouterError | null) => {
      why ??= error;
      controller.abort(error ?? request.signal.reason);
    };
    const offEnded = onAbort(upstream.ended, () => end(isolateEnded(upstream)));
    const offStop = onAbort(options.stop, () => end(shuttingDown()));
    const offClient = onAbort(request.signal, () => end(null));
    const timer = setTimeout(
      () =>
        end(
          new RouterError(
            "GATEWAY_TIMEOUT",
            `The serving isolate did not answer in ${options.timeoutMs} ms`,
          ),
        ),
      options.timeoutMs,
    );
    upstream.waiting++;
    try {
      const hasBody = request.body !== null && request.method !== "GET" &&
        request.method !== "HEAD";
      // The connection guard's relay reaches this server over a unix socket too.
      const answer = await upstream.fetch(spokenUrl(request.url), {
        method: request.method,
        headers: forwardedHeaders(request.headers, peerAddress(info?.remoteAddr, request)),
        ...(hasBody ? { body: request.body } : {}),
        redirect: "manual",
        signal: controller.signal,
      });
      return new Response(answer.body, {
        status: answer.status,
        statusText: answer.statusText,
        headers: answeredHeaders(answer.headers, options.draining()),
      });
    } catch (error) {
      // The isolate's socket closed before the ended signal reached us: it
      // ended, or (draining) it stopped before this request reached it.
      const reason = why ??
        (request.signal.aborted
          ? null
          : options.draining()
          ? shuttingDown()
          : isolateEnded(upstream));
      if (reason === null) return new Response(null, { status: 499 });
      if (why === null) {
        options.log?.warn("A serving isolate's answer failed", {
          worker: upstream.index,
          error: String(error),
        });
      }
      return refuse(reason);
    } finally {
      upstream.waiting--;
      clearTimeout(timer);
      offEnded();
      offStop();
      offClient();
    }
  };
}

function pathOf(url: string): string {
  // `http://host[:port]/path?query`: the path starts at the first "/" after "//".
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const query = url.indexOf("?", start);
  return url.slice(start, query < 0 ? url.length : query);
}

function isolateEnded(upstream: Upstream): RouterError {
  return new RouterError(
    "ISOLATE_ENDED",
    "The serving isolate running this request ended before it answered; it may or may not have run",
    { details: { retry_after: 1, worker: upstream.index } },
  );
}

function shuttingDown(): RouterError {
  return new RouterError(
    "SHUTTING_DOWN",
    "The router is shutting down and the request did not finish in time",
    { details: { retry_after: 1 } },
  );
}

/** A refusal in the shape of the facet the path belongs to. */
function refusal(error: RouterError, path: string, paths: FacetPaths): Response {
  if (paths.connectPrefix !== null && path.startsWith(paths.connectPrefix)) {
    return connectEdgeError(error, {});
  }
  if (paths.mcp !== null && path === paths.mcp) return mcpEdgeError(error, {});
  return errorResponse(error);
}

function closing(response: Response, draining: boolean): Response {
  if (draining) response.headers.set("connection", "close");
  return response;
}

function forwardedHeaders(headers: Headers, peer: string | null): Headers {
  const out = new Headers();
  for (const [name, value] of headers) {
    // The peer's address is the forwarder's to say (a client's own is dropped).
    if (name === PEER_HEADER) continue;
    // The host is the URL's. No content coding: Deno's fetch would decode an
    // encoded answer but keep its Content-Encoding (so the playground, the one
    // facet that compresses, is sent uncompressed here).
    if (HOP_BY_HOP.has(name) || name === "host" || name === "accept-encoding") continue;
    out.append(name, value);
  }
  out.set("accept-encoding", "identity");
  if (peer !== null) out.set(PEER_HEADER, peer);
  return out;
}

function answeredHeaders(headers: Headers, draining: boolean): Headers {
  const out = new Headers();
  for (const [name, value] of headers) {
    if (!HOP_BY_HOP.has(name)) out.append(name, value);
  }
  if (draining) out.set("connection", "close");
  return out;
}

/** A serving isolate's listener as the supervisor holds it. */
export interface UnixUpstream {
  /** What the forwarder sends requests to. */
  readonly upstream: Upstream;
  /**
   * Takes it out of service for good: requests still waiting get 503
   * `ISOLATE_ENDED` at once and its connections close (idempotent).
   */
  end(): void;
  /** True once {@linkcode UnixUpstream.end} ran. */
  readonly ended: boolean;
}

/**
 * An {@linkcode Upstream} for an isolate listening on a unix socket: its own
 * HTTP client, bound to `path`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unixUpstream } from "./forward.ts";
 * const isolate = unixUpstream("/tmp/gw-router-doc.sock", { index: 0 });
 * assert.equal(isolate.upstream.waiting, 0);
 * isolate.end();
 * assert.ok(isolate.upstream.ended.aborted);
 * ```
 * @param path The isolate's unix socket.
 * @param options Which isolate (for logs).
 * @returns The upstream and its end.
 */
export function unixUpstream(path: string, options: { readonly index: number }): UnixUpstream {
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path } });
  const ended = new Cancellation();
  const upstream: Upstream = {
    index: options.index,
    fetch: (url, init) => fetch(url, { ...init, client }),
    ended: ended.signal,
    waiting: 0,
  };
  return {
    upstream,
    get ended() {
      return ended.signal.aborted;
    },
    end() {
      if (ended.signal.aborted) return;
      ended.abort();
      client.close();
    },
  };
}
