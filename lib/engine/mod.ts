/**
 * The engine: the one door (`createEngine`, `execute`, `planOrCached`, `prepare`) to a
 * pipeline of stage folders, each with a `mod.ts` that says what it takes and gives:
 *
 * 1. `prepare/` — parse + validate (graphql-js), parser limits, normalize, introspection,
 *    variable coercion, field access (`@authenticated` / `@requiresScopes` removal); documents
 *    cached here by text + operation name, failures included.
 * 2. `plan/` — the federation planner (pure): query graph → paths → best choice → fetch graph
 *    → optimize → emit; plans cached by text + name + `@skip`/`@include` values + what field
 *    access removed, in an LRU bounded in bytes.
 * 3. `execute/` — walks the plan, merges subgraph data, re-paths subgraph errors, shapes the
 *    client's response (null propagation, leaf coercion).
 * 4. `fetch/` — the subgraph transport: HTTP/1 pool, body reading, header rules, retries,
 *    circuit breaker.
 * 0. `admission/` — the bounds around all of it: the admission queue (taken by the HTTP edge),
 *    the in-flight memory budget (charged as answers stream), unsent answers, cache costs.
 *
 * Introspection (`__schema`, `__type`) is answered from the API schema by graphql-js;
 * nothing else on the federated path uses graphql-js `execute`. The engine imports no
 * telemetry and no facet: it reports through the callbacks its caller hands it.
 *
 * Over 600 lines: this is the engine's one public entry (its options, its
 * type, `prepare`, `execute` and the re-exports); each stage lives in its own
 * folder listed above.
 *
 * @module
 */
import type { Http1Pool } from "./fetch/http1.ts";
import { type DocumentNode, execute as graphqlExecute, type GraphQLFormattedError } from "graphql";
import { touchedAccessKeys } from "../auth/mod.ts";
import type { HeadersConfig } from "../config/types.ts";
import type { SupergraphModel } from "../supergraph/mod.ts";
import { type AdmissionGate, createAdmissionGate, overloaded } from "./admission/queue.ts";
import { type AdaptiveLimitOptions, createAdaptiveLimit } from "./admission/adaptive_limit.ts";
import {
  type ExecutedData,
  executePlan,
  type ExecutePlanOptions,
  type PlanRun,
  startPlan,
} from "./execute/execute.ts";
import { deliveriesOf, deliverIncrementally, deliverySelection } from "./execute/incremental.ts";
import {
  accessSignature,
  type FieldIdentity,
  filterOperation,
  unauthorizedError,
} from "./prepare/field_access.ts";
import { compileHeaderRules, type HeaderPropagator } from "./fetch/headers.ts";
import { REQUEST_ID_HEADER } from "../request/request_id.ts";
import { SharedResults } from "./execute/shared_results.ts";
import {
  ANSWER_COST_PER_BYTE,
  createMemoryBudget,
  type MemoryBudget,
} from "./admission/memory_budget.ts";
import { createUnsentAnswers, type UnsentAnswers } from "./admission/unsent_answers.ts";
import type { Resilience } from "./fetch/resilient_fetch.ts";
import { RouterError } from "../errors.ts";
import { entryCost } from "./admission/cache_cost.ts";
import { introspectionDocument } from "./prepare/introspection.ts";
import { coerceVariables } from "./prepare/coerce_variables.ts";
import {
  checkVariableValues,
  DEFAULT_OPERATION_LIMITS,
  type OperationLimits,
} from "./prepare/limits.ts";
import { Lru } from "./admission/_lru.ts";
import { RAW_SUBGRAPH_ERRORS, type SubgraphErrorPolicy } from "./execute/subgraph_errors.ts";
import { type NField, normalizeOperation, type NSelection } from "./prepare/normalize.ts";
import {
  drawOverrideLabels,
  type OverrideLabel,
  overrideLabelsOf,
} from "./prepare/override_labels.ts";
import { type PlannedOperation, PlanningError, planOperation, type QueryPlan } from "./plan/mod.ts";
import { formatted, prepareOperation } from "./prepare/prepare.ts";
import { shapeResponse } from "./execute/shape.ts";
import { createSubgraphClient, type SubgraphClient } from "./fetch/subgraph_client.ts";
import {
  createSubscriptions,
  eventRunner,
  eventShareKey,
  refusal,
  rootFetchOf,
  startSubscription,
  type SubscribeOptions,
  type SubscribeResult,
  type Subscriptions,
  type SubscriptionsOptions,
} from "./execute/subscribe.ts";
import type { UpstreamEvent } from "./fetch/subscription_hub.ts";
import type {
  EngineEvents,
  ExecuteOptions,
  ExecutionObserver,
  ExecutionResult,
  GraphQLRequest,
  IncrementalResult,
  PartInfo,
  PreparedOperation,
  PrepareResult,
  RequestHooks,
} from "./types.ts";

