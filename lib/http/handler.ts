/**
 * The `Deno.serve` handler: CORS, body limit, a route table compiled per
 * state, facets, and {@linkcode errorResponse} as the one error exit.
 *
 * Over 600 lines: the edge's steps in order (routes, CORS, rate limits, the
 * body read before an admission slot, the admitted and unadmitted paths, the
 * router response), sharing one exchange; each function ≤ 120 lines.
 *
 * @module
 */
import { handleEntityCacheInvalidation } from "./entity_cache_invalidation.ts";
import { type ConnectDeps, handleConnect } from "../connect/mod.ts";
import { connectSubscribeOf } from "./subscriptions.ts";
import { clipForMessage, RouterError } from "../errors.ts";
import type { Logger } from "../log/mod.ts";
import { handleMcp, handleProtectedResourceMetadata } from "../mcp/mod.ts";
import { handlePlayground, wantsPlayground } from "../playground/mod.ts";
import type { RouterState } from "../state/mod.ts";
// The telemetry modules themselves, not `telemetry/mod.ts`: that would load
// prom-client and the OpenTelemetry SDK whether configured or not.
import { acceptRequestId, peerAddress, REQUEST_ID_HEADER, withContext } from "../request/mod.ts";
import { handleLiveView, LIVE_VIEW_PATHS } from "../telemetry/live_view_page.ts";
import type { RequestScope, RouteTable } from "../telemetry/mod.ts";
import { type DecodedBody, readBodyDecoded } from "./body.ts";
import { deadlineGroups } from "../deadline_groups.ts";
import { readFailure, RequestTimeout, runAdmitted } from "./admit.ts";
import { Cancellation } from "../cancellation.ts";
import { compileCors, type CorsPolicy } from "./cors.ts";
import { type EdgeErrorAnswer, errorResponse } from "./errors.ts";
import { connectEdgeError, mcpEdgeError } from "./facet_errors.ts";
import { handleGraphQL } from "./graphql.ts";
import { isWebSocketUpgrade } from "./subscriptions_ws.ts";
import type { PluginHost, PluginRequest } from "../plugins/mod.ts";
import { formBoundary } from "./multipart_form.ts";
import { closeUpload, readUpload } from "./upload_edge.ts";
import { csrfRefusal } from "./csrf.ts";
import { compileRateLimit, type LimitedFacet, type RateLimitCheck } from "./rate_limit.ts";

/** A route's handler. */
export type FacetHandler = (request: Request, state: RouterState) => Promise<Response>;

/** The routes of one state, compiled once. */
interface Routes {
  readonly exact: ReadonlyMap<string, FacetHandler>;
  /**
   * Whether a request runs an operation, so it needs a slot of the engine's
   * admission gate (`engine.max_concurrent_operations`), held from after its
   * body is read to building its response: GraphQL over HTTP, Connect, and MCP POSTs.
   */
  readonly admits: (facet: FacetHandler, request: Request) => boolean;
  readonly prefixes: readonly (readonly [string, FacetHandler])[];
  /** A multipart upload to GraphQL with `file_uploads` on: its facet streams the body. */
  readonly streamsBody: (facet: FacetHandler, request: Request) => boolean;
  /**
   * Reads such an upload's `operations` and `map` (bounded, under the request's
   * deadline) before it takes a slot: a slow uploader waits outside the gate.
   */
  readonly readUploadHead: (request: Request, signal: AbortSignal) => Promise<void>;
  readonly cors: CorsPolicy;
  readonly bodyLimit: number;
  /** The routes as telemetry labels them. */
  readonly table: RouteTable;
  /** The router deadline of admitted requests (`traffic_shaping.router.request_timeout`). */
  readonly deadline: (controller: AbortController) => () => void;
  /** Counts an admission refusal (metrics on), made once per state rather than per request. */
  readonly refused: ((reason: string) => void) | null;
  /** The facet a rate limit applies to (`rate_limit`), or null. */
  readonly limitedFacet: (facet: FacetHandler) => LimitedFacet | null;
  /** The rate-limit check; null when `rate_limit.enabled` is false. */
  readonly rateLimit: RateLimitCheck | null;
}

