/**
 * The playground's "Router" page (`/playground/router`): charts of the last
 * minutes from the metrics registry, polled every two seconds from
 * `/playground/router/metrics.json`. Served only while the playground is on,
 * under the playground's Content-Security-Policy.
 *
 * @module
 */
import { RouterError } from "../errors.ts";
import { PLAYGROUND_CSP } from "../playground/mod.ts";
import { LIVE_VIEW_CSS, LIVE_VIEW_JS } from "./_live_view_client.ts";
import type { LiveHistory } from "./live_view.ts";

/** The page's paths. */
export const LIVE_VIEW_PATHS = {
  page: "/playground/router",
  script: "/playground/router.js",
  style: "/playground/router.css",
  data: "/playground/router/metrics.json",
} as const;

const HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": PLAYGROUND_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

function panel(id: string, title: string, extra = ""): string {
  return `<section aria-labelledby="${id}-title"><h2 id="${id}-title">${title}</h2>` +
    `<div class="big" id="${id}-now"></div><div id="${id}"></div>${extra}</section>`;
}

/** The page's HTML (no inline script or style). */
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GW Router · Router</title>
<link rel="icon" href="data:,">
<meta name="gw-live-data" content="${LIVE_VIEW_PATHS.data}">
<link rel="stylesheet" href="${LIVE_VIEW_PATHS.style}">
<script defer src="${LIVE_VIEW_PATHS.script}"></script>
</head>
<body>
<header><h1>GW Router</h1>
<nav><a href="/playground">Playground</a><a href="${LIVE_VIEW_PATHS.page}" aria-current="page">Router</a></nav>
<span class="status" id="status">waiting for data…</span></header>
<main>
${panel("rps", "Requests per second")}
${panel("lat", "Latency", '<div class="legend" id="lat-legend"></div>')}
${panel("err", "Errors by code (last minutes)", '<div id="errors"></div>')}
${
  panel(
    "sub",
    "Subgraphs: p50 latency (ms) and error rate",
    '<div class="legend" id="sub-legend"></div><div id="sub-table"></div>',
  )
}
${panel("cache", "Cache hit rate (%)", '<div class="legend" id="cache-legend"></div>')}
${panel("adm", "Admission", '<div class="legend" id="adm-legend"></div>')}
</main>
</body>
</html>
`;

/**
 * Whether a path is one of the page's.
 * @param pathname The request path.
 * @returns True for the page, its script, style and data.
 */
export function isLiveViewPath(pathname: string): boolean {
  return pathname === LIVE_VIEW_PATHS.page || pathname === LIVE_VIEW_PATHS.script ||
    pathname === LIVE_VIEW_PATHS.style || pathname === LIVE_VIEW_PATHS.data;
}

/**
 * Answers the page, its script and style, and its data (a fresh sample, then
 * the points of the last minutes).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { handleLiveView } from "./live_view_page.ts";
 * const history = { sample: () => Promise.resolve(), points: () => [] };
 * const page = await handleLiveView(new Request("http://r/playground/router"), history);
 * assert.match(await page.text(), /<nav>.*Router/);
 * const data = await handleLiveView(new Request("http://r/playground/router/metrics.json"), history);
 * assert.deepEqual(await data.json(), { intervalSeconds: 2, points: [] });
 * ```
 * @param request A GET of one of {@linkcode LIVE_VIEW_PATHS}.
 * @param history The metrics history, or null when there is no registry.
 * @returns The response.
 * @throws {RouterError} `NOT_FOUND` without a registry or for another path,
 * `METHOD_NOT_ALLOWED` for methods other than GET.
 */
export async function handleLiveView(
  request: Request,
  history: LiveHistory | null,
): Promise<Response> {
  if (history === null) {
    throw new RouterError("NOT_FOUND", "The Router page needs the metrics registry");
  }
  if (request.method !== "GET") {
    throw new RouterError(
      "METHOD_NOT_ALLOWED",
      `The Router page answers GET, not ${request.method}`,
      {
        details: { allow: "GET" },
      },
    );
  }
  const headers = new Headers(HEADERS);
  switch (new URL(request.url).pathname) {
    case LIVE_VIEW_PATHS.page:
      headers.set("content-type", "text/html; charset=utf-8");
      return new Response(PAGE, { headers });
    case LIVE_VIEW_PATHS.script:
      headers.set("content-type", "text/javascript; charset=utf-8");
      return new Response(LIVE_VIEW_JS, { headers });
    case LIVE_VIEW_PATHS.style:
      headers.set("content-type", "text/css; charset=utf-8");
      return new Response(LIVE_VIEW_CSS, { headers });
    case LIVE_VIEW_PATHS.data:
      await history.sample();
      headers.set("content-type", "application/json; charset=utf-8");
      return new Response(JSON.stringify({ intervalSeconds: 2, points: history.points() }), {
        headers,
      });
    default:
      throw new RouterError("NOT_FOUND", "No such page");
  }
}
