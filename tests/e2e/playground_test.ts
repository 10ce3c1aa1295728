/**
 * The playground (issue 7) in real headless Chromium (Debian `chromium`,
 * driven by playwright-core): served offline under a strict CSP, GraphiQL
 * with the router's schema, the Trace toggle and its options, the plan tree,
 * the waterfall and the fetch detail, and a pasted trace.
 *
 * Without `/usr/bin/chromium` (installed by `.ci/setup.d/playground.sh`) the
 * browser tests are registered as ignored, with a name that says so.
 */
import assert from "node:assert/strict";
import { type Browser, chromium, type Page } from "playwright-core";
import { graphql, type GraphQLSchema } from "graphql";
import { buildSubgraphSchema } from "@apollo/subgraph";
import { parse } from "graphql";
import { parseConfig } from "../../lib/config/mod.ts";
import { startRouter } from "../../lib/cli/serve.ts";
import { createEngine, execute, prepare } from "../../lib/engine/mod.ts";
import { buildSupergraph } from "../../lib/supergraph/mod.ts";
import { silentLogger } from "../../lib/log/mod.ts";
import { handlePlayground, PLAYGROUND_CSP, wantsPlayground } from "../../lib/playground/mod.ts";
import { startDemoSubgraphs } from "../../demo/subgraphs/mod.ts";

const CHROMIUM = "/usr/bin/chromium";
const LAUNCH_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
];

async function hasChromium(): Promise<boolean> {
  try {
    return (await Deno.stat(CHROMIUM)).isFile;
  } catch {
    return false;
  }
}

const chromiumMissing = !(await hasChromium());
/** Test name: says why it is skipped when Chromium is missing. */
function named(name: string): string {
  if (!chromiumMissing) return name;
  const reason = `skipped: Chromium not installed at ${CHROMIUM} (run .ci/setup.d/playground.sh)`;
  return `${name.startsWith("KNOWN GAP: ") ? name : `KNOWN GAP: ${name}`} — ${reason}`;
}
// playwright-core keeps pipes and timers of its own beyond browser.close().
const BROWSER_TEST = {
  ignore: chromiumMissing,
  sanitizeOps: false,
  sanitizeResources: false,
};

/** What a page did that the tests check: requests, CSP violations, console errors. */
interface PageLog {
  readonly requests: string[];
  readonly consoleErrors: string[];
}

async function openPage(
  browser: Browser,
  url: string,
): Promise<{ page: Page; log: PageLog; introspected: Promise<unknown> }> {
  const page = await browser.newPage({
    viewport: { width: 1440, height: 960 },
  });
  const log: PageLog = { requests: [], consoleErrors: [] };
  page.on("request", (request) => log.requests.push(request.url()));
  page.on("console", (message) => {
    if (message.type() === "error") log.consoleErrors.push(message.text());
  });
  // Browser-side code is passed as text: this file is type-checked without the DOM lib.
  await page.addInitScript({
    content: `globalThis.__cspViolations = [];
      document.addEventListener("securitypolicyviolation", (event) => {
        globalThis.__cspViolations.push(event.violatedDirective + " " + event.blockedURI);
      });`,
  });
  const introspected = page.waitForResponse((r) =>
    r.request().postData()?.includes("IntrospectionQuery") ?? false
  );
  introspected.catch(() => {});
  const response = await page.goto(url);
  assert.equal(response?.status(), 200);
  assert.equal(response?.headers()["content-security-policy"], PLAYGROUND_CSP);
  await page.waitForSelector(
    ".graphiql-container .graphiql-query-editor .CodeMirror",
  );
  return { page, log, introspected };
}

async function cspViolations(page: Page): Promise<string[]> {
  return await page.evaluate<string[]>("globalThis.__cspViolations");
}

function assertSameOrigin(log: PageLog, origin: string): void {
  const foreign = log.requests.filter((url) =>
    !url.startsWith(`${origin}/`) && !url.startsWith("data:")
  );
  assert.deepEqual(
    foreign,
    [],
    "the playground fetched something from another origin",
  );
}

