/**
 * The engine's public contract: what the GraphQL, MCP and Connect facets call,
 * and the observer hooks the trace recorder implements. The engine owner may
 * add members; renaming or removing one breaks the facets.
 *
 * @module
 */
import type { DocumentNode, GraphQLFormattedError, OperationDefinitionNode } from "graphql";
import type { CachePolicy } from "./execute/cache_control.ts";
import type { BudgetTicket } from "./admission/mod.ts";
import type { QueryPlan } from "./plan/types.ts";

/** A GraphQL request as a facet received it. */
export interface GraphQLRequest {
  readonly query: string;
  readonly operationName?: string | null | undefined;
  readonly variables?: Readonly<Record<string, unknown>> | null | undefined;
  readonly extensions?: Readonly<Record<string, unknown>> | null | undefined;
}

/** The three operation kinds. */
export type OperationKind = "query" | "mutation" | "subscription";

/** A parsed, validated, selected operation (cached by query text + operation name). */
export interface PreparedOperation {
  readonly kind: OperationKind;
  /** The operation's name, null when anonymous. */
  readonly name: string | null;
  readonly document: DocumentNode;
  readonly operation: OperationDefinitionNode;
  /** Plan cache key (query text + operation name); set by `prepare`. */
  readonly key?: string;
  /** Variables deciding `@skip`/`@include` (part of the plan cache key); set by `prepare`. */
  readonly conditionVariables?: readonly string[];
  /** The text names `@defer` (incremental delivery may apply); set by `prepare`. */
  readonly hasDefer?: boolean;
  /** Input values written in the document (`max_input_values`); set by `prepare`. */
  readonly inputValues?: number;
}

/** Result of {@linkcode prepare}-like stages: the operation, or request errors. */
export type PrepareResult =
  | { readonly ok: true; readonly operation: PreparedOperation }
  | {
    readonly ok: false;
    /**
     * Which stage failed: `parse` (syntax), `limits` (operation limits or
     * disabled introspection, checked before validation), `validate`, or
     * `select` (operationName).
     */
    readonly stage: "parse" | "limits" | "validate" | "select";
    readonly errors: readonly GraphQLFormattedError[];
  };

/**
 * A GraphQL response. A result without a `data` key is a request error (parse,
 * validation, variable coercion): GraphQL over HTTP answers it with 4xx.
 */
export interface ExecutionResult {
  data?: Record<string, unknown> | null;
  errors?: GraphQLFormattedError[];
  extensions?: Record<string, unknown>;
}

/** One entry of a subsequent incremental payload (`@defer`, Apollo's `deferSpec=20220824`). */
export interface IncrementalEntry {
  /** The deferred fragment's fields of the object at `path` (null: nulled by an error). */
  readonly data: Record<string, unknown> | null;
  /** The object's response path, list indexes included. */
  readonly path: readonly (string | number)[];
  readonly label?: string;
  readonly errors?: GraphQLFormattedError[];
}

/** A payload after the first of an incremental answer. */
export interface SubsequentResult {
  readonly incremental?: readonly IncrementalEntry[];
  readonly hasNext: boolean;
}

/**
 * An incremental answer (`@defer`): the primary part now, the deferred parts as they
 * complete. Iterate `subsequent` to the end (or `return()` it): it holds the request's
 * memory ticket until then.
 */
export interface IncrementalResult {
  readonly initial: ExecutionResult & { readonly hasNext: boolean };
  readonly subsequent: AsyncGenerator<SubsequentResult>;
}

