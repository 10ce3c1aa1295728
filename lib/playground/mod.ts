/**
 * The local playground: GraphiQL plus the Advanced Request Tracing view,
 * served offline from assets embedded in the module graph (so `deno compile`
 * ships them in the binary; nothing is fetched from a CDN).
 *
 * Routes (the HTTP layer sends them here while `playground.enabled`):
 * `GET /`, `GET <graphql_path>` from a browser (see {@linkcode wantsPlayground}),
 * `GET /playground` and `/playground/` (the page), `GET /playground/app.js`
 * and `/playground/app.css` (the bundle). Every response carries a strict
 * `Content-Security-Policy`: the page has no inline script or style, and the
 * only requests it makes go to its own origin.
 *
 * @module
 */
import type { Config } from "../config/mod.ts";
import { RouterError } from "../errors.ts";
import type { EmbeddedAsset } from "./_asset.ts";

export { findTrace, formatNanos, readTrace } from "./trace_model.ts";
export type { PlanTreeNode, TraceFetch, TraceModel, WaterfallRow } from "./trace_model.ts";

/** What the playground handler reads from the router state. */
export interface PlaygroundDeps {
  readonly config: Config;
}

/** URL prefix of the playground's own files. */
export const PLAYGROUND_PREFIX = "/playground/";

/**
 * The `Content-Security-Policy` of every playground response: scripts, styles
 * and requests from the router's own origin only (fonts and icons of the
 * bundle are `data:` URLs), no framing.
 */
export const PLAYGROUND_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": PLAYGROUND_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

interface DecodedAsset {
  readonly asset: EmbeddedAsset;
  readonly gzip: Uint8Array<ArrayBuffer>;
}

let assets: Promise<ReadonlyMap<string, DecodedAsset>> | null = null;

/**
 * The bundle, decoded on first use: its module is about 1 MB of source, 2 MB
 * of heap and 0.7 MB of buffers that a router without the playground (the
 * default outside dev mode) never loads. The literal specifier keeps it in
 * the module graph, so `deno compile` still embeds it. Constant once loaded.
 */
function loadAssets(): Promise<ReadonlyMap<string, DecodedAsset>> {
  assets ??= import("./assets.generated.ts").then(({ PLAYGROUND_ASSETS }) =>
    new Map(
      Object.entries(PLAYGROUND_ASSETS).map((
        [name, asset],
      ) => [name, { asset, gzip: Uint8Array.fromBase64(asset.gzipBase64) }]),
    )
  );
  return assets;
}

/**
 * Whether a request is one the playground answers: a browser `GET` (or
 * `HEAD`) of `/`, of anything under `/playground`, or of the GraphQL path
 * when it accepts `text/html` and carries no `query` parameter (a GET with a
 * query is a GraphQL request, whatever it accepts). False when
 * `playground.enabled` is off.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { wantsPlayground } from "./mod.ts";
 * const config = { graphql_path: "/graphql", playground: { enabled: true } };
 * const html = { accept: "text/html,application/xhtml+xml" };
 * assert.equal(wantsPlayground(new Request("http://h/graphql", { headers: html }), config), true);
 * assert.equal(wantsPlayground(new Request("http://h/graphql?query={a}", { headers: html }), config), false);
 * assert.equal(wantsPlayground(new Request("http://h/graphql"), config), false);
 * assert.equal(wantsPlayground(new Request("http://h/playground/app.js"), config), true);
 * ```
 *
 * @param request The inbound request.
 * @param config `graphql_path` and `playground.enabled` of the configuration.
 * @returns True when {@linkcode handlePlayground} should answer it.
 */
export function wantsPlayground(
  request: Request,
  config: Pick<Config, "graphql_path" | "playground">,
): boolean {
  if (!config.playground.enabled) return false;
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  const url = new URL(request.url);
  const path = url.pathname;
  if (
    path === "/" || path === "/playground" || path.startsWith(PLAYGROUND_PREFIX)
  ) return true;
  return path === config.graphql_path && !url.searchParams.has("query") &&
    acceptsHtml(request.headers.get("accept"));
}

