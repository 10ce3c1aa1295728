/**
 * GraphQL over HTTP (the GraphQL-over-HTTP draft): POST JSON and GET with
 * query parameters, `Accept` negotiation, status codes per media type, and
 * the ART hooks (`startTrace` → `execute({observer})` → `finishTrace`).
 *
 * Over 600 lines: the facet's named stages (router request, operation request,
 * operation, execution, streamed and whole router responses, subscriptions
 * over HTTP) in the order a request meets them, each ≤ 120 lines; the answers'
 * rendering is `graphql_response.ts`, batches `batch.ts`.
 *
 * @module
 */
import {
  authorizeOperation,
  type RequestAuthorization,
  resolveIdentity,
  type VerifiedToken,
} from "../auth/mod.ts";
import type { Config } from "../config/mod.ts";
import {
  CachePolicy,
  execute,
  executeIncremental,
  isLimitRefusal,
  prepare,
  resultJson,
} from "../engine/mod.ts";
import type {
  BudgetTicket,
  Engine,
  EventTrace,
  ExecutionResult,
  GraphQLRequest,
  IncrementalResult,
  PreparedOperation,
  PrepareResult,
  ResponseHeaderCollector,
  SubgraphStages,
} from "../engine/mod.ts";
import { clipForMessage, RouterError } from "../errors.ts";
import type { Logger } from "../log/mod.ts";
import type { SupergraphCore } from "../supergraph/mod.ts";
import {
  finishTrace,
  startTrace,
  traceAgain,
  traceRejectionResult,
  type TraceStart,
  type TraceState,
} from "../trace/mod.ts";
import {
  acceptsIncremental,
  APPLICATION_JSON,
  GRAPHQL_RESPONSE_JSON,
  type GraphQLMediaType,
  negotiateMediaType,
} from "./_media.ts";
import { csrfRefusal } from "./csrf.ts";
import { type BatchDeps, handleBatch } from "./batch.ts";
import { closeUpload, readUpload, uploadOf, type UploadRequest } from "./upload_edge.ts";
import { formBoundary } from "./multipart_form.ts";
import {
  multipartResponse,
  sseResponse,
  startClientSubscription,
  type StartedSubscription,
  type StreamTransport,
  streamTransportOf,
} from "./subscriptions.ts";
import { handleWebSocket, isWebSocketUpgrade } from "./subscriptions_ws.ts";
import { requestIdOf, withRequestId } from "../request/mod.ts";
import type { Telemetry } from "../telemetry/mod.ts";
import { errorResponse, STATUS } from "./errors.ts";
import { incrementalResponse } from "./incremental.ts";
import {
  graphQLResponse,
  isMutationText,
  notQueryOverGet,
  persistedNotFoundResponse,
} from "./graphql_response.ts";
import { JsonTooDeep, type RawRequest, readJsonBody, readSearchParams } from "./graphql_request.ts";
import { onAbort, signalOf } from "../cancellation.ts";
import { type PersistedState, resolveDocument } from "../persisted/mod.ts";
import { operationStage, pluginRequestOf } from "../plugins/mod.ts";

/** What the GraphQL facet reads from the router state. */
export interface GraphQLDeps {
  /** The configuration. */
  readonly config: Config;
  /** The engine that prepares and executes operations. */
  readonly engine: Engine;
  /** The trace gate. */
  readonly trace: TraceState;
  /** Where internal errors are logged. */
  readonly log: Logger;
  /**
   * Token verification (the identity protected fields are filtered with);
   * absent in facet unit tests (then every request is anonymous).
   */
  readonly authorization?: RequestAuthorization;
  /** Schema and access map the checks read. */
  readonly supergraph?: SupergraphCore;
  /** Metrics, access log and spans of the request; absent or null when off. */
  readonly telemetry?: Telemetry | null;
  /** Trusted documents, safelist and APQ; absent: every hash is unknown (APQ clients send text). */
  readonly persisted?: PersistedState;
}

