import assert from "node:assert/strict";
import { sha256Hex } from "../../lib/persisted/mod.ts";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { AuthError, RouterError } from "../../lib/errors.ts";
import { createHandler, errorResponse, type FacetHandler } from "../../lib/http/mod.ts";
import { compileCors } from "../../lib/http/cors.ts";
import { inWorker } from "./_in_worker.ts";
import { silentLogger } from "../../lib/log/mod.ts";
import { buildState, type RouterState } from "../../lib/state/mod.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';
const composed = composeSupergraph([{
  name: "greetings",
  url: "http://greetings.invalid/graphql",
  sdl: `${LINK}
type Query { hello: String! }
type Mutation { setHello(text: String!): String! }`,
}]);
if (!composed.ok) throw new Error("test supergraph does not compose");
const SUPERGRAPH = composed.supergraphSdl;

/** A subgraph stand-in: no sockets in unit tests. */
async function fakeSubgraph(request: Request): Promise<Response> {
  const { query } = await request.json();
  const data = String(query).includes("setHello") ? { setHello: "ok" } : { hello: "world" };
  return Response.json({ data });
}

async function stateWith(raw: Record<string, unknown> = {}): Promise<RouterState> {
  return await buildState({
    config: parseConfig(raw),
    log: silentLogger,
    supergraphSdl: SUPERGRAPH,
    operationFiles: [],
    traceKeyPem: null,
    fetch: fakeSubgraph,
  });
}

const GQL = "application/graphql-response+json";
/** CSRF prevention (issue 14): GETs and CORS-simple POSTs carry a preflight header. */
const PREFLIGHT = { "apollo-require-preflight": "true" };
const URL_BASE = "http://router.test";

