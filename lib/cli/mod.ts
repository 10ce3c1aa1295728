/**
 * Subcommand dispatch for `main.ts`. Each subcommand lives in its own file
 * (`serve.ts`, `compose.ts`, `generate.ts`, `trace_token.ts`), owned by its area.
 *
 * @module
 */

import type { CommandOptions } from "./types.ts";

export type { CommandOptions } from "./types.ts";

/**
 * Runs a subcommand and returns the process exit code.
 * @param command Subcommand name.
 * @param args Its arguments.
 * @param options Version and shared options.
 * @returns The exit code.
 */
export async function runCommand(
  command: string,
  args: string[],
  options: CommandOptions,
): Promise<number> {
  switch (command) {
    case "serve":
      return (await import("./serve_command.ts")).serveCommand(args, options);
    case "compose":
      return (await import("./compose.ts")).composeCommand(args, options);
    case "generate":
      return (await import("./generate.ts")).generateCommand(args, options);
    case "config":
      return (await import("./config_command.ts")).configCommand(args, options);
    case "trace-token":
      return (await import("./trace_token.ts")).traceTokenCommand(args, options);
    default:
      console.error(`Unknown command "${command}"; see "gw-router help"`);
      return 2;
  }
}
