/**
 * Serving isolates as worker threads (`workers: N`, `heap` limits): the main
 * isolate owns the listener and supervises N threads (`node:worker_threads`,
 * created with the V8 heap limits of `heap`), each with its own router state,
 * serving on its own unix socket. The supervisor forwards every request to the
 * least busy thread (`lib/listen/forward.ts`) and answers for a thread that ends, forwards
 * reload and shutdown, pings the threads and restarts one that exits or goes
 * silent. The threads run this very module. Nothing is shared between
 * isolates: each plans and caches on its own, which is what the router does
 * across replicas anyway (MCP sessions are signed, config is files). With one
 * worker and no heap limits the main isolate serves by itself.
 *
 * @module
 */
import { parentPort, Worker as ThreadWorker } from "node:worker_threads";
import type { Config } from "../config/mod.ts";
import { listenUrl, loadConfig, parseListenAddr, withScheme } from "../config/mod.ts";
import { Cancellation } from "../cancellation.ts";
import { listenError, RouterError } from "../errors.ts";
import { createLogger, type Logger } from "../log/mod.ts";
import { unrefTimer } from "../timers.ts";
import {
  connectionLimits,
  createForwarder,
  drainWithin,
  type FacetPaths,
  logServerTls,
  readServerTls,
  serveGuarded,
  serverTlsKeeper,
  type UnixUpstream,
  unixUpstream,
  type Upstream,
  watchServerTls,
} from "../listen/mod.ts";
import type { RunningRouter, StartRouterOptions } from "./serve.ts";

/** `serve.ts` on demand: a supervising isolate never loads the router itself. */
async function startRouter(options: StartRouterOptions): Promise<RunningRouter> {
  return await (await import("./serve.ts")).startRouter(options);
}

/** Options for {@linkcode startWorkers}: those of `startRouter`, plus the count. */
export interface StartWorkersOptions extends StartRouterOptions {
  /**
   * Isolates serving the listener, the main one included; default: the
   * config's `workers`. 1 = exactly `startRouter`.
   */
  readonly workers?: number;
  /**
   * How long to wait for a worker to start (state built, listening), ms.
   * @default {60000}
   */
  readonly workerStartTimeoutMs?: number;
  /**
   * Supervised mode: a serving thread that has not answered the supervisor's
   * ping for this long is ended and restarted, ms. A thread that runs out of
   * heap inside a request handler stops running JavaScript without exiting, so
   * its exit alone cannot be relied on.
   * @default {10000}
   */
  readonly watchdogTimeoutMs?: number;
}

/**
 * True when `Deno.serve({reusePort})` is allowed (`--unstable-net`, or
 * `"unstable": ["net"]` in deno.json); without it Deno exits the process.
 */
function canReusePort(): boolean {
  return typeof (Deno as unknown as { listenDatagram?: unknown }).listenDatagram === "function";
}

const TAG = "gw-router-worker";

/** Main → worker. */
type ToWorker =
  | {
    readonly tag: typeof TAG;
    readonly kind: "start";
    readonly configPath: string;
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly index: number;
    readonly watch: boolean;
    /** Bind the Prometheus listener with SO_REUSEPORT (a restarted thread's). */
    readonly reusePort: boolean;
    /** The unix socket to serve on (the supervisor forwards to it). */
    readonly listenPath: string;
  }
  | { readonly tag: typeof TAG; readonly kind: "reload" }
  | { readonly tag: typeof TAG; readonly kind: "ping" }
  | { readonly tag: typeof TAG; readonly kind: "shutdown" };

/** Worker → main. */
type FromWorker =
  | { readonly tag: typeof TAG; readonly kind: "ready"; readonly url: string }
  | { readonly tag: typeof TAG; readonly kind: "failed"; readonly error: string }
  | { readonly tag: typeof TAG; readonly kind: "reloaded"; readonly ok: boolean }
  | { readonly tag: typeof TAG; readonly kind: "pong" }
  | { readonly tag: typeof TAG; readonly kind: "stopped" };

function isMessage<T extends { tag: string }>(value: unknown): value is T {
  return typeof value === "object" && value !== null && (value as { tag?: unknown }).tag === TAG;
}