/**
 * Handles a request on `graphql_path`.
 *
 * - CSRF prevention first (`csrf_prevention`, `csrf.ts`): a GET or a CORS-simple
 *   POST without a preflight header is a 400.
 * - `GET` (queries only: a mutation gets 405 with `Allow: POST`) and `POST`
 *   with `Content-Type: application/json` (else 415); other methods get 405.
 * - Response media type from `Accept`: `application/graphql-response+json`,
 *   `application/json` (also for wildcards and no `Accept`); 406 otherwise.
 * - A JSON array body is a batch (`batch.ts`): 400 unless `batching.enabled`.
 * - Malformed JSON or parameters → 400. With `application/graphql-response+json`
 *   a request error (result without `data`) is a 400; with `application/json`
 *   every GraphQL result is a 200.
 * - Traced responses carry `Cache-Control: no-store`.
 *
 * @param request The request (its body already size-checked by the handler).
 * @param deps Config, engine, trace state, logger.
 * @returns The response.
 */
export async function handleGraphQL(request: Request, deps: GraphQLDeps): Promise<Response> {
  try {
    return await answerGraphQL(request, deps);
  } finally {
    // A multipart upload's files not streamed to a subgraph (refused, failed) are not read.
    await closeUpload(request);
  }
}

/**
 * A request on `graphql_path` through its stages (issue 40): router request
 * (method, CSRF, `Accept`, identity), the operation request (body or query
 * parameters, persisted documents), the trace, the operation (prepared,
 * authorized, the plugins' operation stage), its execution, the router
 * response. Each stage answers early with a `Response`, or hands on.
 */
async function answerGraphQL(request: Request, deps: GraphQLDeps): Promise<Response> {
  if (request.method === "GET" && isWebSocketUpgrade(request)) {
    return handleWebSocket(request, deps);
  }
  const routed = routerRequest(request, deps);
  const edge = routed instanceof Promise ? await routed : routed;
  if (edge instanceof Response) return edge;
  const read = await readOperationRequest(request, deps, edge);
  if (read instanceof Response) return read;
  const start = deps.trace.enabled ? await startTrace(request, deps.trace) : TRACE_OFF;
  if (start.kind === "rejected") return traceRejected(start, edge);
  const exchange: Exchange = { ...edge, ...read, start };
  const operated = operation(request, deps, exchange);
  const decided = operated instanceof Promise ? await operated : operated;
  if (decided instanceof Response) return decided;
  const done = decided.kind === "admitted"
    ? await execution(request, deps, { exchange, admitted: decided })
    : decided;
  if (done instanceof Response) return done;
  return routerResponse(request, deps, { exchange, done });
}

/** What the router request stage settled: how to answer, and who asks. */
interface Edge {
  readonly method: string;
  readonly requestId: string | null;
  readonly mediaType: GraphQLMediaType;
  /** `@defer` parts may go out as `multipart/mixed` (Accept asks for it). */
  readonly incremental: boolean;
  /** The HTTP stream a subscription's events may take (Accept asks for it). */
  readonly stream: StreamTransport | null;
  readonly authorization: RequestAuthorization | undefined;
  /** The verified identity, null when anonymous. */
  readonly identity: VerifiedToken | null;
}

/** The operation request as read: what runs, and what came with it. */
interface OperationRequest {
  readonly params: GraphQLRequest;
  /** A trusted document, parsed and validated at load (it skips the parse cache). */
  readonly trusted: PrepareResult | null;
  /** A multipart request's files (`file_uploads`), still in the request body. */
  readonly upload: UploadRequest | null;
}

/** Everything a request's later stages read. */
interface Exchange extends Edge, OperationRequest {
  readonly start: TraceStart;
}

/**
 * Router request stage: the method, CSRF prevention, the media type `Accept`
 * allows, and who asks (settled before the document is read: a bad token, or
 * an anonymous request under `require_authentication`, learns nothing of the
 * schema from validation errors and costs no parse).
 */
