/**
 * Shared state behind one small interface (issue 30): get/set with a TTL and
 * an atomic GCRA rate-limit check; in memory by default (byte-bounded LRU),
 * Redis across replicas (`storage_providers.redis[]`, `<feature>.storage.provider_id`):
 * APQ, rate limits and the entity cache's entries (`entity_cache_store.ts`).
 *
 * @module
 */
export { GCRA_LUA, type GcraDecision, type GcraLimit, gcraStep } from "./gcra.ts";
export { type SharedStore, StoreUnavailable } from "./types.ts";
export { MemoryStore, type MemoryStoreOptions } from "./memory.ts";
export { RedisStore, type RedisStoreOptions } from "./redis.ts";
export { ApqCache, type ApqCacheOptions } from "./apq_cache.ts";
export { RateLimiter, type RateLimiterOptions, type RateLimitOutcome } from "./rate_limiter.ts";
export { EntityCacheStore, type EntityCacheStoreOptions } from "./entity_cache_store.ts";
export { createStores, type StoreEvents, type Stores, storesSignature } from "./stores.ts";