/**
 * Starts the router: from the main isolate when there is one worker and no
 * heap limit, else from supervised worker threads (`superviseWorkers`)
 * behind a listener the main isolate owns. Reload (SIGHUP or `reload()`) reaches
 * every isolate; each also watches the files itself when `watch` is on.
 * `shutdown()` (or SIGTERM/SIGINT) drains and stops them all.
 *
 * @example From `serveCommand`
 * ```ts ignore
 * import { startWorkers } from "./workers.ts";
 * const router = await startWorkers({ configPath: "config.yaml", env: Deno.env.toObject(), watch: true, signals: true });
 * await router.finished;
 * ```
 * @param options `startRouter` options (a `configPath` is needed for more than one worker) and the count.
 * @returns The running router (shutdown stops all).
 * @throws {Error} When the router cannot start (`startRouter`'s error, or the first thread's).
 */
export async function startWorkers(options: StartWorkersOptions): Promise<RunningRouter> {
  const { workers: requested, workerStartTimeoutMs: _, watchdogTimeoutMs: __, ...routerOptions } =
    options;
  const configPath = options.configPath;
  if (configPath === undefined || requested === 1) return await startRouter(routerOptions);
  const env = options.env ?? {};
  const config = await loadConfig(configPath, { env });
  const count = requested ?? config.workers;
  const limited = config.heap.max_young_generation_mb > 0 || config.heap.max_old_generation_mb > 0;
  // One isolate with V8's defaults: the main isolate serves, from the config just
  // loaded (reloads still read `configPath`).
  if (count === 1 && !limited) return await startRouter({ ...routerOptions, config });
  return await superviseWorkers(config, { ...options, configPath, env, workers: count });
}

/** One supervised worker thread. */
interface Supervised {
  thread: ThreadWorker;
  /** Resolves when the thread has exited. */
  exited: Promise<void>;
}

/**
 * Starts one worker thread with the config's heap limits and waits until it
 * serves; `onMessage` hears every later message (reload answers, pongs), and
 * `exited` resolves whenever the thread ends, asked to or not.
 */
function spawnThread(
  start: Extract<ToWorker, { kind: "start" }>,
  options: {
    readonly heap: Config["heap"];
    readonly timeoutMs: number;
    readonly onMessage: (message: FromWorker) => void;
  },
): Promise<{ supervised: Supervised; url: string }> {
  const { heap } = options;
  const thread = new ThreadWorker(new URL(import.meta.url), {
    name: `gw-router-${start.index}`,
    resourceLimits: {
      ...(heap.max_young_generation_mb > 0
        ? { maxYoungGenerationSizeMb: heap.max_young_generation_mb }
        : {}),
      ...(heap.max_old_generation_mb > 0
        ? { maxOldGenerationSizeMb: heap.max_old_generation_mb }
        : {}),
    },
  });
  const ready = Promise.withResolvers<string>();
  const exited = Promise.withResolvers<void>();
  const timer = setTimeout(
    () => ready.reject(new Error(`worker ${start.index} did not start in ${options.timeoutMs} ms`)),
    options.timeoutMs,
  );
  thread.on("message", (message: unknown) => {
    if (!isMessage<FromWorker>(message)) return;
    if (message.kind === "ready") ready.resolve(message.url);
    else if (message.kind === "failed") ready.reject(new Error(message.error));
    else if (message.kind === "stopped") void thread.terminate();
    options.onMessage(message);
  });
  thread.on("error", (error: Error) => {
    ready.reject(new Error(`worker ${start.index} crashed: ${error.message}`));
  });
  thread.on("exit", () => {
    ready.reject(new Error(`worker ${start.index} exited while starting`));
    exited.resolve();
  });
  thread.postMessage(start);
  return ready.promise.then(
    (url) => ({ supervised: { thread, exited: exited.promise }, url }),
    async (error) => {
      await thread.terminate();
      throw error;
    },
  ).finally(() => clearTimeout(timer));
}

/**
 * Supervised mode (`heap` limits set, or more than one worker): every serving
 * isolate is a worker thread created with the V8 heap limits of `heap`,
 * listening on its own unix socket in a private folder; this isolate owns
 * `listen_addr` and forwards each request to the least busy thread
 * (`lib/listen/forward.ts`), so it answers for a thread that ends (503 `ISOLATE_ENDED`).
 * It forwards SIGHUP (reload) and SIGTERM/SIGINT (shutdown), and restarts a
 * thread that exits on its own or stops answering its pings (one that ran out
 * of heap or blocked its event loop; both logged at `error` with the requests
 * it held). When a restart fails and no thread serves any more, the router
 * stops, so that its orchestrator restarts it.
 */