function routerRequest(
  request: Request,
  deps: GraphQLDeps,
): Edge | Response | Promise<Edge | Response> {
  const method = request.method;
  const requestId = requestIdOf(request);
  if (method !== "GET" && method !== "POST") {
    return errorResponse(
      new RouterError(
        "METHOD_NOT_ALLOWED",
        `Method ${clipForMessage(method)} is not allowed; use GET or POST`,
        { details: { allow: "GET, POST" } },
      ),
      { requestId },
    );
  }
  const csrf = csrfRefusal(request, deps.config.csrf_prevention);
  if (csrf !== null) return unread(request, () => errorResponse(csrf, { requestId }));
  // `@defer` parts need `multipart/mixed` in Accept (without it the answer comes whole); a
  // subscription's stream (SSE, multipart) is asked for by Accept too. Their errors are JSON.
  const accept = request.headers.get("accept");
  const incremental = acceptsIncremental(accept);
  const stream = streamTransportOf(accept);
  const mediaType = negotiateMediaType(accept) ??
    (incremental || stream !== null ? APPLICATION_JSON : null);
  if (mediaType === null) {
    return errorResponse(
      new RouterError(
        "NOT_ACCEPTABLE",
        `Cannot answer with any type in Accept "${
          clipForMessage(accept ?? "")
        }"; accept ${GRAPHQL_RESPONSE_JSON} or ${APPLICATION_JSON}`,
      ),
      { requestId },
    );
  }
  const authorization = deps.supergraph === undefined ? undefined : deps.authorization;
  const edge = { method, requestId, mediaType, incremental, stream, authorization, identity: null };
  // Without token verification every request is anonymous: nothing to await.
  return authorization === undefined ? edge : withIdentity(request, deps, { edge, authorization });
}

/** The edge with who asks settled: a bad token (or none where one is required) is answered. */
async function withIdentity(
  request: Request,
  deps: GraphQLDeps,
  options: { readonly edge: Edge; readonly authorization: RequestAuthorization },
): Promise<Edge | Response> {
  const { edge } = options;
  const resolved = await resolveIdentity(request, { authorization: options.authorization });
  if (resolved.ok) return { ...edge, identity: resolved.token };
  return await unread(request, () =>
    errorResponse(resolved.error, {
      contentType: edge.mediaType,
      log: deps.log,
      requestId: edge.requestId,
    }));
}

/** A refusal before the body was read: the body is let go, then the answer made. */
async function unread(request: Request, answer: () => Response): Promise<Response> {
  await request.body?.cancel().catch(() => {});
  return answer();
}

/**
 * The operation request: the JSON body, the query parameters of a GET, or a
 * multipart upload's operations (a JSON array is a batch, answered here), then
 * the document persisted queries say runs (issue 30).
 */
async function readOperationRequest(
  request: Request,
  deps: GraphQLDeps,
  edge: Edge,
): Promise<OperationRequest | Response> {
  const { method, mediaType, requestId } = edge;
  let raw: RawRequest;
  let upload: UploadRequest | null = null;
  try {
    const limits = deps.engine.limits;
    const boundary = method === "POST" ? formBoundary(request.headers.get("content-type")) : null;
    // The edge read the upload's operations and map before the slot (handler.ts).
    if (boundary !== null) upload = uploadOf(request) ?? await readUpload(request, deps, boundary);
    const read = upload !== null
      ? upload.raw
      : method === "GET"
      ? readSearchParams(new URL(request.url), limits)
      : await readJsonBody(request, limits);
    if ("batch" in read) {
      return await handleBatch(request, batchDeps(deps), {
        text: read.batch,
        size: read.size,
        mediaType,
        single: (one) => handleGraphQL(one, deps),
      });
    }
    raw = read;
  } catch (error) {
    if (error instanceof JsonTooDeep) {
      return graphQLResponse({ errors: [error.error] }, mediaType, {
        traced: false,
        refused: true,
        requestId,
      });
    }
    return errorResponse(error, { contentType: mediaType, log: deps.log, requestId });
  }
  let trusted: PrepareResult | null = null;
  let query: string;
  if (deps.persisted === undefined) {
    if (raw.query === null) return persistedNotFoundResponse(mediaType, requestId);
    query = raw.query;
  } else {
    const resolved = await resolveDocument(deps.persisted, {
      query: raw.query,
      operationName: raw.operationName,
      hash: raw.hash,
    });
    if (!resolved.ok) {
      if (resolved.error.code === "PERSISTED_QUERY_NOT_FOUND") {
        return persistedNotFoundResponse(mediaType, requestId);
      }
      return errorResponse(resolved.error, { contentType: mediaType, log: deps.log, requestId });
    }
    query = resolved.query;
    trusted = resolved.trusted;
  }
  const params: GraphQLRequest = {
    query,
    operationName: raw.operationName,
    variables: raw.variables,
    extensions: raw.extensions,
  };
  return { params, trusted, upload };
}