/** Replaces the operation in GraphiQL's (CodeMirror 5) query editor and runs it. */
async function runOperation(
  page: Page,
  query: string,
  operationName: string,
): Promise<void> {
  await page.evaluate(
    `document.querySelector(".graphiql-query-editor .CodeMirror").CodeMirror.setValue(${
      JSON.stringify(query)
    })`,
  );
  // GraphiQL reads the operation name from the editor after a debounce; the
  // active tab shows it once read, and only then does Run send it.
  await page.locator(".graphiql-tab-active", { hasText: operationName }).waitFor();
  await page.click(".graphiql-execute-button");
}

/** The text of GraphiQL's response pane. */
async function responseText(page: Page): Promise<string> {
  return await page.evaluate<string>(
    `document.querySelector(".result-window .CodeMirror")?.CodeMirror.getValue() ?? ""`,
  );
}

async function launch(): Promise<Browser> {
  return await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
}

/**
 * A trace in Cosmo's ART layout, as a production router would send it: a root
 * fetch, then two entity fetches in parallel. Used for the paste box, which
 * must render traces from elsewhere.
 */
const PASTED_TRACE = {
  version: "1",
  info: {
    trace_start_time: "2026-11-22T04:00:00Z",
    trace_start_unix: 1795320000,
    parse_stats: phase(40_000, 50_000),
    normalize_stats: phase(30_000, 90_000),
    validate_stats: phase(60_000, 160_000),
    planner_stats: phase(120_000, 300_000),
    router_version: "0.43.0",
    plan_cache_hit: false,
  },
  fetches: {
    kind: "Sequence",
    children: [
      single("Single", "query", "products", 350_000, 1_200_000, 4002),
      {
        kind: "Parallel",
        children: [
          single(
            "Entity",
            "query.topProducts.@",
            "reviews",
            1_600_000,
            900_000,
            4003,
          ),
          single(
            "BatchEntity",
            "query.topProducts.@",
            "inventory",
            1_620_000,
            500_000,
            4004,
          ),
        ],
      },
    ],
  },
};

function phase(duration: number, sinceStart: number) {
  return {
    duration_nanoseconds: duration,
    duration_pretty: `${duration / 1000}µs`,
    duration_since_start_nanoseconds: sinceStart,
    duration_since_start_pretty: `${sinceStart / 1000}µs`,
  };
}

function single(
  kind: string,
  path: string,
  name: string,
  start: number,
  load: number,
  port: number,
) {
  return {
    kind: "Single",
    fetch: {
      kind,
      path,
      source_id: name,
      source_name: name,
      trace: {
        raw_input_data: { upc: "1", __typename: "Product" },
        input: {
          method: "POST",
          url: `http://127.0.0.1:${port}/graphql`,
          header: {
            "Content-Type": ["application/json"],
            Authorization: ["****"],
          },
          body: { query: `{ ${name} }` },
        },
        output: {
          data: { [name]: [] },
          extensions: { trace: { response: { status_code: 200 } } },
        },
        duration_since_start_nanoseconds: start,
        duration_load_nanoseconds: load,
        single_flight_used: false,
        single_flight_shared_response: false,
        load_skipped: false,
        load_stats: {
          get_conn: {
            duration_since_start_nanoseconds: start,
            host_port: `127.0.0.1:${port}`,
          },
          got_first_response_byte: {
            duration_since_start_nanoseconds: start + load - 1000,
          },
        },
      },
    },
  };
}

