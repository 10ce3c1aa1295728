/**
 * Multi-worker mode (`workers: N` in the config): N isolates in one process,
 * each with its own router state and its own `Deno.serve` listener on the
 * same address with `SO_REUSEPORT`, so the kernel spreads connections over
 * them and every core serves requests. The main isolate serves too (it is
 * worker 0); it spawns `N - 1` web `Worker`s running this very module (so
 * `deno compile` needs no `--include`), forwards reload and shutdown to them,
 * and stops them when it stops. Nothing is shared between isolates: each
 * plans and caches on its own, which is what the router does across replicas
 * anyway (MCP sessions are signed, config is files).
 *
 * `SO_REUSEPORT` is a Linux/BSD feature; elsewhere the workers fail to bind
 * and the router keeps serving from the main isolate (logged).
 *
 * @module
 */
import { parentPort, Worker as ThreadWorker } from "node:worker_threads";
import type { Config } from "../config/mod.ts";
import { loadConfig } from "../config/mod.ts";
import { RouterError } from "../errors.ts";
import { createLogger, type Logger } from "../log/mod.ts";
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
  | { readonly tag: typeof TAG; readonly kind: "pong" }
  | { readonly tag: typeof TAG; readonly kind: "stopped" };

function isMessage<T extends { tag: string }>(value: unknown): value is T {
  return typeof value === "object" && value !== null && (value as { tag?: unknown }).tag === TAG;
}

/** One spawned worker and how to talk to it. */
interface WorkerHandle {
  readonly worker: Worker;
  readonly stopped: Promise<void>;
}

function spawnWorker(
  start: Extract<ToWorker, { kind: "start" }>,
  timeoutMs: number,
): Promise<WorkerHandle> {
  const worker = new Worker(import.meta.url, { type: "module", name: `gw-router-${start.index}` });
  const ready = Promise.withResolvers<void>();
  const stopped = Promise.withResolvers<void>();
  const timer = setTimeout(
    () => ready.reject(new Error(`worker ${start.index} did not start in ${timeoutMs} ms`)),
    timeoutMs,
  );
  worker.addEventListener("message", (event: MessageEvent) => {
    const message = event.data;
    if (!isMessage<FromWorker>(message)) return;
    if (message.kind === "ready") ready.resolve();
    else if (message.kind === "failed") ready.reject(new Error(message.error));
    else stopped.resolve();
  });
  worker.addEventListener("error", (event: ErrorEvent) => {
    event.preventDefault();
    const error = new Error(`worker ${start.index} crashed: ${event.message}`);
    ready.reject(error);
    stopped.resolve();
  });
  worker.postMessage(start);
  return ready.promise.then(
    () => ({ worker, stopped: stopped.promise }),
    (error) => {
      worker.terminate();
      throw error;
    },
  ).finally(() => clearTimeout(timer));
}

/**
 * Starts the router on `workers` isolates sharing one listener (`SO_REUSEPORT`).
 * With one worker this is exactly `startRouter`. The main isolate binds first
 * (so port 0 works), then each worker loads the same config file with
 * `LISTEN_ADDR` set to the bound address. Reload (SIGHUP or `reload()`)
 * reaches every isolate; each also watches the files itself when `watch` is
 * on. `shutdown()` (or SIGTERM/SIGINT on the main isolate) stops the workers
 * after the main listener has drained. A worker that fails to start is
 * logged and the others keep serving.
 *
 * @example From `serveCommand`
 * ```ts ignore
 * import { startWorkers } from "./workers.ts";
 * const router = await startWorkers({ configPath: "config.yaml", env: Deno.env.toObject(), watch: true, signals: true });
 * await router.finished;
 * ```
 * @param options `startRouter` options (a `configPath` is needed for more than one worker) and the count.
 * @returns The running router (the main isolate's state; shutdown stops all).
 * @throws {RouterError} When the main isolate cannot start (as `startRouter`).
 */
