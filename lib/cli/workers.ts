/**
 * Serving isolates as worker threads (`workers: N`, `heap` limits): the main
 * isolate supervises N threads (`node:worker_threads`, created with the V8
 * heap limits of `heap`), each with its own router state and its own
 * `Deno.serve` listener on the same address with `SO_REUSEPORT`, so the
 * kernel spreads connections over them. The threads run this very module. The
 * supervisor forwards reload and shutdown, pings the threads and restarts one
 * that exits or goes silent. Nothing is shared between isolates: each plans
 * and caches on its own, which is what the router does across replicas anyway
 * (MCP sessions are signed, config is files). With one worker and no heap
 * limits the main isolate serves by itself.
 *
 * `SO_REUSEPORT` is a Linux/BSD feature; elsewhere `workers > 1` falls back to
 * one serving isolate (logged).
 *
 * @module
 */
import { parentPort, Worker as ThreadWorker } from "node:worker_threads";
import type { Config } from "../config/mod.ts";
import { loadConfig } from "../config/mod.ts";
import { RouterError } from "../errors.ts";
import { createLogger, type Logger } from "../log/mod.ts";
import { unrefTimer } from "../timers.ts";
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
    /** Bind with SO_REUSEPORT (several isolates on one address). */
    readonly reusePort: boolean;
  }
  | { readonly tag: typeof TAG; readonly kind: "reload" }
  | { readonly tag: typeof TAG; readonly kind: "ping" }
  | { readonly tag: typeof TAG; readonly kind: "shutdown" };

/** Worker → main. */
type FromWorker =
  | { readonly tag: typeof TAG; readonly kind: "ready"; readonly url: string }
  | { readonly tag: typeof TAG; readonly kind: "failed"; readonly error: string }
  | { readonly tag: typeof TAG; readonly kind: "reloaded"; readonly ok: boolean }
  | {
    readonly tag: typeof TAG;
    readonly kind: "pong";
    /** Operations running and waiting in the thread's admission gate. */
    readonly active: number;
    readonly waiting: number;
  }
  | { readonly tag: typeof TAG; readonly kind: "stopped" };

function isMessage<T extends { tag: string }>(value: unknown): value is T {
  return typeof value === "object" && value !== null && (value as { tag?: unknown }).tag === TAG;
}

