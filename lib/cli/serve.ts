/**
 * The `serve` subcommand and {@linkcode startRouter}, the programmatic way to
 * run the router (used by `demo/main.ts` and the e2e tests). This is the I/O
 * edge: it reads the files the config names, builds the state, listens,
 * reloads on SIGHUP and file changes, and shuts down on SIGTERM/SIGINT.
 *
 * Over 600 lines: start, reload (config, supergraph from a file or a registry,
 * the certificate), file watching and shutdown share one state and one
 * listener; the certificate (`lib/listen/server_tls.ts`), the registry
 * (`supergraph_source.ts`), the subgraph TLS clients (`subgraph_tls.ts`) and
 * the file watching (`_config_watch.ts`) live in their own modules.
 *
 * @module
 */
import { extname, join, relative, resolve } from "node:path";
import {
  checkFiles,
  type Config,
  listenUrl,
  loadConfig,
  machineName,
  parseListenAddr,
  startupWarnings,
  withBoundPort,
  withScheme,
} from "../config/mod.ts";
import { Cancellation } from "../cancellation.ts";
import {
  createHttp1Pool,
  endSubscriptions,
  http1Eligible,
  type SubgraphFetch,
  type SubscriptionLimitCounts,
  sumLimits,
} from "../engine/mod.ts";
import { describeError, listenError, RouterError } from "../errors.ts";
import { createHandler } from "../http/mod.ts";
import { createStores, storesSignature } from "../store/mod.ts";
import { createLogger, type Logger } from "../log/mod.ts";
import { closeMcpStreams, handOverMcp } from "../mcp/mod.ts";
import type { OperationFile } from "../operations/mod.ts";
import { buildState, type CpuSource, type RouterState } from "../state/mod.ts";

/** The last result of a subscription ended by a reload (clients resubscribe). */
const SCHEMA_RELOAD = {
  message: "The router reloaded its configuration or supergraph; subscribe again",
  extensions: { code: "SUBSCRIPTION_SCHEMA_RELOAD" },
};

/** The last result of a subscription ended by a shutdown (SIGTERM). */
const SERVER_SHUTDOWN = {
  message: "The router is shutting down; subscribe again (to another replica)",
  extensions: { code: "SUBSCRIPTION_SERVER_SHUTDOWN" },
};
import { startTelemetry } from "../telemetry/start.ts";
import { traceStartupWarnings } from "../trace/mod.ts";
import { watchConfigFiles } from "./_config_watch.ts";
import {
  connectionLimits,
  drainWithin,
  logServerTls,
  readServerTls,
  serveGuarded,
  serverTlsFiles,
  serverTlsKeeper,
} from "../listen/mod.ts";
import { subgraphTlsClients } from "./subgraph_tls.ts";
import { createSupergraphSource } from "./supergraph_source.ts";

/**
 * Options for {@linkcode startRouter}: `configPath` and/or `config` (both: start
 * from `config`, already loaded from `configPath`; reload from `configPath`).
 */
export interface StartRouterOptions {
  /** Config file to load (and to reload on change). */
  readonly configPath?: string;
  /**
   * A ready config (file paths in it absolute or relative to the working
   * folder); with `configPath`, the result of `loadConfig(configPath)`.
   */
  readonly config?: Config;
  /**
   * Environment for config overrides.
   * @default {{}} (the `serve` command passes the process environment)
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Logger; default: JSON lines on stdout at the config's `log_level`. */
  readonly log?: Logger;
  /** Subgraph fetch for the engine (tests inject one). */
  readonly fetch?: SubgraphFetch;
  /**
   * The CPU source of admission (`lib/state/thread_cpu.ts`); default: the
   * serving thread's. Tests inject a steady one where the machine's load is
   * not what they check.
   */
  readonly cpu?: CpuSource;
  /** Supergraph SDL to use instead of reading `supergraph_path` (tests). */
  readonly supergraphSdl?: string;
  /**
   * Reload when the config, supergraph or operation files change.
   * @default {false}
   */
  readonly watch?: boolean;
  /**
   * Reload on SIGHUP, shut down on SIGTERM/SIGINT.
   * @default {false}
   */
  readonly signals?: boolean;
  /**
   * Quiet period after a file change before reloading, ms.
   * @default {200}
   */
  readonly debounceMs?: number;
  /**
   * How long shutdown waits for in-flight requests (and open streams), ms.
   * @default {config.grace_period_ms}
   */
  readonly shutdownGraceMs?: number;
  /**
   * Bind with `SO_REUSEPORT` so several isolates share `listen_addr` (`workers.ts`;
   * an unstable Deno API).
   * @default {false}
   */
  readonly reusePort?: boolean;
  /**
   * Listen on this unix socket instead of `listen_addr` (a serving isolate of
   * `workers.ts`: its supervisor owns `listen_addr` and forwards to it).
   * `listen_addr` still names the public address (URLs, logs).
   */
  readonly listenPath?: string;
}

