/**
 * Federation composition (the `compose` subcommand's pure core).
 *
 * @module
 */
export {
  composeSupergraph,
  type CompositionError,
  type CompositionLocation,
  type CompositionOutcome,
  formatCompositionError,
  type SubgraphSdl,
} from "./compose.ts";