/** Per-request options of execution. */
export interface ExecuteOptions {
  readonly variables?: Readonly<Record<string, unknown>> | null | undefined;
  /** The client's request headers (propagated to subgraphs by the header rules). */
  readonly headers?: Headers;
  /**
   * The request's id. Header rules see it as `X-Request-Id` when `headers`
   * carry none or another (a generated id), as if the client had sent it.
   */
  readonly requestId?: string | null;
  /** Aborts subgraph fetches (client gone, Connect-Timeout-Ms). */
  readonly signal?: AbortSignal;
  /** Trace hooks; absent when tracing is off (then no timing calls, no copies). */
  readonly observer?: ExecutionObserver;
  /**
   * The request's verified identity (a verified token's scopes). Absent or null:
   * anonymous, so every `@authenticated` / `@requiresScopes` field is removed
   * before planning and answered null + `UNAUTHORIZED_FIELD_OR_TYPE`.
   */
  readonly identity?: {
    readonly scopeSet: ReadonlySet<string>;
    /** The verified token's issuer and subject (the entity cache's `token_subject`). */
    readonly issuer?: string;
    readonly subject?: string;
  } | null;
  /**
   * Filled with the client answer's `Cache-Control` as the entity cache serves
   * and stores its parts (`entity_cache`); absent: not told.
   */
  readonly cachePolicy?: CachePolicy;
  /** Telemetry hooks of this request (spans, fetch count); absent when telemetry is off. */
  readonly hooks?: RequestHooks;
  /** Extension stages around each subgraph fetch (plugins, the coprocessor); absent: none. */
  readonly stages?: SubgraphStages;
  /** The `@policy` names a plugin or the coprocessor granted; absent: none (those fields are removed). */
  readonly policies?: ReadonlySet<string>;
  /**
   * The memory-budget ticket to charge, opened by the caller (`engine.memory.open()`),
   * which closes it once the response is rendered (issue 34: the rendered text
   * is part of what an answer costs). Absent: execute opens one and closes it
   * when the subgraph fetches are done.
   */
  readonly ticket?: BudgetTicket;
  /**
   * Told each subgraph answer's headers, as it arrives: the response header
   * rules' collector (`engine.responseHeaders.collect().add`). Absent: not read.
   */
  readonly subgraphHeaders?: (subgraph: string, headers: Headers) => void;
  /**
   * Progressive `@override` labels this request sets on or off by name (a
   * plugin's or the request context's), over `override_labels`; the plan cache
   * key holds the labels in effect. Absent: the configuration's, then `percent(n)` draws.
   */
  readonly overrideLabels?: Readonly<Record<string, boolean>>;
  /**
   * The files of a multipart request (file uploads), sent with the one root
   * fetch whose operation uses the variables holding them; an operation whose
   * plan cannot route them is refused (`FILE_UPLOAD_NOT_ROUTABLE`).
   */
  readonly uploads?: UploadedFiles;
}

/** The files of a multipart request (the GraphQL multipart request specification). */
export interface UploadedFiles {
  /** The top-level variables whose values hold files. */
  readonly variables: ReadonlySet<string>;
  /**
   * The multipart body of the fetch that takes them: its JSON body as the
   * `operations` field, the `map`, then the files as they arrive.
   * @param operations The fetch's JSON body.
   */
  body(operations: string): MultipartBody;
}

/** A streamed request body and its content type (with its boundary). */
export interface MultipartBody {
  readonly stream: ReadableStream<Uint8Array>;
  readonly contentType: string;
}

/** Pipeline stages timed for the trace. */
export type StageName = "parse" | "normalize" | "validate" | "plan";

/** A subgraph request as sent. */
export interface FetchRequestRecord {
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
  /** The JSON body sent. */
  readonly body: string;
}

/** A subgraph response as received. */
export interface FetchResponseRecord {
  readonly status: number;
  readonly headers: Headers;
  /** The response body text. */
  readonly body: string;
}

/** One executed fetch, reported once it settled. Times are `observer.now()` values. */
export interface FetchRecord {
  /** Plan fetch node identity (the object from the plan). */
  readonly node: unknown;
  /** `Single` (root fetch), `Entity` (one representation) or `BatchEntity`. */
  readonly kind: "Single" | "Entity" | "BatchEntity";
  readonly subgraph: string;
  /** Response path the fetch merges at, e.g. `query.topProducts.@.reviews`. */
  readonly path: string;
  /** The data the input was rendered from (representations' source objects), or null. */
  readonly rawInputData: unknown;
  readonly request: FetchRequestRecord;
  /** Absent when the fetch failed before a response. */
  readonly response?: FetchResponseRecord;
  /** Transport error message, when the fetch failed. */
  readonly error?: string;
  /** True when the response was shared with an identical in-flight request. */
  readonly deduplicated: boolean;
  /**
   * The entity cache's part (`entity_cache`): `hit` — served from the cache,
   * nothing sent; `partial` — only the entities the cache missed were asked for.
   */
  readonly cached?: "hit" | "partial";
  readonly startNs: number;
  /** When response headers arrived. */
  readonly firstByteNs?: number;
  readonly endNs: number;
}

/** Hooks the engine calls while tracing; implemented by `lib/trace`. */
export interface ExecutionObserver {
  /** Monotonic clock in nanoseconds. */
  now(): number;
  /** A pipeline stage took place between two `now()` values. */
  stage(name: StageName, startNs: number, endNs: number): void;
  /** The plan about to run, and whether it came from the plan cache. */
  plan(plan: unknown, info: { readonly cached: boolean }): void;
  /** A fetch settled. */
  fetch(record: FetchRecord): void;
  /**
   * A part of an incremental answer (`@defer`) is ready to send: `0` the primary part, then
   * 1, 2, …; the labels of the deferred fragments it carries. Absent: parts are not recorded.
   */
  part?(info: PartInfo): void;
  /** Demand control's figures (the trace's `info.cost`). Absent: not recorded. */
  cost?(report: CostReport): void;
}

/** What {@linkcode ExecutionObserver.part} is told. */
export interface PartInfo {
  readonly index: number;
  readonly labels: readonly string[];
  /** More parts follow. */
  readonly hasNext: boolean;
}