export type * from "./types.ts";
export {
  accessSignature,
  type FieldIdentity,
  type FilteredOperation,
  filterOperation,
  UNAUTHORIZED_FIELD_OR_TYPE,
  unauthorizedError,
} from "./prepare/field_access.ts";
export type { FetchNode, FlattenNode, PlanNode, QueryPlan } from "./plan/mod.ts";
export {
  approximateDepth,
  checkJsonTextDepth,
  checkOperationLimits,
  checkTextDepth,
  checkVariableValues,
  type ComplexityLimit,
  countInputValues,
  DEFAULT_OPERATION_LIMITS,
  isLimitRefusal,
  measureDocument,
  type OperationLimits,
  operationLimitsOf,
  type OperationMeasure,
} from "./prepare/limits.ts";
export { findIntrospectionField, OfTypeDepthRule } from "./prepare/introspection.ts";
export {
  filterSubgraphError,
  RAW_SUBGRAPH_ERRORS,
  type SubgraphErrorPolicy,
  subgraphErrorPolicyOf,
} from "./execute/subgraph_errors.ts";
export { resilienceOf } from "./fetch/resilient_fetch.ts";
export { resultJson } from "./execute/shared_results.ts";
export type { BudgetTicket } from "./admission/memory_budget.ts";
export {
  createUnsentAnswers,
  STREAMED_ANSWER_BYTES,
  type UnsentAnswers,
} from "./admission/unsent_answers.ts";
export { createHttp1Pool, http1Eligible, type Http1Pool } from "./fetch/http1.ts";
export {
  endSubscriptions,
  type EventTrace,
  type SubscribeOptions,
  type SubscribeResult,
  type SubscriptionsOptions,
  type SubscriptionTargetOption,
} from "./execute/subscribe.ts";
export { EventStream, tooSlowError } from "./execute/subscription.ts";
export {
  openUpstream,
  type SubscriptionProtocol,
  type UpstreamTarget,
} from "./fetch/subscription_stream.ts";

/** Sends one subgraph HTTP request (injected, so tests and traces can see it). */
export type SubgraphFetch = (request: Request) => Promise<Response>;

/** Options for {@linkcode createEngine}. */
export interface EngineOptions {
  /** Defaults to the global `fetch` (keep-alive connection pool). */
  readonly fetch?: SubgraphFetch;
  /** The HTTP/1.1 pool for plain `http:` subgraphs (`engine.subgraph_transport`). */
  readonly http1?: Http1Pool | null;
  /** Header propagation rules (`headers`); default: nothing forwarded. */
  readonly headers?: HeadersConfig;
  /** Credential headers a `matching` rule never forwards, beyond `Authorization`, `Cookie`, `X-GW-Token`. */
  readonly credentialHeaders?: readonly string[];
  /** Share one response among identical in-flight subgraph requests. @default true */
  readonly enableSingleFlight?: boolean;
  /**
   * Sibling entity fetches to one subgraph (one plan level) share one request,
   * each an aliased `_entities` field (`execute/entity_batch.ts`). @default true
   */
  readonly batchEntityFetches?: boolean;
  /** Per-subgraph-request timeout in milliseconds. @default 30000 */
  readonly subgraphRequestTimeoutMs?: number;
  /** Plans (and prepared operations) kept. @default 1000 */
  readonly planCacheSize?: number;
  /** Estimated bytes of plans kept (`engine.execution_plan_cache_max_bytes`). @default 16 MB */
  readonly planCacheMaxBytes?: number;
  /** Estimated bytes of parsed + validated documents kept (`engine.parse_cache_max_bytes`). @default 16 MB */
  readonly parseCacheMaxBytes?: number;
  /** Longer documents are never cached (`engine.max_cached_document_bytes`). @default 64 KB */
  readonly maxCachedDocumentBytes?: number;
  /** Largest subgraph response body read, bytes. @default Infinity */
  readonly maxSubgraphResponseBytes?: number;
  /**
   * Subgraph answer bytes all running operations may hold
   * (`traffic_shaping.router.max_in_flight_bytes`); 0 = no budget. @default 0
   */
  readonly maxInFlightBytes?: number;
  /**
   * Bytes of answers handed to clients and not yet taken
   * (`traffic_shaping.router.max_unsent_answer_bytes`); 0 = not counted. @default 0
   */
  readonly maxUnsentAnswerBytes?: number;
  /** Told the bytes of each unsent answer ended to make room (a log line). */
  readonly onUnsentAnswerEnded?: (bytes: number) => void;
  /** Subgraph answer bytes one operation may read (`engine.max_response_bytes`). @default Infinity */
  readonly maxResponseBytes?: number;
  /** Retry policy and circuit breaker per subgraph (`traffic_shaping`); none: one attempt. */
  readonly resilience?: ReadonlyMap<string, Resilience>;
  /**
   * Request-body bytes all requests may hold, read and not yet answered
   * (`traffic_shaping.router.max_buffered_body_bytes`); 0 = no budget. @default 0
   */
  readonly maxBufferedBodyBytes?: number;
  /** Operations that may wait for admission (`traffic_shaping.router.max_queue_size`). @default Infinity */
  readonly maxQueueSize?: number;
  /** How long one may wait, ms (`traffic_shaping.router.max_queue_wait`). @default Infinity */
  readonly maxQueueWaitMs?: number;
  /**
   * Size of {@linkcode Engine.admission}: operations the HTTP edge lets run at
   * once, the others waiting in arrival order. 0 = no limit. @default 0
   */
  readonly maxConcurrentOperations?: number;
  /**
   * Sizes admission by the event-loop delay instead (used when
   * `maxConcurrentOperations` is 0; `engine.adaptive_concurrency`). @default none
   */
  readonly adaptiveConcurrency?: AdaptiveLimitOptions;
  /**
   * CPU time the serving threads used so far, µs, and the cores they have: the adaptive limit
   * grows only while they have CPU to spare. @default not measured
   */
  readonly cpu?: { readonly time: () => number; readonly cores: number };
  /** Operation limits (`security`), checked before validation. @default DEFAULT_OPERATION_LIMITS */
  readonly limits?: OperationLimits;
  /**
   * Answer `__schema` / `__type` (`introspection.enabled`); when off they are
   * refused and "Did you mean" suggestions are hidden. @default true
   */
  readonly introspection?: boolean;
  /** What clients see of subgraph errors (`subgraph_error_propagation`). @default RAW_SUBGRAPH_ERRORS */
  readonly subgraphErrors?: SubgraphErrorPolicy;
  /** Cache and subgraph fetch events (metrics, `lib/telemetry`). */
  readonly events?: EngineEvents;
  /** Random source drawing progressive `@override` `percent(n)` labels per request. @default Math.random */
  readonly random?: () => number;
  /** Subscriptions (`subscriptions`); absent: enabled with the defaults. */
  readonly subscriptions?: SubscriptionsOptions;
}

