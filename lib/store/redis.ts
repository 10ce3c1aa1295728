/**
 * The Redis {@linkcode SharedStore} (`storage_providers.redis[]`), on the npm
 * client `redis` (node-redis). Chosen over `ioredis` by measuring both under
 * Deno 2 against a local redis-server 7 (bench/store_clients.ts): with 50
 * commands in flight node-redis did 1.5–2× the GETs and SETs per second and
 * as many EVALSHAs; one at a time the two were within the noise.
 *
 * Bounded waits: a connection attempt gives up after `connect_timeout`, a
 * command after `command_timeout` ({@linkcode StoreUnavailable}); while the
 * connection is down commands fail at once (no offline queue) and the
 * client reconnects in the background (100 ms, growing to 2 s). The
 * availability is reported once per change (`onAvailability`).
 *
 * The client is loaded when a provider is first used, by a dynamic import
 * (a router without Redis loads none of it; its Node type declarations,
 * which clash with Deno's Web Crypto types, stay out of the type check).
 * `deno compile` needs `--include npm:redis` for it.
 *
 * @module
 */
import type { RedisProviderConfig } from "../config/mod.ts";
import { GCRA_LUA, type GcraDecision, type GcraLimit } from "./gcra.ts";
import { type SharedStore, StoreUnavailable } from "./types.ts";

/**
 * Adds a key to a tag index (KEYS[1], a sorted set scored by expiry): drops
 * the keys that expired (by Redis's clock), refuses (0) when `ARGV[3]` live keys
 * are there already, and keeps the index as long as its longest-lived key.
 * One key a call: a cluster's tag index and entries may sit in other slots.
 */
const TAG_ADD_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false and
   redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