/** A rejected trace token: a request error, 400 whatever the media type (the token is bad, not the query). */
function traceRejected(
  start: TraceStart & { readonly kind: "rejected" },
  edge: Edge,
): Response {
  const rejected = traceRejectionResult(start);
  if (edge.requestId !== null && rejected.errors) {
    rejected.errors = withRequestId(rejected.errors, edge.requestId);
  }
  return new Response(JSON.stringify(rejected), {
    status: STATUS.INVALID_TRACE_TOKEN,
    headers: { "content-type": `${edge.mediaType}; charset=utf-8` },
  });
}

/** A result to answer with, as the operation or execution stage left it. */
interface Done {
  readonly kind: "done";
  readonly prepared: PrepareResult;
  readonly result: ExecutionResult;
  /** Operation limits and disabled introspection are refused with 400 whatever the media type. */
  readonly refused: boolean;
  /** The memory-budget ticket of an executed operation, closed once its response is rendered. */
  readonly ticket?: BudgetTicket;
  /** The answer's `Cache-Control`, filled by the entity cache (`entity_cache`). */
  readonly cachePolicy?: CachePolicy | undefined;
  /** The subgraph answer headers that reach the client (`headers.*.response`), when a rule says so. */
  readonly collected?: ResponseHeaderCollector | undefined;
}

/** An operation through the authorization door and the plugins' operation stage. */
interface AdmittedOperation extends Admitted {
  readonly kind: "admitted";
  readonly prepared: PrepareResult & { readonly ok: true };
}

/**
 * Operation stage: the document prepared (parsed, validated, limits), what a
 * GET may run, a subscription answered with its stream, and a query or
 * mutation through the one authorization door and the plugins' operation stage.
 */
function operation(
  request: Request,
  deps: GraphQLDeps,
  exchange: Exchange,
): Done | AdmittedOperation | Response | Promise<Done | AdmittedOperation | Response> {
  const { method, stream, params, start, mediaType, requestId, identity } = exchange;
  const observer = start.kind === "on" ? start.observer : undefined;
  const scope = deps.telemetry?.scopeOf(request);
  const preparing = scope?.span ? performance.now() : 0;
  // A trusted document was parsed and validated at load: it skips the parse cache.
  const prepared = exchange.trusted ?? prepare(deps.engine, params, observer ? { observer } : {});
  scope?.span?.stage("graphql.parse_validate", preparing, performance.now());
  if (!prepared.ok) {
    const refused = prepared.stage === "limits";
    if (!refused && method === "GET" && isMutationText(params)) {
      return notQueryOverGet("mutation", { mediaType, requestId });
    }
    return { kind: "done", prepared, result: { errors: [...prepared.errors] }, refused };
  }
  const kind = prepared.operation.kind;
  // GraphQL over SSE and multipart subscriptions may be GETs (an EventSource's).
  if (method === "GET" && kind !== "query" && !(kind === "subscription" && stream !== null)) {
    return notQueryOverGet(kind, { mediaType, requestId });
  }
  if (kind === "subscription") {
    if (stream === null) return { kind: "done", prepared, result: notAStream(), refused: false };
    return subscriptionResponse(request, deps, {
      stream,
      operation: prepared.operation,
      // Its start counted as an operation (metrics, the access line's name and type).
      counted: (result) =>
        deps.telemetry?.operation(request, {
          prepared,
          result,
          query: params.query,
          operationName: params.operationName,
        }),
      variables: params.variables,
      identity,
      requestId,
      ...(start.kind === "on" ? { traceEvent: tracedEvents(request, deps, exchange) } : {}),
    });
  }
  // The one authorization door, then the plugins' operation stage (issue 40).
  const door = admitOperation(request, deps, {
    operation: prepared.operation,
    identity,
    authorization: exchange.authorization,
    variables: params.variables,
  });
  const through = (admitted: RouterError | Admitted): AdmittedOperation | Response =>
    admitted instanceof RouterError
      ? errorResponse(admitted, { contentType: mediaType, log: deps.log, requestId })
      : { kind: "admitted", prepared, stages: admitted.stages, policies: admitted.policies };
  return door instanceof Promise ? door.then(through) : through(door);
}