/**
 * Starts the router: from the main isolate when there is one worker and no
 * heap limit, else from supervised worker threads (`superviseWorkers`) that
 * share one listener (`SO_REUSEPORT`). Reload (SIGHUP or `reload()`) reaches
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
  let count = requested ?? config.workers;
  if (count > 1 && !canReusePort()) {
    (options.log ?? createLogger({ level: config.log_level })).warn(
      "workers > 1 needs SO_REUSEPORT, an unstable Deno API: serving from one isolate",
      { workers: count, hint: 'add "unstable": ["net"] to deno.json or run with --unstable-net' },
    );
    count = 1;
  }
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
 * Supervised mode (`heap` limits set): every serving isolate is a worker
 * thread created with the V8 heap limits of `heap`, and this isolate only
 * supervises: it forwards SIGHUP (reload) and SIGTERM/SIGINT (shutdown), and
 * restarts a thread that exits on its own or stops answering its pings (one
 * that ran out of heap; both are logged). When a restart fails and no thread
 * serves any more, the router stops, so that its orchestrator restarts it.
 * Port 0 works: the first thread binds, the others and any restarted one
 * reuse its address.
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
  // One thread needs it too when it can: a restarted thread binds while the old one drains.
  const reusePort = canReusePort();
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
  const timeoutMs = options.workerStartTimeoutMs ?? 60_000;
  const threads: (Supervised | null)[] = Array.from({ length: count }, () => null);
  const reloads: ((ok: boolean) => void)[][] = Array.from({ length: count }, () => []);
  /** When each thread last answered a ping (or became ready). */
  const answered: number[] = Array.from({ length: count }, () => performance.now());
  /** What each thread last reported holding (its requests die with it: logged). */
  const load: { active: number; waiting: number }[] = Array.from(
    { length: count },
    () => ({ active: 0, waiting: 0 }),
  );
  let stopping = false;
  let listenAddr: string | null = null;

  const startMessage = (index: number): Extract<ToWorker, { kind: "start" }> => ({
    tag: TAG,
    kind: "start",
    configPath: options.configPath,
    env: listenAddr === null ? env : { ...env, LISTEN_ADDR: listenAddr },
    index,
    watch: options.watch ?? false,
    reusePort,
  });
  async function start(index: number): Promise<string> {
    const { supervised, url } = await spawnThread(startMessage(index), {
      heap: config.heap,
      timeoutMs,
      onMessage: (message) => {
        if (message.kind === "reloaded") reloads[index]!.shift()?.(message.ok);
        else if (message.kind === "pong") {
          answered[index] = performance.now();
          load[index] = { active: message.active, waiting: message.waiting };
        }
      },
    });
    threads[index] = supervised;
    answered[index] = performance.now();
    supervised.exited.then(() => {
      if (threads[index] === supervised) threads[index] = null;
      for (const resolve of reloads[index]!.splice(0)) resolve(false);
      if (stopping) return;
      log.error("A serving isolate exited; restarting it", {
        worker: index,
        heap: config.heap,
        // Last reported: these requests got no answer (their sockets belonged to the thread).
        requests_active: load[index]!.active,
        requests_waiting: load[index]!.waiting,
      });
      load[index] = { active: 0, waiting: 0 };
      start(index).catch((error) => {
        log.error("A serving isolate failed to restart", { worker: index, error: String(error) });
        if (!stopping && threads.every((t) => t === null)) {
          log.error("No serving isolate is left: stopping");
          void shutdown();
        }
      });
    });
    return url;
  }

  const url = await start(0);
  listenAddr = new URL(url).host;
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

  // The watchdog: ping every thread; end one that stopped answering (the exit
  // handler above restarts it).
  const watchdogTimeoutMs = options.watchdogTimeoutMs ?? 10_000;
  const watchdog = setInterval(() => {
    const now = performance.now();
    threads.forEach((supervised, index) => {
      if (supervised === null || stopping) return;
      if (now - answered[index]! > watchdogTimeoutMs) {
        log.error("A serving isolate stopped answering (out of heap?); ending it", {
          worker: index,
          silent_ms: Math.round(now - answered[index]!),
          requests_active: load[index]!.active,
          requests_waiting: load[index]!.waiting,
        });
        answered[index] = now;
        void supervised.thread.terminate();
        return;
      }
      supervised.thread.postMessage({ tag: TAG, kind: "ping" } satisfies ToWorker);
    });
  }, Math.max(100, Math.min(1_000, watchdogTimeoutMs / 4)));
  // The threads keep the process alive; the watchdog alone must not.
  unrefTimer(watchdog);

  function reload(): Promise<boolean> {
    const waits = threads.map((supervised, index) => {
      if (supervised === null) return Promise.resolve(false);
      const reply = new Promise<boolean>((resolve) => reloads[index]!.push(resolve));
      supervised.thread.postMessage({ tag: TAG, kind: "reload" } satisfies ToWorker);
      return reply;
    });
    return Promise.all(waits).then((oks) => oks.every(Boolean));
  }
  const finished = Promise.withResolvers<void>();
  let shuttingDown: Promise<void> | null = null;
  function shutdown(): Promise<void> {
    shuttingDown ??= (async () => {
      stopping = true;
      clearInterval(watchdog);
      for (const [signal, listener] of signalListeners) Deno.removeSignalListener(signal, listener);
      const running = threads.filter((t): t is Supervised => t !== null);
      for (const { thread } of running) {
        thread.postMessage({ tag: TAG, kind: "shutdown" } satisfies ToWorker);
      }
      const grace = (options.shutdownGraceMs ?? config.grace_period_ms + config.shutdown_delay_ms) +
        2_000;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<void>((resolve) => timer = setTimeout(resolve, grace));
      await Promise.race([Promise.all(running.map((t) => t.exited)), expired]);
      clearTimeout(timer);
      await Promise.all(running.map(({ thread }) => thread.terminate()));
      finished.resolve();
    })();
    return shuttingDown;
  }
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

/** Thread side: runs one router isolate on the shared listener. */
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
        if (router === null) {
          post({ tag: TAG, kind: "pong", active: 0, waiting: 0 });
        } else {
          const { admission } = router.state().engine;
          post({ tag: TAG, kind: "pong", active: admission.active, waiting: admission.waiting });
        }
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
