/**
 * A router state with the entity cache on, served through the HTTP handler
 * (no socket) over a supergraph of real subgraphs: what the entity cache tests
 * (`entity_cache_test.ts`, `entity_cache_tags_test.ts`) start, in memory or on
 * a shared Redis.
 */
import { parseConfig } from "../../lib/config/mod.ts";
import { createHandler } from "../../lib/http/mod.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { buildState, type RouterState } from "../../lib/state/mod.ts";
import { createStores } from "../../lib/store/mod.ts";

/** A running entity-cache router. */
export interface CacheRouter {
  readonly state: RouterState;
  handle(request: Request): Promise<Response>;
  /** POSTs `{ query, variables }` to /graphql. */
  post(
    request: { readonly query: string; readonly variables?: unknown },
    headers?: Record<string, string>,
  ): Promise<Response>;
  /** POSTs `body` to /invalidation with `key` as the authorization. */
  invalidate(body: unknown, key: string): Promise<Response>;
  /** Closes its key sources and stores. */
  close(): Promise<void>;
}

/** Options of {@linkcode startCacheRouter}. */
export interface CacheRouterOptions {
  /** The router config (the supergraph comes from `sdl`). */
  readonly config: Record<string, unknown>;
  /** Collects the log lines (info and up). */
  readonly lines?: string[];
  /** Collects the features a store fallback answered for. */
  readonly fallbacks?: string[];
}

/**
 * Builds the state of `options.config` over `sdl` and its handler.
 * @param sdl The supergraph.
 * @param options Config and what to observe.
 * @returns The router.
 */
export async function startCacheRouter(
  sdl: string,
  options: CacheRouterOptions,
): Promise<CacheRouter> {
  const config = parseConfig({
    supergraph_path: "unused.graphql",
    mcp: { enabled: false },
    ...options.config,
  });
  const log = createLogger({ level: "info", write: (line) => options.lines?.push(line) });
  const stores = createStores(config, {
    log,
    events: { fallback: (feature) => options.fallbacks?.push(feature) },
  });
  const state = await buildState({
    config,
    log,
    supergraphSdl: sdl,
    operationFiles: [],
    traceKeyPem: null,
    stores,
  });
  const handle = createHandler(() => state);
  const post = (path: string, headers: Record<string, string>, body: string) =>
    handle(
      new Request(`http://router${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
      }),
    );
  return {
    state,
    handle: (request) => handle(request),
    post: ({ query, variables = {} }, headers = {}) =>
      post("/graphql", headers, JSON.stringify({ query, variables })),
    invalidate: (body, key) => post("/invalidation", { authorization: key }, JSON.stringify(body)),
    async close() {
      state.keySources.close();
      await stores.close();
    },
  };
}