/** A running router. */
export interface RunningRouter {
  /** Base URL of the listener (`http://127.0.0.1:4123`). */
  readonly url: string;
  /** URL of the Prometheus exposition (`telemetry.metrics.prometheus`), or null. */
  readonly metricsUrl?: string | null;
  /** The current state (replaced whole on reload). */
  state(): RouterState;
  /** Re-reads config and files and swaps the state; on failure logs and keeps the old one. */
  reload(): Promise<boolean>;
  /** Stops listening (in-flight requests finish), watchers and signal handlers. */
  shutdown(): Promise<void>;
  /** Resolves once the router has shut down. */
  readonly finished: Promise<void>;
}

/**
 * Reads the operation files of `operations_dir` (`*.graphql`, sorted by path,
 * sub-folders included). A missing folder gives no operations.
 * @param dir The operations folder.
 * @returns The files, paths relative to `dir`.
 */
export async function readOperationFiles(dir: string): Promise<OperationFile[]> {
  const files: OperationFile[] = [];
  async function walk(folder: string): Promise<void> {
    for await (const entry of Deno.readDir(folder)) {
      const path = join(folder, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (entry.isFile && extname(entry.name) === ".graphql") {
        files.push({ path: relative(dir, path), text: await Deno.readTextFile(path) });
      }
    }
  }
  try {
    await walk(dir);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function readFileFor(key: string, path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    throw new RouterError(
      "CONFIG_INVALID",
      `Cannot read "${key}": file "${path}": ${(error as Error).message}`,
      {
        cause: error,
        details: { path: key, file: path },
      },
    );
  }
}

/**
 * Starts the router: loads the config, binds `listen_addr` (port 0 = a free
 * port; the bound port then replaces it in the config, and in
 * `mcp.server.base_url` when that was derived), builds the state, serves.
 *
 * @example Port 0 and health
 * ```ts ignore
 * import { startRouter } from "./serve.ts";
 * const router = await startRouter({ configPath: "config.yaml", env: { LISTEN_ADDR: "127.0.0.1:0" } });
 * const response = await fetch(`${router.url}/health/ready`);
 * await response.body?.cancel();
 * await router.shutdown();
 * ```
 * @param options Config source, environment, logger, test hooks.
 * @returns The running router.
 * @throws {RouterError} `CONFIG_INVALID` (or the state's build error) when start-up fails.
 */
export async function startRouter(options: StartRouterOptions): Promise<RunningRouter> {
  const env = options.env ?? {};
  let config = await initialConfig(options, env);
  const address = parseListenAddr(config.listen_addr);
  if (address === undefined) {
    throw new RouterError("CONFIG_INVALID", `Cannot read "listen_addr": "${config.listen_addr}"`, {
      details: { path: "listen_addr" },
    });
  }
  const originalListen = config.listen_addr;
  const makeLog = (c: Config): Logger => options.log ?? createLogger({ level: c.log_level });
  let log = makeLog(config);

  let state: RouterState | null = null;
  // The totals of the subscriptions of replaced states (the counters never go down).
  const retired = retiredSubscriptions();
  // One HTTP/1.1 pool for the process, kept across reloads. Deno's fetch honours
  // proxy variables; with one set, every subgraph request stays with fetch.
  const http1 = options.fetch === undefined && http1Eligible("http://x/", proxyVariables())
    ? createHttp1Pool()
    : null;
  // `tls.subgraphs`' clients, kept across reloads while their files stay the same.
  const subgraphTls = subgraphTlsClients();
  // A registry (`supergraph_source`): polled; supergraph_path keeps its last good schema.
  const source = config.supergraph_source.kind === "file" || options.supergraphSdl !== undefined
    ? null
    : createSupergraphSource(config.supergraph_source, {
      path: config.supergraph_path,
      log: () => log,
      env,
    });
  const telemetry = await startTelemetry({
    config,
    log: () => log,
    sources: {
      admission: () => state?.engine.admission ?? null,
      caches: () =>
        state === null ? null : { parse: state.engine.prepared, plan: state.engine.plans },
      memory: () => state?.engine.memory ?? null,
      connections: () => guard?.counts() ?? null,
      supergraph: () => source?.status() ?? null,
      subscriptions: () => state === null ? null : retired.withLive(state.engine.subscriptions),
    },
    // Access lines are at info: below that threshold they cost nothing.
    accessLogs: () =>
      config.access_logs.enabled && (config.log_level === "info" || config.log_level === "debug"),
    env,
    reusePort: options.reusePort ?? false,
  });
  // Shutdown (Apollo's model): readiness 503 at once while the listener still
  // accepts for `shutdown_delay`, then in-flight requests get `grace_period`;
  // those still running then are answered 503 (`stop`), never reset.
  let draining = false;
  // Every in-flight request registers on it: callbacks, not listeners (cancellation.ts).
  const stop = new Cancellation();
  const handler = createHandler(() => state, {
    log,
    draining: () => draining,
    stop: stop.signal,
  });
  // A serving thread's socket is reached by its supervisor only, which keeps the limits (and TLS).
  const serverTls = options.listenPath === undefined
    ? await readServerTls(config.tls.server)
    : null;
  const guard = options.listenPath === undefined
    ? await serveGuarded({
      hostname: address.hostname,
      port: address.port,
      ...(options.reusePort ? { reusePort: true } : {}),
      limits: connectionLimits(config),
      log,
      ...(serverTls === null ? {} : { tls: serverTls }),
    }, handler).catch((error) => {
      throw listenError(error, { key: "listen_addr", address: config.listen_addr });
    })
    : null;
  const server = guard ?? Deno.serve({ path: options.listenPath!, onListen: () => {} }, handler);
  const port = server.addr.transport === "tcp" ? server.addr.port : address.port;
  config = withBoundPort(config, port);
  const plainUrl = listenUrl({ ...address, port }, machineName());
  const url = withScheme(plainUrl, serverTls !== null);

  // Shared state (issue 30): made once, kept across reloads (Redis connections, APQ registrations).
  const metrics = telemetry.telemetry.metrics;
  const stores = createStores(config, {
    log,
    ...(metrics
      ? {
        events: {
          fallback: (feature) => metrics.storeFallback(feature),
          availability: (provider, available) => metrics.storeAvailable(provider, available),
        },
      }
      : {}),
  });

  const sources = { options, source, stores, http1, subgraphTls, telemetry };
  const build = (next: Config, nextLog: Logger, offered?: string): Promise<RouterState> =>
    buildRouterState(next, { ...sources, log: nextLog, previous: state, offered });

  try {
    // From a registry that cannot give one yet, the router listens without a state (503).
    const waiting = source !== null && await source.first() === null;
    if (!waiting) state = await build(config, log);
    telemetry.listen(log);
  } catch (error) {
    http1?.close();
    subgraphTls.close();
    await Promise.all([server.shutdown(), telemetry.shutdown(), stores.close()]);
    throw error;
  }
  if (state !== null) logStartup(log, config, url, state);
  else log.info("GW Router listening; no supergraph yet (readiness 503)", { url });
  if (serverTls !== null) logServerTls(log, serverTls, "TLS certificate loaded");

  // `tls.server`'s files re-read on reload and when they change (only the certificate then).
  const tlsKeeper = serverTls === null || !guard?.setTls
    ? null
    : serverTlsKeeper(serverTls, { setTls: guard.setTls, log: () => log });
  const reloadTls = async (next: Config): Promise<void> => {
    if (tlsKeeper !== null) return await tlsKeeper.reload(next.tls.server);
    if (next.tls.server.cert_file !== "" && options.listenPath === undefined) {
      log.warn("tls.server was set while serving plain HTTP; restart the router to serve HTTPS");
    }
  };

  let reloading: Promise<boolean> = Promise.resolve(true);
  async function reloadOnce(offered?: string): Promise<boolean> {
    try {
      let next = options.configPath === undefined
        ? config
        : await loadConfig(options.configPath, { env });
      if (next.listen_addr !== originalListen) {
        log.warn("listen_addr changed; restart the router to listen there", {
          listen_addr: next.listen_addr,
        });
      }
      next = withBoundPort(
        next.listen_addr === originalListen ? next : { ...next, listen_addr: originalListen },
        port,
      );
      const nextLog = makeLog(next);
      const nextState = await build(next, nextLog, offered);
      const previous = state;
      previous?.keySources.close(); // in-flight requests keep its loaded keys
      state = nextState;
      // Subscriptions run on the state they started with: they end, and clients resubscribe.
      if (previous !== null) {
        endSubscriptions(previous.engine.subscriptions, SCHEMA_RELOAD);
        retired.add(previous.engine.subscriptions);
      }
      handOverMcp(previous?.mcp ?? null, nextState.mcp);
      config = next;
      log = nextLog;
      log.info("Configuration reloaded", { operations: nextState.operations.operations.length });
      await reloadTls(next);
      telemetry.telemetry.metrics?.reload("success");
      restartWatcher();
      return true;
    } catch (error) {
      log.error("Reload failed; keeping the previous configuration", describeError(error));
      telemetry.telemetry.metrics?.reload("failure");
      return false;
    }
  }
  function reload(offered?: string): Promise<boolean> {
    const once = () => reloadOnce(offered);
    reloading = reloading.then(once, once);
    return reloading;
  }
  source?.start((sdl) => reload(sdl));

  // File watching (`_config_watch.ts`): a change reloads; the certificate's re-reads it alone.
  const fileWatch = watchConfigFiles({
    debounceMs: options.debounceMs ?? 200,
    changed: () => void reload(),
    tlsChanged: () => {
      reloading = reloading.then(() => reloadTls(config)).then(() => true, () => true);
    },
  });
  function restartWatcher(): void {
    if (!options.watch || closed) return;
    fileWatch.update({
      files: [
        options.configPath === undefined ? null : resolve(options.configPath),
        options.supergraphSdl === undefined && source === null
          ? resolve(config.supergraph_path)
          : null,
        ...config.persisted_operations.manifests.map((path) => resolve(path)),
      ].filter((file): file is string => file !== null),
      operationsDir: resolve(config.operations_dir),
      tlsFiles: serverTls === null ? [] : serverTlsFiles(config.tls.server).map((f) => resolve(f)),
    });
  }
  let closed = false;
  restartWatcher();

  const removeSignalListeners = options.signals
    ? addSignalListeners({ hangup: () => void reload(), stop: () => void shutdown() })
    : () => {};

  let shuttingDown: Promise<void> | null = null;
  const stopped = Promise.withResolvers<void>();
  server.finished.then(stopped.resolve, stopped.resolve);
  function shutdown(): Promise<void> {
    shuttingDown ??= (async () => {
      closed = true;
      source?.stop();
      fileWatch.close();
      removeSignalListeners();
      draining = true;
      const graceMs = options.shutdownGraceMs ?? config.grace_period_ms;
      log.info("Shutting down", {
        shutdown_delay_ms: config.shutdown_delay_ms,
        grace_period_ms: graceMs,
      });
      await reloading.catch(() => {});
      if (config.shutdown_delay_ms > 0) {
        await new Promise((resolve) => setTimeout(resolve, config.shutdown_delay_ms));
      }
      // Open MCP streams never end by themselves: close them before waiting.
      closeMcpStreams(state?.mcp ?? null);
      if (state !== null) endSubscriptions(state.engine.subscriptions, SERVER_SHUTDOWN);
      await drainWithin(server.shutdown(), { graceMs, expire: () => stop.abort(), log });
      state?.keySources.close();
      http1?.close();
      subgraphTls.close();
      await Promise.all([telemetry.shutdown(), stores.close()]);
      stopped.resolve();
    })();
    return shuttingDown;
  }

  return {
    url,
    metricsUrl: telemetry.url(),
    state: () => state as RouterState,
    reload,
    shutdown,
    finished: stopped.promise,
  };
}

/** Subscriptions' engine-side state (counts, limits, upstreams) of one router state. */
type EngineSubscriptions = RouterState["engine"]["subscriptions"];

/**
 * The subscription counts of the states a reload replaced (the counters never
 * go down), and the telemetry's view: those plus the serving state's.
 */
function retiredSubscriptions() {
  const totals = { eventsIn: 0, eventsOut: 0, opened: 0 };
  let limits: SubscriptionLimitCounts = {
    refusedMaxTotal: 0,
    refusedCapacity: 0,
    refusedBehind: 0,
    refusedPerConnection: 0,
    endedClientTooSlow: 0,
    endedRouterBehind: 0,
  };
  return {
    /** Adds a replaced state's counts. */
    add(subs: EngineSubscriptions): void {
      totals.eventsIn += subs.hub.eventsIn;
      totals.eventsOut += subs.counts.eventsOut;
      totals.opened += subs.hub.opened;
      limits = sumLimits(limits, subs.limits);
    },
    /** The counts with the serving state's. */
    withLive(subs: EngineSubscriptions) {
      return {
        active: subs.active.size,
        upstreams: subs.hub.upstreams,
        eventsIn: totals.eventsIn + subs.hub.eventsIn,
        eventsOut: totals.eventsOut + subs.counts.eventsOut,
        upstreamsOpened: totals.opened + subs.hub.opened,
        limits: sumLimits(limits, subs.limits),
        ...(subs.capacity === null ? {} : { cpuShare: subs.capacity.busy }),
      };
    },
  };
}

/** What a router state is built from, kept across reloads. */
interface StateSources {
  readonly options: StartRouterOptions;
  readonly source: ReturnType<typeof createSupergraphSource> | null;
  readonly stores: ReturnType<typeof createStores>;
  readonly http1: ReturnType<typeof createHttp1Pool> | null;
  readonly subgraphTls: ReturnType<typeof subgraphTlsClients>;
  readonly telemetry: Awaited<ReturnType<typeof startTelemetry>>;
}

/** The supergraph to build: the test's, the registry's (offered or serving), or the file. */
function supergraphFor(
  next: Config,
  at: Pick<StateSources, "options" | "source"> & { readonly offered: string | undefined },
): Promise<string> {
  const { options, source } = at;
  if (options.supergraphSdl !== undefined) return Promise.resolve(options.supergraphSdl);
  if (source === null) return readFileFor("supergraph_path", next.supergraph_path);
  const sdl = at.offered ?? source.current();
  if (sdl === null) {
    return Promise.reject(
      new RouterError("CONFIG_INVALID", "No supergraph from the registry yet", {
        details: { path: "supergraph_source" },
      }),
    );
  }
  return Promise.resolve(sdl);
}

/**
 * A router state for `next`: its files read (supergraph, operations, the
 * tracing key, manifests, subgraph TLS), built over the previous state, and
 * told to the telemetry.
 */
async function buildRouterState(
  next: Config,
  at: StateSources & {
    readonly log: Logger;
    readonly previous: RouterState | null;
    readonly offered: string | undefined;
  },
): Promise<RouterState> {
  const { options, stores, http1, telemetry, log: nextLog } = at;
  if (storesSignature(next) !== stores.signature) {
    nextLog.warn(
      "storage_providers, the APQ cache, rate_limit.storage or the entity cache's store changed; restart the router to apply it",
    );
  }
  const [supergraphSdl, operationFiles, traceKeyPem, manifests, httpClients] = await Promise.all([
    supergraphFor(next, at),
    readOperationsFor(next.operations_dir, nextLog),
    next.engine.request_tracing_public_key_file === "" ? Promise.resolve(null) : readFileFor(
      "engine.request_tracing_public_key_file",
      next.engine.request_tracing_public_key_file,
    ),
    Promise.all(
      next.persisted_operations.manifests.map(async (path) => ({
        path,
        text: await readFileFor("persisted_operations.manifests", path),
      })),
    ),
    at.subgraphTls.update(next.tls.subgraphs),
  ]);
  const built = await buildState({
    config: next,
    log: nextLog,
    supergraphSdl,
    operationFiles,
    traceKeyPem,
    previous: at.previous,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.cpu ? { cpu: options.cpu } : {}),
    ...(http1 ? { http1 } : {}),
    ...(httpClients.size > 0 ? { httpClients } : {}),
    telemetry: telemetry.telemetry,
    manifests,
    stores,
  });
  await telemetry.serving(next, supergraphSdl);
  return built;
}

/** The config to start with: the one given (its files checked), or the one loaded from `configPath`. */
async function initialConfig(
  options: StartRouterOptions,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Config> {
  if (options.config !== undefined) {
    // loadConfig already checked the files of a config loaded from `configPath`.
    if (options.supergraphSdl === undefined && options.configPath === undefined) {
      await checkFiles(options.config);
    }
    return options.config;
  }
  if (options.configPath === undefined) {
    throw new RouterError("CONFIG_INVALID", 'startRouter needs "configPath" or "config"', {
      details: { path: "CONFIG_PATH" },
    });
  }
  return await loadConfig(options.configPath, { env });
}

/**
 * SIGHUP reloads, SIGTERM and SIGINT stop (each where the platform has it:
 * no SIGHUP on Windows). Returns what removes the listeners.
 */
function addSignalListeners(
  listeners: { readonly hangup: () => void; readonly stop: () => void },
): () => void {
  const added: [Deno.Signal, () => void][] = [];
  for (
    const [signal, listener] of [
      ["SIGHUP", listeners.hangup],
      ["SIGTERM", listeners.stop],
      ["SIGINT", listeners.stop],
    ] as const
  ) {
    try {
      Deno.addSignalListener(signal, listener);
      added.push([signal, listener]);
    } catch {
      // Signal not supported on this platform (SIGHUP on Windows).
    }
  }
  return () => {
    for (const [signal, listener] of added) Deno.removeSignalListener(signal, listener);
  };
}

/**
 * The proxy variables Deno's fetch reads, as far as this process may read them
 * (one it may not read counts as set: fetch, not the pool, decides then).
 */
function proxyVariables(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const name of ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]) {
    try {
      env[name] = Deno.env.get(name);
    } catch {
      env[name] = "unreadable";
    }
  }
  return env;
}

