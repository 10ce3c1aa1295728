/**
 * The process's stores, made once at start-up from `storage_providers` and
 * kept across reloads (connections and in-memory registrations outlive a
 * state): one {@linkcode RedisStore} per provider a feature names, the APQ
 * cache and the rate limiter. Redis coming and going is logged once per
 * change and counted; readiness never depends on it.
 *
 * @module
 */
import type { Config } from "../config/mod.ts";
import type { Logger } from "../log/mod.ts";
import { ApqCache } from "./apq_cache.ts";
import { MemoryStore } from "./memory.ts";
import { EntityCacheStore } from "./entity_cache_store.ts";
import { RateLimiter } from "./rate_limiter.ts";
import { RedisStore } from "./redis.ts";
import type { SharedStore } from "./types.ts";

/** What the stores report to metrics (optional: metrics may be off). */
export interface StoreEvents {
  /** A feature's call was answered by its fallback. */
  readonly fallback?: (feature: "apq" | "rate_limit" | "entity_cache") => void;
  /** A provider's reachability changed. */
  readonly availability?: (provider: string, available: boolean) => void;
}

/** The process's shared-state features. */
export interface Stores {
  /** APQ registrations. */
  readonly apq: ApqCache;
  /** Rate-limit budgets. */
  readonly rateLimiter: RateLimiter;
  /** Entity cache entries (`entity_cache`), or null when it is off. */
  readonly entityCache: EntityCacheStore | null;
  /** What the stores were made from (a reload that changes it needs a restart). */
  readonly signature: string;
  /** Closes Redis connections. */
  close(): Promise<void>;
}

/**
 * The part of the config the stores are made from.
 * @param config The config.
 * @returns A string equal for configs that make the same stores.
 */
export function storesSignature(config: Config): string {
  return JSON.stringify([
    config.storage_providers,
    config.automatic_persisted_queries.cache,
    config.automatic_persisted_queries.storage,
    config.rate_limit.storage,
    config.rate_limit.fail_open,
    config.rate_limit.max_keys,
    config.entity_cache.enabled,
    config.entity_cache.max_bytes,
    config.entity_cache.max_entry_bytes,
    config.entity_cache.max_keys_per_tag,
    config.entity_cache.storage,
  ]);
}

/**
 * Makes the stores; Redis connects in the background (nothing waits for it).
 * @param config The config.
 * @param options Logger and metric events.
 * @returns The stores.
 */
export function createStores(
  config: Config,
  options: { readonly log: Logger; readonly events?: StoreEvents },
): Stores {
  const { log, events } = options;
  const redis = new Map<string, RedisStore>();
  const providerOf = (id: string, feature: string): SharedStore | null => {
    if (id === "") return null;
    let store = redis.get(id);
    if (store === undefined) {
      const provider = config.storage_providers.redis.find((p) => p.id === id)!;
      events?.availability?.(id, false);
      store = new RedisStore(provider, {
        maxKeysPerTag: config.entity_cache.max_keys_per_tag,
        onAvailability: (available, error) => {
          events?.availability?.(id, available);
          if (available) log.info("Redis connected", { provider_id: id });
          else {
            log.warn(
              "Redis unavailable: APQ answers from memory, rate limits fail " +
                (config.rate_limit.fail_open ? "open" : "closed") +
                ", the entity cache asks the subgraphs until it returns",
              { provider_id: id, error },
            );
          }
        },
      });
      redis.set(id, store);
    }
    log.debug("Shared store", { feature, provider_id: id });
    return store;
  };
  const apqStorage = config.automatic_persisted_queries.storage;
  const rateStorage = config.rate_limit.storage;
  const apq = new ApqCache({
    memory: new MemoryStore({ maxBytes: config.automatic_persisted_queries.cache.max_bytes }),
    shared: providerOf(apqStorage.provider_id, "automatic_persisted_queries"),
    prefix: apqStorage.key_prefix,
    ttlMs: config.automatic_persisted_queries.cache.ttl_ms,
    onFallback: () => events?.fallback?.("apq"),
    maxDocumentLength: config.engine.max_cached_document_bytes,
  });
  const rateLimiter = new RateLimiter({
    store: providerOf(rateStorage.provider_id, "rate_limit") ??
      new MemoryStore({ maxBytes: 0, maxKeys: config.rate_limit.max_keys }),
    prefix: rateStorage.key_prefix,
    failOpen: config.rate_limit.fail_open,
    onFallback: () => events?.fallback?.("rate_limit"),
  });
  const entityStorage = config.entity_cache.storage;
  const entityCache = config.entity_cache.enabled
    ? new EntityCacheStore({
      store: providerOf(entityStorage.provider_id, "entity_cache") ??
        new MemoryStore({
          maxBytes: config.entity_cache.max_bytes,
          maxKeysPerTag: config.entity_cache.max_keys_per_tag,
        }),
      prefix: entityStorage.key_prefix,
      maxEntryBytes: config.entity_cache.max_entry_bytes,
      onFallback: () => events?.fallback?.("entity_cache"),
    })
    : null;
  return {
    apq,
    rateLimiter,
    entityCache,
    signature: storesSignature(config),
    async close() {
      await Promise.all([...redis.values()].map((store) => store.close()));
    },
  };
}