export async function startWorkers(options: StartWorkersOptions): Promise<RunningRouter> {
  const { workers: requested, workerStartTimeoutMs, ...routerOptions } = options;
  const configPath = options.configPath;
  if (configPath === undefined || requested === 1) return await startRouter(routerOptions);
  let env = options.env ?? {};
  const config = await loadConfig(configPath, { env });
  const count = requested ?? config.workers;
  if (config.heap.max_young_generation_mb > 0 || config.heap.max_old_generation_mb > 0) {
    return await superviseWorkers(config, {
      ...options,
      configPath,
      env,
      workers: count,
    });
  }
  // One isolate: start from the config just loaded (reloads still read `configPath`).
  if (count <= 1) return await startRouter({ ...routerOptions, config });
  if (!canReusePort()) {
    const router = await startRouter({ ...routerOptions, config });
    (options.log ?? createLogger({ level: config.log_level })).warn(
      "workers > 1 needs SO_REUSEPORT, an unstable Deno API: serving from one isolate",
      { workers: count, hint: 'add "unstable": ["net"] to deno.json or run with --unstable-net' },
    );
    return router;
  }
  if (config.mcp.session_secret === "") {
    // One secret for all isolates, so an MCP session works whichever one answers.
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    env = {
      ...env,
      MCP_SESSION_SECRET: Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""),
    };
  }

  const mainOptions: StartRouterOptions = { ...routerOptions, env, reusePort: true };
  const main = await startRouter(mainOptions);
  const log = options.log ?? createLogger({ level: main.state().config.log_level });
  const listenAddr = main.state().config.listen_addr;
  const handles = await Promise.allSettled(
    Array.from({ length: count - 1 }, (_, i) =>
      spawnWorker({
        tag: TAG,
        kind: "start",
        configPath,
        env: { ...env, LISTEN_ADDR: listenAddr },
        index: i + 1,
        watch: options.watch ?? false,
        reusePort: true,
      }, workerStartTimeoutMs ?? 60_000)),
  );
  const running: WorkerHandle[] = [];
  for (const handle of handles) {
    if (handle.status === "fulfilled") running.push(handle.value);
    else log.error("A worker failed to start", { error: String(handle.reason) });
  }
  log.info("Workers serving", {
    workers: running.length + 1,
    requested: count,
    listen_addr: listenAddr,
  });

  const onHangup = () => {
    for (const { worker } of running) worker.postMessage({ tag: TAG, kind: "reload" });
  };
  let hangupListener = false;
  if (options.signals) {
    try {
      Deno.addSignalListener("SIGHUP", onHangup);
      hangupListener = true;
    } catch {
      // No SIGHUP on this platform.
    }
  }

  let stopping: Promise<void> | null = null;
  function stopWorkers(): Promise<void> {
    stopping ??= (async () => {
      if (hangupListener) Deno.removeSignalListener("SIGHUP", onHangup);
      for (const { worker } of running) worker.postMessage({ tag: TAG, kind: "shutdown" });
      const grace = (options.shutdownGraceMs ?? 10_000) + 1_000;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<void>((resolve) => timer = setTimeout(resolve, grace));
      await Promise.race([Promise.all(running.map((h) => h.stopped)), expired]);
      clearTimeout(timer);
      for (const { worker } of running) worker.terminate();
    })();
    return stopping;
  }
  const finished = main.finished.then(stopWorkers);

  return {
    url: main.url,
    state: () => main.state(),
    async reload() {
      onHangup();
      return await main.reload();
    },
    async shutdown() {
      await main.shutdown();
      await finished;
    },
    finished,
  };
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
  const reusePort = count > 1 || canReusePort();
  if (count > 1 && !canReusePort()) {
    throw new RouterError(
      "CONFIG_INVALID",
      'workers > 1 needs SO_REUSEPORT: run with --unstable-net (or "unstable": ["net"] in deno.json)',
      { details: { path: "workers" } },
    );
  }
  let env = options.env;
  if (config.mcp.session_secret === "") {
    // One secret for every isolate (and for a restarted one): MCP sessions survive both.
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    env = {
      ...env,
      MCP_SESSION_SECRET: Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""),
    };
  }
  const timeoutMs = options.workerStartTimeoutMs ?? 60_000;
  const threads: (Supervised | null)[] = Array.from({ length: count }, () => null);
  const reloads: ((ok: boolean) => void)[][] = Array.from({ length: count }, () => []);
  /** When each thread last answered a ping (or became ready). */
  const answered: number[] = Array.from({ length: count }, () => performance.now());
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
        else if (message.kind === "pong") answered[index] = performance.now();
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
      });
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
        });
        answered[index] = now;
        void supervised.thread.terminate();
        return;
      }
      supervised.thread.postMessage({ tag: TAG, kind: "ping" } satisfies ToWorker);
    });
  }, Math.max(100, Math.min(1_000, watchdogTimeoutMs / 4)));
  // The threads keep the process alive; the watchdog alone must not.
  Deno.unrefTimer(Number(watchdog));

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
      const grace = (options.shutdownGraceMs ?? 10_000) + 1_000;
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

/** Worker side: runs one router isolate on the shared listener. */
function serveInWorker(scope: {
  addEventListener(type: "message", listener: (event: MessageEvent) => void): void;
  postMessage(message: FromWorker): void;
  close(): void;
}): void {
  let router: RunningRouter | null = null;
  scope.addEventListener("message", async (event: MessageEvent) => {
    const message = event.data;
    if (!isMessage<ToWorker>(message)) return;
    switch (message.kind) {
      case "start": {
        try {
          const workerOptions: StartRouterOptions = {
            configPath: message.configPath,
            env: message.env,
            watch: message.watch,
            signals: false,
            reusePort: message.reusePort,
          };
          router = await startRouter(workerOptions);
          scope.postMessage({ tag: TAG, kind: "ready", url: router.url });
        } catch (error) {
          scope.postMessage({
            tag: TAG,
            kind: "failed",
            error: error instanceof Error ? error.message : String(error),
          });
        }
        return;
      }
      case "reload":
        scope.postMessage({ tag: TAG, kind: "reloaded", ok: (await router?.reload()) ?? false });
        return;
      case "ping":
        scope.postMessage({ tag: TAG, kind: "pong" });
        return;
      case "shutdown":
        await router?.shutdown();
        scope.postMessage({ tag: TAG, kind: "stopped" });
        scope.close();
        return;
    }
  });
}

// Only inside a dedicated worker (this module is the worker's entry point);
// the listener ignores every message that is not ours.
const workerScope = globalThis as unknown as {
  WorkerGlobalScope?: abstract new () => unknown;
};
if (
  typeof workerScope.WorkerGlobalScope === "function" &&
  globalThis instanceof workerScope.WorkerGlobalScope
) {
  serveInWorker(globalThis as unknown as Parameters<typeof serveInWorker>[0]);
} else if (parentPort !== null) {
  // A worker thread (supervised mode): the same protocol over its parent port.
  const port = parentPort;
  serveInWorker({
    addEventListener: (_type, listener) =>
      port.on("message", (data: unknown) => listener({ data } as MessageEvent)),
    postMessage: (message) => port.postMessage(message),
    // The supervisor ends the thread once it reads "stopped".
    close: () => {},
  });
}
