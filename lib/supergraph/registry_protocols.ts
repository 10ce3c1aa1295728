/**
 * The registries' wire protocols for the supergraph (`supergraph_source`),
 * as pure request builders and answer readers: a plain URL (`ETag` /
 * `If-None-Match`), the Hive CDN's supergraph artifact (`X-Hive-CDN-Key`),
 * and Apollo Uplink's `routerConfig` query (`ifAfterId`). The polling, the
 * failover and the last-known-good file are `lib/cli/supergraph_source.ts`.
 *
 * @module
 */

/** Apollo Uplink's public endpoints, tried in turn (Apollo Router's defaults). */
export const APOLLO_UPLINK_ENDPOINTS: readonly string[] = [
  "https://uplink.api.apollographql.com/",
  "https://aws.uplink.api.apollographql.com/",
];

/** The `routerConfig` query Apollo Router sends to Uplink. */
export const UPLINK_QUERY =
  `query SupergraphSdlQuery($apiKey: String!, $graph_ref: String!, $ifAfterId: ID) {
  routerConfig(ref: $graph_ref, apiKey: $apiKey, ifAfterId: $ifAfterId) {
    __typename
    ... on RouterConfigResult { id supergraphSdl: supergraphSDL minDelaySeconds }
    ... on Unchanged { id minDelaySeconds }
    ... on FetchError { code message minDelaySeconds }
  }
}`;

/** A registry's own words kept in a failure's reason (what the log shows), characters. */
const REASON_CHARS = 200;

const clip = (text: string): string =>
  text.length > REASON_CHARS ? `${text.slice(0, REASON_CHARS)}…` : text;

/** What one poll learned. */
export type RegistryAnswer =
  | {
    readonly kind: "schema";
    readonly sdl: string;
    /** The registry's version of it (`ETag`, Uplink's `id`), sent back on the next poll. */
    readonly version: string | null;
    /** The registry asks the next poll to wait at least this long, ms. */
    readonly minDelayMs?: number;
  }
  | { readonly kind: "unchanged"; readonly minDelayMs?: number }
  | { readonly kind: "failed"; readonly reason: string; readonly minDelayMs?: number };

/**
 * The Hive CDN's supergraph artifact URL: the endpoint, with `/supergraph`
 * added unless it ends so (Hive Gateway's rule).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hiveSupergraphUrl } from "./registry_protocols.ts";
 * assert.equal(hiveSupergraphUrl("https://cdn.graphql-hive.com/artifacts/v1/abc"), "https://cdn.graphql-hive.com/artifacts/v1/abc/supergraph");
 * assert.equal(hiveSupergraphUrl("https://cdn/x/supergraph"), "https://cdn/x/supergraph");
 * ```
 * @param endpoint `supergraph_source.endpoint`.
 * @returns The URL to GET.
 */
export function hiveSupergraphUrl(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, "");
  return trimmed.endsWith("/supergraph") ? trimmed : `${trimmed}/supergraph`;
}

/** Redirects a GET poll follows before it gives up (Deno's own limit is 20). */
export const MAX_POLL_REDIRECTS = 5;

/** Where a poll goes after a redirect, and whether its secrets may go too. */
export interface PollRedirect {
  /** The absolute URL to GET next. */
  readonly url: string;
  /**
   * False when the target's origin differs from the first URL's: the
   * configured headers and the Hive CDN key stay behind (as browsers drop
   * `Authorization`), so a registry or a CDN redirecting to object storage
   * never hands the key to another host.
   */
  readonly sameOrigin: boolean;
}

/**
 * Reads a redirect answer of a GET poll: `null` when `status` is not a
 * redirect; a failure reason when the redirect is unusable (no or a bad
 * `Location`, a scheme other than http(s), an `https` → `http` downgrade).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pollRedirect } from "./registry_protocols.ts";
 * const first = "https://cdn.example/artifacts/v1/t/supergraph";
 * assert.equal(pollRedirect(200, null, { first, current: first }), null);
 * assert.deepEqual(pollRedirect(302, "/v2/supergraph", { first, current: first }), { url: "https://cdn.example/v2/supergraph", sameOrigin: true });
 * assert.deepEqual(pollRedirect(307, "https://bucket.example/s?sig=x", { first, current: first }), { url: "https://bucket.example/s?sig=x", sameOrigin: false });
 * assert.equal(typeof pollRedirect(302, "http://cdn.example/x", { first, current: first }), "string");
 * assert.equal(typeof pollRedirect(302, null, { first, current: first }), "string");
 * ```
 * @param status The answer's status.
 * @param location Its `Location` header, or null.
 * @param urls The poll's first URL (whose origin may receive secrets) and the URL that answered.
 * @returns The next hop, a failure reason, or null when not a redirect.
 */
export function pollRedirect(
  status: number,
  location: string | null,
  urls: { readonly first: string; readonly current: string },
): PollRedirect | string | null {
  if (![301, 302, 303, 307, 308].includes(status)) return null;
  if (location === null || location === "") return `HTTP ${status} without a Location`;
  let target: URL;
  try {
    target = new URL(location, urls.current);
  } catch {
    return `HTTP ${status} to an unreadable Location`;
  }
  if (target.protocol !== "https:" && target.protocol !== "http:") {
    return `HTTP ${status} to a ${target.protocol} URL (only http and https are followed)`;
  }
  if (new URL(urls.current).protocol === "https:" && target.protocol === "http:") {
    return `HTTP ${status} from https to http (not followed)`;
  }
  return { url: target.href, sameOrigin: target.origin === new URL(urls.first).origin };
}

