/**
 * Stage 3, execute: run a plan and shape the answer.
 *
 * Takes a plan (from `../plan/`), the coerced variables and a way to send subgraph requests
 * (`../fetch/`); gives the merged data with the subgraph errors re-pathed to the client's
 * response, then the client's response shaped over it (null propagation, leaf coercion).
 *
 * - `execute.ts` — walks the plan's steps; representations, entity answers, errors
 *   (its types in `execute_types.ts`, reading one answer in `_subgraph_answer.ts`);
 * - `entity_batch.ts` — sibling entity fetches to one subgraph sent as one request;
 * - `_data.ts`, `_layers.ts`, `_rep_index.ts`, `_answer_keys.ts` — the merged data and its
 *   indexes;
 * - `shape.ts`, `coerce_leaf.ts` — the client's selection over the merged data;
 * - `subgraph_errors.ts` — the subgraph error propagation policy;
 * - `shared_results.ts` — identical operations share one rendered result;
 * - `entity_cache.ts`, `cache_control.ts` — the entity cache (`entity_cache`): keys, lookups
 *   before a fetch, partial hits, and the `Cache-Control` of subgraph and client answers.
 * - `uploads.ts` — which fetch takes a multipart request's files (or why none can).
 *
 * @module
 */
export {
  type ExecutedData,
  executePlan,
  type ExecutePlanOptions,
  type PlanRun,
  startPlan,
} from "./execute.ts";
export { type ShapeOptions, shapeResponse } from "./shape.ts";
export { isRawNumber, parseJsonExact } from "../prepare/mod.ts";
export { printOnce, resultJson, SharedResults } from "./shared_results.ts";
export {
  filterSubgraphError,
  RAW_SUBGRAPH_ERRORS,
  type SubgraphErrorPolicy,
  subgraphErrorPolicyOf,
} from "./subgraph_errors.ts";
export { UPLOAD_NOT_ROUTABLE, uploadFetchOf } from "./uploads.ts";
export { type SubgraphResponse, type SubgraphSender } from "./execute_types.ts";
export { CachePolicy, parseCacheControl } from "./cache_control.ts";
export {
  type EntityCacheBackend,
  type EntityCacheEvents,
  type EntityCacheSettings,
  type EntityCacheWrite,
  invalidationPrefix,
  topLevelFields,
} from "./entity_cache.ts";
export { deliveriesOf, deliverIncrementally, deliverySelection } from "./incremental.ts";