/** Paths of the health endpoints. */
export const HEALTH_LIVE_PATH = "/health/live";
/** Readiness: 200 once a state is built and its JWKS URLs loaded once, 503 before. */
export const HEALTH_READY_PATH = "/health/ready";
/** RFC 9728 metadata, without the resource path. */
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";

/** The facet handlers the route table dispatches to. */
export interface Facets {
  /** GraphQL over HTTP on `graphql_path`. */
  readonly graphql: FacetHandler;
  /** MCP on `mcp.path`. */
  readonly mcp: FacetHandler;
  /** RFC 9728 metadata under `/.well-known/oauth-protected-resource`. */
  readonly protectedResource: FacetHandler;
  /** Connect RPC under `/<package>.<Service>/`. */
  readonly connect: FacetHandler;
  /** The playground (`/`, `/playground/*`, browser GETs of `graphql_path`). */
  readonly playground: FacetHandler;
}

/** Each state's Connect dependencies: the state plus its subscription start (made once). */
const connectDeps = new WeakMap<RouterState, ConnectDeps>();

/** Connect with its server-streaming methods wired to the subscription core. */
function handleConnectCall(request: Request, state: RouterState): Promise<Response> {
  let deps = connectDeps.get(state);
  if (deps === undefined) {
    deps = { ...state, subscribe: connectSubscribeOf(state) };
    connectDeps.set(state, deps);
  }
  return handleConnect(request, deps);
}

const DEFAULT_FACETS: Facets = {
  graphql: handleGraphQL,
  mcp: handleMcp,
  protectedResource: handleProtectedResourceMetadata,
  connect: handleConnectCall,
  playground: handlePlayground,
};

/** Options for {@linkcode createHandler}. */
export interface HandlerOptions {
  /** Logs internal errors that happen before a state exists. */
  readonly log?: Logger;
  /** Replaces facet handlers (tests observe routing with them). */
  readonly facets?: Partial<Facets>;
  /**
   * True while the router drains for shutdown: readiness answers 503 and
   * every response carries `Connection: close` (keep-alive clients reconnect
   * elsewhere).
   */
  readonly draining?: () => boolean;
  /** Aborts when the shutdown grace period ends: requests still running get 503. */
  readonly stop?: AbortSignal;
}

/**
 * Creates the request handler. `current` is read once per request, so a
 * reload mid-request leaves that request on the state it started with.
 *
 * @example Health and routing without a socket
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler } from "./handler.ts";
 * const handle = createHandler(() => null);
 * assert.equal((await handle(new Request("http://r/health/live"))).status, 200);
 * assert.equal((await handle(new Request("http://r/health/ready"))).status, 503);
 * ```
 * @param current Returns the current state (null while the first is being built).
 * @param options Logger for errors outside any state.
 * @returns The handler for `Deno.serve`.
 */