/** A cached plan with what shaping needs. */
interface CachedPlan {
  readonly planned: PlannedOperation;
  readonly selection: NSelection;
  readonly introspection: DocumentNode | null;
  readonly error: GraphQLFormattedError | null;
  /** Fields the authorization stage removed (answered null + `UNAUTHORIZED_FIELD_OR_TYPE`). */
  readonly denied: ReadonlySet<NField>;
  /** Their response paths (reject mode's errors). */
  readonly removed: readonly (readonly string[])[];
  /**
   * Incremental plans: each part's selection, made once for the plan (by the selection it
   * filters and the deliveries it keeps), and the copies of `denied` fields in them.
   */
  readonly parts?: {
    readonly selections: Map<NSelection, Map<string, NSelection>>;
    readonly denied: { readonly from: ReadonlySet<NField>; readonly to: Set<NField> };
  };
}

/** The engine state for one supergraph: model, plan cache, subgraph client. */
export interface Engine {
  readonly model: SupergraphModel;
  /** @internal Prepared operations by query text + operation name (failures included). */
  readonly prepared: Lru<string, PrepareResult>;
  /** @internal Plans by query text + operation name + `@skip`/`@include` values. */
  readonly plans: Lru<string, CachedPlan>;
  /** @internal Longer query texts are parsed and planned per request, never cached. */
  readonly maxCachedDocumentBytes: number;
  /** In-flight memory: subgraph answer bytes held by running operations. */
  readonly memory: MemoryBudget;
  /** Answers handed to clients and not yet taken (the edges send large ones through it). */
  readonly unsent: UnsentAnswers;
  /** @internal The subgraph HTTP client. */
  readonly client: SubgraphClient;
  /** @internal True when a header rule forwards client headers to some subgraph. */
  readonly forwardsHeaders: boolean;
  /** @internal Results of requests that merged the same shared answers. */
  readonly sharedResults: SharedResults;
  /** @internal Interface names (an `@interfaceObject` `__typename` never replaces a concrete one). */
  readonly abstractNames: ReadonlySet<string>;
  /**
   * Admission of operations (`engine.max_concurrent_operations`), taken by the
   * HTTP edge before a request's body is read (`lib/http/handler.ts`).
   */
  readonly admission: AdmissionGate;
  /** @internal Operation limits checked by {@linkcode prepare}. */
  readonly limits: OperationLimits;
  /** @internal Whether introspection is answered (`introspection.enabled`). */
  readonly introspection: boolean;
  /** @internal What clients see of subgraph errors. */
  readonly subgraphErrors: SubgraphErrorPolicy;
  /** @internal Whether sibling entity fetches to one subgraph share one request. */
  readonly batchEntityFetches: boolean;
  /** @internal Access keys each prepared operation touches (plan cache key part). */
  readonly accessKeys: WeakMap<PreparedOperation, readonly string[]>;
  /** @internal Cache and fetch events (metrics); null when nobody listens. */
  readonly events: EngineEvents | null;
  /** @internal Progressive `@override` labels of the supergraph, and the random source drawing them. */
  readonly overrideLabels: {
    readonly labels: readonly OverrideLabel[];
    readonly random: () => number;
  };
  /** Subscriptions: their upstream streams (deduplicated), the active ones and their counts. */
  readonly subscriptions: Subscriptions;
}

/**
 * Builds the engine for a supergraph model.
 * @param model The supergraph model.
 * @param options Subgraph client, header rules and cache options.
 * @returns The engine.
 */
