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
    env: { NO_COLOR: "1" },
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