export function createHandler(
  current: () => RouterState | null,
  options: HandlerOptions = {},
): (request: Request, info?: Deno.ServeHandlerInfo) => Promise<Response> {
  const compiled = new WeakMap<RouterState, Routes>();
  const facets: Facets = { ...DEFAULT_FACETS, ...options.facets };
  function routesOf(state: RouterState): Routes {
    let routes = compiled.get(state);
    if (routes === undefined) {
      routes = compileRoutes(state, facets, options.draining ?? (() => false));
      compiled.set(state, routes);
    }
    return routes;
  }
  const draining = options.draining;
  if (draining !== undefined) {
    return async (request, info) => {
      const response = await handle(request, info);
      if (draining()) {
        try {
          response.headers.set("connection", "close");
        } catch {
          // Immutable headers (a forwarded response): the listener closes anyway.
        }
      }
      return response;
    };
  }
  return handle;
  async function handle(request: Request, info?: Deno.ServeHandlerInfo): Promise<Response> {
    const state = current();
    const { pathname } = new URL(request.url);
    // Liveness needs no state (and no route table).
    if (pathname === HEALTH_LIVE_PATH) return Response.json({ status: "live" });
    if (state === null) return notStarted(pathname);
    const routes = routesOf(state);
    const preflight = routes.cors.preflight(request);
    if (preflight !== null) return preflight;
    // Facets, logs and header rules read the (validated or generated) id from the request.
    const requestId = acceptRequestId(request.headers.get(REQUEST_ID_HEADER));
    const facet = routes.exact.get(pathname) ??
      routes.prefixes.find(([prefix]) => pathname.startsWith(prefix))?.[1] ?? notFound;
    // Plugins (issue 40): the request's run (null without plugins).
    const run = beginPlugins(state.plugins, request, { routes, facet, requestId });
    const log = state.log ?? options.log;
    const answer = edgeAnswerOf(facet, facets);
    const exchange: Exchange = {
      request,
      state,
      routes,
      facet,
      requestId,
      run,
      answer,
      log,
      errorOptions: { ...(log ? { log } : {}), requestId },
      scope: state.telemetry?.begin(request, { requestId, routes: routes.table, pathname }),
      info,
      connect: facet === facets.connect,
      options,
    };
    // Rate limits (issue 30): before the body is read or a slot taken.
    const limited = routes.rateLimit === null ? null : routes.limitedFacet(facet);
    const limit = limited === null ? null : await rateLimited(exchange, limited);
    if (limit?.refusal) return routerResponse(exchange, limit.refusal);
    if (run?.has("onRouterRequest")) {
      const early = await routerRequestStage(
        request,
        run,
        (error) => answer(error, exchange.errorOptions),
      );
      if (early !== null) return routerResponse(exchange, early);
    }
    // A token's unknown-kid JWKS refetch is waited for here, never inside a slot.
    const keyWait = state.keySources?.beforeAdmission(request);
    if (keyWait) await keyWait;
    // A batch's operations after its first are charged one each (lib/http/batch.ts).
    const rateLimit = routes.rateLimit;
    const charge = limited === null || rateLimit === null
      ? undefined
      : async () => (await rateLimit(limited, request, peerOf(exchange))).refusal;
    const response = routes.admits(facet, request)
      ? await admitted(exchange, charge)
      : await unadmitted(exchange);
    if (limit?.headers) setHeaders(response, limit.headers);
    return routerResponse(exchange, response);
  }
}

/**
 * An operation's request (GraphQL, Connect, an MCP POST): its body read
 * (counted against the buffered-body budget), then the facet run in a slot
 * of the engine's admission gate, under the router deadline.
 */
async function admitted(
  exchange: Exchange,
  charge: (() => Promise<RouterError | null>) | undefined,
): Promise<Response> {
  const { request, state, routes, facet, requestId, log, scope, options } = exchange;
  const telemetry = state.telemetry;
  const gate = state.engine.admission;
  let read: DecodedBody | null = null;
  let held = 0;
  try {
    return await runAdmitted(request, (signal) => {
      if (read === null) throw new Error("runAdmitted ran the work before prepare");
      withContext(request, {
        body: read.bytes,
        requestId,
        signal,
        ...(charge ? { charge } : {}),
      });
      if (scope) telemetry?.bind(scope, request, read.bytes);
      return facet(request, state);
    }, {
      gate,
      track: routes.deadline,
      requestId,
      // The body is read before the request asks for a slot, counted against
      // traffic_shaping.router.max_buffered_body_bytes as it arrives.
      prepare: async (signal) => {
        // A file upload's files are streamed by the facet, never read ahead; its
        // operations and map are read here, outside the gate.
        if (routes.streamsBody(facet, request)) {
          read = NO_BODY;
          await routes.readUploadHead(request, signal);
          return;
        }
        read = await readBody(request, routes.bodyLimit, {
          connect: exchange.connect,
          signal,
          count: (bytes) => {
            gate.holdBody(bytes);
            held += bytes;
          },
        });
      },
      ...(log ? { log } : {}),
      ...(options.stop ? { stop: options.stop } : {}),
      ...(options.draining ? { draining: options.draining } : {}),
      ...(routes.refused ? { refused: routes.refused } : {}),
      answer: exchange.answer,
    });
  } finally {
    gate.releaseBody(held);
    // An upload read here whose facet never ran (refused at the gate): counted and closed.
    await closeUpload(request);
  }
}

/** A request that takes no slot (a 404, readiness, the playground, an MCP GET). */
async function unadmitted(exchange: Exchange): Promise<Response> {
  const { request, state, routes, facet, requestId, scope, options } = exchange;
  try {
    const read = await readBodyWithin(request, routes, {
      connect: exchange.connect,
      draining: options.draining ?? (() => false),
    });
    withContext(request, { body: read.bytes, requestId, signal: request.signal });
    if (scope) state.telemetry?.bind(scope, request, read.bytes);
    return await facet(request, state);
  } catch (error) {
    return exchange.answer(error, exchange.errorOptions);
  }
}

