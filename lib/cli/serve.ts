/**
 * The `serve` subcommand. STUB: its area's owner implements it.
 *
 * @module
 */
import type { CommandOptions } from "./mod.ts";

/**
 * Runs `serve`.
 * @param _args Command-line arguments after the subcommand.
 * @param _options Shared options.
 * @returns The exit code.
 */
export function serveCommand(_args: string[], _options: CommandOptions): Promise<number> {
  console.error("serve: not implemented yet");
  return Promise.resolve(1);
}
