/**
 * Per-request telemetry: the HTTP edge opens a {@linkcode RequestScope} when a
 * request arrives and closes it with the response; facets add what only they
 * know (the operation) through the scope of their request; the engine reports
 * through {@linkcode Telemetry.engineEvents} (router-wide) and the scope's
 * hooks (per request). One `Telemetry` lives as long as the process: reloads
 * keep counting into the same registry.
 *
 * @module
 */
import type {
  CostReport,
  EngineEvents,
  EntityCacheEvents,
  ExecutionResult,
  FetchHook,
  PrepareResult,
  RequestHooks,
} from "../engine/mod.ts";
import type { Logger } from "../log/mod.ts";
import { accessLogRecord, knownErrorCode } from "./access_log.ts";
import { observeBody } from "./observe_body.ts";
import { cleanLabelValue, clientOf } from "./labels.ts";
import type { FetchOutcome, OperationOutcome, RouterMetrics } from "./metrics.ts";
import { operationHash } from "./operation_hash.ts";
import type { LiveHistory } from "./live_view.ts";
import type { RequestSpan, Tracer } from "./tracing.ts";

/** Longest operation name put into an access log line or a span (longer ones are cut, with `…`). */
export const MAX_OPERATION_NAME_LENGTH = 256;

/** What the edge tells telemetry about the routes of the current state. */
export interface RouteTable {
  /** `graphql_path`. */
  readonly graphql: string;
  /** `mcp.path`, or null when MCP is off. */
  readonly mcp: string | null;
  /** `/<package>.<Service>/`, or null when Connect is off. */
  readonly connectPrefix: string | null;
  /** Connect RPC method names (the only values of the `method` label). */
  readonly connectMethods: ReadonlySet<string>;
}

/** Which facet answered, for the per-facet series. */
type Facet = "graphql" | "mcp" | "connect" | "other";

/** The operation a facet ran, as the access log and the span show it. */
interface OperationInfo {
  readonly name: string | null;
  readonly type: string | null;
  readonly hash: string | null;
}

/** One request's telemetry, from arrival to the last byte of its answer. */
export interface RequestScope {
  readonly requestId: string;
  readonly method: string;
  /**
   * The path as logged: the route, with the Connect method when it is a known
   * one; never a raw client path (it could carry anything).
   */
  readonly path: string;
  /** `http.route`: a route template, never a raw client path. */
  readonly route: string;
  readonly facet: Facet;
  /** The Connect method label (a known RPC name or `unknown`); null off Connect. */
  readonly connectMethod: string | null;
  /** `performance.now()` at arrival. */
  readonly startMs: number;
  /**
   * Whether this request is access-logged (`access_logs.enabled` when it
   * arrived): it alone needs the fetch count, the operation hash and the body size.
   */
  readonly logged: boolean;
  /** The client name (`graphql-client-name`), cleaned and capped, or null (always null unlogged). */
  readonly clientName: string | null;
  /** The raw client name and version headers once read (null: not read yet). */
  client: { readonly name: string | null; readonly version: string | null } | null;
  /** Request body bytes (after the body limit). */
  bytesIn: number;
  /** The MCP request body (MCP POSTs only), for the method and tool labels. */
  mcpBody: Uint8Array | null;
  operation: OperationInfo | null;
  /** Subgraph fetches of this request (shared ones included). */
  fetches: number;
  /** Entity cache lookups of this request's fetches, by outcome (`entity_cache`). */
  cache?: { hit: number; partial: number; miss: number };
  /** Demand control's figures of this request's operation; null when not measured. */
  cost: CostReport | null;
  /**
   * Engine hooks of this request; null when nothing listens (metrics alone:
   * the engine then skips the hook calls and their clock reads).
   */
  readonly hooks: RequestHooks | null;
  /** The request's span, when traced. */
  readonly span: RequestSpan | null;
}

/** Options for {@linkcode createTelemetry}. */
export interface TelemetryOptions {
  /** The metrics registry, or null when metrics are off. */
  readonly metrics: RouterMetrics | null;
  /** Where access log lines go. */
  readonly log: () => Logger;
  /** Whether to write one access log line per request (`access_logs.enabled`, read per request). */
  readonly accessLogs: () => boolean;
  /** The tracer, or null when tracing is off. */
  readonly tracer?: Tracer | null;
  /** Snapshots for the playground's Router page, or null. */
  readonly liveHistory?: LiveHistory | null;
}

