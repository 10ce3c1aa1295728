/**
 * The URL a client spoke, for requests `Deno.serve` read from a unix socket
 * (shared by the listener's relay and the trace recorder).
 *
 * @module
 */

/** The scheme `Deno.serve` gives requests it reads from a unix socket. */
const UNIX_SCHEME = "http+unix:";

/**
 * The URL a client used, for a request `Deno.serve` read from a unix socket
 * (the guard's relay, a supervised thread): `http+unix:` there, plain `http:`
 * on the client's connection.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { spokenUrl } from "./spoken_url.ts";
 * assert.equal(spokenUrl("http+unix://127.0.0.1:4000/graphql"), "http://127.0.0.1:4000/graphql");
 * assert.equal(spokenUrl("http://a/graphql"), "http://a/graphql");
 * ```
 * @param url A request's URL.
 * @returns The URL with the scheme the client spoke.
 */
export function spokenUrl(url: string): string {
  return url.startsWith(UNIX_SCHEME) ? `http:${url.slice(UNIX_SCHEME.length)}` : url;
}
