/**
 * The engine's entity cache from `entity_cache` (issue 42, docs/caching.md):
 * the process's store (`lib/store`), per-subgraph TTLs, each entity type's key
 * fields from the supergraph, and who a request's private answers belong to.
 *
 * @module
 */
import type { EntityCacheConfig } from "../config/mod.ts";
import { type EngineEntityCache, type EntityCacheEvents, topLevelFields } from "../engine/mod.ts";
import type { EntityCacheStore } from "../store/mod.ts";
import type { SupergraphModel } from "../supergraph/mod.ts";

/**
 * The entity cache an engine runs with.
 *
 * @example Per-subgraph TTLs and the private id
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "../config/mod.ts";
 * import { EntityCacheStore, MemoryStore } from "../store/mod.ts";
 * import { buildSupergraph } from "../supergraph/mod.ts";
 * import { engineEntityCache } from "./entity_cache.ts";
 * const config = parseConfig({ entity_cache: {
 *   enabled: true, private_id: "header:x-user",
 *   subgraphs: { all: { ttl: "30s" }, reviews: { enabled: false } },
 * } }).entity_cache;
 * const store = new EntityCacheStore({ store: new MemoryStore({ maxBytes: 1000 }), prefix: "e" });
 * const sdl = await Deno.readTextFile(new URL("../../schema/supergraph.graphql", import.meta.url));
 * const cache = engineEntityCache(config, { store, model: buildSupergraph(sdl) });
 * assert.equal(cache.ttlOf("products"), 30_000);
 * assert.equal(cache.ttlOf("reviews"), null);
 * assert.equal(cache.privateId(new Headers({ "x-user": "ann" }), null), "h:ann");
 * assert.equal(cache.privateId(new Headers(), null), null);
 * ```
 * @param config `entity_cache`.
 * @param options The store, the supergraph and the metric events.
 * @returns The engine's entity cache.
 */
export function engineEntityCache(
  config: EntityCacheConfig,
  options: {
    readonly store: EntityCacheStore;
    readonly model: SupergraphModel;
    readonly events?: EntityCacheEvents;
    readonly now?: () => number;
    /** Told each `subgraphs.<name>` the supergraph has no subgraph of (it does nothing). */
    readonly unknownSubgraph?: (name: string) => void;
  },
): EngineEntityCache {
  const { model } = options;
  const all = config.subgraphs.all ?? { enabled: true, ttl_ms: 0 };
  for (const name of Object.keys(config.subgraphs)) {
    if (name !== "all" && !model.subgraphs.has(name)) options.unknownSubgraph?.(name);
  }
  const ttls = new Map<string, number | null>();
  for (const name of model.subgraphs.keys()) {
    const own = config.subgraphs[name] ?? all;
    ttls.set(name, own.enabled ? own.ttl_ms || all.ttl_ms || config.default_ttl_ms : null);
  }
  const keyFields = new Map<string, ReadonlySet<string>>();
  const header = config.private_id.startsWith("header:")
    ? config.private_id.slice("header:".length).toLowerCase()
    : null;
  const bySubject = config.private_id === "token_subject";
  return {
    backend: options.store,
    now: options.now ?? (() => Date.now()),
    ...(options.events ? { events: options.events } : {}),
    ttlOf: (subgraph) => ttls.get(subgraph) ?? null,
    cacheTags: model.cacheTags,
    keyFields(subgraph, type) {
      const memo = `${subgraph}\n${type}`;
      let fields = keyFields.get(memo);
      if (fields === undefined) {
        const keys = model.types.get(type)?.keys.filter((k) => k.graph === subgraph) ?? [];
        fields = new Set(keys.flatMap((k) => topLevelFields(k.fields)));
        keyFields.set(memo, fields);
      }
      return fields;
    },
    privateId(headers, identity) {
      if (header !== null) {
        const value = headers?.get(header);
        return value == null || value === "" ? null : `h:${value}`;
      }
      if (bySubject && identity?.subject !== undefined) {
        return `sub:${identity.issuer ?? ""}|${identity.subject}`;
      }
      return null;
    },
  };
}
