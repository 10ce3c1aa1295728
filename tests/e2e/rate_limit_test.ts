/**
 * Issue 30, rate limits over real sockets (memory store): a burst, then 429
 * with a correct `Retry-After` and the `RateLimit-*` fields; per-key
 * isolation; a spoofed `X-Forwarded-For` ignored unless the peer is a
 * trusted proxy; Connect's `resource_exhausted` and MCP's 429 before any JSON-RPC.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { SignJWT } from "jose";
import { startWorkers } from "../../lib/cli/workers.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { helloWorkspace } from "./_workspace.ts";

/** The router serves TCP itself (no connection guard), so it sees the peer's address. */
const NO_GUARD = `traffic_shaping:
  router: { header_read_timeout: 0s, keep_alive_timeout: 0s, max_connections: 0 }`;

async function setUp(
  rateLimit: string,
): Promise<{ router: RunningRouter; close(): Promise<void> }> {
  const workspace = await helloWorkspace(
    `log_level: error\n${NO_GUARD}\nrate_limit:\n  enabled: true\n${rateLimit}\n`,
    { mcp: "on" },
  );
  await Deno.writeTextFile(join(workspace.dir, "ops", "Hello.graphql"), "query Hello { hello }");
  const router = await startRouter({ configPath: workspace.configPath });
  return {
    router,
    async close() {
      await router.shutdown();
      await workspace.close();
    },
  };
}

async function post(url: string, headers: Record<string, string> = {}): Promise<Response> {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: JSON.stringify({ query: "{ hello }" }),
  });
  await response.bytes();
  return response;
}

Deno.test("issue 30: a burst of `burst` requests, then 429 RATE_LIMITED with Retry-After and RateLimit-*", async () => {
  // 3 at once, one more every 10 s.
  const { router, close } = await setUp("  rate: 6\n  burst: 3\n  period: 1m");
  try {
    const statuses: number[] = [];
    let last: Response | null = null;
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      last = await post(router.url);
      statuses.push(last.status);
      remaining.push(last.headers.get("ratelimit-remaining") ?? "");
    }
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
    assert.deepEqual(remaining, ["2", "1", "0", "0", "0"]);
    // The next slot comes one emission interval (10 s) after the burst began.
    const retryAfter = Number(last!.headers.get("retry-after"));
    assert.ok(retryAfter >= 9 && retryAfter <= 10, `Retry-After ${retryAfter}`);
    assert.equal(last!.headers.get("ratelimit-limit"), "3");
    assert.ok(Number(last!.headers.get("ratelimit-reset")) >= 29);
    const refused = await fetch(`${router.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: "{ hello }" }),
    });
    const body = await refused.json();
    assert.equal(body.errors[0].extensions.code, "RATE_LIMITED");
    assert.equal(body.errors[0].extensions.retry_after, retryAfter);
  } finally {
    await close();
  }
});

Deno.test("issue 30: budgets are per facet and per key; Connect answers resource_exhausted, MCP 429 before JSON-RPC", async () => {
  const { router, close } = await setUp(
    "  key: header:X-Api-Key\n  rate: 1\n  burst: 1\n  period: 1m",
  );
  try {
    assert.equal((await post(router.url, { "x-api-key": "a" })).status, 200);
    assert.equal((await post(router.url, { "x-api-key": "a" })).status, 429);
    // Another key has its own budget.
    assert.equal((await post(router.url, { "x-api-key": "b" })).status, 200);
    const connect = async () =>
      await fetch(`${router.url}/service.v1.GraphService/Hello`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "connect-protocol-version": "1",
          "x-api-key": "a",
        },
        body: "{}",
      });
    // Connect's budget is its own: key "a" spent only GraphQL's.
    const first = await connect();
    assert.equal(first.status, 200);
    await first.body?.cancel();
    const second = await connect();
    assert.equal(second.status, 429);
    assert.deepEqual((await second.json()).code, "resource_exhausted");
    const mcp = async () =>
      await fetch(`${router.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "x-api-key": "a",
        },
        body: "{not even json",
      });
    await (await mcp()).body?.cancel();
    const limited = await mcp();
    assert.equal(limited.status, 429);
    const body = await limited.json();
    assert.equal(body.jsonrpc, "2.0");
    assert.equal(body.id, null);
    assert.ok(limited.headers.get("retry-after"));
  } finally {
    await close();
  }
});

