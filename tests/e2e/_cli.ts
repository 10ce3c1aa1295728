/**
 * Subprocess helpers for the e2e tests that run the CLI (`main.ts`) or an npm
 * tool the way users do.
 */

/** The repository root (a path ending in `/`). */
export const ROOT = new URL("../../", import.meta.url).pathname;
/** The CLI entry point. */
export const MAIN = `${ROOT}main.ts`;

/** Exit code and decoded output of a finished subprocess. */
export interface CliOutput {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options for {@linkcode runDeno}. */
export interface RunDenoOptions {
  /** Working folder; default: the test's. */
  readonly cwd?: string;
  /**
   * Use the project's `deno.json`; false runs an npm tool outside it
   * (`--no-config --no-lock`).
   * @default {true}
   */
  readonly project?: boolean;
  /** More environment variables (`NO_COLOR` is always set). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Runs `deno run -A --quiet <args>` (with `NO_COLOR`) and waits for it.
 * @param args Script (or `npm:` specifier) and its arguments.
 * @param options Working folder and config choice.
 * @returns Exit code, stdout and stderr.
 */
export async function runDeno(args: string[], options: RunDenoOptions = {}): Promise<CliOutput> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: options.project === false
      ? ["run", "-A", "--quiet", "--no-config", "--no-lock", ...args]
      : ["run", "-A", "--quiet", "--config", `${ROOT}deno.json`, ...args],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...options.env },
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/**
 * Runs the router CLI: `main.ts <args>` under the project's config.
 * @param args Subcommand and its arguments.
 * @param cwd Working folder; default: the test's.
 * @returns Exit code, stdout and stderr.
 */
export function runCli(args: string[], cwd?: string): Promise<CliOutput> {
  return runDeno([MAIN, ...args], cwd === undefined ? {} : { cwd });
}

/** A `main.ts serve` child process whose log lines are read as they come. */
export interface ServeProcess {
  readonly child: Deno.ChildProcess;
  /** Every log line read so far. */
  readonly lines: string[];
  /** The first line (read so far or next) that matches; throws when the output ends first. */
  waitFor(match: (line: string) => boolean): Promise<string>;
  /** Kills the process if it still runs and stops reading its output. */
  close(): Promise<void>;
}

/**
 * Starts `main.ts serve --config <configPath>` with `LOG_LEVEL=info` (stderr dropped).
 * @param configPath The config file.
 * @returns The process and its log lines.
 */
export function spawnServe(
  configPath: string,
  options: { readonly env?: Record<string, string>; readonly denoFlags?: readonly string[] } = {},
): ServeProcess {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...(options.denoFlags ?? []), "main.ts", "serve", "--config", configPath],
    cwd: ROOT,
    env: { NO_COLOR: "1", LOG_LEVEL: "info", ...options.env },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const lines: string[] = [];
  let buffer = "";
  return {
    child,
    lines,
    async waitFor(match) {
      while (true) {
        const found = lines.find(match);
        if (found !== undefined) return found;
        const { done, value } = await reader.read();
        if (done) throw new Error(`output ended; got:\n${lines.join("\n")}`);
        buffer += value;
        const parts = buffer.split("\n");
        buffer = parts.pop() ?? "";
        lines.push(...parts);
      }
    },
    async close() {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already exited.
      }
      await reader.cancel().catch(() => {});
      await child.status;
    },
  };
}