function post(body: string, headers: Record<string, string> = {}): Request {
  return new Request(`${URL_BASE}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

async function errorOf(response: Response): Promise<{ message: string; code: unknown }> {
  const body = await response.json();
  return { message: body.errors[0].message, code: body.errors[0].extensions?.code };
}

Deno.test("issue 2: /health/live answers always, /health/ready once a state is built", async () => {
  let state: RouterState | null = null;
  const handle = createHandler(() => state);
  const live = await handle(new Request(`${URL_BASE}/health/live`));
  assert.equal(live.status, 200);
  assert.deepEqual(await live.json(), { status: "live" });
  const starting = await handle(new Request(`${URL_BASE}/health/ready`));
  assert.equal(starting.status, 503);
  await starting.body?.cancel();
  state = await stateWith();
  const ready = await handle(new Request(`${URL_BASE}/health/ready`));
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { status: "ready" });
});

Deno.test("DESIGN §2: an unknown path is a 404 GraphQL-shaped error with code NOT_FOUND", async () => {
  const state = await stateWith();
  const response = await createHandler(() => state)(new Request(`${URL_BASE}/nope`));
  assert.equal(response.status, 404);
  assert.deepEqual(await errorOf(response), {
    message: "No route for GET /nope",
    code: "NOT_FOUND",
  });
});

Deno.test("DESIGN §2: routes go to their facets (MCP, RFC 9728 metadata, Connect prefix, playground)", async () => {
  const seen: string[] = [];
  const spy = (name: string): FacetHandler => (request) => {
    seen.push(`${name} ${new URL(request.url).pathname}`);
    return Promise.resolve(new Response(name));
  };
  const facets = {
    graphql: spy("graphql"),
    mcp: spy("mcp"),
    protectedResource: spy("metadata"),
    connect: spy("connect"),
    playground: spy("playground"),
  };
  const state = await stateWith({ dev_mode: true });
  const handle = createHandler(() => state, { facets });
  const requests: [string, RequestInit?][] = [
    ["/graphql?query={hello}"],
    ["/graphql", { headers: { accept: "text/html" } }],
    ["/graphql?query={hello}", { headers: { accept: "text/html" } }],
    ["/mcp", { method: "POST", body: "{}" }],
    ["/.well-known/oauth-protected-resource/mcp"],
    ["/.well-known/oauth-protected-resource"],
    ["/service.v1.GraphService/GetHello"],
    ["/"],
    ["/playground/app.js"],
  ];
  for (const [path, init] of requests) {
    const response = await handle(new Request(`${URL_BASE}${path}`, init));
    assert.equal(response.status, 200, path);
    await response.body?.cancel();
  }
  assert.deepEqual(seen, [
    "graphql /graphql",
    "playground /graphql",
    "graphql /graphql",
    "mcp /mcp",
    "metadata /.well-known/oauth-protected-resource/mcp",
    "metadata /.well-known/oauth-protected-resource",
    "connect /service.v1.GraphService/GetHello",
    "playground /",
    "playground /playground/app.js",
  ]);

  // Disabled facets have no routes.
  const off = await stateWith({ mcp: { enabled: false }, connect_rpc: { enabled: false } });
  const handleOff = createHandler(() => off, { facets });
  for (
    const path of [
      "/mcp",
      "/.well-known/oauth-protected-resource/mcp",
      "/service.v1.GraphService/GetHello",
      "/",
    ]
  ) {
    const response = await handleOff(new Request(`${URL_BASE}${path}`));
    assert.equal(response.status, 404, path);
    await response.body?.cancel();
  }
});

Deno.test("GraphQL over HTTP: methods other than GET and POST get 405 with Allow", async () => {
  const state = await stateWith();
  const response = await createHandler(() => state)(
    new Request(`${URL_BASE}/graphql`, { method: "PUT", body: "{}" }),
  );
  assert.equal(response.status, 405);
  assert.equal(response.headers.get("allow"), "GET, POST");
  assert.equal((await errorOf(response)).code, "METHOD_NOT_ALLOWED");
});

Deno.test("GraphQL over HTTP: a mutation over GET gets 405 with Allow: POST", async () => {
  const state = await stateWith();
  const handle = createHandler(() => state);
  const query = encodeURIComponent('mutation { setHello(text: "x") }');
  const response = await handle(
    new Request(`${URL_BASE}/graphql?query=${query}`, { headers: { accept: GQL, ...PREFLIGHT } }),
  );
  assert.equal(response.status, 405);
  assert.equal(response.headers.get("allow"), "POST");
  assert.match((await errorOf(response)).message, /send mutations with POST/);
});

Deno.test("GraphQL over HTTP: a subscription over GET gets 405 naming it a subscription, not a mutation", async () => {
  const state = await stateWith();
  const handle = createHandler(() => state);
  const query = encodeURIComponent("subscription { hello }");
  const response = await handle(
    new Request(`${URL_BASE}/graphql?query=${query}`, { headers: { accept: GQL, ...PREFLIGHT } }),
  );
  assert.equal(response.status, 405);
  const message = (await errorOf(response)).message;
  assert.match(message, /subscription/);
  assert.doesNotMatch(message, /mutation/);
});

Deno.test("GraphQL over HTTP: Accept without a GraphQL media type gets 406", async () => {
  const state = await stateWith();
  const response = await createHandler(() => state)(
    post('{"query":"{hello}"}', { accept: "text/xml" }),
  );
  assert.equal(response.status, 406);
  const { message, code } = await errorOf(response);
  assert.equal(code, "NOT_ACCEPTABLE");
  assert.match(message, /application\/graphql-response\+json or application\/json/);
});

Deno.test("GraphQL over HTTP: POST needs Content-Type application/json (415)", async () => {
  const state = await stateWith();
  const handle = createHandler(() => state);
  const missing = await handle(
    new Request(`${URL_BASE}/graphql`, {
      method: "POST",
      headers: PREFLIGHT,
      body: new Blob(['{"query":"{hello}"}']),
    }),
  );
  assert.equal(missing.status, 415);
  assert.match((await errorOf(missing)).message, /Missing Content-Type/);
  const text = await handle(
    post('{"query":"{hello}"}', { "content-type": "text/plain", ...PREFLIGHT }),
  );
  assert.equal(text.status, 415);
  assert.match((await errorOf(text)).message, /Unsupported Content-Type "text\/plain"/);
});

Deno.test("GraphQL over HTTP: malformed JSON and bad parameters are 400 with a clear message", async () => {
  const state = await stateWith();
  const handle = createHandler(() => state);
  const cases: [string, RegExp][] = [
    ['{ "not a JSON', /Malformed JSON in the request body/],
    ["", /Empty request body/],
    ['{"qeury":"{hello}"}', /Missing the "query" parameter/],
    ['{"query":1}', /"query" parameter must be a string/],
    [
      '{"query":"{hello}","operationName":false}',
      /"operationName" parameter must be a string or null/,
    ],
    ['{"query":"{hello}","variables":"x"}', /"variables" parameter must be a JSON object/],
    ['{"query":"{hello}","extensions":[1]}', /"extensions" parameter must be a JSON object/],
  ];
  for (const accept of [GQL, "application/json"]) {
    for (const [body, message] of cases) {
      const response = await handle(post(body, { accept }));
      assert.equal(response.status, 400, `${accept} ${body}`);
      assert.ok(response.headers.get("content-type")?.startsWith(accept));
      const error = await errorOf(response);
      assert.equal(error.code, "BAD_REQUEST");
      assert.match(error.message, message);
    }
  }
  const get = await handle(
    new Request(`${URL_BASE}/graphql?query={hello}&variables={oops`, { headers: PREFLIGHT }),
  );
  assert.equal(get.status, 400);
  assert.match((await errorOf(get)).message, /Malformed JSON in the "variables" parameter/);
});

Deno.test("GraphQL over HTTP: request errors are 400 with graphql-response+json and 200 with application/json", async () => {
  const state = await stateWith();
  const handle = createHandler(() => state);
  const strict = await handle(post('{"query":"{"}', { accept: GQL }));
  assert.equal(strict.status, 400);
  assert.equal(strict.headers.get("content-type"), `${GQL}; charset=utf-8`);
  const strictBody = await strict.json();
  assert.equal("data" in strictBody, false);
  assert.ok(strictBody.errors.length > 0);
  const legacy = await handle(post('{"query":"{"}', { accept: "application/json" }));
  assert.equal(legacy.status, 200);
  assert.equal(legacy.headers.get("content-type"), "application/json; charset=utf-8");
  const legacyBody = await legacy.json();
  assert.equal("data" in legacyBody, false);
});

Deno.test("GraphQL over HTTP: Accept negotiation picks the response media type", async () => {
  const state = await stateWith();
  const handle = createHandler(() => state);
  const cases: [string | null, string][] = [
    [null, "application/json"],
    ["*/*", "application/json"],
    ["application/json", "application/json"],
    [GQL, GQL],
    [`application/json;q=0.5, ${GQL}`, GQL],
    [`${GQL};q=0.1, application/json`, "application/json"],
  ];
  for (const [accept, want] of cases) {
    const response = await handle(post('{"query":"{"}', accept === null ? {} : { accept }));
    assert.equal(response.headers.get("content-type"), `${want}; charset=utf-8`, String(accept));
    await response.body?.cancel();
  }
});

Deno.test("issue 2: bodies over max_request_body_bytes get 413, by header and by counting", async () => {
  const state = await stateWith({ max_request_body_bytes: 64 });
  const handle = createHandler(() => state);
  const big = JSON.stringify({ query: `{ hello } # ${"x".repeat(100)}` });
  const declared = await handle(post(big));
  assert.equal(declared.status, 413);
  assert.equal((await errorOf(declared)).code, "PAYLOAD_TOO_LARGE");
  const bytes = new TextEncoder().encode(big);
  const streamed = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 16) controller.enqueue(bytes.slice(i, i + 16));
      controller.close();
    },
  });
  const chunked = await handle(
    new Request(`${URL_BASE}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: streamed,
    }),
  );
  assert.equal(chunked.status, 413);
  assert.match((await errorOf(chunked)).message, /larger than 64 bytes \(max_request_body_bytes\)/);
});

Deno.test("issue 16: browsers may read X-Request-Id: exposed by default, kept when cors.expose_headers adds headers", async () => {
  for (const expose of [[], ["X-Custom"]]) {
    const state = await stateWith({ cors: { expose_headers: expose } });
    const response = await createHandler(() => state)(
      new Request(`${URL_BASE}/health/ready`, { headers: { origin: "https://app.example" } }),
    );
    await response.body?.cancel();
    const exposed = (response.headers.get("access-control-expose-headers") ?? "").split(", ");
    assert.ok(exposed.includes("X-Request-Id"), `exposed: ${exposed}`);
    for (const name of expose) assert.ok(exposed.includes(name));
    assert.ok(response.headers.get("x-request-id"), "the header exposed is sent");
  }
});

Deno.test("issue 2: CORS preflight and exposed headers (Mcp-Session-Id, WWW-Authenticate, X-Request-Id)", async () => {
  const state = await stateWith({
    cors: { allow_origins: ["https://app.example", "https://*.dev.example"] },
  });
  const handle = createHandler(() => state);
  const preflight = await handle(
    new Request(`${URL_BASE}/mcp`, {
      method: "OPTIONS",
      headers: {
        origin: "https://a.dev.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "mcp-session-id",
      },
    }),
  );
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get("access-control-allow-origin"), "https://a.dev.example");
  assert.match(preflight.headers.get("access-control-allow-methods") ?? "", /POST/);
  assert.match(preflight.headers.get("access-control-allow-headers") ?? "", /Mcp-Session-Id/);
  assert.equal(preflight.headers.get("access-control-max-age"), "300");
  const actual = await handle(
    new Request(`${URL_BASE}/health/ready`, { headers: { origin: "https://app.example" } }),
  );
  assert.equal(actual.headers.get("access-control-allow-origin"), "https://app.example");
  assert.equal(
    actual.headers.get("access-control-expose-headers"),
    "Mcp-Session-Id, WWW-Authenticate, X-Request-Id",
  );
  assert.equal(actual.headers.get("vary"), "Origin");
  await actual.body?.cancel();
  const foreign = await handle(
    new Request(`${URL_BASE}/health/ready`, { headers: { origin: "https://evil.example" } }),
  );
  assert.equal(foreign.headers.get("access-control-allow-origin"), null);
  await foreign.body?.cancel();
});

Deno.test("CORS wildcard origins: `*` spans any characters but `/`; a long hostile Origin is matched in linear time", async () => {
  const cors = parseConfig({
    cors: { allow_origins: ["https://*.dev.example", "https://*-*-*-*.example.com"] },
  }).cors;
  const policy = compileCors(cors);
  const allowed = (origin: string) => {
    const response = policy.apply(
      new Request(`${URL_BASE}/graphql`, { headers: { origin } }),
      new Response(null),
    );
    return response.headers.get("access-control-allow-origin");
  };
  assert.equal(allowed("https://a.dev.example"), "https://a.dev.example");
  assert.equal(allowed("https://a.b.dev.example"), "https://a.b.dev.example");
  assert.equal(allowed("https://.dev.example"), "https://.dev.example", "`*` may match nothing");
  assert.equal(allowed("https://a/b.dev.example"), null, "`*` never spans a `/`");
  assert.equal(allowed("https://a.dev.example.evil"), null);
  assert.equal(allowed("https://w-x-y-z.example.com"), "https://w-x-y-z.example.com");
  assert.equal(allowed("http://a.dev.example"), null);
  // Four wildcards against 8 000 dashes: a backtracking regular expression
  // (`[^/]*` per wildcard) would run for hours and hold the event loop. The
  // match runs in a worker so that a regression fails here instead of hanging.
  const code = `import { compileCors } from "${new URL("../../lib/http/cors.ts", import.meta.url)}";
    const policy = compileCors(${JSON.stringify(cors)});
    const origin = "https://" + "-".repeat(8000) + "x";
    const response = policy.apply(new Request("http://r/", { headers: { origin } }), new Response(null));
    self.postMessage(response.headers.get("access-control-allow-origin"));`;
  assert.equal(await inWorker(code, 20_000), null);
});

Deno.test("STYLE §4: errorResponse maps codes to statuses and hides internal errors", async () => {
  const auth = errorResponse(new AuthError("UNAUTHENTICATED", "Missing token", 'Bearer scope="a"'));
  assert.equal(auth.status, 401);
  assert.equal(auth.headers.get("www-authenticate"), 'Bearer scope="a"');
  await auth.body?.cancel();
  const config = errorResponse(
    new RouterError("BAD_REQUEST", "Bad", { details: { path: "x" } }),
  );
  assert.deepEqual(await config.json(), {
    errors: [{ message: "Bad", extensions: { code: "BAD_REQUEST", path: "x" } }],
  });
  const logged: unknown[] = [];
  const log = {
    ...silentLogger,
    error: (_msg: string, fields?: Record<string, unknown>) => logged.push(fields),
  };
  const internal = errorResponse(new Error("secret database password"), { log });
  assert.equal(internal.status, 500);
  const text = await internal.text();
  assert.ok(!text.includes("secret"));
  assert.equal(JSON.parse(text).errors[0].message, "Internal server error");
  assert.equal(logged.length, 1);
});

Deno.test("GraphQL over HTTP: a query runs through the engine (POST JSON and GET)", async () => {
  const state = await stateWith();
  const handle = createHandler(() => state);
  const viaPost = await handle(post('{"query":"{ hello }"}', { accept: GQL }));
  assert.equal(viaPost.status, 200);
  assert.deepEqual(await viaPost.json(), { data: { hello: "world" } });
  const viaGet = await handle(
    new Request(`${URL_BASE}/graphql?query=${encodeURIComponent("{ hello }")}`, {
      headers: PREFLIGHT,
    }),
  );
  assert.equal(viaGet.status, 200);
  assert.deepEqual(await viaGet.json(), { data: { hello: "world" } });
});

Deno.test("GraphQL over HTTP: an APQ hash without query text asks for the text (PERSISTED_QUERY_NOT_FOUND)", async () => {
  const state = await stateWith();
  const handle = createHandler(() => state);
  const hash = await sha256Hex("{ hello }");
  const extensions = { persistedQuery: { version: 1, sha256Hash: hash } };
  const response = await handle(
    post(JSON.stringify({ extensions }), { accept: "application/json", "x-request-id": "r1" }),
  );
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    errors: [{
      message: "PersistedQueryNotFound",
      extensions: { code: "PERSISTED_QUERY_NOT_FOUND", request_id: "r1" },
    }],
  });
  const retry = await handle(post(JSON.stringify({ query: "{ hello }", extensions })));
  assert.deepEqual(await retry.json(), { data: { hello: "world" } });
  // Registered (APQ on by default): the hash alone now runs it.
  const byHash = await handle(post(JSON.stringify({ extensions })));
  assert.deepEqual(await byHash.json(), { data: { hello: "world" } });
});

Deno.test("DESIGN §1: a client that goes away cancels the subgraph fetches of its request", async () => {
  let sawAbort = false;
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const state = await buildState({
    config: parseConfig({}),
    log: silentLogger,
    supergraphSdl: SUPERGRAPH,
    operationFiles: [],
    traceKeyPem: null,
    fetch: (request) =>
      new Promise<Response>((resolve, reject) => {
        const timer = setTimeout(() => {
          release();
          resolve(Response.json({ data: { hello: "late" } }));
        }, 2000);
        request.signal.addEventListener("abort", () => {
          sawAbort = true;
          clearTimeout(timer);
          release();
          reject(request.signal.reason);
        }, { once: true });
      }),
  });
  const client = new AbortController();
  const request = new Request(`${URL_BASE}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: '{"query":"{ hello }"}',
    signal: client.signal,
  });
  const pending = createHandler(() => state)(request);
  setTimeout(() => client.abort(), 20);
  await released;
  const response = await pending;
  await response.body?.cancel();
  assert.equal(sawAbort, true);
});