export function createEngine(model: SupergraphModel, options: EngineOptions = {}): Engine {
  const size = options.planCacheSize ?? 1000;
  const propagators = new Map<string, HeaderPropagator | null>();
  for (const name of model.subgraphs.keys()) {
    propagators.set(
      name,
      compileHeaderRules(options.headers, name, {
        ...(options.credentialHeaders ? { credentials: options.credentialHeaders } : {}),
      }),
    );
  }
  const maxResponseBytes = options.maxResponseBytes ?? Infinity;
  const memory = createMemoryBudget({
    maxBytes: options.maxInFlightBytes ?? 0,
    maxTicketBytes: maxResponseBytes,
    tooLarge: responseTooLarge,
    onRelease: () => admission.pump(),
    costPerByte: ANSWER_COST_PER_BYTE,
    ...(options.maxQueueWaitMs === undefined ? {} : { maxWaitMs: options.maxQueueWaitMs }),
    overloaded: () => overloaded("memory_wait"),
  });
  const unsent = createUnsentAnswers({
    maxBytes: options.maxUnsentAnswerBytes ?? 0,
    ...(options.onUnsentAnswerEnded ? { onEnded: options.onUnsentAnswerEnded } : {}),
    onRelease: () => admission.pump(),
  });
  const fixed = options.maxConcurrentOperations ?? 0;
  const adaptive = fixed === 0 && options.adaptiveConcurrency
    ? createAdaptiveLimit(options.adaptiveConcurrency)
    : undefined;
  const admission = createAdmissionGate(fixed, {
    ...(adaptive ? { adaptive } : {}),
    ...(adaptive && options.cpu ? { cpuTime: options.cpu.time, cores: options.cpu.cores } : {}),
    // Nothing starts while answers in flight, or answers being read, fill their budgets.
    blocked: () => memory.spent || unsent.full,
    ...(options.maxQueueSize === undefined ? {} : { maxQueueSize: options.maxQueueSize }),
    ...(options.maxBufferedBodyBytes ? { maxBodyBytes: options.maxBufferedBodyBytes } : {}),
    ...(options.maxQueueWaitMs === undefined ? {} : { maxQueueWaitMs: options.maxQueueWaitMs }),
  });
  const client = createSubgraphClient({
    budget: memory,
    ...(options.resilience ? { resilience: options.resilience } : {}),
    subgraphs: model.subgraphs,
    propagators,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.http1 ? { http1: options.http1 } : {}),
    singleFlight: options.enableSingleFlight ?? true,
    ...(options.events ? { events: options.events } : {}),
    timeoutMs: options.subgraphRequestTimeoutMs ?? 30_000,
    ...(options.maxSubgraphResponseBytes === undefined
      ? {}
      : { maxResponseBytes: options.maxSubgraphResponseBytes }),
  });
  const abstractNames = new Set<string>();
  for (const type of model.types.values()) {
    if (type.kind === "interface") abstractNames.add(type.name);
  }
  return {
    model,
    forwardsHeaders: [...propagators.values()].some((p) => p !== null),
    sharedResults: new SharedResults(),
    prepared: new Lru({ maxBytes: options.parseCacheMaxBytes ?? 16_000_000, maxEntries: size }),
    plans: new Lru({ maxBytes: options.planCacheMaxBytes ?? 16_000_000, maxEntries: size }),
    maxCachedDocumentBytes: options.maxCachedDocumentBytes ?? 64_000,
    client,
    abstractNames,
    overrideLabels: { labels: overrideLabelsOf(model), random: options.random ?? Math.random },
    admission,
    memory,
    unsent,
    limits: options.limits ?? DEFAULT_OPERATION_LIMITS,
    introspection: options.introspection ?? true,
    subgraphErrors: options.subgraphErrors ?? RAW_SUBGRAPH_ERRORS,
    batchEntityFetches: options.batchEntityFetches ?? true,
    accessKeys: new WeakMap(),
    events: options.events ?? null,
    subscriptions: createSubscriptions(model, {
      connectTimeoutMs: options.subgraphRequestTimeoutMs ?? 30_000,
      ...options.subscriptions,
      propagators,
    }),
  };
}

/**
 * The error of an operation whose subgraph answers passed `engine.max_response_bytes`.
 * @param limit The limit, bytes.
 * @returns A `RESPONSE_TOO_LARGE` error.
 */
export function responseTooLarge(limit: number): RouterError {
  return new RouterError(
    "RESPONSE_TOO_LARGE",
    `The response would exceed ${limit} bytes (engine.max_response_bytes)`,
    { details: { limit } },
  );
}

/** Options of {@linkcode prepare}. */
export interface PrepareCallOptions {
  /** Trace hooks (parse/validate timings). */
  readonly observer?: ExecutionObserver;
}

/**
 * Parses, validates and selects the operation (cached by text + name, failures included).
 * @param engine The engine.
 * @param request The request.
 * @param options Observer for stage timings.
 * @returns The prepared operation or request errors.
 */
export function prepare(
  engine: Engine,
  request: GraphQLRequest,
  options: PrepareCallOptions = {},
): PrepareResult {
  const key = `${request.query}\u0000${request.operationName ?? ""}`;
  const cached = engine.prepared.get(key);
  engine.events?.cache("parse", cached !== undefined);
  if (cached) return cached;
  const observer = options.observer;
  const result = prepareOperation(engine.model.apiSchema, request, {
    limits: engine.limits,
    introspection: engine.introspection,
    ...(observer ? { now: () => observer.now(), stage: (n, s, e) => observer.stage(n, s, e) } : {}),
  });
  // The key (document and operation name, both the client's) decides: a huge name is no cheaper.
  if (key.length <= engine.maxCachedDocumentBytes) {
    engine.prepared.set(key, result, entryCost(key));
  }
  return result;
}

/**
 * Prepares a trusted document once, at load (persisted operations): the same
 * checks as {@linkcode prepare}, never the parse cache.
 * @param engine The engine.
 * @param request The document and operation name.
 * @returns The prepared operation or request errors.
 */
export function prepareUncached(
  engine: Engine,
  request: { readonly query: string; readonly operationName: string | null },
): PrepareResult {
  return prepareOperation(engine.model.apiSchema, request, {
    limits: engine.limits,
    introspection: engine.introspection,
  });
}