/** The answer to a subscription asked for without a stream transport. */
function notAStream(): ExecutionResult {
  return {
    errors: [{
      message:
        "A subscription is a stream: ask for text/event-stream (GraphQL over SSE) or multipart/mixed (multipart subscriptions) in Accept, or use GraphQL over WebSocket",
      extensions: { code: "BAD_REQUEST" },
    }],
  };
}

/** A traced subscription's first events carry a trace each (the plan and that event's fetches). */
function tracedEvents(
  request: Request,
  deps: GraphQLDeps,
  exchange: Exchange,
): (index: number) => EventTrace | null {
  const { start, params } = exchange;
  return (index) => {
    if (index >= TRACED_EVENTS || start.kind !== "on") return null;
    const again = index === 0 ? start : traceAgain(request, deps.trace, start);
    if (again.kind !== "on") return null;
    return {
      observer: again.observer,
      finish: (result: ExecutionResult) => finishTrace(again, result, { request: params }),
    };
  };
}

/**
 * Execution stage: an admitted operation run under its memory-budget ticket,
 * its `@defer` parts streamed (multipart or SSE), or its one result as an SSE
 * event, else handed to the router response.
 */
async function execution(
  request: Request,
  deps: GraphQLDeps,
  options: { readonly exchange: Exchange; readonly admitted: AdmittedOperation },
): Promise<Done | Response> {
  const { exchange, admitted } = options;
  const { prepared, stages, policies } = admitted;
  const { params, upload, start, mediaType, requestId } = exchange;
  const observer = start.kind === "on" ? start.observer : undefined;
  const scope = deps.telemetry?.scopeOf(request);
  const cachePolicy = deps.engine.entityCache === null ? undefined : new CachePolicy();
  // The answer's memory is charged until its response is rendered (issue 34).
  const ticket = deps.engine.memory.open();
  const collected = deps.engine.responseHeaders?.collect();
  const signal = signalOf(request);
  // Past its deadline, or with its client gone, the request was answered:
  // admission stops waiting for what its work still holds (a parse that
  // cannot fit a thread's heap would otherwise hold every request back).
  onAbort(signal, ticket.close);
  let result: ExecutionResult;
  try {
    // `@defer` parts go out as multipart parts, or as SSE `next` events (GraphQL over SSE).
    const parts = upload !== null
      ? null // an upload's answer comes whole
      : exchange.incremental
      ? "multipart"
      : exchange.stream === "sse"
      ? "sse"
      : null;
    const run = parts !== null && prepared.operation.hasDefer ? executeIncremental : execute;
    const outcome = await run(deps.engine, prepared.operation, {
      ...(cachePolicy ? { cachePolicy } : {}),
      variables: params.variables,
      headers: request.headers,
      requestId,
      signal,
      identity: exchange.identity,
      ticket,
      ...(observer ? { observer } : {}),
      ...(scope?.hooks ? { hooks: scope.hooks } : {}),
      ...(stages ? { stages } : {}),
      ...(policies ? { policies } : {}),
      ...(collected ? { subgraphHeaders: collected.add } : {}),
      ...(upload !== null ? { uploads: upload.files } : {}),
    });
    if ("initial" in outcome) {
      // The incremental run charges a ticket of its own for as long as its parts stream.
      ticket.close();
      return streamedResponse(request, deps, {
        exchange,
        prepared,
        outcome,
        transport: parts ?? "multipart",
        collected,
        whole: false,
      });
    }
    result = outcome;
    // A file over its limit (or a broken body) stopped the upload: that is the answer.
    const uploadFailure = upload?.failure() ?? null;
    if (uploadFailure !== null) {
      ticket.close();
      return errorResponse(uploadFailure, { contentType: mediaType, requestId });
    }
    if (parts === "sse") {
      // GraphQL over SSE asked for a query or mutation: its one result as a `next` event, then
      // `complete` (the graphql-sse client reads nothing else).
      ticket.close();
      const sse = { initial: { ...result, hasNext: false }, subsequent: NONE };
      return streamedResponse(request, deps, {
        exchange,
        prepared,
        outcome: sse,
        transport: "sse",
        collected,
        whole: true,
      });
    }
  } catch (error) {
    ticket.close();
    return errorResponse(error, { contentType: mediaType, log: deps.log, requestId });
  }
  // The variables' limit (checked by execute) is refused like the document's.
  const refused = !("data" in result) && isLimitRefusal(result.errors);
  return { kind: "done", prepared, result, refused, ticket, cachePolicy, collected };
}

