import assert from "node:assert/strict";
import { parseConfig, startupWarnings } from "../../lib/config/mod.ts";
import {
  buildTraceState,
  finishTrace,
  generateTraceKeyPair,
  mintTraceToken,
  startTrace,
  TRACE_WARNING_PREFIX,
  type TraceStart,
  traceStartupWarnings,
} from "../../lib/trace/mod.ts";

const pair = await generateTraceKeyPair();
const stranger = await generateTraceKeyPair();
const URL_GRAPHQL = "http://127.0.0.1:3002/graphql";

function config(env: Record<string, string> = {}) {
  return parseConfig({}, { env });
}

function traced(headers: Record<string, string> = {}, url = URL_GRAPHQL): Request {
  return new Request(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-gw-trace": "true", ...headers },
    body: '{"query":"{__typename}"}',
  });
}

async function start(
  env: Record<string, string>,
  request: Request,
  pem: string | null = pair.publicKeyPem,
): Promise<TraceStart> {
  return await startTrace(request, await buildTraceState(config(env), pem));
}

Deno.test("spec 5.6: ENGINE_ENABLE_REQUEST_TRACING=false turns ART off entirely, even in dev mode", async () => {
  const env = { ENGINE_ENABLE_REQUEST_TRACING: "false", DEV_MODE: "true" };
  const token = await mintTraceToken(pair.privateKeyPem);
  assert.equal((await start(env, traced({ "x-gw-token": token }))).kind, "off");
  assert.deepEqual(traceStartupWarnings(config(env)), []);
});

Deno.test("spec 5.6: ART is on by default and logs a start-up warning", () => {
  const warnings = traceStartupWarnings(config({ DEV_MODE: "true" }));
  assert.equal(warnings.length, 1);
  assert.ok(warnings[0]?.startsWith(TRACE_WARNING_PREFIX));
  assert.equal(TRACE_WARNING_PREFIX, "Advanced Request Tracing (ART) is enabled");
});

Deno.test("issue 44: outside dev mode without a token key, one tracing warning, not two", () => {
  const production = config();
  const tracing = [
    ...traceStartupWarnings(production),
    ...startupWarnings(production).map((warning) => warning.message),
  ].filter((message) => /Advanced Request Tracing/.test(message));
  assert.equal(tracing.length, 1, tracing.join("\n"));
  assert.match(tracing[0]!, /trace-token --generate-key/);
  // With a key, the one warning says how requests are admitted.
  const keyed = config({ ENGINE_REQUEST_TRACING_PUBLIC_KEY_FILE: "/k.pem" });
  assert.equal(traceStartupWarnings(keyed).length, 1);
  assert.equal(startupWarnings(keyed).filter((w) => /Advanced Request/.test(w.message)).length, 0);
});

Deno.test("spec 5.5: DEV_MODE=true traces without a token", async () => {
  const result = await start({ DEV_MODE: "true" }, traced());
  assert.equal(result.kind, "on");
});

Deno.test("spec 5.5: the force flag traces without a token and logs its own warning", async () => {
  const env = { ENGINE_FORCE_UNAUTHENTICATED_REQUEST_TRACING: "true" };
  assert.equal((await start(env, traced(), null)).kind, "on");
  const warnings = traceStartupWarnings(config(env));
  assert.equal(warnings.length, 2);
  const force = warnings[1] ?? "";
  assert.ok(force.startsWith(TRACE_WARNING_PREFIX));
  for (const exposed of ["subgraph URLs", "topology", "propagated headers", "responses"]) {
    assert.ok(force.includes(exposed), exposed);
  }
});

Deno.test("spec 5.5: in production a valid X-GW-Token turns tracing on", async () => {
  const token = await mintTraceToken(pair.privateKeyPem, { ttlSeconds: 300 });
  assert.equal((await start({}, traced({ "x-gw-token": token }))).kind, "on");
});