function accessKeysOf(engine: Engine, operation: PreparedOperation): readonly string[] {
  let keys = engine.accessKeys.get(operation);
  if (keys === undefined) {
    keys = touchedAccessKeys(operation.document, engine.model.apiSchema, engine.model.access, {
      operationName: operation.name,
    });
    engine.accessKeys.set(operation, keys);
  }
  return keys;
}

function planFor(
  engine: Engine,
  operation: PreparedOperation,
  variables: Readonly<Record<string, unknown>>,
  options: {
    readonly observer?: ExecutionObserver;
    readonly identity: FieldIdentity | null;
    readonly hooks?: RequestHooks;
    readonly incremental?: boolean;
  },
): CachedPlan {
  const hooks = options.hooks;
  const start = hooks ? performance.now() : 0;
  const entry = planOrCached(engine, operation, variables, options);
  engine.events?.cache("plan", entry.cached);
  hooks?.planned(entry.cached, start, performance.now());
  return entry.plan;
}

function planOrCached(
  engine: Engine,
  operation: PreparedOperation,
  variables: Readonly<Record<string, unknown>>,
  options: {
    readonly observer?: ExecutionObserver;
    readonly identity: FieldIdentity | null;
    readonly incremental?: boolean;
  },
): { readonly plan: CachedPlan; readonly cached: boolean } {
  const { observer, identity } = options;
  const incremental = options.incremental === true && operation.hasDefer === true;
  const conditions = operation.conditionVariables ?? [];
  let key = operation.key ?? "";
  for (const name of conditions) key += variables[name] === true ? "\u00011" : "\u00010";
  // What the identity removes is part of the plan (see field_access.ts). Only a
  // non-empty signature is appended: the common key stays the prepared operation's
  // own string, whose hash V8 has already computed (a cache hit hashes nothing new).
  const signature = accessSignature(accessKeysOf(engine, operation), engine.model.access, identity);
  if (signature !== "") key += `\u0002${signature}`;
  const { labels, random } = engine.overrideLabels;
  const active = labels.length === 0 ? null : drawOverrideLabels(labels, random);
  for (const label of active ?? []) key += "\u0003" + label;
  if (incremental) key += "\u0004";
  const cached = operation.key === undefined ? undefined : engine.plans.get(key);
  if (cached) {
    observer?.plan(cached.planned.plan, { cached: true });
    return { plan: cached, cached: true };
  }
  const t0 = observer?.now() ?? 0;
  const normalized = normalizeOperation(engine.model.apiSchema, operation.document, {
    operation: operation.operation,
    variables,
    incremental,
  });
  const t1 = observer?.now() ?? 0;
  observer?.stage("normalize", t0, t1);
  const filtered = filterOperation(normalized, { access: engine.model.access, identity });
  let planned: PlannedOperation = { plan: { kind: "QueryPlan", node: null }, step: null };
  let error: GraphQLFormattedError | null = null;
  try {
    // Every root field removed: nothing to fetch (the empty plan above), no planner call.
    if (filtered.operation.selection.fields.length > 0) {
      planned = planOperation(
        engine.model,
        filtered.operation,
        active ? { overrideLabels: active } : {},
      );
    }
  } catch (e) {
    // A planner bug must not become a 500: the client gets a request-scoped error.
    error = e instanceof PlanningError
      ? { message: e.message, extensions: { code: "QUERY_PLANNING_FAILED" } }
      : { message: "Query planning failed", extensions: { code: "INTERNAL" } };
  }
  observer?.stage("plan", t1, observer.now());
  const entry: CachedPlan = {
    planned,
    selection: normalized.selection,
    introspection: introspectionDocument(operation.document, operation.operation),
    error,
    denied: filtered.denied,
    removed: filtered.removed,
    ...(planned.defer
      ? {
        parts: {
          selections: new Map(),
          denied: { from: filtered.denied, to: new Set(filtered.denied) },
        },
      }
      : {}),
  };
  if (operation.key !== undefined && operation.key.length <= engine.maxCachedDocumentBytes) {
    engine.plans.set(key, entry, entryCost(key));
  }
  observer?.plan(planned.plan, { cached: false });
  return { plan: entry, cached: false };
}

/**
 * The plan of a prepared operation (from the plan cache, or planned and cached now).
 * Variables only decide `@skip`/`@include`; the plan is an anonymous request's (protected
 * fields removed, see `field_access.ts`).
 *
 * @example A plan is plain data
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSupergraph } from "../supergraph/mod.ts";
 * import { createEngine, planOf, prepare } from "./mod.ts";
 * const sdl = await Deno.readTextFile(new URL("../../schema/supergraph.graphql", import.meta.url));
 * const engine = createEngine(buildSupergraph(sdl));
 * const prepared = prepare(engine, { query: "{ users { id } }" });
 * assert.ok(prepared.ok);
 * assert.equal(planOf(engine, prepared.operation).node?.kind, "Fetch");
 * ```
 * @param engine The engine.
 * @param operation The prepared operation.
 * @param variables Coerced variables.
 * @returns The query plan.
 */
export function planOf(
  engine: Engine,
  operation: PreparedOperation,
  variables: Readonly<Record<string, unknown>> = {},
): QueryPlan {
  return planFor(engine, operation, variables, { identity: null }).planned.plan;
}