Deno.test("issue 8: GraphQL requests take an admission slot; a client that goes away frees it even if its work never ends", async () => {
  const state = await stateWith({ engine: { max_concurrent_operations: 1 } });
  let started = 0;
  // A GraphQL facet whose work never ends (as when V8 ends a request that ran out of heap).
  const stuck: FacetHandler = () => {
    started++;
    return new Promise<Response>(() => {});
  };
  const handle = createHandler(() => state, { facets: { graphql: stuck } });
  const first = new AbortController();
  const firstResponse = handle(
    new Request(`${URL_BASE}/graphql?query={hello}`, { signal: first.signal }),
  );
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(started, 1);
  assert.equal(state.engine.admission.active, 1);
  // The second waits for the only slot ...
  const second = new AbortController();
  void handle(new Request(`${URL_BASE}/graphql?query={hello}`, { signal: second.signal }));
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(started, 1);
  assert.equal(state.engine.admission.waiting, 1);
  // ... and gets it when the first client goes away.
  first.abort();
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(started, 2);
  assert.equal(state.engine.admission.waiting, 0);
  second.abort();
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(state.engine.admission.active, 0);
  void firstResponse;
  // Health is never gated.
  assert.equal((await handle(new Request(`${URL_BASE}/health/ready`))).status, 200);
});