Deno.test("spec 5.5: a token from another key is rejected with a reason that does not echo it", async () => {
  const token = await mintTraceToken(stranger.privateKeyPem);
  const result = await start({}, traced({ "x-gw-token": token }));
  assert.equal(result.kind, "rejected");
  assert.ok(result.kind === "rejected");
  assert.equal(result.code, "INVALID_TRACE_TOKEN");
  assert.match(result.message, /signature/);
  assert.ok(!result.message.includes(token.split(".")[2]!));
});

Deno.test("spec 5.5: without a token a production request gets no trace and no error", async () => {
  assert.equal((await start({}, traced())).kind, "off");
});

Deno.test("DESIGN §4: the token is verified only when a trace is requested", async () => {
  const request = new Request(URL_GRAPHQL, { headers: { "x-gw-token": "garbage" } });
  assert.equal((await start({}, request)).kind, "off");
});

Deno.test("DESIGN §4: iss and aud configured in engine are enforced on tokens", async () => {
  const env = { ENGINE_REQUEST_TRACING_ISSUER: "ops", ENGINE_REQUEST_TRACING_AUDIENCE: "gw" };
  const good = await mintTraceToken(pair.privateKeyPem, { issuer: "ops", audience: "gw" });
  const bad = await mintTraceToken(pair.privateKeyPem, { issuer: "dev", audience: "gw" });
  assert.equal((await start(env, traced({ "x-gw-token": good }))).kind, "on");
  assert.equal((await start(env, traced({ "x-gw-token": bad }))).kind, "rejected");
});

Deno.test("spec 4.4: the gw_trace query form passes the same gate", async () => {
  const request = new Request(`${URL_GRAPHQL}?gw_trace=exclude_output`);
  const result = await start({ DEV_MODE: "true" }, request);
  assert.ok(result.kind === "on");
  assert.equal(result.options.excludeOutput, true);
});

Deno.test("spec 2.8: finishTrace puts the trace at extensions.trace and keeps other extensions", async () => {
  const result = await start({ DEV_MODE: "true" }, traced());
  const finished = finishTrace(result, { data: { a: 1 }, extensions: { cost: 3 } }, {
    request: { query: "{a}" },
  });
  assert.equal(finished.extensions?.cost, 3);
  const trace = finished.extensions?.trace as { version: string; request: { body: unknown } };
  assert.equal(trace.version, "1");
  assert.deepEqual(trace.request.body, { query: "{a}" });
  assert.deepEqual(finished.data, { a: 1 });
});

Deno.test("DESIGN §3: the JWT header of authentication.jwt is masked in traces", async () => {
  const cfg = parseConfig({ dev_mode: true, authentication: { jwt: { header_name: "X-Auth" } } });
  const state = await buildTraceState(cfg, null);
  assert.ok(state.maskedHeaders.has("x-auth"));
  assert.ok(state.maskedHeaders.has("authorization"));
});

Deno.test("spec 5.5: configured extra headers (engine.request_tracing_masked_headers) are masked", async () => {
  const base = parseConfig({ dev_mode: true });
  const cfg = {
    ...base,
    engine: { ...base.engine, request_tracing_masked_headers: ["X-Tenant-Secret"] },
  };
  const state = await buildTraceState(cfg, null, { maskedHeaders: ["X-Api-Key"] });
  assert.ok(state.maskedHeaders.has("x-tenant-secret"));
  assert.ok(state.maskedHeaders.has("x-api-key"));
  const start = await startTrace(
    new Request(URL_GRAPHQL, { headers: { "x-gw-trace": "true", "x-tenant-secret": "s3cr3t" } }),
    state,
  );
  assert.ok(start.kind === "on");
  const trace = start.session.finish();
  assert.deepEqual(trace.request?.headers["X-Tenant-Secret"], ["****"]);
});

Deno.test("spec 5.5: the trace reports the router version, at least 0.42.3", async () => {
  const state = await buildTraceState(config(), null);
  const parts = state.routerVersion.split(".").map(Number);
  assert.equal(parts.length, 3);
  const [major = 0, minor = 0, patch = 0] = parts;
  assert.ok(major * 1e6 + minor * 1e3 + patch >= 42_003, state.routerVersion);
  const denoJson = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  assert.equal(state.routerVersion, denoJson.version);
});