/**
 * The client's headers as header rules see them: with `X-Request-Id` set to
 * the request's id when they carry none or another (a copy; the client's
 * headers are immutable).
 */
function withRequestIdHeader(
  headers: Headers | undefined,
  requestId: string | null | undefined,
): Headers | undefined {
  if (requestId == null || headers?.get(REQUEST_ID_HEADER) === requestId) return headers;
  const copy = new Headers(headers);
  copy.set(REQUEST_ID_HEADER, requestId);
  return copy;
}

/** The operation's variables coerced (their nesting and count bounded first), or the request errors. */
function variablesOf(
  engine: Engine,
  operation: PreparedOperation,
  given: Readonly<Record<string, unknown>> | null | undefined,
): { readonly variables: Record<string, unknown> } | ExecutionResult & { errors: unknown[] } {
  const values = (given ?? {}) as Record<string, unknown>;
  // Coercion recurses per level of a value and costs per value: both are bounded first.
  const overLimit = checkVariableValues(values, engine.limits, {
    counted: operation.inputValues ?? 0,
  });
  if (overLimit !== null) return { errors: [overLimit] };
  const coerced = coerceVariables(
    engine.model.apiSchema,
    operation.operation.variableDefinitions ?? [],
    values,
    { maxErrors: 50, hideSuggestions: !engine.introspection },
  );
  if (coerced.errors) {
    return { errors: coerced.errors.map((e) => formatted(e, "BAD_USER_INPUT")) };
  }
  return { variables: coerced.coerced };
}

/**
 * Starts a subscription: coerces its variables, plans it (cached, with the identity's
 * protected fields removed), joins the upstream stream of its root fetch (deduplicated) and
 * gives the client's stream, whose results are each event run through the rest of the plan
 * and shaped like a query's answer.
 * @param engine The engine.
 * @param operation The prepared subscription.
 * @param options Variables, connect headers, identity.
 * @returns The client's stream, or the request errors.
 */
export function subscribe(
  engine: Engine,
  operation: PreparedOperation,
  options: SubscribeOptions = {},
): SubscribeResult {
  const subs = engine.subscriptions;
  if (operation.kind !== "subscription") {
    return refusal(`Not a subscription: this is a ${operation.kind}`, "BAD_REQUEST");
  }
  if (!subs.enabled) {
    return refusal("Subscriptions are disabled (subscriptions.enabled)", "SUBSCRIPTIONS_DISABLED");
  }
  const coerced = variablesOf(engine, operation, options.variables);
  if ("errors" in coerced) return { ok: false, result: coerced };
  const variables = coerced.variables;
  const planned = planFor(engine, operation, variables, { identity: options.identity ?? null });
  if (planned.error) return { ok: false, result: { errors: [planned.error] } };
  if (options.rejectUnauthorized && planned.removed.length > 0) {
    return {
      ok: false,
      result: { errors: planned.removed.map((path) => unauthorizedError(path)) },
    };
  }
  const root = rootFetchOf(planned.planned.step);
  if (root === null) {
    return refusal(
      planned.removed.length > 0
        ? "The subscription's field is not authorized for this identity"
        : "The subscription selects no field a subgraph streams",
      planned.removed.length > 0 ? "UNAUTHORIZED_FIELD_OR_TYPE" : "BAD_REQUEST",
    );
  }
  const headers = engine.forwardsHeaders
    ? withRequestIdHeader(options.headers, options.requestId)
    : options.headers;
  const step = planned.planned.step;
  const limit = engine.memory.maxTicketBytes;
  const runEvent = async (
    event: UpstreamEvent,
    observer: ExecutionObserver | undefined,
  ): Promise<ExecutionResult> => {
    observer?.plan(planned.planned.plan, { cached: true });
    const ticket = engine.memory.open();
    const sendOptions = { ticket, idempotent: true, ...(headers ? { headers } : {}) };
    let executed;
    try {
      executed = await executePlan(step, {
        send: (subgraph, body) => engine.client.send(subgraph, body, sendOptions),
        answered: {
          step: root,
          response: {
            status: 200,
            headers: EMPTY_HEADERS,
            body: event.body,
            deduplicated: true,
            parsed: event.parsed,
          },
        },
        variables,
        operationKind: "subscription",
        sharedResponses: true,
        ...engineRunOptions(engine, { headers, observer }),
      });
    } finally {
      ticket.close();
    }
    if (ticket.exceeded) {
      const error = responseTooLarge(limit);
      return { data: null, errors: [{ message: error.message, extensions: { code: error.code } }] };
    }
    return shaped(planned, executed, limit);
  };
  const run = eventRunner({
    shareKey: eventShareKey(subs, { plan: planned, variables, headers }),
    run: runEvent,
    ...(options.traceEvent ? { traceEvent: options.traceEvent } : {}),
  });
  return startSubscription(subs, { root, variables, headers, run });
}

/** What every plan run of the engine passes to `executePlan` (the rest is the request's). */
function engineRunOptions(
  engine: Engine,
  options: {
    readonly headers: Headers | undefined;
    readonly observer: ExecutionObserver | undefined;
  },
) {
  const { headers, observer } = options;
  const limit = engine.memory.maxTicketBytes;
  return {
    abstractNames: engine.abstractNames,
    subgraphErrors: engine.subgraphErrors,
    batchEntityFetches: engine.batchEntityFetches,
    maxBytes: limit,
    tooLarge: () => responseTooLarge(limit),
    ...(observer
      ? {
        observer,
        describe: (subgraph: string, body: string) =>
          engine.client.describe(subgraph, body, headers),
      }
      : {}),
  };
}