local old = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or 0)
redis.call('ZADD', KEYS[1], math.max(old, now + ttl), ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
`;

/** Options for {@linkcode RedisStore}. */
export interface RedisStoreOptions {
  /** Live keys one tag index holds (`entity_cache.max_keys_per_tag`). @default 10000 */
  readonly maxKeysPerTag?: number;
  /** Told each change of reachability (true: connected, false: lost). */
  readonly onAvailability?: (available: boolean, error: string) => void;
}

/** The commands the store uses, common to a client and a cluster. */
interface Commands {
  get(key: string): Promise<unknown>;
  mGet(keys: string[]): Promise<unknown[]>;
  set(key: string, value: string, options: { PX: number }): Promise<unknown>;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  scan(
    cursor: string,
    options: { MATCH: string; COUNT: number },
  ): Promise<{ cursor: string | number; keys: string[] }>;
  del(keys: string | string[]): Promise<unknown>;
  zRange(key: string, start: number, stop: number): Promise<string[]>;
  connect(): Promise<unknown>;
  /** A cluster's masters (absent on a single client). */
  readonly masters?: readonly unknown[];
  /** A cluster's client of one node. */
  nodeClient?(node: unknown): Promise<Commands>;
  destroy(): void;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** The npm client's two constructors, as this module uses them. */
interface RedisModule {
  createClient(options: unknown): Commands;
  createCluster(options: unknown): Commands;
}

/** Not a literal: the type checker leaves the module (and its Node types) alone. */
const REDIS_MODULE: string = "redis";

/** SHA-1 of {@linkcode GCRA_LUA}: what EVALSHA names. */
async function scriptSha(script: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(script));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Redis behind the shared-store interface. */
export class RedisStore implements SharedStore {
  /** Always `redis`. */
  readonly kind = "redis" as const;
  #client: Commands | null = null;
  readonly #commandTimeoutMs: number;
  readonly #onAvailability: (available: boolean, error: string) => void;
  /** null until the first word from Redis (so the first failure is reported too). */
  #available: boolean | null = null;
  #closed = false;
  #sha: string | null = null;
  #tagSha: string | null = null;
  readonly #maxKeysPerTag: number;

  /**
   * Connects in the background: nothing waits for Redis at start-up.
   * @param provider The provider's config.
   * @param options The availability listener.
   */
  constructor(provider: RedisProviderConfig, options: RedisStoreOptions = {}) {
    this.#commandTimeoutMs = provider.command_timeout_ms;
    this.#onAvailability = options.onAvailability ?? (() => {});
    const socket = {
      connectTimeout: provider.connect_timeout_ms,
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** Math.min(retries, 5), 2_000),
    };
    this.#maxKeysPerTag = options.maxKeysPerTag ?? 10_000;
    void scriptSha(GCRA_LUA).then((sha) => this.#sha = sha);
    void scriptSha(TAG_ADD_LUA).then((sha) => this.#tagSha = sha);
    void (import(REDIS_MODULE) as Promise<RedisModule>).then((redis) => {
      if (this.#closed) return;
      const client = provider.cluster_enabled
        ? redis.createCluster({
          rootNodes: provider.urls.map((url) => ({ url })),
          defaults: { socket, disableOfflineQueue: true },
        })
        : redis.createClient({ url: provider.urls[0]!, socket, disableOfflineQueue: true });
      this.#client = client;
      const failed = (error: unknown) =>
        this.#set(false, String((error as Error)?.message ?? error));
      if (provider.cluster_enabled) {
        // A cluster says `connect` once its slots are known (no `ready`), and reports its
        // nodes: one master lost makes the store unavailable until it is back.
        client.on("connect", () => this.#set(true, ""));
        client.on("node-ready", () => this.#set(true, ""));
        client.on("node-error", failed);
        client.on("node-disconnect", () => this.#set(false, "a cluster node disconnected"));
        client.on("disconnect", () => this.#set(false, "connection closed"));
      } else {
        client.on("ready", () => this.#set(true, ""));
        client.on("end", () => this.#set(false, "connection closed"));
      }
      client.on("error", failed);
      client.connect().catch((error) => this.#set(false, String(error?.message ?? error)));
    }, (error) => this.#set(false, `Cannot load the Redis client: ${error?.message ?? error}`));
  }

  /** Whether the last word from Redis was a working connection. */
  get available(): boolean {
    return this.#available === true;
  }

  #set(available: boolean, error: string): void {
    if (this.#closed || available === this.#available) return;
    this.#available = available;
    this.#onAvailability(available, error);
  }

  /** Runs a command within the command timeout; any failure is {@linkcode StoreUnavailable}. */
  async #run<T>(command: (client: Commands) => Promise<T>): Promise<T> {
    const client = this.#client;
    if (this.#available !== true || client === null) {
      throw new StoreUnavailable("Redis is not connected");
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new StoreUnavailable(`Redis did not answer within ${this.#commandTimeoutMs} ms`)),
        this.#commandTimeoutMs,
      );
    });
    try {
      return await Promise.race([command(client), timeout]);
    } catch (error) {
      if (error instanceof StoreUnavailable) throw error;
      throw new StoreUnavailable(`Redis command failed: ${(error as Error)?.message}`, {
        cause: error,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /** {@inheritDoc SharedStore.get} */
  async get(key: string): Promise<string | null> {
    const value = await this.#run((client) => client.get(key));
    return typeof value === "string" ? value : null;
  }

  /** {@inheritDoc SharedStore.getMany} */
  async getMany(keys: readonly string[]): Promise<(string | null)[]> {
    if (keys.length === 0) return [];
    const values = await this.#run(async (client) =>
      // A cluster's keys sit in several slots: one GET each (pipelined by the client).
      client.masters !== undefined
        ? await Promise.all(keys.map((key) => client.get(key)))
        : await client.mGet([...keys])
    );
    return values.map((value) => typeof value === "string" ? value : null);
  }

  /** {@inheritDoc SharedStore.set} */
  async set(key: string, value: string, ttlMs: number): Promise<boolean> {
    await this.#run((client) => client.set(key, value, { PX: Math.max(1, Math.ceil(ttlMs)) }));
    return true;
  }

  /** {@inheritDoc SharedStore.deletePrefix} */
  async deletePrefix(prefix: string): Promise<number> {
    // Glob characters of the prefix are matched literally.
    const match = prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`) + "*";
    const nodes = await this.#run(async (client) =>
      client.masters !== undefined && client.nodeClient !== undefined
        ? await Promise.all(client.masters.map((m) => client.nodeClient!(m)))
        : [client]
    );
    let deleted = 0;
    for (const node of nodes) {
      let cursor = "0";
      do {
        const page = await this.#run(() => node.scan(cursor, { MATCH: match, COUNT: 1000 }));
        cursor = String(page.cursor);
        // One key a command: keys of one page may sit in several cluster slots.
        const counts = await Promise.all(
          page.keys.map((key) => this.#run(() => node.del(key))),
        );
        for (const count of counts) deleted += Number(count);
      } while (cursor !== "0");
    }
    return deleted;
  }

  /** {@inheritDoc SharedStore.setTagged} */
  async setTagged(
    key: string,
    value: string,
    options: { readonly ttlMs: number; readonly tagKeys: readonly string[] },
  ): Promise<"stored" | "index_full" | "too_large"> {
    const ttl = String(Math.max(1, Math.ceil(options.ttlMs)));
    // The indexes first: an entry is never left out of one (an index naming a
    // key that was not written costs nothing).
    const added = await Promise.all(
      options.tagKeys.map((tagKey) =>
        this.#script(TAG_ADD_LUA, this.#tagSha, {
          keys: [tagKey],
          arguments: [key, ttl, String(this.#maxKeysPerTag)],
        })
      ),
    );
    if (added.some((reply) => Number(reply) !== 1)) return "index_full";
    await this.set(key, value, options.ttlMs);
    return "stored";
  }

  /** {@inheritDoc SharedStore.deleteTagged} */
  async deleteTagged(tagKey: string): Promise<number> {
    // At most `max_keys_per_tag` live keys (and those expired since the last write).
    const keys = await this.#run((client) => client.zRange(tagKey, 0, -1));
    // One key a command: keys may sit in several cluster slots.
    const counts = await Promise.all(keys.map((key) => this.#run((client) => client.del(key))));
    await this.#run((client) => client.del(tagKey));
    return counts.reduce((sum: number, count) => sum + Number(count), 0);
  }

  /** EVALSHA, or EVAL when Redis does not know the script yet (it loads it). */
  #script(
    script: string,
    sha: string | null,
    options: { keys: string[]; arguments: string[] },
  ): Promise<unknown> {
    return this.#run(async (client) => {
      if (sha !== null) {
        try {
          return await client.evalSha(sha, options);
        } catch (error) {
          if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
        }
      }
      return await client.eval(script, options);
    });
  }

  /** {@inheritDoc SharedStore.rateLimit} */
  async rateLimit(key: string, limit: GcraLimit): Promise<GcraDecision> {
    const reply = await this.#script(GCRA_LUA, this.#sha, {
      keys: [key],
      arguments: [String(limit.rate), String(limit.burst), String(limit.periodMs)],
    });
    const [allowed, remaining, retryAfterMs, resetAfterMs] = (reply as number[]).map(Number);
    return {
      allowed: allowed === 1,
      remaining: remaining ?? 0,
      retryAfterMs: retryAfterMs ?? 0,
      resetAfterMs: resetAfterMs ?? 0,
    };
  }

  /** Closes the connection (no reconnects after). */
  close(): Promise<void> {
    this.#closed = true;
    try {
      this.#client?.destroy();
    } catch {
      // Closed already.
    }
    return Promise.resolve();
  }
}