async function superviseWorkers(
  config: Config,
  options: StartWorkersOptions & {
    readonly configPath: string;
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly workers: number;
  },
): Promise<RunningRouter> {
  const log: Logger = options.log ?? createLogger({ level: config.log_level });
  const count = options.workers;
  const address = parseListenAddr(config.listen_addr);
  if (address === undefined) {
    throw new RouterError("CONFIG_INVALID", `Cannot read "listen_addr": "${config.listen_addr}"`, {
      details: { path: "listen_addr" },
    });
  }
  // The threads' sockets: a folder only this user can enter.
  const socketDir = await Deno.makeTempDir({ prefix: "gw-router-" });
  let env = options.env;
  if (config.mcp.session_secret === "") {
    // One secret for every isolate (and for a restarted one): MCP sessions survive both.
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    env = {
      ...env,
      MCP_SESSION_SECRET: Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""),
    };
  }
  if (count > 1 && config.telemetry.metrics.prometheus.enabled) {
    // One registry per isolate: a scrape of a shared port would reach a random one.
    log.warn("The Prometheus listener is off with workers > 1 (one registry per worker)");
    env = { ...env, TELEMETRY_METRICS_PROMETHEUS_ENABLED: "false" };
  }
  // The supervisor waits for `shutdown_delay`; a thread drains at once when told.
  env = { ...env, SHUTDOWN_DELAY_MS: "0" };
  const timeoutMs = options.workerStartTimeoutMs ?? 60_000;
  const threads: (Thread | null)[] = Array.from({ length: count }, () => null);
  /** The threads that serve (what the forwarder picks from). */
  let serving: Upstream[] = [];
  const reloads: ((ok: boolean) => void)[][] = Array.from({ length: count }, () => []);
  /** When each thread last answered a ping (or became ready). */
  const answered: number[] = Array.from({ length: count }, () => performance.now());
  /** Restarts per thread: each generation listens on a socket of its own. */
  const generations: number[] = Array.from({ length: count }, () => 0);
  let stopping = false;
  let draining = false;
  const stop = new Cancellation();
  let paths = facetPaths(config);

  // This isolate owns the listener: it terminates TLS (the threads' sockets are private).
  const serverTls = await readServerTls(config.tls.server);
  const server = await serveGuarded(
    {
      hostname: address.hostname,
      port: address.port,
      limits: connectionLimits(config),
      log,
      ...(serverTls === null ? {} : { tls: serverTls }),
    },
    createForwarder({
      upstreams: () => serving,
      complete: () => serving.length === count,
      draining: () => draining,
      stop: stop.signal,
      // The thread's own deadline (504) answers first; this bounds a lost request.
      timeoutMs: config.traffic_shaping.router.request_timeout_ms + 5_000,
      paths: () => paths,
      log,
    }),
  ).catch((error) => {
    throw listenError(error, { key: "listen_addr", address: config.listen_addr });
  });
  const plainUrl = listenUrl({ ...address, port: server.addr.port });
  const url = withScheme(plainUrl, serverTls !== null);
  const listenAddr = new URL(url).host;
  const tlsKeeper = serverTls === null || server.setTls === null
    ? null
    : serverTlsKeeper(serverTls, { setTls: server.setTls, log: () => log });
  if (serverTls !== null) logServerTls(log, serverTls, "TLS certificate loaded");
  // With `watch`, a certificate written in place (certbot, cert-manager) is
  // re-read here, where TLS ends, as a single-isolate router does.
  let tlsConfig = config.tls.server;
  const tlsWatcher = tlsKeeper !== null && options.watch
    ? watchServerTls(tlsConfig, {
      reload: () => tlsKeeper.reload(tlsConfig),
      debounceMs: options.debounceMs ?? 200,
    })
    : null;

  // The watchdog: ping every thread; end one that stopped answering. Its
  // requests are answered 503 at once (a blocked thread may never end), and a
  // new thread takes its place.
  const watchdogTimeoutMs = options.watchdogTimeoutMs ?? 10_000;
  const watchdog = setInterval(() => {
    const now = performance.now();
    threads.forEach((thread, index) => {
      if (thread === null || stopping) return;
      if (now - answered[index]! > watchdogTimeoutMs) {
        log.error("A serving isolate stopped answering (out of heap or blocked); restarting it", {
          worker: index,
          silent_ms: Math.round(now - answered[index]!),
          requests_answered_503: thread.listener.upstream.waiting,
        });
        answered[index] = now;
        threads[index] = null;
        remove(thread);
        for (const resolve of reloads[index]!.splice(0)) resolve(false);
        void thread.thread.terminate();
        restart(index);
        return;
      }
      thread.thread.postMessage({ tag: TAG, kind: "ping" } satisfies ToWorker);
    });
  }, Math.max(100, Math.min(1_000, watchdogTimeoutMs / 4)));
  // The threads keep the process alive; the watchdog alone must not.
  unrefTimer(watchdog);
  // From the first moment the port is open: SIGTERM while threads start drains too.
  const signalListeners: [Deno.Signal, () => void][] = [];
  if (options.signals) {
    const pairs: [Deno.Signal, () => void][] = [
      ["SIGHUP", () => void reload()],
      ["SIGTERM", () => void shutdown()],
      ["SIGINT", () => void shutdown()],
    ];
    for (const [signal, listener] of pairs) {
      try {
        Deno.addSignalListener(signal, listener);
        signalListeners.push([signal, listener]);
      } catch {
        // Signal not supported on this platform (SIGHUP on Windows).
      }
    }
  }

  const startMessage = (index: number, path: string): Extract<ToWorker, { kind: "start" }> => ({
    tag: TAG,
    kind: "start",
    configPath: options.configPath,
    env: { ...env, LISTEN_ADDR: listenAddr },
    index,
    watch: options.watch ?? false,
    reusePort: canReusePort(),
    listenPath: path,
  });
  /** Takes a thread out of service: its waiting requests get 503 at once (once). */
  function remove(thread: Thread): void {
    serving = serving.filter((upstream) => upstream !== thread.listener.upstream);
    thread.listener.end();
  }
  async function start(index: number): Promise<void> {
    const path = `${socketDir}/${index}-${generations[index]!++}.sock`;
    const { supervised } = await spawnThread(startMessage(index, path), {
      heap: config.heap,
      timeoutMs,
      onMessage: (message) => {
        if (message.kind === "reloaded") reloads[index]!.shift()?.(message.ok);
        else if (message.kind === "pong") answered[index] = performance.now();
      },
    });
    if (stopping) {
      // Shutdown began while it started: it never serves.
      await supervised.thread.terminate();
      return;
    }
    const listener = unixUpstream(path, { index });
    const upstream = listener.upstream;
    const thread: Thread = { ...supervised, listener };
    threads[index] = thread;
    answered[index] = performance.now();
    serving = [...serving, upstream];
    supervised.exited.then(() => {
      void Deno.remove(path).catch(() => {});
      if (threads[index] !== thread) {
        // Ended by the watchdog and replaced already (its requests were answered then).
        log.warn("An ended serving isolate exited at last", { worker: index });
        return remove(thread);
      }
      threads[index] = null;
      for (const resolve of reloads[index]!.splice(0)) resolve(false);
      if (stopping) {
        // A clean stop: what it answered is still in its socket, read before
        // the socket's end (which fails anything it did not answer).
        serving = serving.filter((u) => u !== upstream);
        return;
      }
      const lost = upstream.waiting;
      remove(thread);
      log.error("A serving isolate exited; restarting it", {
        worker: index,
        heap: config.heap,
        // Answered 503 ISOLATE_ENDED by the supervisor.
        requests_answered_503: lost,
      });
      restart(index);
    });
  }
  /** Starts a replacement; when none can start and no thread serves, the router stops. */
  function restart(index: number): void {
    start(index).catch((error) => {
      log.error("A serving isolate failed to restart", { worker: index, error: String(error) });
      if (!stopping && threads.every((t) => t === null)) {
        log.error("No serving isolate is left: stopping");
        void shutdown();
      }
    });
  }

  try {
    await start(0);
  } catch (error) {
    for (const [signal, listener] of signalListeners) Deno.removeSignalListener(signal, listener);
    await server.shutdown();
    await Deno.remove(socketDir, { recursive: true }).catch(() => {});
    throw error;
  }
  const others = await Promise.allSettled(
    Array.from({ length: count - 1 }, (_, i) => start(i + 1)),
  );
  for (const result of others) {
    if (result.status === "rejected") {
      log.error("A worker failed to start", { error: String(result.reason) });
    }
  }
  log.info("Workers serving", {
    supervised: true,
    workers: threads.filter((t) => t !== null).length,
    listen_addr: listenAddr,
    heap: config.heap,
  });

  async function reload(): Promise<boolean> {
    const waits = threads.map((thread, index) => {
      if (thread === null) return Promise.resolve(false);
      const reply = new Promise<boolean>((resolve) => reloads[index]!.push(resolve));
      thread.thread.postMessage({ tag: TAG, kind: "reload" } satisfies ToWorker);
      return reply;
    });
    const ok = (await Promise.all(waits)).every(Boolean);
    // Refusals keep the shape of the facets the threads now serve.
    const next = await loadConfig(options.configPath, { env }).catch(() => null);
    if (next !== null) paths = facetPaths(next);
    if (next !== null) tlsConfig = next.tls.server;
    if (tlsKeeper !== null && next !== null) await tlsKeeper.reload(next.tls.server);
    return ok;
  }
  const finished = Promise.withResolvers<void>();
  let shuttingDown: Promise<void> | null = null;
  // Shutdown (Apollo's model, as `startRouter`): readiness 503 at once while
  // this listener still accepts for `shutdown_delay`; then the threads drain
  // and close their streams while this listener waits for its requests up to
  // `grace_period`; those still waiting then are answered 503, never reset.
  function shutdown(): Promise<void> {
    shuttingDown ??= (async () => {
      stopping = true;
      draining = true;
      clearInterval(watchdog);
      tlsWatcher?.close();
      for (const [signal, listener] of signalListeners) Deno.removeSignalListener(signal, listener);
      const graceMs = options.shutdownGraceMs ?? config.grace_period_ms;
      log.info("Shutting down", {
        shutdown_delay_ms: config.shutdown_delay_ms,
        grace_period_ms: graceMs,
      });
      if (config.shutdown_delay_ms > 0) {
        await new Promise((resolve) => setTimeout(resolve, config.shutdown_delay_ms));
      }
      // This listener stops accepting first; then the threads finish what they hold.
      const drained = server.shutdown();
      const running = threads.filter((t): t is Thread => t !== null);
      for (const { thread } of running) {
        thread.postMessage({ tag: TAG, kind: "shutdown" } satisfies ToWorker);
      }
      await drainWithin(drained, { graceMs, expire: () => stop.abort(), log });
      const exited = Promise.all(running.map((t) => t.exited));
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([exited, new Promise((resolve) => timer = setTimeout(resolve, 2_000))]);
      clearTimeout(timer);
      await Promise.all(running.map(({ thread }) => thread.terminate()));
      for (const thread of running) remove(thread);
      await Deno.remove(socketDir, { recursive: true }).catch(() => {});
      finished.resolve();
    })();
    return shuttingDown;
  }
  return {
    url,
    state() {
      throw new RouterError(
        "INTERNAL",
        "The router state lives in its serving isolates (heap limits are set): it is not readable here",
      );
    },
    reload,
    shutdown,
    finished: finished.promise,
  };
}

