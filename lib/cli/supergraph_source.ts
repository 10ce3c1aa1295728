/**
 * The supergraph from a registry (`supergraph_source`: `url`, `hive_cdn`,
 * `apollo_uplink`; docs/supergraph-source.md): polled every `poll_interval`,
 * each new schema offered to the router, which builds it before it replaces
 * the running one (a schema that does not build is refused, and not offered
 * again). The last schema the router accepted is kept in `supergraph_path`
 * (written whole, then renamed): a restart while the registry is away serves
 * it. Until a first good schema is there, the router answers 503 (readiness).
 *
 * The protocols themselves are `lib/supergraph/registry_protocols.ts`.
 *
 * @module
 */
import { dirname } from "node:path";
import type { SupergraphSourceConfig } from "../config/mod.ts";
import { RouterError } from "../errors.ts";
import type { Logger } from "../log/mod.ts";
import {
  APOLLO_UPLINK_ENDPOINTS,
  hiveSupergraphUrl,
  MAX_POLL_REDIRECTS,
  pollHeaders,
  pollRedirect,
  readPollAnswer,
  readUplinkAnswer,
  type RegistryAnswer,
  uplinkBody,
} from "../supergraph/mod.ts";
import { unrefTimer } from "../timers.ts";

/** The longest wait a registry may ask for between polls (Uplink's `minDelaySeconds`), ms. */
const MAX_DELAY_MS = 3_600_000;

/** The supergraph's state, for logs and metrics. */
export interface SupergraphSourceStatus {
  /** `url`, `hive_cdn`, `apollo_uplink`. */
  readonly source: string;
  /** When the serving schema was accepted (or read from the last-known-good file), ms since the epoch; null: none yet. */
  readonly loadedAt: number | null;
  /** When a poll last succeeded (a schema or "unchanged"), ms since the epoch; null: never. */
  readonly polledAt: number | null;
  /** Polls that failed since start. */
  readonly failures: number;
}

/** A registry source (see the module documentation). */
export interface SupergraphSource {
  /** The schema to serve: the registry's accepted one, or the last-known-good; null: none yet. */
  current(): string | null;
  /**
   * The first schema: one poll; when it fails, the last-known-good file; null when neither.
   */
  first(): Promise<string | null>;
  /**
   * Polls until {@linkcode SupergraphSource.stop}; a new schema goes to `offer`, which
   * resolves true once the router serves it (it is then kept as the last-known-good).
   */
  start(offer: (sdl: string) => Promise<boolean>): void;
  /** Stops polling. */
  stop(): void;
  /** Its state. */
  status(): SupergraphSourceStatus;
}