/**
 * Headers of a GET poll (`url`, `hive_cdn`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pollHeaders } from "./registry_protocols.ts";
 * const headers = pollHeaders({ headers: ["Authorization: Bearer t"], etag: '"v1"' });
 * assert.equal(headers.get("authorization"), "Bearer t");
 * assert.equal(headers.get("if-none-match"), '"v1"');
 * assert.equal(pollHeaders({ hiveKey: "k", etag: null }).get("x-hive-cdn-key"), "k");
 * ```
 * @param options Configured `Name: value` headers, the Hive CDN key, the last `ETag`.
 * @returns The headers.
 */
export function pollHeaders(
  options: {
    readonly headers?: readonly string[];
    readonly hiveKey?: string;
    readonly etag: string | null;
  },
): Headers {
  const headers = new Headers({ accept: "text/plain, application/graphql, */*" });
  for (const line of options.headers ?? []) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  if (options.hiveKey) headers.set("x-hive-cdn-key", options.hiveKey);
  if (options.etag !== null) headers.set("if-none-match", options.etag);
  return headers;
}

/**
 * Reads a GET poll's answer: 200 with the SDL, 304 unchanged, anything else a failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readPollAnswer } from "./registry_protocols.ts";
 * assert.deepEqual(readPollAnswer(304, null, ""), { kind: "unchanged" });
 * assert.deepEqual(readPollAnswer(200, '"v2"', "type Query { a: Int }"), { kind: "schema", sdl: "type Query { a: Int }", version: '"v2"' });
 * assert.equal(readPollAnswer(403, null, "forbidden").kind, "failed");
 * ```
 * @param status The HTTP status.
 * @param etag The `ETag` header, or null.
 * @param body The body text.
 * @returns What the poll learned.
 */
export function readPollAnswer(status: number, etag: string | null, body: string): RegistryAnswer {
  if (status === 304) return { kind: "unchanged" };
  if (status !== 200) {
    return { kind: "failed", reason: `HTTP ${status}${body ? `: ${clip(body)}` : ""}` };
  }
  if (body.trim() === "") return { kind: "failed", reason: "an empty supergraph" };
  return { kind: "schema", sdl: body, version: etag };
}

/**
 * The body of an Uplink poll.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { uplinkBody } from "./registry_protocols.ts";
 * const body = JSON.parse(uplinkBody({ key: "k", graphRef: "g@prod", ifAfterId: null }));
 * assert.deepEqual(body.variables, { apiKey: "k", graph_ref: "g@prod", ifAfterId: null });
 * assert.equal(body.operationName, "SupergraphSdlQuery");
 * ```
 * @param options `APOLLO_KEY`, `APOLLO_GRAPH_REF`, the last `id`.
 * @returns The JSON text.
 */
export function uplinkBody(
  options: { readonly key: string; readonly graphRef: string; readonly ifAfterId: string | null },
): string {
  return JSON.stringify({
    query: UPLINK_QUERY,
    operationName: "SupergraphSdlQuery",
    variables: { apiKey: options.key, graph_ref: options.graphRef, ifAfterId: options.ifAfterId },
  });
}

/**
 * Reads Uplink's answer to `routerConfig`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readUplinkAnswer } from "./registry_protocols.ts";
 * const schema = { data: { routerConfig: { __typename: "RouterConfigResult", id: "7", supergraphSdl: "type Query { a: Int }", minDelaySeconds: 10 } } };
 * assert.deepEqual(readUplinkAnswer(schema), { kind: "schema", sdl: "type Query { a: Int }", version: "7", minDelayMs: 10_000 });
 * assert.equal(readUplinkAnswer({ data: { routerConfig: { __typename: "Unchanged", id: "7" } } }).kind, "unchanged");
 * assert.match((readUplinkAnswer({ data: { routerConfig: { __typename: "FetchError", code: "AUTHENTICATION_FAILED", message: "bad key" } } }) as { reason: string }).reason, /AUTHENTICATION_FAILED/);
 * ```
 * @param json The parsed body.
 * @returns What the poll learned.
 */
export function readUplinkAnswer(json: unknown): RegistryAnswer {
  const config = (json as { data?: { routerConfig?: Record<string, unknown> } } | null)?.data
    ?.routerConfig;
  if (typeof config !== "object" || config === null) {
    const errors = (json as { errors?: { message?: unknown }[] } | null)?.errors;
    const message = Array.isArray(errors) ? String(errors[0]?.message ?? "") : "";
    return {
      kind: "failed",
      reason: `no routerConfig in the answer${message ? `: ${clip(message)}` : ""}`,
    };
  }
  const delay = typeof config.minDelaySeconds === "number"
    ? { minDelayMs: Math.round(config.minDelaySeconds * 1_000) }
    : {};
  switch (config.__typename) {
    case "RouterConfigResult":
      if (typeof config.supergraphSdl !== "string" || config.supergraphSdl.trim() === "") {
        return { kind: "failed", reason: "RouterConfigResult without a supergraph", ...delay };
      }
      return {
        kind: "schema",
        sdl: config.supergraphSdl,
        version: typeof config.id === "string" ? config.id : null,
        ...delay,
      };
    case "Unchanged":
      return { kind: "unchanged", ...delay };
    case "FetchError":
      return {
        kind: "failed",
        reason: clip(`${String(config.code)}: ${String(config.message)}`),
        ...delay,
      };
    default:
      return { kind: "failed", reason: `unknown answer ${clip(String(config.__typename))}` };
  }
}