/** Telemetry of a router process. */
export interface Telemetry {
  /** The metrics, or null when off. */
  readonly metrics: RouterMetrics | null;
  /** The tracer, or null when off. */
  readonly tracer: Tracer | null;
  /** Snapshots for the playground's Router page, or null. */
  readonly liveHistory: LiveHistory | null;
  /** Router-wide engine events (pass to `createEngine`), or null when metrics are off. */
  readonly engineEvents: EngineEvents | null;
  /** The entity cache's metric events (null: metrics off). */
  readonly entityCacheEvents: EntityCacheEvents | null;
  /**
   * A request arrived: opens its scope (and span).
   * @param request The request as received.
   * @param info Its id, its path and the routes of the current state.
   * @returns The scope; null when nothing is recorded (no metrics, tracer or access log).
   */
  begin(
    request: Request,
    info: { readonly requestId: string; readonly routes: RouteTable; readonly pathname: string },
  ): RequestScope | null;
  /**
   * The request the facets will see (body read): binds it to its scope.
   * @param scope The scope.
   * @param request The facet's request.
   * @param body Its body bytes, or null.
   */
  bind(scope: RequestScope, request: Request, body: Uint8Array | null): void;
  /** The scope of a facet's request, or undefined. */
  scopeOf(request: Request): RequestScope | undefined;
  /**
   * A facet ran (or refused) a GraphQL operation.
   * @param request The facet's request.
   * @param info The prepare result, the response, and the query text.
   */
  operation(request: Request, info: {
    readonly prepared: PrepareResult | null;
    readonly result: ExecutionResult;
    readonly query: string | null;
    readonly operationName?: string | null | undefined;
  }): void;
  /**
   * The request was answered: records its metrics, closes its span, and
   * (with access logs) logs it when the last byte of the body is sent.
   * Synchronous unless there is something to wait for (an access-logged
   * body, a Connect error code), so a request with only metrics on pays for
   * no promise.
   * @param scope The scope.
   * @param response The response.
   * @returns The response to send (with access logs on and no known body size, a copy).
   */
  end(scope: RequestScope, response: Response): Response | Promise<Response>;
}

const NO_HOOK: FetchHook = { headers: null, end() {} };

/**
 * Where a facet's request keeps its scope: a property of the request itself,
 * not a `WeakMap` keyed by requests. A request holds a large object graph
 * (headers, body, signal), and as a WeakMap key it made every request cost
 * 1 to 3 µs more in garbage collection (ephemerons), a few % of a request.
 */
const SCOPE: unique symbol = Symbol("gw.telemetry.scope");

/** A facet's request, bound to its scope by {@linkcode Telemetry.bind}. */
type ScopedRequest = Request & { [SCOPE]?: RequestScope };

/**
 * Classifies a subgraph fetch for `gw_router_subgraph_fetches_total`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fetchOutcome } from "./telemetry.ts";
 * assert.equal(fetchOutcome(200, null), "success");
 * assert.equal(fetchOutcome(503, null), "http_error");
 * assert.equal(fetchOutcome(null, new DOMException("late", "TimeoutError")), "timeout");
 * assert.equal(fetchOutcome(null, new TypeError("connection refused")), "network_error");
 * ```
 * @param status The HTTP status, or null.
 * @param error The error, or null.
 * @returns The outcome.
 */
export function fetchOutcome(status: number | null, error: unknown): FetchOutcome {
  if (error !== null && error !== undefined) {
    const name = (error as { name?: unknown }).name;
    if (name === "TimeoutError") return "timeout";
    if (name === "AbortError") return "aborted";
    return status === null ? "network_error" : "http_error";
  }
  return status !== null && status >= 200 && status < 300 ? "success" : "http_error";
}

/**
 * Classifies a GraphQL response.
 * @param result The response.
 * @returns `request_error` (no `data`), `graphql_error` (errors with data) or `success`.
 */
function operationOutcome(result: ExecutionResult): OperationOutcome {
  if (!("data" in result) || result.data === undefined) return "request_error";
  return result.errors && result.errors.length > 0 ? "graphql_error" : "success";
}

function routeOf(pathname: string, routes: RouteTable): { route: string; facet: Facet } {
  if (pathname === routes.graphql) return { route: pathname, facet: "graphql" };
  if (routes.mcp !== null && pathname === routes.mcp) return { route: pathname, facet: "mcp" };
  if (routes.connectPrefix !== null && pathname.startsWith(routes.connectPrefix)) {
    return { route: `${routes.connectPrefix}{method}`, facet: "connect" };
  }
  if (pathname === "/health/ready" || pathname === "/health/live") {
    return { route: pathname, facet: "other" };
  }
  if (pathname.startsWith("/.well-known/oauth-protected-resource")) {
    return { route: "/.well-known/oauth-protected-resource", facet: "other" };
  }
  if (pathname === "/" || pathname === "/playground" || pathname.startsWith("/playground/")) {
    return { route: "/playground", facet: "other" };
  }
  return { route: "unmatched", facet: "other" };
}