/** An incremental answer (`@defer` parts, or a query's one result over SSE) as its stream. */
function streamedResponse(
  request: Request,
  deps: GraphQLDeps,
  options: {
    readonly exchange: Exchange;
    readonly prepared: PrepareResult;
    readonly outcome: IncrementalResult;
    readonly transport: "multipart" | "sse";
    readonly collected: ResponseHeaderCollector | undefined;
    /** One whole result as an SSE event: its `hasNext` is not traced. */
    readonly whole: boolean;
  },
): Response {
  const { exchange, outcome } = options;
  const { start, params } = exchange;
  const traced = (last: ExecutionResult) =>
    start.kind === "on" ? finishTrace(start, last, { request: params }) : last;
  deps.telemetry?.operation(request, {
    prepared: options.prepared,
    result: outcome.initial,
    query: params.query,
    operationName: params.operationName,
  });
  return withSubgraphHeaders(
    incrementalResponse(outcome, {
      transport: options.transport,
      requestId: exchange.requestId,
      limit: deps.engine.memory.maxTicketBytes,
      finish: options.whole
        ? ({ hasNext: _, ...last }: ExecutionResult & { hasNext?: boolean }) => traced(last)
        : traced,
      traced: start.kind === "on",
    }),
    options.collected,
  );
}

/**
 * Router response stage: the operation counted (metrics, access log), its
 * trace finished, the result rendered in the negotiated media type with the
 * subgraph headers the rules let through and the entity cache's `Cache-Control`.
 */
function routerResponse(
  request: Request,
  deps: GraphQLDeps,
  options: { readonly exchange: Exchange; readonly done: Done },
): Response {
  const { start, params, mediaType, requestId } = options.exchange;
  const { prepared, refused, ticket, cachePolicy, collected } = options.done;
  let result = options.done.result;
  deps.telemetry?.operation(request, {
    prepared,
    result,
    query: params.query,
    operationName: params.operationName,
  });
  if (start.kind === "on") result = finishTrace(start, result, { request: params });
  try {
    const response = withSubgraphHeaders(
      graphQLResponse(result, mediaType, {
        traced: start.kind === "on",
        refused,
        requestId,
        limit: deps.engine.memory.maxTicketBytes,
        unsent: deps.engine.unsent,
        ...(ticket ? { ticket } : {}),
      }),
      collected,
    );
    // The entity cache's policy covers the parts it served too: it wins over a header rule's.
    const cacheControl = start.kind === "on" ? null : cachePolicy?.header() ?? null;
    if (cacheControl !== null && response.status === 200) {
      // An answer with errors is never cacheable, whatever its parts said.
      response.headers.set("cache-control", result.errors ? "no-store" : cacheControl);
    }
    return response;
  } catch (error) {
    ticket?.close();
    throw error;
  }
}

/** What a batch reads of the facet's dependencies. */
function batchDeps(deps: GraphQLDeps): BatchDeps {
  return {
    config: deps.config,
    maxResponseBytes: deps.engine.memory.maxTicketBytes,
    ...(deps.telemetry ? { telemetry: deps.telemetry } : {}),
  };
}

/** What an admitted operation runs with: its subgraph stages and the granted `@policy` names. */
interface Admitted {
  readonly stages?: SubgraphStages | undefined;
  readonly policies?: ReadonlySet<string> | undefined;
}

const NO_EXTRAS: Admitted = Object.freeze({});

/**
 * The one authorization door (`authorizeOperation`: `reject_operation_if_unauthorized`),
 * then the plugins' operation stage: the error to answer with, or what the operation runs
 * with. Sync unless a plugin hooks the operation stage (nothing to await without one).
 */
