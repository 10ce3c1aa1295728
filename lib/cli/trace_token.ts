/**
 * The `trace-token` subcommand. STUB: its area's owner implements it.
 *
 * @module
 */
import type { CommandOptions } from "./mod.ts";

/**
 * Runs `trace-token`.
 * @param _args Command-line arguments after the subcommand.
 * @param _options Shared options.
 * @returns The exit code.
 */
export function traceTokenCommand(_args: string[], _options: CommandOptions): Promise<number> {
  console.error("trace-token: not implemented yet");
  return Promise.resolve(1);
}
