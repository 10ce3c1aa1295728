/**
 * Which `Deno.HttpClient` a subgraph's requests go through (`tls.subgraphs`:
 * custom authorities, client certificates): its own entry's, else `all`'s,
 * else none (the default client). Pure.
 *
 * @module
 */

/** The entry of `tls.subgraphs` that applies to subgraphs without their own. */
export const ALL_SUBGRAPHS = "all";

/**
 * The client a subgraph's requests go through: its own entry's, else `all`'s.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clientFor } from "./http_clients.ts";
 * const all = {} as Deno.HttpClient, own = {} as Deno.HttpClient;
 * assert.equal(clientFor(new Map([["all", all], ["a", own]]), "a"), own);
 * assert.equal(clientFor(new Map([["all", all]]), "b"), all);
 * assert.equal(clientFor(new Map(), "b"), undefined);
 * ```
 * @param clients The clients by entry name.
 * @param subgraph The subgraph's name.
 * @returns Its client, or undefined (the default one).
 */
export function clientFor(
  clients: ReadonlyMap<string, Deno.HttpClient>,
  subgraph: string,
): Deno.HttpClient | undefined {
  return clients.get(subgraph) ?? clients.get(ALL_SUBGRAPHS);
}