/** What a request's stages on the edge share. */
interface Exchange {
  readonly request: Request;
  readonly state: RouterState;
  readonly routes: Routes;
  readonly facet: FacetHandler;
  readonly requestId: string;
  /** The request's plugin run (null without plugins). */
  readonly run: PluginRequest | null;
  /** Answers an error in the facet's shape. */
  readonly answer: EdgeErrorAnswer;
  readonly log: Logger | undefined;
  readonly errorOptions: { readonly log?: Logger; readonly requestId: string };
  /** The request's telemetry scope, when telemetry is on. */
  readonly scope: RequestScope | null | undefined;
  /** The connection's info (the peer's address, which rate limits go by). */
  readonly info: Deno.ServeHandlerInfo | undefined;
  /** The facet is Connect (it decodes its own body). */
  readonly connect: boolean;
  /** The handler's options (shutdown, draining). */
  readonly options: HandlerOptions;
}

function peerOf(exchange: Exchange): string | null {
  return peerAddress(exchange.info?.remoteAddr, exchange.request);
}

/** A request before the first state exists: readiness says so, the rest is asked to retry. */
function notStarted(pathname: string): Response {
  if (pathname === HEALTH_READY_PATH) {
    return Response.json({ status: "starting" }, { status: 503 });
  }
  // No state yet (a registry's first supergraph has not come): send it again later.
  return Response.json(
    { errors: [{ message: "Router is starting", extensions: { code: "STARTING" } }] },
    { status: 503, headers: { "retry-after": "1" } },
  );
}

/**
 * The rate limit's verdict on a request (`rate_limit`): the `RateLimit` fields
 * its answer carries, and its refusal (the body let go) when over the limit.
 */
async function rateLimited(
  exchange: Exchange,
  limited: LimitedFacet,
): Promise<{ readonly headers: Readonly<Record<string, string>>; readonly refusal?: Response }> {
  const { request, routes } = exchange;
  if (routes.rateLimit === null) return { headers: {} };
  const verdict = await routes.rateLimit(limited, request, peerOf(exchange));
  if (verdict.refusal === null) return { headers: verdict.headers };
  await request.body?.cancel().catch(() => {});
  const refusal = exchange.answer(verdict.refusal, {
    ...exchange.errorOptions,
    headers: verdict.headers,
  });
  return { headers: verdict.headers, refusal };
}

/**
 * Router response stage: the plugins' `onRouterResponse` hooks (when any),
 * then CORS, the request id and the telemetry's end.
 */
function routerResponse(exchange: Exchange, answered: Response): Response | Promise<Response> {
  const { run } = exchange;
  if (!run?.has("onRouterResponse")) return sent(exchange, answered);
  const stage = routerResponseStage(
    answered,
    run,
    (error) => exchange.answer(error, exchange.errorOptions),
  );
  return stage instanceof Promise
    ? stage.then((response) => sent(exchange, response))
    : sent(exchange, stage);
}

function sent(exchange: Exchange, answered: Response): Response | Promise<Response> {
  const { routes, request, scope, state } = exchange;
  answered = routes.cors.apply(request, answered);
  answered.headers.set(REQUEST_ID_HEADER, exchange.requestId);
  const telemetry = state.telemetry;
  return scope && telemetry ? telemetry.end(scope, answered) : answered;
}

/**
 * The plugins' router request stage: a hook's response (or its refusal or
 * failure, answered in the facet's shape) ends the request; null goes on.
 */
async function routerRequestStage(
  request: Request,
  run: PluginRequest,
  answer: (error: unknown) => Response,
): Promise<Response | null> {
  let early: Response | null;
  try {
    const stage = run.routerRequest();
    early = stage instanceof Promise ? await stage : stage;
  } catch (error) {
    early = answer(error);
  }
  if (early !== null) await request.body?.cancel().catch(() => {});
  return early;
}