/** A stand-in GraphQL endpoint beside the real playground handler: records what the page sends. */
function serveStub(schema: GraphQLSchema) {
  const seen: { operationName: string | null; trace: string | null }[] = [];
  const config = parseConfig({ dev_mode: true, playground: { enabled: true } });
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: () => {} },
    async (request) => {
      if (request.method !== "POST") {
        return wantsPlayground(request, config)
          ? await handlePlayground(request, { config }).catch(() =>
            new Response(null, { status: 404 })
          )
          : new Response(null, { status: 404 });
      }
      const body = await request.json();
      const trace = request.headers.get("x-gw-trace");
      seen.push({ operationName: body.operationName ?? null, trace });
      const result = await graphql({
        schema,
        source: body.query,
        variableValues: body.variables,
      });
      return Response.json(
        // "Untraced" plays a router that does not honour the header (no token).
        trace === null || body.operationName === "Untraced"
          ? result
          : { ...result, extensions: { trace: PASTED_TRACE } },
      );
    },
  );
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    seen,
    close: () => server.shutdown(),
  };
}

Deno.test(
  named(
    "issue 7: the playground loads offline under its strict CSP, introspects the router, and the Trace toggle sends X-GW-Trace with the checked options",
  ),
  BROWSER_TEST,
  async () => {
    const schema = buildSubgraphSchema([{
      typeDefs: parse("type Query { hello(name: String): String }"),
      resolvers: {
        Query: {
          hello: (_: unknown, args: { name?: string }) => `hi ${args.name}`,
        },
      },
    }]);
    const stub = serveStub(schema);
    const browser = await launch();
    try {
      const { page, log, introspected } = await openPage(browser, `${stub.origin}/`);
      // Schema-aware help: GraphiQL introspected the endpoint, and without the trace header.
      await introspected;
      assert.deepEqual(stub.seen[0], {
        operationName: "IntrospectionQuery",
        trace: null,
      });
      // ... and typing in the editor offers the schema's fields.
      await page.click(".graphiql-query-editor .CodeMirror");
      await page.keyboard.press("Control+A");
      await page.keyboard.type("{ hel", { delay: 20 });
      const hints = page.locator(".CodeMirror-hints");
      await hints.waitFor();
      assert.match(await hints.innerText(), /\bhello\b/);
      await page.keyboard.press("Escape");

      await runOperation(page, 'query Hello { hello(name: "gw") }', "Hello");
      await page.waitForSelector(".gw-wf-bar[data-type=fetch]");
      assert.match(await responseText(page), /"hello": "hi gw"/);
      assert.deepEqual(stub.seen.at(-1), {
        operationName: "Hello",
        trace: "true",
      });

      await page.check('input[data-option="enable_predictable_debug_timings"]');
      await page.check('input[data-option="exclude_input"]');
      await runOperation(page, 'query Again { hello(name: "x") }', "Again");
      await page.waitForSelector("text=from response of Again");
      assert.deepEqual(stub.seen.at(-1), {
        operationName: "Again",
        trace: "exclude_input,enable_predictable_debug_timings",
      });

      // Asked for but not given: the panel says why (token) instead of a stale trace.
      await runOperation(page, "query Untraced { hello }", "Untraced");
      await page.locator(".gw-notice", { hasText: "X-GW-Token" }).waitFor();
      assert.equal(await page.locator(".gw-wf-bar").count(), 0);

      await page.uncheck("#gw-trace-toggle");
      await runOperation(page, "query Off { hello }", "Off");
      await page.locator(".graphiql-tab-active", { hasText: "Off" }).waitFor();
      await page.locator(".gw-empty:not(:has(.gw-notice))").waitFor();
      assert.deepEqual(stub.seen.at(-1), { operationName: "Off", trace: null });

      assert.deepEqual(await cspViolations(page), []);
      assert.deepEqual(log.consoleErrors, []);
      assertSameOrigin(log, stub.origin);
    } finally {
      await browser.close();
      await stub.close();
    }
  },
);