function logStartup(log: Logger, config: Config, url: string, state: RouterState): void {
  log.info("GW Router listening", {
    url,
    graphql: `${url}${config.graphql_path}`,
    ...(state.mcp !== null ? { mcp: `${url}${config.mcp.path}` } : {}),
    ...(state.connect !== null ? { connect: `${url}${state.connect.prefix}` } : {}),
    ...(config.playground.enabled ? { playground: `${url}/` } : {}),
    health: `${url}/health/ready`,
    operations: state.operations.operations.length,
    dev_mode: config.dev_mode,
  });
  for (const message of traceStartupWarnings(config)) log.warn(message);
  const derivedBaseUrl = withScheme(
    listenUrl(parseListenAddr(config.listen_addr)!, machineName()),
    config.tls.server.cert_file !== "",
  );
  const warnings = startupWarnings(config, {
    baseUrlSet: config.mcp.server.base_url !== derivedBaseUrl,
  });
  for (const warning of warnings) log.warn(warning.message, { key: warning.key });
}

/**
 * Reads `operations_dir`, warning when the folder does not exist (the router
 * then serves no MCP operation tools and no Connect methods).
 */
async function readOperationsFor(dir: string, log: Logger): Promise<OperationFile[]> {
  try {
    await Deno.stat(dir);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      log.warn(
        `operations_dir "${dir}" does not exist: no operations are served (MCP operation tools, Connect methods); create it or set operations_dir (OPERATIONS_DIR)`,
        { key: "operations_dir", operations_dir: dir },
      );
    }
  }
  return await readOperationFiles(dir);
}
