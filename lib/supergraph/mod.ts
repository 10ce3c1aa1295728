/**
 * Supergraph SDL → plain model ({@linkcode buildSupergraph}).
 *
 * @module
 */
export type * from "./types.ts";
export { buildSupergraph, type SupergraphModel } from "./build.ts";
export {
  buildCostSchema,
  type CostField,
  type CostInput,
  type CostSchema,
  type CostType,
  type ListSizeModel,
  type SizedFields,
} from "./cost_directives.ts";
export {
  type CacheTagFormat,
  type CacheTagPart,
  type CacheTagSchema,
  parseCacheTagFormat,
  readCacheTags,
  renderCacheTag,
} from "./cache_tags.ts";
export {
  APOLLO_UPLINK_ENDPOINTS,
  hiveSupergraphUrl,
  MAX_POLL_REDIRECTS,
  pollHeaders,
  pollRedirect,
  readPollAnswer,
  readUplinkAnswer,
  type RegistryAnswer,
  uplinkBody,
} from "./registry_protocols.ts";