Deno.test(
  named(
    "issue 7: a pasted trace JSON shows the plan tree, one waterfall bar per phase and per fetch on one axis, and the fetch detail",
  ),
  BROWSER_TEST,
  async () => {
    const schema = buildSubgraphSchema([{
      typeDefs: parse("type Query { a: Int }"),
      resolvers: {},
    }]);
    const stub = serveStub(schema);
    const browser = await launch();
    try {
      const { page, log } = await openPage(
        browser,
        `${stub.origin}/playground/`,
      );
      await page.click("#gw-paste-toggle");
      await page.fill("#gw-paste-input", '{"data": {"a": 1}}');
      await page.click("#gw-paste-apply");
      assert.match(
        await page.textContent("#gw-paste-error") ?? "",
        /Not a trace/,
      );

      // A whole response with extensions.trace is accepted, as is the bare trace.
      await page.fill(
        "#gw-paste-input",
        JSON.stringify({ data: {}, extensions: { trace: PASTED_TRACE } }),
      );
      await page.click("#gw-paste-apply");
      await page.waitForSelector(".gw-wf-bar[data-type=fetch]");

      const phases = await page.$$eval(
        ".gw-wf-row[data-type=phase] .gw-wf-label",
        (els) => els.map((e) => e.textContent),
      );
      assert.deepEqual(phases, ["parse", "normalize", "validate", "plan"]);
      const fetchRows = await page.$$eval(
        ".gw-wf-row[data-type=fetch] .gw-wf-label",
        (els) => els.map((e) => e.textContent),
      );
      assert.deepEqual(fetchRows, ["products", "reviews", "inventory"]);
      assert.equal(
        await page.locator(".gw-wf-bar[data-type=fetch]").count(),
        3,
      );

      // One time axis: bars sit at start/total and are duration/total wide (total 2.5 ms).
      const track = await page.locator(
        ".gw-wf-row[data-type=fetch] .gw-wf-track",
      ).first()
        .boundingBox();
      const bars = await page.locator(".gw-wf-bar").evaluateAll((els) =>
        els.map((e) => {
          const r = e.getBoundingClientRect();
          return { x: r.x, width: r.width };
        })
      );
      assert.ok(track);
      const expected = [
        [10_000, 40_000],
        [60_000, 30_000],
        [100_000, 60_000],
        [180_000, 120_000],
        [350_000, 1_200_000],
        [1_600_000, 900_000],
        [1_620_000, 500_000],
      ];
      assert.equal(bars.length, expected.length);
      bars.forEach((bar, i) => {
        const [start = 0, duration = 0] = expected[i] ?? [];
        assert.ok(
          Math.abs(bar.x - (track.x + (start / 2_500_000) * track.width)) < 2,
          `bar ${i} x`,
        );
        assert.ok(
          Math.abs(
            Math.max(3, (duration / 2_500_000) * track.width) - bar.width,
          ) < 2,
          `bar ${i} width`,
        );
      });

      // The plan tree: Sequence [products, Parallel [reviews, inventory]] with kinds and paths.
      const tree = await page.locator(".gw-tree").innerText();
      assert.match(
        tree,
        /Sequence\s+Single\s+products\s+query\s+Parallel\s+Entity\s+reviews/,
      );
      assert.match(tree, /BatchEntity\s+inventory\s+query\.topProducts\.@/);
      assert.match(
        await page.locator(".gw-trace-heading").innerText(),
        /plan_cache_hit: false/,
      );

      // Clicking a fetch shows its input, raw input, output and load stats.
      await page.click('.gw-wf-bar[data-type=fetch][data-fetch-index="1"]');
      const detail = page.locator(".gw-fetch-detail");
      assert.match(
        await detail.innerText(),
        /reviews[\s\S]*"url": "http:\/\/127\.0\.0\.1:4003\/graphql"/,
      );
      await page.click('.gw-tab[data-tab="rawInputData"]');
      assert.match(
        await page.locator(".gw-json").innerText(),
        /"__typename": "Product"/,
      );
      await page.click('.gw-tab[data-tab="output"]');
      assert.match(
        await page.locator(".gw-json").innerText(),
        /"reviews": \[\]/,
      );
      await page.click('.gw-tab[data-tab="loadStats"]');
      assert.match(
        await page.locator(".gw-json").innerText(),
        /"host_port": "127\.0\.0\.1:4003"/,
      );
      // The plan tree and the waterfall select the same fetch.
      await page.click('.gw-tree .gw-fetch[data-fetch-index="2"]');
      assert.match(await detail.innerText(), /inventory/);
      assert.equal(
        await page.locator('.gw-wf-bar.gw-selected[data-fetch-index="2"]')
          .count(),
        1,
      );

      // The splitter gives the trace panel more room.
      const panel = page.locator(".gw-trace");
      const before = (await panel.boundingBox())?.height ?? 0;
      const splitter = await page.locator(".gw-splitter").boundingBox();
      assert.ok(splitter);
      await page.mouse.move(splitter.x + 200, splitter.y + 3);
      await page.mouse.down();
      await page.mouse.move(splitter.x + 200, splitter.y - 200, { steps: 5 });
      await page.mouse.up();
      const after = (await panel.boundingBox())?.height ?? 0;
      assert.ok(Math.abs(after - before - 200) < 10, `panel ${before}px -> ${after}px`);

      assert.deepEqual(await cspViolations(page), []);
      assertSameOrigin(log, stub.origin);
    } finally {
      await browser.close();
      await stub.close();
    }
  },
);

