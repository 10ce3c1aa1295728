/**
 * The engine: the one door (`createEngine`, `execute`, `planOf`, `prepare`) to a
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
 * 4b. `subscriptions/` — subscriptions below the client's protocol: deduplicated upstream
 *    streams, each client's bounded event stream, the per-event runner, fan-out capacity.
 * 5. `pipeline/` — what ties them together: the engine object and its caches
 *    (`createEngine`), the cached prepare and plan steps, and running an
 *    operation (`execute`, `executeIncremental`, `subscribe`). This file is
 *    the door: it only re-exports.
 *
 * Introspection (`__schema`, `__type`) is answered from the API schema by graphql-js;
 * nothing else on the federated path uses graphql-js `execute`. The engine imports no
 * telemetry and no facet: it reports through the callbacks its caller hands it.
 *
 * @module
 */
export type * from "./types.ts";
export {
  accessSignature,
  approximateDepth,
  checkJsonTextDepth,
  checkOperationLimits,
  checkTextDepth,
  checkVariableValues,
  type ComplexityLimit,
  countInputValues,
  DEFAULT_OPERATION_LIMITS,
  type FieldIdentity,
  type FilteredOperation,
  filterOperation,
  findIntrospectionField,
  isLimitRefusal,
  MAX_DATA_DEPTH,
  measureDocument,
  OfTypeDepthRule,
  type OperationLimits,
  operationLimitsOf,
  type OperationMeasure,
  parseJsonExact,
  UNAUTHORIZED_FIELD_OR_TYPE,
  unauthorizedError,
} from "./prepare/mod.ts";
export type { FetchNode, FlattenNode, PlanNode, QueryPlan } from "./plan/mod.ts";
export {
  CachePolicy,
  type EntityCacheBackend,
  type EntityCacheEvents,
  type EntityCacheWrite,
  filterSubgraphError,
  invalidationPrefix,
  parseCacheControl,
  RAW_SUBGRAPH_ERRORS,
  resultJson,
  type SubgraphErrorPolicy,
  subgraphErrorPolicyOf,
  topLevelFields,
} from "./execute/mod.ts";
export {
  ALL_SUBGRAPHS,
  clientFor,
  createHttp1Pool,
  http1Eligible,
  type Http1Pool,
  mergeCacheControl,
  resilienceOf,
  type ResponseHeaderCollector,
  type ResponseHeaderRules,
} from "./fetch/mod.ts";
export type { BudgetTicket } from "./admission/mod.ts";
export {
  type AdmissionGate,
  createUnsentAnswers,
  Lru,
  STREAMED_ANSWER_BYTES,
  type UnsentAnswers,
} from "./admission/mod.ts";
export {
  endSubscriptions,
  EventStream,
  type EventTrace,
  openUpstream,
  routerBehindError,
  type SubscribeOptions,
  type SubscribeResult,
  type SubscriptionLimitCounts,
  type SubscriptionProtocol,
  type SubscriptionsOptions,
  type SubscriptionTargetOption,
  sumLimits,
  tooSlowError,
  type UpstreamTarget,
} from "./subscriptions/mod.ts";
export * from "./pipeline/mod.ts";