const DECODER = new TextDecoder();

function mcpLabels(body: Uint8Array | null): { method: string; tool: string } {
  if (body === null) return { method: "unknown", tool: "" };
  try {
    const message = JSON.parse(DECODER.decode(body));
    const method = typeof message?.method === "string" ? message.method : "unknown";
    const name = message?.params?.name;
    return { method, tool: method === "tools/call" && typeof name === "string" ? name : "" };
  } catch {
    return { method: "unknown", tool: "" };
  }
}

function mcpOutcome(status: number): string {
  if (status === 401) return "unauthorized";
  if (status === 403) return "forbidden";
  return status < 400 ? "success" : "error";
}

/**
 * Creates the process's telemetry.
 * @param options Metrics, logger, access logs, tracer.
 * @returns The telemetry.
 */
export function createTelemetry(options: TelemetryOptions): Telemetry {
  const { metrics } = options;
  const tracer = options.tracer ?? null;
  const engineEvents: EngineEvents | null = metrics === null ? null : {
    cache: (cache, hit) => metrics.cache(cache, hit),
    fetched(subgraph, { seconds, status, error }) {
      metrics.subgraphFetch({ subgraph, seconds, status, outcome: fetchOutcome(status, error) });
    },
    shared: (subgraph) => metrics.singleFlightShared(subgraph),
    retried: (subgraph) => metrics.subgraphRetry(subgraph),
    part: (kind) => metrics.incrementalPart(kind),
    retryBudgetExhausted: (subgraph) => metrics.retryBudgetExhausted(subgraph),
    circuitOpen: (subgraph) => metrics.circuitBreakerRejected(subgraph),
    cost: (report) => metrics.cost?.(report),
  };

  function hooksFor(
    scope: {
      fetches: number;
      cost: CostReport | null;
      cache?: { hit: number; partial: number; miss: number };
    },
    span: RequestSpan | null,
  ): RequestHooks {
    return {
      cached(outcome) {
        (scope.cache ??= { hit: 0, partial: 0, miss: 0 })[outcome]++;
      },
      fetch(subgraph) {
        scope.fetches++;
        return span?.fetch(subgraph) ?? NO_HOOK;
      },
      planned(cached, startMs, endMs) {
        span?.stage("plan", startMs, endMs, { "gw.plan.cached": cached });
      },
      cost(report) {
        scope.cost = report;
        span?.attributes({
          "cost.result": report.result,
          ...(report.estimated === null ? {} : { "cost.estimated": report.estimated }),
          ...(report.actual === null ? {} : { "cost.actual": report.actual }),
        });
      },
    };
  }

  function finish(scope: RequestScope, status: number, bytesOut: number): void {
    options.log().info(
      "request",
      accessLogRecord(scope, {
        status,
        durationMs: performance.now() - scope.startMs,
        bytesOut,
      }),
    );
  }

  return {
    metrics,
    tracer,
    liveHistory: options.liveHistory ?? null,
    engineEvents,
    entityCacheEvents: metrics === null ? null : {
      lookup: (subgraph, type, outcome) => metrics.entityCacheLookup(subgraph, type, outcome),
      stored: (subgraph, type, bytes) => metrics.entityCacheStored(subgraph, type, bytes),
      skipped: (subgraph, type, reason) => metrics.entityCacheSkipped(subgraph, type, reason),
    },
    begin(request, { requestId, routes, pathname }) {
      // Read once: a reload that turns access logs on or off mid-request
      // leaves this request as it began (no log line with half its fields).
      const logged = options.accessLogs();
      if (metrics === null && tracer === null && !logged) return null;
      const { route, facet } = routeOf(pathname, routes);
      metrics?.requestStarted(request.method);
      const span = tracer?.startRequest(request, { route, requestId }) ?? null;
      // Headers are read only for the access log here; metrics read them in
      // `operation`, for GraphQL operations alone (each `get` has a cost).
      const client = logged ? clientOf(request.headers) : null;
      const connectMethod = facet === "connect" && routes.connectPrefix !== null
        ? connectMethodLabel(pathname.slice(routes.connectPrefix.length), routes)
        : null;
      const scope: RequestScope = {
        requestId,
        method: request.method,
        path: connectMethod === null ? route : `${routes.connectPrefix}${connectMethod}`,
        route,
        facet,
        connectMethod,
        startMs: performance.now(),
        logged,
        clientName: client?.name == null ? null : cleanLabelValue(client.name),
        client,
        bytesIn: 0,
        mcpBody: null,
        operation: null,
        fetches: 0,
        cost: null,
        hooks: null,
        span,
      };
      // Only the access log counts fetches and only a span times them.
      if (logged || span !== null) {
        (scope as { hooks: RequestHooks | null }).hooks = hooksFor(scope, span);
      }
      return scope;
    },
    bind(scope, request, body) {
      scope.bytesIn = body?.byteLength ?? 0;
      if (scope.facet === "mcp" && request.method === "POST") scope.mcpBody = body;
      (request as ScopedRequest)[SCOPE] = scope;
    },
    scopeOf(request) {
      return (request as ScopedRequest)[SCOPE];
    },
    operation(request, { prepared, result, query, operationName }) {
      const scope = (request as ScopedRequest)[SCOPE];
      const ok = prepared !== null && prepared.ok;
      const raw = ok ? prepared.operation.name : operationName ?? null;
      // The client's words: bounded in the log line and the span (a name can be megabytes).
      const name = raw !== null && raw.length > MAX_OPERATION_NAME_LENGTH
        ? `${raw.slice(0, MAX_OPERATION_NAME_LENGTH)}…`
        : raw;
      const type = ok ? prepared.operation.kind : null;
      // The hash is the access log's alone (it walks the whole query text).
      if (scope?.logged) {
        scope.operation = { name, type, hash: query === null ? null : operationHash(query) };
      }
      scope?.span?.operation({ name, type });
      if (metrics === null) return;
      let client = scope?.client ?? null;
      if (client === null) {
        client = clientOf(request.headers);
        if (scope) scope.client = client;
      }
      const errors = result.errors;
      metrics.operation({
        name,
        type,
        outcome: operationOutcome(result),
        errorCodes: errors === undefined || errors.length === 0 ? NO_CODES : errors.map(codeOf),
        clientName: client.name,
        clientVersion: client.version,
      });
    },
    end(scope, response) {
      const status = response.status;
      const mcp = scope.facet === "mcp" && scope.method === "POST"
        ? mcpLabels(scope.mcpBody)
        : null;
      if (metrics !== null) {
        metrics.requestFinished({
          method: scope.method,
          route: scope.route,
          status,
          seconds: (performance.now() - scope.startMs) / 1000,
        });
        if (mcp !== null) metrics.mcp({ ...mcp, outcome: mcpOutcome(status) });
        else if (scope.facet === "connect") {
          const method = scope.connectMethod ?? "unknown";
          // The code of an error answer is the one its builder left on it: a
          // wrapper never reads a body (streams must pass through untouched).
          const code = status === 200 ? "ok" : knownErrorCode(response) ?? "unknown";
          metrics.connect({ method, code });
        }
      }
      return closeScope(scope, response, mcp);
    },
  };

  /** Ends the span and writes the access log line (see {@linkcode logged}). */
  function closeScope(
    scope: RequestScope,
    response: Response,
    mcp: { method: string; tool: string } | null,
  ): Response {
    if (scope.span) {
      if (mcp !== null) {
        scope.span.attributes({
          "mcp.method.name": mcp.method,
          ...(mcp.tool === "" ? {} : { "gen_ai.tool.name": mcp.tool }),
        });
      } else if (scope.connectMethod !== null) {
        scope.span.attributes({ "rpc.system": "connect_rpc", "rpc.method": scope.connectMethod });
      }
      scope.span.end(response.status);
    }
    return scope.logged ? logged(scope, response) : response;
  }

  /**
   * Logs the access line of a request when its body ended: the body passes
   * through as it is produced (see {@linkcode observeBody}), never read here,
   * so multipart, `@defer`, SSE and Connect streams reach the client at once.
   */
  function logged(scope: RequestScope, response: Response): Response {
    const status = response.status;
    return observeBody(response, ({ bytes }) => finish(scope, status, bytes));
  }
}

function connectMethodLabel(raw: string, routes: RouteTable): string {
  return routes.connectMethods.has(raw) ? raw : "unknown";
}

/** `errorCodes` of a response without errors (shared: nothing to allocate). */
const NO_CODES: readonly string[] = Object.freeze([]);

function codeOf(error: { readonly extensions?: { readonly [key: string]: unknown } }): string {
  const code = error.extensions?.code;
  return typeof code === "string" ? code : "UNKNOWN";
}