/** Counts the fetch nodes of an ART `fetches` tree and lists their subgraphs in order. */
function fetchSubgraphs(node: unknown): string[] {
  if (typeof node !== "object" || node === null) return [];
  const record = node as {
    fetch?: { source_name?: string };
    children?: unknown[];
  };
  if (record.fetch) return [record.fetch.source_name ?? ""];
  return (record.children ?? []).flatMap(fetchSubgraphs);
}

Deno.test(
  named(
    "issue 7: against the demo router, a traced cross-subgraph query shows its result and one waterfall bar per fetch",
  ),
  BROWSER_TEST,
  async () => {
    const tmp = await Deno.makeTempDir({ prefix: "gw_playground_" });
    const demo = startDemoSubgraphs({ basePort: 0 });
    // Dev mode: playground on, tracing without a token; demo subgraphs on free ports.
    const router = await startRouter({
      config: parseConfig({ dev_mode: true, listen_addr: "127.0.0.1:0" }),
      log: silentLogger,
      supergraphSdl: demo.supergraphSdl,
    });
    const origin = router.url;
    const config = router.state().config;
    const browser = await launch();
    try {
      const { page, log } = await openPage(browser, `${origin}${config.graphql_path}`);
      const traced = page.waitForResponse((r) =>
        r.request().method() === "POST" &&
        r.request().headers()["x-gw-trace"] === "true"
      );
      traced.catch(() => {}); // awaited below; the browser may close first on failure
      await runOperation(
        page,
        'query Product { product(upc: "1") { name price shippingEstimate inStock reviews { rating author { name username } } } }',
        "Product",
      );
      const body = await (await traced).json();
      assert.equal(body.data?.product?.name, "Oak Dining Table");
      const subgraphs = fetchSubgraphs(body.extensions?.trace?.fetches);
      assert.ok(
        new Set(subgraphs).size >= 3,
        `a cross-subgraph plan, got ${subgraphs.join(", ")}`,
      );

      await page.waitForSelector(".gw-wf-bar[data-type=fetch]");
      assert.match(await responseText(page), /"name": "Oak Dining Table"/);
      assert.equal(
        await page.locator(".gw-wf-bar[data-type=fetch]").count(),
        subgraphs.length,
      );
      const labels = await page.$$eval(
        ".gw-wf-row[data-type=fetch] .gw-wf-label",
        (els) => els.map((e) => e.textContent),
      );
      assert.deepEqual(labels, subgraphs);
      await page.click('.gw-wf-bar[data-type=fetch][data-fetch-index="1"]');
      assert.match(
        await page.locator(".gw-fetch-detail").innerText(),
        /"url": "http:\/\/127\.0\.0\.1:/,
      );

      const screenshot = `${tmp}/playground.png`;
      await page.screenshot({ path: screenshot, fullPage: false });
      await Deno.copyFile(screenshot, "/tmp/playground.png");
      assert.ok((await Deno.stat(screenshot)).size > 10_000);

      // The option checkboxes reach the router: the input is left out of the
      // trace, and predictable timings put every fetch at the same constant.
      await page.check('input[data-option="exclude_input"]');
      await page.check('input[data-option="enable_predictable_debug_timings"]');
      const optioned = page.waitForResponse((r) =>
        r.request().headers()["x-gw-trace"] === "exclude_input,enable_predictable_debug_timings"
      );
      optioned.catch(() => {});
      await runOperation(page, 'query Again { product(upc: "1") { name inStock } }', "Again");
      const again = await (await optioned).json();
      assert.equal(again.data?.product?.name, "Oak Dining Table");
      await page.locator(".gw-trace-heading", { hasText: "response of Again" }).waitFor();
      await page.click('.gw-wf-bar[data-type=fetch][data-fetch-index="1"]');
      assert.match(await page.locator(".gw-json").innerText(), /excluded by an option/);
      await page.click('.gw-tab[data-tab="output"]');
      assert.match(await page.locator(".gw-json").innerText(), /"inStock": true/);
      const durations = await page.locator(".gw-wf-row[data-type=fetch] .gw-wf-dur")
        .allTextContents();
      assert.equal(durations.length, fetchSubgraphs(again.extensions?.trace?.fetches).length);
      assert.equal(new Set(durations).size, 1, `constant timings, got ${durations.join(", ")}`);

      assert.deepEqual(await cspViolations(page), []);
      assertSameOrigin(log, origin);
    } finally {
      await browser.close();
      await router.shutdown();
      await demo.close();
      await Deno.remove(tmp, { recursive: true });
    }
  },
);

