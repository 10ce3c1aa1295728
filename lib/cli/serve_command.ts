/**
 * The `serve` command: arguments, then `startWorkers` until SIGTERM/SIGINT.
 * Kept apart from `serve.ts` so that, when the serving isolates are worker
 * threads (`heap` limits), the supervising isolate never loads the router.
 *
 * @module
 */
import { resolveConfigPath } from "../config/mod.ts";
import { describeError } from "../errors.ts";
import { createLogger, flushLogs } from "../log/mod.ts";
import type { CommandOptions } from "./types.ts";
import type { RunningRouter } from "./serve.ts";
import { startWorkers } from "./workers.ts";

/** Parsed `serve` arguments. */
interface ServeArgs {
  readonly config: string | undefined;
}

function parseServeArgs(args: readonly string[]): ServeArgs | string {
  let config: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg === "--config" || arg === "-c") {
      config = args[++i];
      if (config === undefined || config === "") return `Missing value after "${arg}"`;
    } else if (arg.startsWith("--config=")) {
      config = arg.slice("--config=".length);
    } else {
      return `Unknown argument "${arg}"; usage: serve [--config FILE]`;
    }
  }
  return { config };
}

/**
 * Runs `serve [--config FILE]` (env `CONFIG_PATH`, default `config.yaml`)
 * until SIGTERM/SIGINT, on `workers` isolates (see `workers.ts`).
 * @param args Command-line arguments after the subcommand.
 * @param _options Shared options.
 * @returns The exit code: 0 after a clean shutdown, 1 when start-up fails, 2 on bad arguments.
 */
export async function serveCommand(args: string[], _options: CommandOptions): Promise<number> {
  const parsed = parseServeArgs(args);
  if (typeof parsed === "string") {
    console.error(parsed);
    return 2;
  }
  const env = Deno.env.toObject();
  const configPath = resolveConfigPath(parsed.config, env);
  let router: RunningRouter;
  try {
    router = await startWorkers({ configPath, env, watch: true, signals: true });
  } catch (error) {
    createLogger({ level: "error" }).error("Router failed to start", describeError(error));
    flushLogs();
    // The JSON line is for log collectors; a person at a terminal reads this one.
    console.error(`gw-router: cannot start: ${error instanceof Error ? error.message : error}`);
    return 1;
  }
  await router.finished;
  flushLogs();
  return 0;
}
