/**
 * The `generate` subcommand. STUB: its area's owner implements it.
 *
 * @module
 */
import type { CommandOptions } from "./mod.ts";

/**
 * Runs `generate`.
 * @param _args Command-line arguments after the subcommand.
 * @param _options Shared options.
 * @returns The exit code.
 */
export function generateCommand(_args: string[], _options: CommandOptions): Promise<number> {
  console.error("generate: not implemented yet");
  return Promise.resolve(1);
}