/** The client's answer: its selection shaped over the merged data (null propagation, limit). */
function shaped(planned: CachedPlan, executed: ExecutedData, limit: number): ExecutionResult {
  const errors = executed.errors;
  const data = shapeResponse(executed.data, planned.selection, {
    errors,
    layers: executed.layers,
    denied: planned.denied,
    bytes: executed.errorBytes,
    maxBytes: limit,
    tooLarge: () => responseTooLarge(limit),
  });
  return errors.length > 0 ? { data, errors } : { data };
}

/** The headers of an event's answer (none: it came over a stream). */
const EMPTY_HEADERS = new Headers();

/** What {@linkcode begin} settled: an answer already, or the plan and the coerced variables. */
type Begun =
  | { readonly result: ExecutionResult }
  | { readonly planned: CachedPlan; readonly variables: Record<string, unknown> };

/** Coerces the variables and plans (cached): the steps before any fetch. */
function begin(
  engine: Engine,
  operation: PreparedOperation,
  options: ExecuteOptions,
  incremental: boolean,
): Begun {
  if (operation.kind === "subscription") {
    return {
      result: {
        errors: [{
          message:
            "A subscription is served as a stream: use GraphQL over WebSocket, GraphQL over SSE or multipart HTTP",
          extensions: { code: "BAD_REQUEST" },
        }],
      },
    };
  }
  const coerced = variablesOf(engine, operation, options.variables);
  if ("errors" in coerced) return { result: coerced };
  const variables = coerced.variables;
  const planned = planFor(engine, operation, variables, {
    ...(options.observer ? { observer: options.observer } : {}),
    identity: options.identity ?? null,
    ...(options.hooks ? { hooks: options.hooks } : {}),
    incremental,
  });
  if (planned.error) return { result: { data: null, errors: [planned.error] } };
  if (options.rejectUnauthorized && planned.removed.length > 0) {
    // `authorization.reject_operation_if_unauthorized`: nothing runs, each removed field says why.
    return { result: { errors: planned.removed.map((path) => unauthorizedError(path)) } };
  }
  return { planned, variables };
}