Deno.test("issue 30: a spoofed X-Forwarded-For is ignored unless the peer is a trusted proxy", async () => {
  const untrusted = await setUp("  rate: 1\n  burst: 1\n  period: 1m");
  try {
    // Every request comes from 127.0.0.1: a new X-Forwarded-For each time buys nothing.
    assert.equal((await post(untrusted.router.url, { "x-forwarded-for": "1.1.1.1" })).status, 200);
    assert.equal((await post(untrusted.router.url, { "x-forwarded-for": "2.2.2.2" })).status, 429);
  } finally {
    await untrusted.close();
  }
  const trusted = await setUp(
    '  rate: 1\n  burst: 1\n  period: 1m\n  trusted_proxies: ["127.0.0.0/8", "10.0.0.0/8"]',
  );
  try {
    const url = trusted.router.url;
    // The peer is a trusted proxy: the right-most untrusted hop is the client.
    assert.equal((await post(url, { "x-forwarded-for": "1.1.1.1" })).status, 200);
    assert.equal((await post(url, { "x-forwarded-for": "2.2.2.2" })).status, 200);
    assert.equal((await post(url, { "x-forwarded-for": "2.2.2.2" })).status, 429);
    // A hop the client wrote left of the last untrusted one changes nothing.
    assert.equal(
      (await post(url, { "x-forwarded-for": "9.9.9.9, 2.2.2.2, 10.0.0.7" })).status,
      429,
    );
  } finally {
    await trusted.close();
  }
});

/**
 * With `trusted_proxies: ["127.0.0.1"]` and a budget of 1: the router saw the
 * peer 127.0.0.1 (a trusted proxy), so X-Forwarded-For names the client; a
 * client's own `x-gw-peer` is not believed (5.5.5.5, untrusted, would be a
 * fresh budget: 200).
 */
async function assertPeerSeen(url: string): Promise<void> {
  assert.equal((await post(url, { "x-forwarded-for": "1.1.1.1" })).status, 200);
  assert.equal((await post(url, { "x-forwarded-for": "2.2.2.2" })).status, 200);
  assert.equal((await post(url, { "x-forwarded-for": "2.2.2.2" })).status, 429);
  const spoofed = { "x-gw-peer": "5.5.5.5", "x-forwarded-for": "2.2.2.2" };
  assert.equal((await post(url, spoofed)).status, 429);
}

Deno.test("issue 30: behind the connection guard the router still sees the peer; a client's own x-gw-peer is never believed", async () => {
  // The guard's defaults (on): the router serves through its relay.
  const workspace = await helloWorkspace(`log_level: error
rate_limit:
  enabled: true
  rate: 1
  burst: 1
  period: 1m
  trusted_proxies: ["127.0.0.1"]`);
  const router = await startRouter({ configPath: workspace.configPath });
  try {
    await assertPeerSeen(router.url);
  } finally {
    await router.shutdown();
    await workspace.close();
  }
});

Deno.test("issue 30: rejections and logged overruns are counted in gw_router_rate_limited_total", async () => {
  const { router, close } = await setUp(
    "  rate: 1\n  burst: 1\n  period: 1m\n  mcp: { enabled: false }\ntelemetry:\n  metrics:\n    prometheus: { enabled: true, listen_addr: 127.0.0.1:0 }",
  );
  try {
    for (let i = 0; i < 3; i++) await post(router.url);
    const text = await (await fetch(router.metricsUrl!)).text();
    assert.match(text, /gw_router_rate_limited_total\{facet="graphql",outcome="rejected"\} 2/);
  } finally {
    await close();
  }
});

