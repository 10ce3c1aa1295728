/**
 * The `compose` subcommand. STUB: its area's owner implements it.
 *
 * @module
 */
import type { CommandOptions } from "./mod.ts";

/**
 * Runs `compose`.
 * @param _args Command-line arguments after the subcommand.
 * @param _options Shared options.
 * @returns The exit code.
 */
export function composeCommand(_args: string[], _options: CommandOptions): Promise<number> {
  console.error("compose: not implemented yet");
  return Promise.resolve(1);
}