/** The executor's options of one request: its subgraph sender (headers, sharing), observer. */
function planOptionsOf(
  engine: Engine,
  operation: PreparedOperation,
  options: ExecuteOptions & {
    readonly ticket: ReturnType<MemoryBudget["open"]>;
    readonly variables: Record<string, unknown>;
  },
): ExecutePlanOptions {
  const { observer, ticket } = options;
  // Only header rules read the client's headers: the copy with the id is made for them.
  const headers = engine.forwardsHeaders
    ? withRequestIdHeader(options.headers, options.requestId)
    : options.headers;
  const sendOptions = {
    ticket,
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(headers ? { headers } : {}),
    // Nothing changes these headers during the request: what each subgraph gets from
    // them is worked out once per request, not once per fetch.
    ...(engine.forwardsHeaders ? { forwarded: new Map() } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(observer ? { now: () => observer.now() } : {}),
  };
  // Only queries share subgraph responses, and only with single flight on.
  const shared = engine.client.singleFlight && operation.kind === "query";
  // A mutation merges in place: not even its entity queries join another request's
  // answer (its writes would land in the data that request reads).
  const queryOptions = { ...sendOptions, idempotent: true, ...(shared ? {} : { unshared: true }) };
  const mutationOptions = { ...sendOptions, unshared: true };
  return {
    send: (subgraph, body, shareable) =>
      engine.client.send(subgraph, body, shareable ? queryOptions : mutationOptions),
    variables: options.variables,
    operationKind: operation.kind,
    sharedResponses: shared,
    ...engineRunOptions(engine, { headers, observer }),
  };
}

/** Runs the introspection part of an operation (graphql-js), or null when it has none. */
function introspect(
  engine: Engine,
  planned: CachedPlan,
  variables: Record<string, unknown>,
) {
  return planned.introspection
    ? graphqlExecute({
      schema: engine.model.apiSchema,
      document: planned.introspection,
      variableValues: variables,
    })
    : null;
}

/** Merges an introspection answer into the data and errors (plain objects). */
function mergeIntrospection(
  introspected: Awaited<ReturnType<typeof introspect>>,
  into: { readonly data: Record<string, unknown>; readonly errors: GraphQLFormattedError[] },
): void {
  if (!introspected) return;
  // Plain objects (graphql-js builds null-prototype ones); introspection only, so rare.
  if (introspected.data) Object.assign(into.data, JSON.parse(JSON.stringify(introspected.data)));
  for (const e of introspected.errors ?? []) into.errors.push(e.toJSON());
}

/**
 * Coerces variables, plans (cached) and executes the operation. Requests that
 * merged the same shared subgraph answers get the same result object: treat
 * results as immutable (print one with {@linkcode resultJson}). `@defer` is
 * ignored here (one answer); see {@linkcode executeIncremental}.
 * @param engine The engine.
 * @param operation The prepared operation.
 * @param options Variables, headers, signal, observer.
 * @returns The GraphQL response (no `data` key for request errors).
 */
export async function execute(
  engine: Engine,
  operation: PreparedOperation,
  options: ExecuteOptions = {},
): Promise<ExecutionResult> {
  const begun = begin(engine, operation, options, false);
  if ("result" in begun) return begun.result;
  return await executeWhole(engine, operation, { ...options, ...begun });
}

async function executeWhole(
  engine: Engine,
  operation: PreparedOperation,
  options: ExecuteOptions & {
    readonly planned: CachedPlan;
    readonly variables: Record<string, unknown>;
  },
): Promise<ExecutionResult> {
  const { planned, variables, observer } = options;
  // The GraphQL edge opens the ticket (it keeps the rendered answer charged while it is read).
  const ticket = options.ticket ?? engine.memory.open();
  let executed, introspected;
  try {
    [executed, introspected] = await Promise.all([
      executePlan(planned.planned.step, planOptionsOf(engine, operation, { ...options, ticket })),
      introspect(engine, planned, variables),
    ]);
  } finally {
    if (options.ticket === undefined) ticket.close();
  }
  if (ticket.exceeded) throw responseTooLarge(engine.memory.maxTicketBytes);
  if (ticket.refused) throw overloaded("memory_wait");
  const errors = executed.errors;
  mergeIntrospection(introspected, { data: executed.data, errors });
  // Requests that merged the same shared answers under one cached plan built the
  // same data: the first one's result serves them all (shared_results.ts). A
  // trace or an introspection part is the request's own.
  const answers = observer === undefined && introspected === null && operation.key !== undefined
    ? executed.answers
    : null;
  if (answers !== null) {
    const kept = engine.sharedResults.find(planned, answers);
    if (kept !== undefined) return kept;
  }
  const result = shaped(planned, executed, engine.memory.maxTicketBytes);
  if (answers !== null) engine.sharedResults.keep(planned, answers, result);
  return result;
}

/**
 * Like {@linkcode execute}, honouring `@defer`: an operation with deferred fragments that
 * need fetches of their own answers incrementally (the primary part, then each deferred part
 * as its branch completes; `docs/defer.md`); any other answers once.
 * @param engine The engine.
 * @param operation The prepared operation.
 * @param options Variables, headers, signal, observer.
 * @returns One result, or an incremental one.
 */
export async function executeIncremental(
  engine: Engine,
  operation: PreparedOperation,
  options: ExecuteOptions = {},
): Promise<ExecutionResult | IncrementalResult> {
  const begun = begin(engine, operation, options, operation.hasDefer === true);
  if ("result" in begun) return begun.result;
  const defer = begun.planned.planned.defer;
  if (defer === undefined) return await executeWhole(engine, operation, { ...options, ...begun });
  const { planned, variables } = begun;
  const ticket = engine.memory.open();
  const limit = engine.memory.maxTicketBytes;
  let run: PlanRun;
  let data: Record<string, unknown> | null;
  const errors: GraphQLFormattedError[] = [];
  const memo = planned.parts!;
  const denied = memo.denied;
  /** A part's selection, once per plan. */
  const select = (selection: NSelection, deliveries: ReadonlySet<number>): NSelection => {
    let bySet = memo.selections.get(selection);
    if (!bySet) memo.selections.set(selection, bySet = new Map());
    const key = [...deliveries].join(",");
    let out = bySet.get(key);
    if (!out) bySet.set(key, out = deliverySelection(selection, deliveries, denied));
    return out;
  };
  const shape = (
    raw: Record<string, unknown>,
    selection: NSelection,
    at: { readonly errors: GraphQLFormattedError[]; readonly at?: readonly (string | number)[] },
  ) =>
    shapeResponse(raw, selection, {
      errors: at.errors,
      layers: run.layers,
      denied: denied.to,
      bytes: run.errorBytes(),
      maxBytes: limit,
      tooLarge: () => responseTooLarge(limit),
      ...(at.at ? { at: at.at } : {}),
    });
  try {
    run = startPlan(planOptionsOf(engine, operation, { ...options, ticket, variables }));
    const [, introspected] = await Promise.all([
      run.run(defer.primary),
      introspect(engine, planned, variables),
    ]);
    if (ticket.exceeded) throw responseTooLarge(limit);
    errors.push(...run.takeErrors());
    mergeIntrospection(introspected, { data: run.data, errors });
    const primary = select(planned.selection, deliveriesOf(defer, 0));
    data = shape(run.data, primary, { errors });
  } catch (error) {
    ticket.close();
    throw error;
  }
  const more = data !== null && defer.deferred.some((d) => d.step !== null);
  const observer = options.observer;
  observer?.part?.({ index: 0, labels: [], hasNext: more });
  engine.events?.part?.(more ? "primary" : "last");
  const initial = { data, ...(errors.length > 0 ? { errors } : {}), hasNext: more };
  if (!more) {
    ticket.close();
    return { initial, subsequent: (async function* () {})() };
  }
  const parts = deliverIncrementally({
    run: run!,
    defer,
    selection: planned.selection,
    select,
    sent: structuredClone(data!),
    shape: (raw, selection, at) => shape(raw, selection, at),
    ...(observer ? { onPart: (info: PartInfo) => observer.part?.(info) } : {}),
  });
  const subsequent = (async function* () {
    try {
      for await (const part of parts) {
        if (ticket.exceeded) throw responseTooLarge(limit);
        engine.events?.part?.(part.hasNext ? "deferred" : "last");
        yield part;
      }
    } finally {
      ticket.close();
    }
  })();
  return { initial, subsequent };
}
