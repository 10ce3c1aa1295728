/**
 * The playground handler (issue 7) without a socket, and the trace reader
 * that draws the plan tree and the waterfall.
 */
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { parseConfig } from "../../lib/config/mod.ts";
import {
  findTrace,
  handlePlayground,
  PLAYGROUND_CSP,
  playgroundHtml,
  readTrace,
  wantsPlayground,
} from "../../lib/playground/mod.ts";
import { PLAYGROUND_ASSETS } from "../../lib/playground/assets.generated.ts";

const config = parseConfig({ dev_mode: true });
const deps = { config };

function get(path: string, headers: HeadersInit = {}, method = "GET"): Request {
  return new Request(`http://router.test${path}`, { method, headers });
}

Deno.test("issue 7: the page has no inline script or style and carries a strict same-origin CSP", async () => {
  const response = await handlePlayground(get("/"), deps);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/html; charset=utf-8");
  const csp = response.headers.get("content-security-policy") ?? "";
  assert.equal(csp, PLAYGROUND_CSP);
  for (const directive of ["script-src 'self'", "style-src 'self'", "connect-src 'self'"]) {
    assert.ok(csp.split("; ").includes(directive), directive);
  }
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
  assert.equal(response.headers.get("x-content-type-options"), "nosniff");
  const html = await response.text();
  const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.equal(scripts.length, 1);
  assert.match(scripts[0]?.[1] ?? "", / src="\/playground\/app\.js\?v=[0-9a-f]{32}"/);
  assert.equal(scripts[0]?.[2], "");
  assert.doesNotMatch(html, /<style|style="|https?:\/\//);
  assert.match(html, /<meta name="gw-graphql-path" content="\/graphql">/);
});

Deno.test("issue 7: the GraphQL path in the page is HTML-escaped", async () => {
  const html = await playgroundHtml('/g"><script>');
  assert.match(html, /content="\/g&#34;&#62;&#60;script&#62;"/);
});

Deno.test("issue 7: assets are embedded: gzip to clients that take it, the same bytes decompressed to others", async () => {
  for (const [name, asset] of Object.entries(PLAYGROUND_ASSETS)) {
    const zipped = await handlePlayground(
      get(`/playground/${name}`, { "accept-encoding": "gzip, deflate, br" }),
      deps,
    );
    assert.equal(zipped.headers.get("content-encoding"), "gzip");
    assert.equal(zipped.headers.get("content-type"), asset.contentType);
    assert.equal(zipped.headers.get("vary"), "accept-encoding");
    const unzipped = gunzipSync(new Uint8Array(await zipped.arrayBuffer()));
    const plain = await handlePlayground(get(`/playground/${name}`), deps);
    assert.equal(plain.headers.get("content-encoding"), null);
    const bytes = new Uint8Array(await plain.arrayBuffer());
    assert.equal(bytes.byteLength, asset.size);
    assert.deepEqual(bytes, new Uint8Array(unzipped));
  }
  const refused = await handlePlayground(
    get("/playground/app.css", { "accept-encoding": "gzip;q=0, identity" }),
    deps,
  );
  assert.equal(refused.headers.get("content-encoding"), null);
  await refused.body?.cancel();
});

Deno.test("issue 7: the bundle references nothing outside the router (no CDN)", async () => {
  const js = await (await handlePlayground(get("/playground/app.js"), deps)).text();
  const css = await (await handlePlayground(get("/playground/app.css"), deps)).text();
  // Imports and stylesheet URLs would be the ways to pull code from elsewhere.
  assert.doesNotMatch(js, /\bimport\s*\(\s*["'`]https?:|importScripts\(/);
  assert.doesNotMatch(css, /@import|url\(\s*["']?(https?:)?\/\//);
  assert.match(js, /X-GW-Trace/);
});

Deno.test("issue 7: assets revalidate by ETag (304) and HEAD has no body", async () => {
  const first = await handlePlayground(get("/playground/app.js"), deps);
  const etag = first.headers.get("etag");
  await first.body?.cancel();
  assert.match(etag ?? "", /^"[0-9a-f]{32}"$/);
  const again = await handlePlayground(get("/playground/app.js", { "if-none-match": etag! }), deps);
  assert.equal(again.status, 304);
  assert.equal(again.body, null);
  const head = await handlePlayground(get("/playground/app.css", {}, "HEAD"), deps);
  assert.equal(head.status, 200);
  assert.equal(head.body, null);
  assert.equal(head.headers.get("content-length"), String(PLAYGROUND_ASSETS["app.css"]?.size));
});

Deno.test("issue 7: refusals are RouterErrors: unknown asset and disabled playground 404, POST 405 with Allow", async () => {
  await assert.rejects(handlePlayground(get("/playground/nope.js"), deps), {
    code: "NOT_FOUND",
    message: 'No playground asset "nope.js"',
  });
  const off = parseConfig({ dev_mode: false });
  assert.equal(off.playground.enabled, false);
  await assert.rejects(handlePlayground(get("/"), { config: off }), { code: "NOT_FOUND" });
  await assert.rejects(handlePlayground(get("/", {}, "POST"), deps), {
    code: "METHOD_NOT_ALLOWED",
    details: { allow: "GET, HEAD" },
  });
});

Deno.test("issue 7: the playground answers GET / and /playground, and the GraphQL path only for browsers without a query", () => {
  const html = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" };
  assert.equal(wantsPlayground(get("/"), config), true);
  assert.equal(wantsPlayground(get("/playground"), config), true);
  assert.equal(wantsPlayground(get("/playground/app.js"), config), true);
  assert.equal(wantsPlayground(get("/graphql", html), config), true);
  assert.equal(wantsPlayground(get("/graphql?query={__typename}", html), config), false);
  assert.equal(wantsPlayground(get("/graphql", { accept: "application/json" }), config), false);
  assert.equal(wantsPlayground(get("/graphql", { accept: "text/html;q=0" }), config), false);
  assert.equal(wantsPlayground(get("/graphql", html, "POST"), config), false);
  assert.equal(wantsPlayground(get("/", html), parseConfig({ dev_mode: false })), false);
  const on = parseConfig({ dev_mode: false, playground: { enabled: true } });
  assert.equal(wantsPlayground(get("/", html), on), true);
});

/** A predictable-timings trace as lib/trace renders it (constants from Cosmo). */
const PREDICTABLE = {
  version: "1",
  info: {
    trace_start_time: "",
    trace_start_unix: 0,
    parse_stats: stats(5, 5),
    normalize_stats: stats(5, 10),
    validate_stats: stats(5, 15),
    planner_stats: stats(5, 20),
    router_version: "0.43.0",
    plan_cache_hit: true,
  },
  fetches: {
    kind: "Sequence",
    children: [
      { kind: "Single", fetch: fetch("Single", "products", 1, 1) },
      {
        kind: "Parallel",
        children: [
          { kind: "Single", fetch: fetch("Entity", "reviews", 1, 1) },
          { kind: "Single", fetch: fetch("BatchEntity", "accounts", 1, 1) },
        ],
      },
    ],
  },
};

function stats(duration: number, end: number) {
  return { duration_nanoseconds: duration, duration_since_start_nanoseconds: end };
}

function fetch(kind: string, name: string, start: number, load: number) {
  return {
    kind,
    path: "query",
    source_id: name,
    source_name: name,
    trace: { duration_since_start_nanoseconds: start, duration_load_nanoseconds: load },
  };
}

Deno.test("issue 7 / ART: phases end at duration_since_start (Cosmo), fetches start there; one row per phase and fetch", () => {
  const model = readTrace(PREDICTABLE);
  assert.deepEqual(
    model.waterfall.map((r) => [r.type, r.label, r.startNs, r.durationNs]),
    [
      ["phase", "parse", 0, 5],
      ["phase", "normalize", 5, 5],
      ["phase", "validate", 10, 5],
      ["phase", "plan", 15, 5],
      ["fetch", "products", 1, 1],
      ["fetch", "reviews", 1, 1],
      ["fetch", "accounts", 1, 1],
    ],
  );
  assert.equal(model.totalNs, 20);
  assert.deepEqual(model.info, {
    trace_start_time: "",
    trace_start_unix: 0,
    router_version: "0.43.0",
    plan_cache_hit: true,
  });
  assert.deepEqual(model.fetches.map((f) => f.kind), ["Single", "Entity", "BatchEntity"]);
  const plan = model.plan;
  assert.equal(plan?.kind, "Sequence");
  assert.deepEqual(
    plan?.kind === "Sequence" ? plan.children.map((c) => c.kind) : [],
    ["Fetch", "Parallel"],
  );
});

Deno.test("issue 7: excluded parts stay absent, a fetch run several times spans all its loads", () => {
  const model = readTrace({
    version: "1",
    info: { planner_stats: { planning_time_nanoseconds: 7, duration_since_start_nanoseconds: 9 } },
    fetches: {
      kind: "Sequence",
      children: [{
        kind: "Single",
        fetch: {
          kind: "Entity",
          source_id: "inventory",
          path: "query.a.@",
          traces: [
            { duration_since_start_nanoseconds: 40, duration_load_nanoseconds: 10 },
            { duration_since_start_nanoseconds: 20, duration_load_nanoseconds: 5 },
          ],
        },
      }, { kind: "Single", fetch: { kind: "Single", source_name: "x", trace: {} } }],
    },
  });
  assert.deepEqual(model.waterfall.map((r) => [r.label, r.startNs, r.durationNs]), [
    ["plan", 2, 7],
    ["inventory", 20, 30],
    ["x", null, null],
  ]);
  const [first] = model.fetches;
  assert.equal(first?.input, undefined);
  assert.equal(first?.subgraph, "inventory");
});

Deno.test("issue 7: the paste box takes a trace, a response carrying one, or their JSON text, and refuses the rest", () => {
  assert.equal(findTrace(PREDICTABLE), PREDICTABLE);
  assert.equal(findTrace({ data: null, extensions: { trace: PREDICTABLE } }), PREDICTABLE);
  assert.deepEqual(findTrace(JSON.stringify({ extensions: { trace: PREDICTABLE } })), PREDICTABLE);
  assert.equal(findTrace("{not json"), null);
  assert.equal(findTrace([PREDICTABLE]), null);
  assert.equal(findTrace({ data: { a: 1 } }), null);
  const noPlan = readTrace({ version: "1", info: {}, fetches: null });
  assert.equal(noPlan.plan, null);
  assert.deepEqual(noPlan.waterfall, []);
  assert.equal(noPlan.totalNs, 1);
});