/** Options of {@linkcode createSupergraphSource}. */
export interface SupergraphSourceOptions {
  /** `supergraph_path`: where the last-known-good is kept. */
  readonly path: string;
  readonly log: () => Logger;
  /** Environment (`APOLLO_KEY`, `APOLLO_GRAPH_REF`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Fetch (tests). @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/**
 * The SHA-256 of a schema, short (what logs and `gw_router_info` name).
 * @param sdl The schema.
 * @returns 16 hex digits.
 */
export async function schemaHash(sdl: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(sdl));
  return [...new Uint8Array(digest).slice(0, 8)].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/** A URL without its user info and query (what may carry a token). */
function withoutSecrets(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}${parsed.search === "" ? "" : "?…"}`;
  } catch {
    return "(not a URL)";
  }
}

async function readLimited(response: Response, maxBytes: number): Promise<string> {
  const length = Number(response.headers.get("content-length") ?? NaN);
  if (length > maxBytes) {
    await response.body?.cancel();
    throw new Error(`the supergraph is over supergraph_source.max_bytes (${maxBytes} bytes)`);
  }
  if (response.body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.length;
    if (size > maxBytes) {
      throw new Error(`the supergraph is over supergraph_source.max_bytes (${maxBytes} bytes)`);
    }
    chunks.push(chunk);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(all);
}

/**
 * A registry source for `supergraph_source` (kind other than `file`).
 * @param config `supergraph_source`.
 * @param options Where the last-known-good lives, logger, environment.
 * @returns The source.
 * @throws {RouterError} `CONFIG_INVALID` when `apollo_uplink` has no key or graph ref.
 */
export function createSupergraphSource(
  config: SupergraphSourceConfig,
  options: SupergraphSourceOptions,
): SupergraphSource {
  const doFetch = options.fetch ?? fetch;
  const key = config.key || (config.kind === "apollo_uplink" ? options.env.APOLLO_KEY ?? "" : "");
  const graphRef = config.graph_ref || options.env.APOLLO_GRAPH_REF || "";
  if (config.kind === "apollo_uplink" && (key === "" || graphRef === "")) {
    const missing = key === "" ? "supergraph_source.key" : "supergraph_source.graph_ref";
    throw new RouterError(
      "CONFIG_INVALID",
      `Cannot read "${missing}": kind "apollo_uplink" needs the graph's API key and graph ref (set supergraph_source.key and graph_ref, or APOLLO_KEY and APOLLO_GRAPH_REF)`,
      { details: { path: missing } },
    );
  }
  const uplinks = config.endpoints.length > 0 ? config.endpoints : APOLLO_UPLINK_ENDPOINTS;
  let uplinkAt = 0;
  let version: string | null = null;
  let current: string | null = null;
  let loadedAt: number | null = null;
  let polledAt: number | null = null;
  let failures = 0;
  /** The hash of a schema the router refused: not offered again. */
  let refused: string | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  // What logs name: a URL's query and user info can carry a token (a signed URL): left out.
  const describe = config.kind === "url"
    ? withoutSecrets(config.url)
    : config.kind === "hive_cdn"
    ? hiveSupergraphUrl(config.endpoint)
    : graphRef;

  async function pollOnce(): Promise<RegistryAnswer> {
    if (config.kind === "apollo_uplink") {
      // Each endpoint in turn, from the last that answered.
      let last: RegistryAnswer = { kind: "failed", reason: "no Uplink endpoint" };
      for (let tried = 0; tried < uplinks.length; tried++) {
        const endpoint = uplinks[(uplinkAt + tried) % uplinks.length]!;
        try {
          const response = await doFetch(endpoint, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json" },
            body: uplinkBody({ key, graphRef, ifAfterId: version }),
            // The API key is in the body: a redirect (307/308 resend it) is a failure.
            redirect: "manual",
            signal: AbortSignal.timeout(config.timeout_ms),
          });
          const text = await readLimited(response, config.max_bytes);
          if (!response.ok) {
            last = { kind: "failed", reason: `${endpoint}: HTTP ${response.status}` };
            continue;
          }
          const answer = readUplinkAnswer(JSON.parse(text));
          uplinkAt = (uplinkAt + tried) % uplinks.length;
          return answer;
        } catch (error) {
          last = { kind: "failed", reason: `${endpoint}: ${(error as Error).message}` };
        }
      }
      return last;
    }
    const first = config.kind === "url" ? config.url : hiveSupergraphUrl(config.endpoint);
    const signal = AbortSignal.timeout(config.timeout_ms);
    try {
      // Redirects are followed here, not by fetch: the configured headers and
      // the CDN key go only to the configured URL's origin.
      let url = first;
      let secrets = true;
      for (let hop = 0;; hop++) {
        const response = await doFetch(url, {
          headers: pollHeaders({
            headers: config.kind === "url" && secrets ? config.headers : [],
            ...(config.kind === "hive_cdn" && secrets ? { hiveKey: config.key } : {}),
            etag: version,
          }),
          redirect: "manual",
          signal,
        });
        const next = pollRedirect(response.status, response.headers.get("location"), {
          first,
          current: url,
        });
        if (next === null) {
          const text = await readLimited(response, config.max_bytes);
          return readPollAnswer(response.status, response.headers.get("etag"), text);
        }
        await response.body?.cancel();
        if (typeof next === "string") return { kind: "failed", reason: next };
        if (hop === MAX_POLL_REDIRECTS) {
          return { kind: "failed", reason: `more than ${MAX_POLL_REDIRECTS} redirects` };
        }
        url = next.url;
        secrets &&= next.sameOrigin;
      }
    } catch (error) {
      return { kind: "failed", reason: (error as Error).message };
    }
  }

  async function keep(sdl: string): Promise<void> {
    // Written whole, then renamed: a restart never reads half a schema.
    // Unique per write: the isolates of `workers` share the process id and the file.
    const temporary = `${options.path}.${Deno.pid}.${crypto.randomUUID()}.tmp`;
    try {
      await Deno.mkdir(dirname(options.path), { recursive: true });
      await Deno.writeTextFile(temporary, sdl);
      await Deno.rename(temporary, options.path);
    } catch (error) {
      options.log().warn("Cannot keep the last good supergraph for restarts", {
        key: "supergraph_path",
        path: options.path,
        error: (error as Error).message,
      });
    }
  }

  function failed(reason: string): void {
    failures++;
    options.log().warn("Supergraph registry poll failed; the serving supergraph stays", {
      source: config.kind,
      registry: describe,
      reason,
      serving: current === null ? "none yet" : "the last good one",
    });
  }

  async function tick(offer: (sdl: string) => Promise<boolean>): Promise<number> {
    const answer = await pollOnce();
    if (answer.kind === "failed") {
      failed(answer.reason);
      return answer.minDelayMs ?? 0;
    }
    polledAt = Date.now();
    if (answer.kind === "unchanged") return answer.minDelayMs ?? 0;
    const hash = await schemaHash(answer.sdl);
    if (answer.sdl === current || hash === refused) {
      version = answer.version;
      return answer.minDelayMs ?? 0;
    }
    const log = options.log();
    log.info("Supergraph from the registry changed; loading it", {
      source: config.kind,
      registry: describe,
      hash,
      version: answer.version,
    });
    if (await offer(answer.sdl)) {
      current = answer.sdl;
      version = answer.version;
      loadedAt = Date.now();
      refused = null;
      await keep(answer.sdl);
      log.info("Supergraph reloaded", { source: config.kind, hash, version: answer.version });
    } else {
      refused = hash;
      version = answer.version;
      log.error("Supergraph from the registry refused; the previous one keeps serving", {
        source: config.kind,
        hash,
      });
    }
    return answer.minDelayMs ?? 0;
  }

  return {
    current: () => current,
    async first() {
      const answer = await pollOnce();
      if (answer.kind === "schema") {
        current = answer.sdl;
        version = answer.version;
        polledAt = loadedAt = Date.now();
        options.log().info("Supergraph fetched from the registry", {
          source: config.kind,
          registry: describe,
          hash: await schemaHash(answer.sdl),
          version: answer.version,
        });
        return current;
      }
      failed(answer.kind === "failed" ? answer.reason : "unchanged without a schema");
      try {
        current = await Deno.readTextFile(options.path);
        const info = await Deno.stat(options.path);
        loadedAt = info.mtime?.getTime() ?? Date.now();
        options.log().warn("Serving the last good supergraph until the registry answers", {
          key: "supergraph_path",
          path: options.path,
          hash: await schemaHash(current),
          saved_at: info.mtime?.toISOString() ?? null,
        });
        return current;
      } catch {
        options.log().error(
          "No supergraph yet: the registry did not answer and no last good one is kept; readiness stays 503 until one comes",
          { source: config.kind, registry: describe, path: options.path },
        );
        return null;
      }
    },
    /** Keeps the schema the router accepted on start. */
    start(offer) {
      const loop = async () => {
        if (stopped) return;
        let delay = 0;
        try {
          delay = await tick(offer);
        } catch (error) {
          failed((error as Error).message);
        }
        if (stopped) return;
        // A registry's asked-for delay is honoured up to an hour (a timer past 2^31 ms fires at once).
        timer = setTimeout(loop, Math.max(config.poll_interval_ms, Math.min(delay, MAX_DELAY_MS)));
        unrefTimer(timer);
      };
      // The registry's first schema is kept; one read from the kept file is not written again
      // (its time is the schema's age on the next restart).
      if (current !== null && polledAt !== null) void keep(current);
      timer = setTimeout(loop, config.poll_interval_ms);
      unrefTimer(timer);
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
    status: () => ({ source: config.kind, loadedAt, polledAt, failures }),
  };
}
