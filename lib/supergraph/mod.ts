/**
 * Supergraph SDL → plain model ({@linkcode buildSupergraph}).
 *
 * @module
 */
export type * from "./types.ts";
export { buildSupergraph, type SupergraphModel } from "./build.ts";