const SECRET = "rate-limit-e2e-secret-that-is-long-enough-for-hs256";

async function token(subject: string, secret = SECRET): Promise<string> {
  return await new SignJWT({})
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(subject)
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(secret));
}

Deno.test("issue 30: key token_subject: one budget per verified subject; an unverified token is keyed by its IP", async () => {
  const { router, close } = await setUp(`  key: token_subject
  rate: 1
  burst: 1
  period: 1m
authentication:
  jwt:
    jwks: [{ secret: "${SECRET}", symmetric_algorithm: HS256 }]`);
  try {
    const as = async (bearer: string | null) =>
      (await post(router.url, bearer === null ? {} : { authorization: `Bearer ${bearer}` })).status;
    assert.equal(await as(await token("alice")), 200);
    assert.equal(await as(await token("alice")), 429);
    assert.equal(await as(await token("bob")), 200);
    // Anonymous requests share their IP's budget…
    assert.equal(await as(null), 200);
    assert.equal(await as(null), 429);
    // …and so does a token that does not verify, whatever subject it claims.
    assert.equal(
      await as(await token("carol", "another-secret-that-is-long-enough-for-hs256")),
      429,
    );
  } finally {
    await close();
  }
});

Deno.test("issue 30: served from a supervised worker thread, the forwarder says who the peer is; a client's x-gw-peer is dropped", async () => {
  // Heap limits: the supervisor forwards every request to a worker thread over a unix socket.
  const workspace = await helloWorkspace(`log_level: error
${NO_GUARD}
workers: 1
heap: { max_young_generation_mb: 24, max_old_generation_mb: 128 }
rate_limit:
  enabled: true
  rate: 1
  burst: 1
  period: 1m
  trusted_proxies: ["127.0.0.1"]`);
  const router = await startWorkers({
    configPath: workspace.configPath,
    env: { LOG_LEVEL: "error" },
    log: createLogger({ level: "error", write: () => {} }),
  });
  try {
    await assertPeerSeen(router.url);
  } finally {
    await router.shutdown();
    await workspace.close();
  }
});

Deno.test("issue 30: fail_open: false answers 503 SERVICE_OVERLOADED with Retry-After while the store is unavailable", async () => {
  // A Redis URL where nothing listens: the store is unavailable from the start.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const { router, close } = await setUp(`  fail_open: false
  storage: { provider_id: gone }
storage_providers:
  redis: [{ id: gone, urls: ["redis://127.0.0.1:${port}"], connect_timeout: 100ms }]`);
  try {
    const response = await fetch(`${router.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: "{ hello }" }),
    });
    assert.equal(response.status, 503);
    assert.equal(response.headers.get("retry-after"), "1");
    const body = await response.json();
    assert.equal(body.errors[0].extensions.code, "SERVICE_OVERLOADED");
    assert.match(body.errors[0].message, /rate limit cannot be checked/);
    // Readiness does not depend on Redis.
    const ready = await fetch(`${router.url}/health/ready`);
    assert.equal(ready.status, 200);
    await ready.body?.cancel();
  } finally {
    await close();
  }
});

Deno.test("issue 30: reject_exceeding_requests: false lets requests over the limit run, counted as logged", async () => {
  const { router, close } = await setUp(
    "  rate: 1\n  burst: 1\n  period: 1m\n  reject_exceeding_requests: false\ntelemetry:\n  metrics:\n    prometheus: { enabled: true, listen_addr: 127.0.0.1:0 }",
  );
  try {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await post(router.url)).status);
    assert.deepEqual(statuses, [200, 200, 200]);
    const text = await (await fetch(router.metricsUrl!)).text();
    assert.match(text, /gw_router_rate_limited_total\{facet="graphql",outcome="logged"\} 2/);
  } finally {
    await close();
  }
});