/** The plugins' router response stage: the response to send (a failure answered instead). */
function routerResponseStage(
  answered: Response,
  run: PluginRequest,
  answer: (error: unknown) => Response,
): Response | Promise<Response> {
  const failed = async (error: unknown) => {
    await answered.body?.cancel().catch(() => {});
    return answer(error);
  };
  try {
    const stage = run.routerResponse(answered);
    return stage instanceof Promise ? stage.catch(failed) : stage;
  } catch (error) {
    return failed(error);
  }
}

/**
 * Starts a request's plugin run. The client's headers are copied only when a
 * hook reads them (`PluginRequest.headers`); a WebSocket upgrade's are copied
 * here (`Deno.upgradeWebSocket` needs the server's request, and the connection
 * keeps a copy of its headers instead).
 */
function beginPlugins(
  plugins: PluginHost | null | undefined,
  request: Request,
  where: { readonly routes: Routes; readonly facet: FacetHandler; readonly requestId: string },
): PluginRequest | null {
  // Only the facets that run operations (GraphQL, MCP, Connect) have a run.
  const facet = plugins ? where.routes.limitedFacet(where.facet) : null;
  if (!plugins || facet === null) return null;
  const options = { facet, requestId: where.requestId };
  if (plugins.seesClientHeaders && isWebSocketUpgrade(request)) {
    return plugins.begin(request, { ...options, headers: new Headers(request.headers) });
  }
  return plugins.begin(request, options);
}

function setHeaders(response: Response, headers: Readonly<Record<string, string>>): void {
  try {
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  } catch {
    // Immutable headers (a forwarded response): sent without the RateLimit fields.
  }
}

/** Connect and MCP clients read their own error shapes; everything else gets GraphQL's. */
function edgeAnswerOf(facet: FacetHandler, facets: Facets): EdgeErrorAnswer {
  if (facet === facets.connect) return connectEdgeError;
  if (facet === facets.mcp) return mcpEdgeError;
  return errorResponse;
}

function notFound(request: Request): Promise<Response> {
  const { pathname } = new URL(request.url);
  return Promise.reject(
    new RouterError(
      "NOT_FOUND",
      `No route for ${clipForMessage(request.method)} ${clipForMessage(pathname)}`,
    ),
  );
}

/**
 * Reads the body within the limit after decompression (413 over it; gzip
 * inflated, other encodings 415), except on Connect, which decodes its own.
 * Admitted requests read it before they take a slot, and only the bytes wait
 * in the queue: the facet's view of them ({@linkcode withContext}) is made once
 * admitted, so the queue holds no per-request objects for V8 to promote.
 */
async function readBody(
  request: Request,
  limit: number,
  options: {
    readonly connect: boolean;
    /** For admitted requests: aborts at the deadline and cancels the read. */
    readonly signal?: AbortSignal;
    /** Told each body chunk's size as it is read; what it throws stops the read. */
    readonly count?: (bytes: number) => void;
  },
): Promise<DecodedBody> {
  if (request.body === null) return NO_BODY;
  return await readBodyDecoded(request, limit, {
    leaveEncoded: options.connect,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.count ? { count: options.count } : {}),
  });
}

/**
 * {@linkcode readBody} for a request that takes no slot (a 404, readiness, the
 * playground, an MCP GET), under the same router deadline as the others: a
 * body that never ends is answered 408 `REQUEST_TIMEOUT`, not waited for (with
 * the request, its connection, for ever).
 */
async function readBodyWithin(
  request: Request,
  routes: Routes,
  options: { readonly connect: boolean; readonly draining: () => boolean },
): Promise<DecodedBody> {
  if (request.body === null) return NO_BODY;
  const reading = new Cancellation();
  const untrack = routes.deadline(reading);
  try {
    return await readBody(request, routes.bodyLimit, {
      connect: options.connect,
      signal: reading.signal,
    });
  } catch (error) {
    const failure = readFailure(reading.signal.aborted ? reading.signal.reason : error, {
      aborted: request.signal.aborted,
      draining: options.draining(),
    });
    // The client went away: nobody reads the answer.
    throw failure ?? error;
  } finally {
    untrack();
  }
}

const NO_BODY: DecodedBody = Object.freeze({ bytes: null, decoded: false });