function admitOperation(
  request: Request,
  deps: GraphQLDeps,
  options: {
    readonly operation: PreparedOperation;
    readonly identity: VerifiedToken | null;
    readonly authorization: RequestAuthorization | undefined;
    readonly variables: Readonly<Record<string, unknown>> | null | undefined;
  },
): RouterError | Admitted | Promise<RouterError | Admitted> {
  const { operation, identity } = options;
  const refusal = authorizeOperation(operation, {
    identity,
    authorization: options.authorization,
    supergraph: deps.engine.model,
    subject: "The operation",
  });
  if (refusal !== null) return refusal;
  const staged = operationStage(request, { operation, identity, variables: options.variables });
  const stages = pluginRequestOf(request)?.stages;
  if (staged === null) return stages === undefined ? NO_EXTRAS : { stages };
  return staged.then((outcome) => outcome.error ?? { stages, policies: outcome.policies });
}

/** Adds the subgraph answer headers the response header rules let through. */
function withSubgraphHeaders(
  response: Response,
  collected: ResponseHeaderCollector | undefined,
): Response {
  collected?.apply(response.headers);
  return response;
}

/** Events of a traced subscription that carry a trace (the first ones). */
const TRACED_EVENTS = 3;

/** Answers a subscription with its HTTP stream (SSE or multipart). */
function subscriptionResponse(
  request: Request,
  deps: GraphQLDeps,
  options: {
    readonly stream: StreamTransport;
    readonly operation: PreparedOperation;
    /** Told the subscription's start: `{}`, or the errors it was refused with. */
    readonly counted: (result: ExecutionResult) => void;
    readonly variables: Readonly<Record<string, unknown>> | null | undefined;
    readonly identity: VerifiedToken | null;
    readonly requestId: string | null;
    readonly traceEvent?: (index: number) => EventTrace | null;
  },
): Response | Promise<Response> {
  const { requestId } = options;
  const started = startClientSubscription(deps, {
    operation: options.operation,
    variables: options.variables,
    headers: request.headers,
    identity: options.identity,
    requestId,
    plugin: pluginRequestOf(request),
    ...(options.traceEvent ? { traceEvent: options.traceEvent } : {}),
  });
  return started instanceof Promise
    ? started.then((result) => streamResponse(request, deps, { ...options, started: result }))
    : streamResponse(request, deps, { ...options, started });
}

/** A subscription's HTTP stream (SSE or multipart), or its refusal as one. */
function streamResponse(
  request: Request,
  deps: GraphQLDeps,
  options: {
    readonly stream: StreamTransport;
    readonly requestId: string | null;
    readonly started: StartedSubscription;
    readonly counted: (result: ExecutionResult) => void;
  },
): Response {
  const { requestId, started } = options;
  options.counted(started.ok ? {} : { errors: [...started.errors] });
  const streamOptions = {
    heartbeatMs: deps.config.subscriptions.heartbeat_interval_ms,
    signal: signalOf(request),
    print: (result: ExecutionResult) =>
      resultJson(
        requestId !== null && result.errors !== undefined
          ? { ...result, errors: withRequestId(result.errors, requestId) }
          : result,
      ),
  };
  if (!started.ok && started.errors[0]?.extensions?.code === "SUBSCRIPTION_LIMIT_REACHED") {
    // A refusal by the router's limits (capacity, max_total): 503 and when to try again, as
    // for an overloaded query, before any stream is opened.
    const errors = requestId === null ? started.errors : withRequestId(started.errors, requestId);
    return new Response(resultJson({ errors: [...errors] }), {
      status: 503,
      headers: { "content-type": `${APPLICATION_JSON}; charset=utf-8`, "retry-after": "1" },
    });
  }
  const subscription = started.ok ? started.subscription : started.errors;
  return options.stream === "sse"
    ? sseResponse(subscription, streamOptions)
    : multipartResponse(subscription, streamOptions);
}

/** The trace's start when tracing is off (no promise to await). */
const TRACE_OFF: TraceStart = Object.freeze({ kind: "off" });

/** No deferred parts (a whole result sent over SSE). */
const NONE: AsyncGenerator<never> = (async function* () {})();