Deno.test("issue 8: Connect requests and MCP POSTs take admission slots too; an MCP GET stream does not", async () => {
  const state = await stateWith({ engine: { max_concurrent_operations: 2 } });
  // Facets whose work never ends (two functions: routes are told apart by facet).
  const stuck = (): FacetHandler => () => new Promise<Response>(() => {});
  const handle = createHandler(() => state, { facets: { connect: stuck(), mcp: stuck() } });
  const clients: AbortController[] = [];
  const send = (path: string, init: RequestInit = {}) => {
    const client = new AbortController();
    clients.push(client);
    void handle(new Request(`${URL_BASE}${path}`, { ...init, signal: client.signal }));
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 10));
  send("/mcp", { method: "GET", headers: { accept: "text/event-stream" } });
  await settle();
  assert.equal(state.engine.admission.active, 0, "an MCP GET (event stream) holds no slot");
  send("/mcp", { method: "POST", body: "{}" });
  send(`/${state.connect?.prefix.slice(1)}GetUser`, { method: "POST", body: "{}" });
  await settle();
  assert.equal(state.engine.admission.active, 2);
  send("/graphql?query={hello}");
  await settle();
  assert.equal(state.engine.admission.waiting, 1, "the third operation waits");
  for (const client of clients) client.abort();
  await settle();
  assert.equal(state.engine.admission.active, 0);
  assert.equal(state.engine.admission.waiting, 0);
});