/** A serving thread as the supervisor holds it. */
interface Thread extends Supervised {
  /** Its listener, what the forwarder sends its requests to. */
  readonly listener: UnixUpstream;
}

/** Where the facets of `config` live (the shape of a refusal there). */
function facetPaths(config: Config): FacetPaths {
  return {
    mcp: config.mcp.enabled ? config.mcp.path : null,
    connectPrefix: config.connect_rpc.enabled
      ? `/${config.connect_rpc.package}.${config.connect_rpc.service}/`
      : null,
  };
}

/** Thread side: runs one router isolate on its unix socket. */
function serveInThread(port: NonNullable<typeof parentPort>): void {
  const post = (message: FromWorker) => port.postMessage(message);
  let router: RunningRouter | null = null;
  port.on("message", async (message: unknown) => {
    if (!isMessage<ToWorker>(message)) return;
    switch (message.kind) {
      case "start": {
        try {
          router = await startRouter({
            configPath: message.configPath,
            env: message.env,
            watch: message.watch,
            signals: false,
            reusePort: message.reusePort,
            listenPath: message.listenPath,
          });
          post({ tag: TAG, kind: "ready", url: router.url });
        } catch (error) {
          post({
            tag: TAG,
            kind: "failed",
            error: error instanceof Error ? error.message : String(error),
          });
        }
        return;
      }
      case "reload":
        post({ tag: TAG, kind: "reloaded", ok: (await router?.reload()) ?? false });
        return;
      case "ping":
        post({ tag: TAG, kind: "pong" });
        return;
      case "shutdown":
        // The supervisor ends the thread once it reads "stopped".
        await router?.shutdown();
        post({ tag: TAG, kind: "stopped" });
        return;
    }
  });
}

// Only inside a serving thread (this module is its entry point); the listener
// ignores every message that is not ours.
if (parentPort !== null) serveInThread(parentPort);
