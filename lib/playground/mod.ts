/**
 * The local playground (GraphiQL + trace view), served offline from embedded
 * assets. STUB: the playground owner implements it.
 *
 * @module
 */
import type { Config } from "../config/types.ts";

/** What the playground handler reads from the router state. */
export interface PlaygroundDeps {
  readonly config: Config;
}

/**
 * Serves the playground page (and its assets under `/playground/`).
 * @param _request The request (a browser GET).
 * @param _deps Router state.
 * @returns The response.
 */
export function handlePlayground(_request: Request, _deps: PlaygroundDeps): Promise<Response> {
  return Promise.resolve(new Response("Playground not implemented", { status: 501 }));
}