/**
 * Telemetry of one subgraph fetch, from {@linkcode RequestHooks.fetch}: headers
 * to add to the subgraph request (W3C trace context) and its end.
 */
export interface FetchHook {
  /** Headers added to the subgraph request, or null. */
  readonly headers: readonly (readonly [string, string])[] | null;
  /**
   * The fetch settled: the HTTP status (null without a response), the error
   * when it failed, and whether the response was shared from another request's fetch.
   */
  end(status: number | null, error: unknown, shared: boolean): void;
}

/** A subgraph request as an extension stage sees it (`SubgraphStages.request`). */
export interface StagedSubgraphRequest {
  /** The subgraph's name. */
  readonly subgraph: string;
  /** Its URL. */
  readonly url: string;
  /**
   * The headers to send, header rules applied; what the stage leaves in it is
   * sent (made on first read: a stage that does not read them costs no copy).
   */
  readonly headers: Headers;
  /** The JSON body to send; the stage may replace it. */
  body: string;
}

/** A subgraph answer as an extension stage sees it (`SubgraphStages.response`). */
export interface StagedSubgraphResponse {
  /** The subgraph's name. */
  readonly subgraph: string;
  /** The HTTP status. */
  readonly status: number;
  /** The answer's headers (a copy made on first read: what the stage leaves in it goes on). */
  readonly headers: Headers;
  /** The answer's body; the stage may replace it. */
  body: string;
}

/**
 * Extension stages around each subgraph fetch of one request (`lib/plugins`:
 * TypeScript plugins and the coprocessor). A stage that rejects refuses the
 * fetch: its error is the fetch's. Absent: the fetch path awaits nothing more;
 * a stage that answers without a promise is not awaited either.
 */
export interface SubgraphStages {
  /**
   * The operation is planned, nothing fetched yet (queries and mutations): a
   * rejection refuses the operation (its error is thrown by `execute`).
   */
  readonly plan?: (plan: QueryPlan) => Promise<void> | void;
  /** Before the fetch (after header rules): may change the headers and the body. */
  readonly request?: (request: StagedSubgraphRequest) => Promise<void> | void;
  /** After the answer is read: may change its headers and body. */
  readonly response?: (response: StagedSubgraphResponse) => Promise<void> | void;
}

/** Demand control's figures of one operation (or one subscription event). */
export interface CostReport {
  /** The estimated cost; null when it could not be made. */
  readonly estimated: number | null;
  /** The actual cost of the answer; null when refused before execution or without data. */
  readonly actual: number | null;
  /**
   * `COST_OK`, `COST_ESTIMATED_TOO_EXPENSIVE`, `COST_ACTUAL_TOO_EXPENSIVE` or
   * `COST_QUERY_PARSE_FAILURE` (in measure mode: what enforce mode would have decided).
   */
  readonly result: string;
}

/** Per-request telemetry hooks (`lib/telemetry`); absent when telemetry is off. */
export interface RequestHooks {
  /** A subgraph fetch of this request starts. */
  fetch(subgraph: string): FetchHook;
  /** The operation was planned (`cached`: from the plan cache) between two `performance.now()` values. */
  planned(cached: boolean, startMs: number, endMs: number): void;
  /** A fetch was looked up in the entity cache (`entity_cache`): all found, some, or none. */
  cached?(outcome: "hit" | "partial" | "miss"): void;
  /** Demand control measured the operation (access log, span). Absent: not reported. */
  cost?(report: CostReport): void;
}

/** Router-wide engine events (metrics), whatever the facet; see `EngineOptions.events`. */
export interface EngineEvents {
  /** A parse/validate or plan cache lookup. */
  cache(cache: "parse" | "plan", hit: boolean): void;
  /** A subgraph fetch settled (once per HTTP request sent, shared ones not again). */
  fetched(subgraph: string, info: {
    readonly seconds: number;
    readonly status: number | null;
    readonly error: unknown;
  }): void;
  /** A caller got the response of an identical in-flight request (single flight). */
  shared(subgraph: string): void;
  /** A subgraph request is retried (once per retry, before its back-off). */
  retried?(subgraph: string): void;
  /** A retry was not sent: the subgraph's retry budget is spent. */
  retryBudgetExhausted?(subgraph: string): void;
  /**
   * A part of an incremental answer (`@defer`) is ready: `primary` (the first), `deferred`
   * (more follow) or `last`.
   */
  part?(kind: "primary" | "deferred" | "last"): void;
  /**
   * The open circuit breaker refused a subgraph request (nothing sent; then
   * no `fetched` for it).
   */
  circuitOpen?(subgraph: string): void;
  /** Demand control measured an operation or a subscription event (cost histograms). */
  cost?(report: CostReport): void;
}