/**
 * Readiness: 503 while the router drains for shutdown, while a JWKS URL has not
 * loaded yet (`authentication.jwt.readiness_requires_keys`), or while its
 * admission gate turns work away (queue full, or a refusal within the last
 * second), so a load balancer sends elsewhere; 200 again once it recovers.
 */
function readiness(draining: () => boolean): FacetHandler {
  return (_request, state) => {
    if (draining()) return Promise.resolve(Response.json({ status: "draining" }, { status: 503 }));
    if (state.keySources !== undefined && !state.keySources.ready) {
      return Promise.resolve(Response.json({ status: "loading keys" }, { status: 503 }));
    }
    if (state.engine.admission.saturated) {
      return Promise.resolve(Response.json({ status: "overloaded" }, { status: 503 }));
    }
    return Promise.resolve(Response.json({ status: "ready" }));
  };
}

/**
 * Compiles the route table of a state: exact paths, then prefixes.
 * @param state The router state.
 * @param facets The facet handlers.
 * @returns The routes.
 */
function compileRoutes(
  state: RouterState,
  facets: Facets,
  draining: () => boolean,
): Routes {
  const { config } = state;
  const metrics = state.telemetry?.metrics ?? null;
  const exact = new Map<string, FacetHandler>();
  const prefixes: [string, FacetHandler][] = [];
  exact.set(HEALTH_READY_PATH, readiness(draining));
  const playground = config.playground.enabled;
  const graphql: FacetHandler = playground
    ? (request, s) =>
      wantsPlayground(request, config) ? facets.playground(request, s) : facets.graphql(request, s)
    : (request, s) => facets.graphql(request, s);
  exact.set(config.graphql_path, graphql);
  if (state.mcp !== null) {
    exact.set(config.mcp.path, facets.mcp);
    exact.set(`${PROTECTED_RESOURCE_PATH}${config.mcp.path}`, facets.protectedResource);
    exact.set(PROTECTED_RESOURCE_PATH, facets.protectedResource);
  }
  if (playground) {
    exact.set("/", facets.playground);
    exact.set("/playground", facets.playground);
    prefixes.push(["/playground/", facets.playground]);
    // The Router page (issue 16): charts from the metrics registry.
    const liveView: FacetHandler = (request, s) =>
      handleLiveView(request, s.telemetry?.liveHistory ?? null);
    for (const path of Object.values(LIVE_VIEW_PATHS)) exact.set(path, liveView);
  }
  if (state.connect !== null) prefixes.push([state.connect.prefix, facets.connect]);
  const invalidation = config.entity_cache.invalidation;
  if (config.entity_cache.enabled && invalidation.enabled) {
    exact.set(invalidation.path, handleEntityCacheInvalidation);
  }
  return {
    exact,
    admits: (facet, request) =>
      facet === graphql || facet === facets.connect ||
      (facet === facets.mcp && request.method === "POST"),
    prefixes,
    streamsBody: (facet, request) =>
      config.file_uploads.enabled && facet === graphql && request.method === "POST" &&
      formBoundary(request.headers.get("content-type")) !== null,
    readUploadHead: async (request, signal) => {
      // A request CSRF prevention refuses is refused by the facet, unread.
      if (csrfRefusal(request, config.csrf_prevention) !== null) return;
      const boundary = formBoundary(request.headers.get("content-type"))!;
      await readUpload(request, state, boundary, { signal });
    },
    cors: compileCors(config.cors),
    bodyLimit: config.max_request_body_bytes,
    table: {
      graphql: config.graphql_path,
      mcp: state.mcp === null ? null : config.mcp.path,
      connectPrefix: state.connect?.prefix ?? null,
      connectMethods: new Set(state.connect?.contract.methods.map((m) => m.name) ?? []),
    },
    deadline: deadlineGroups(config.traffic_shaping.router.request_timeout_ms, {
      reason: () => new RequestTimeout(config.traffic_shaping.router.request_timeout_ms),
    }),
    refused: metrics ? (reason) => metrics.admissionRejected(reason) : null,
    limitedFacet: (facet) =>
      facet === graphql
        ? "graphql"
        : facet === facets.mcp
        ? "mcp"
        : facet === facets.connect
        ? "connect"
        : null,
    rateLimit: compileRateLimit(state, {
      ...(metrics ? { counted: (facet, outcome) => metrics.rateLimited(facet, outcome) } : {}),
    }),
  };
}
