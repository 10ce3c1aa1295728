/**
 * Types every subcommand shares. Apart from `mod.ts` so that the dispatcher
 * and the subcommands it loads import them without an import circle.
 *
 * @module
 */

/** Options every subcommand receives. */
export interface CommandOptions {
  /** The router version. */
  readonly version: string;
}
