/**
 * The engine object: its options, its state (caches, admission, memory
 * budgets, subgraph client, subscriptions) and {@linkcode createEngine}.
 *
 * @module
 */
import type { Http1Pool, Resilience } from "../fetch/mod.ts";
import { type DocumentNode, type GraphQLFormattedError } from "graphql";
import type { HeadersConfig } from "../../config/mod.ts";
import {
  compileHeaderRules,
  compileResponseHeaderRules,
  createSubgraphClient,
  type HeaderPropagator,
  type ResponseHeaderRules,
  type SubgraphClient,
} from "../fetch/mod.ts";
import type { SupergraphModel } from "../../supergraph/mod.ts";
import {
  type AdaptiveLimitOptions,
  type AdmissionGate,
  ANSWER_COST_PER_BYTE,
  createAdaptiveLimit,
  createAdmissionGate,
  createMemoryBudget,
  createUnsentAnswers,
  Lru,
  type MemoryBudget,
  overloaded,
  type UnsentAnswers,
} from "../admission/mod.ts";
import { RAW_SUBGRAPH_ERRORS, SharedResults, type SubgraphErrorPolicy } from "../execute/mod.ts";
import type { EntityCacheSettings } from "../execute/mod.ts";
import { RouterError } from "../../errors.ts";
import {
  DEFAULT_OPERATION_LIMITS,
  type NField,
  type NSelection,
  type OperationLimits,
  type OverrideLabel,
  overrideLabelsOf,
} from "../prepare/mod.ts";
import { type PlannedOperation } from "../plan/mod.ts";
import {
  createSubscriptions,
  type Subscriptions,
  type SubscriptionsOptions,
} from "../subscriptions/mod.ts";
import type { EngineEvents, PreparedOperation, PrepareResult } from "../types.ts";
import {
  createDemandControl,
  type DemandControl,
  type DemandControlOptions,
} from "./_cost_state.ts";

/** The entity cache as the engine runs it: its settings and who a request's private data is for. */
export interface EngineEntityCache extends EntityCacheSettings {
  /**
   * The request's private id (`entity_cache.private_id`), or null (anonymous,
   * no such header): then private answers are not cached.
   */
  privateId(
    headers: Headers | undefined,
    identity: { readonly issuer?: string; readonly subject?: string } | null | undefined,
  ): string | null;
}

/** Sends one subgraph HTTP request (injected, so tests and traces can see it). */
export type SubgraphFetch = (request: Request) => Promise<Response>;

/** Options for {@linkcode createEngine}. */
export interface EngineOptions {
  /** Defaults to the global `fetch` (keep-alive connection pool). */
  readonly fetch?: SubgraphFetch;
  /** The HTTP/1.1 pool for plain `http:` subgraphs (`engine.subgraph_transport`). */
  readonly http1?: Http1Pool | null;
  /** `tls.subgraphs`' clients by entry name (`all` for the rest). */
  readonly httpClients?: ReadonlyMap<string, Deno.HttpClient>;
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
  /** The entity cache (`entity_cache`, docs/caching.md); none: subgraph answers are not cached. */
  readonly entityCache?: EngineEntityCache;
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
  /**
   * Progressive `@override` labels set on or off by name (`override_labels`); a
   * `percent(n)` label named here is not drawn. @default {}
   */
  readonly overrideLabels?: Readonly<Record<string, boolean>>;
  /** Subscriptions (`subscriptions`); absent: enabled with the defaults. */
  readonly subscriptions?: SubscriptionsOptions;
  /** Demand control (`demand_control`, `docs/demand-control.md`); absent: off. */
  readonly demandControl?: DemandControlOptions;
}

/** A cached plan with what shaping needs. */
/** @internal A cached plan and what it was planned for. */
export interface CachedPlan {
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
  /**
   * Which subgraph answer headers reach the client (`headers.*.response`); null
   * when no rule does. Facets collect each response's through `collect()`.
   */
  readonly responseHeaders: ResponseHeaderRules | null;
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
  /** @internal The entity cache, or null. */
  readonly entityCache: EngineEntityCache | null;
  /** @internal Access keys each prepared operation touches (plan cache key part). */
  readonly accessKeys: WeakMap<PreparedOperation, readonly string[]>;
  /** @internal Cache and fetch events (metrics); null when nobody listens. */
  readonly events: EngineEvents | null;
  /**
   * @internal Progressive `@override` labels of the supergraph, the random source
   * drawing them, and those the configuration sets on or off.
   */
  readonly overrideLabels: {
    readonly labels: readonly OverrideLabel[];
    readonly random: () => number;
    readonly configured: Readonly<Record<string, boolean>>;
  };
  /** Subscriptions: their upstream streams (deduplicated), the active ones and their counts. */
  readonly subscriptions: Subscriptions;
  /** @internal Demand control; null when off. */
  readonly demandControl: DemandControl | null;
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
    ...(options.httpClients ? { httpClients: options.httpClients } : {}),
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
    responseHeaders: compileResponseHeaderRules(options.headers, model.subgraphs.keys()),
    sharedResults: new SharedResults(),
    prepared: new Lru({ maxBytes: options.parseCacheMaxBytes ?? 16_000_000, maxEntries: size }),
    plans: new Lru({ maxBytes: options.planCacheMaxBytes ?? 16_000_000, maxEntries: size }),
    maxCachedDocumentBytes: options.maxCachedDocumentBytes ?? 64_000,
    client,
    abstractNames,
    overrideLabels: {
      labels: overrideLabelsOf(model),
      random: options.random ?? Math.random,
      configured: options.overrideLabels ?? {},
    },
    admission,
    memory,
    unsent,
    limits: options.limits ?? DEFAULT_OPERATION_LIMITS,
    introspection: options.introspection ?? true,
    subgraphErrors: options.subgraphErrors ?? RAW_SUBGRAPH_ERRORS,
    batchEntityFetches: options.batchEntityFetches ?? true,
    entityCache: options.entityCache ?? null,
    accessKeys: new WeakMap(),
    events: options.events ?? null,
    demandControl: options.demandControl ? createDemandControl(options.demandControl) : null,
    subscriptions: createSubscriptions(model, {
      connectTimeoutMs: options.subgraphRequestTimeoutMs ?? 30_000,
      ...(options.httpClients ? { httpClients: options.httpClients } : {}),
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