/**
 * Whether the engine answers introspection through named fragments (what
 * GraphiQL's introspection query uses). Checked without sockets, so the test
 * below runs by itself once the engine handles it.
 */
async function engineIntrospectsFragments(): Promise<boolean> {
  try {
    const sdl = await Deno.readTextFile(
      new URL("../../schema/supergraph.graphql", import.meta.url),
    );
    const engine = createEngine(buildSupergraph(sdl));
    const prepared = prepare(engine, {
      query: "{ __schema { queryType { ...T } } } fragment T on __Type { name }",
    });
    if (!prepared.ok) return false;
    const result = await execute(engine, prepared.operation);
    return JSON.stringify(result.data) === '{"__schema":{"queryType":{"name":"Query"}}}';
  } catch {
    return false;
  }
}

const introspectionGap = !(await engineIntrospectsFragments());

Deno.test(
  named(
    introspectionGap
      ? "KNOWN GAP: issue 7: schema-aware help against the demo router (GraphiQL's introspection query uses named fragments, which the engine answers with empty objects)"
      : "issue 7: schema-aware help against the demo router: typing offers the router's fields",
  ),
  // The engine runs __schema/__type selections without the document's
  // fragment definitions (lib/engine/mod.ts introspectionDocument), so
  // `...FullType` resolves to {} and GraphiQL gets no usable schema.
  { ...BROWSER_TEST, ignore: chromiumMissing || introspectionGap },
  async () => {
    const demo = startDemoSubgraphs({ basePort: 0 });
    const router = await startRouter({
      config: parseConfig({ dev_mode: true, listen_addr: "127.0.0.1:0" }),
      log: silentLogger,
      supergraphSdl: demo.supergraphSdl,
    });
    const browser = await launch();
    try {
      const { page, introspected } = await openPage(browser, `${router.url}/`);
      await introspected;
      await page.click(".graphiql-query-editor .CodeMirror");
      await page.keyboard.press("Control+A");
      await page.keyboard.type("{ produ", { delay: 20 });
      const hints = page.locator(".CodeMirror-hints");
      await hints.waitFor({ timeout: 5_000 });
      assert.match(await hints.innerText(), /\bproducts?\b/);
    } finally {
      await browser.close();
      await router.shutdown();
      await demo.close();
    }
  },
);
