/**
 * Supergraph SDL → plain model. STUB: the engine owner implements it.
 *
 * @module
 */
import { buildSchema } from "graphql";
import type { SupergraphCore } from "./types.ts";

export type * from "./types.ts";

/** The full supergraph model (grown by the engine owner). */
export type SupergraphModel = SupergraphCore;

/**
 * Builds the model of a supergraph SDL.
 * @param sdl The supergraph SDL.
 * @returns The model.
 */
export function buildSupergraph(sdl: string): SupergraphModel {
  return { apiSchema: buildSchema(sdl), subgraphs: new Map(), access: new Map() };
}
