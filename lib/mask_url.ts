/**
 * URLs as traces and logs show them: query values and credentials masked,
 * names and the path kept (issue 18: a subgraph URL's `?key=…` or the
 * client's own query string must not reach `extensions.trace`; a JWKS URL's
 * secret must not reach the log).
 *
 * @module
 */
/** What a masked value is shown as. */
export const MASK = "****";

/**
 * Masks a URL's query values and its user info.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { maskUrl } from "./mask_url.ts";
 * assert.equal(
 *   maskUrl("http://u:p@sub.test:4001/graphql?key=s3cret&x=1"),
 *   "http://****:****@sub.test:4001/graphql?key=****&x=****",
 * );
 * assert.equal(maskUrl("http://sub.test/graphql"), "http://sub.test/graphql");
 * assert.equal(maskUrl("not a url?k=v"), "not a url?****");
 * ```
 * @param url The URL.
 * @returns The URL with every query value and credential replaced by `****`.
 */
export function maskUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    const q = url.indexOf("?");
    return q < 0 ? url : `${url.slice(0, q)}?${MASK}`;
  }
  if (parsed.username !== "") parsed.username = MASK;
  if (parsed.password !== "") parsed.password = MASK;
  if (parsed.search === "" && parsed.hash === "") return parsed.href;
  const names = [...parsed.searchParams.keys()];
  parsed.hash = "";
  if (names.length === 0) return parsed.href;
  parsed.search = "";
  const query = names.map((name) => `${encodeURIComponent(name)}=${MASK}`).join("&");
  return `${parsed.href}?${query}`;
}