function acceptsHtml(accept: string | null): boolean {
  if (accept === null) return false;
  return accept.split(",").some((part) => {
    const [type = "", ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    return type === "text/html" && !params.some((p) => /^q=0(\.0*)?$/.test(p));
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The playground's HTML: no inline script or style (the strict CSP allows
 * none); the GraphQL path travels in a `<meta>` tag.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { playgroundHtml } from "./mod.ts";
 * const html = await playgroundHtml("/api/graphql");
 * assert.match(html, /<meta name="gw-graphql-path" content="\/api\/graphql">/);
 * assert.match(html, /<script defer src="\/playground\/app\.js\?v=[0-9a-f]+"><\/script>/);
 * assert.doesNotMatch(html, /<script>/);
 * ```
 *
 * @param graphqlPath The router's `graphql_path`.
 * @returns The HTML document.
 */
export async function playgroundHtml(graphqlPath: string): Promise<string> {
  const decoded = await loadAssets();
  const version = (name: string) => (decoded.get(name)?.asset.etag ?? "").replaceAll('"', "");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GW Router playground</title>
<link rel="icon" href="data:,">
<meta name="gw-graphql-path" content="${escapeHtml(graphqlPath)}">
<link rel="stylesheet" href="${PLAYGROUND_PREFIX}app.css?v=${version("app.css")}">
<script defer src="${PLAYGROUND_PREFIX}app.js?v=${version("app.js")}"></script>
</head>
<body>
<div id="root"></div>
<noscript>The GW Router playground needs JavaScript.</noscript>
</body>
</html>
`;
}

function acceptsGzip(header: string | null): boolean {
  if (header === null) return false;
  return header.split(",").some((part) => {
    const [coding = "", ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    return (coding === "gzip" || coding === "*") &&
      !params.some((p) => /^q=0(\.0*)?$/.test(p));
  });
}

function assetResponse(request: Request, decoded: DecodedAsset): Response {
  const { asset, gzip } = decoded;
  const headers = new Headers(SECURITY_HEADERS);
  headers.set("content-type", asset.contentType);
  headers.set("etag", asset.etag);
  headers.set("cache-control", "no-cache");
  headers.set("vary", "accept-encoding");
  const match = request.headers.get("if-none-match");
  if (
    match !== null && match.split(",").some((tag) => tag.trim() === asset.etag)
  ) {
    return new Response(null, { status: 304, headers });
  }
  const head = request.method === "HEAD";
  if (acceptsGzip(request.headers.get("accept-encoding"))) {
    headers.set("content-encoding", "gzip");
    headers.set("content-length", String(gzip.byteLength));
    return new Response(head ? null : gzip, { headers });
  }
  headers.set("content-length", String(asset.size));
  const body = head ? null : new Blob([gzip]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(body, { headers });
}

/**
 * Serves the playground page and its assets.
 *
 * @example The page and the script
 * ```ts
 * import assert from "node:assert/strict";
 * import { handlePlayground } from "./mod.ts";
 * const config = { graphql_path: "/graphql", playground: { enabled: true } };
 * const deps = { config } as unknown as Parameters<typeof handlePlayground>[1];
 * const page = await handlePlayground(new Request("http://h/"), deps);
 * assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
 * assert.match(page.headers.get("content-security-policy") ?? "", /script-src 'self'/);
 * const js = await handlePlayground(new Request("http://h/playground/app.js"), deps);
 * assert.equal(js.headers.get("content-type"), "text/javascript; charset=utf-8");
 * assert.ok((await js.text()).length > 1000);
 * ```
 *
 * @param request A `GET`/`HEAD` the HTTP layer routed here.
 * @param deps Router state (the configuration).
 * @returns The page or asset.
 * @throws {RouterError} `NOT_FOUND` when the playground is disabled or the
 * asset does not exist; `METHOD_NOT_ALLOWED` (details `allow`) for methods
 * other than `GET` and `HEAD`.
 */
export async function handlePlayground(
  request: Request,
  deps: PlaygroundDeps,
): Promise<Response> {
  const { config } = deps;
  if (!config.playground.enabled) {
    throw new RouterError("NOT_FOUND", "The playground is disabled");
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    throw new RouterError(
      "METHOD_NOT_ALLOWED",
      `The playground answers GET and HEAD, not ${request.method}`,
      { details: { allow: "GET, HEAD" } },
    );
  }
  const { pathname } = new URL(request.url);
  if (
    pathname.startsWith(PLAYGROUND_PREFIX) && pathname !== PLAYGROUND_PREFIX
  ) {
    const name = pathname.slice(PLAYGROUND_PREFIX.length);
    const decoded = (await loadAssets()).get(name);
    if (decoded === undefined) {
      throw new RouterError("NOT_FOUND", `No playground asset "${name.slice(0, 100)}"`);
    }
    return assetResponse(request, decoded);
  }
  const headers = new Headers(SECURITY_HEADERS);
  headers.set("content-type", "text/html; charset=utf-8");
  headers.set("cache-control", "no-cache");
  const body = request.method === "HEAD" ? null : await playgroundHtml(config.graphql_path);
  return new Response(body, { headers });
}
