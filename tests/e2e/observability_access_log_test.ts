/**
 * Issue 16: access log lines (one JSON line per request at info) and the rule
 * that no token, cookie or variable value reaches any log line at any level.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../lib/config/mod.ts";
import {
  connect,
  graphql,
  mcp,
  mcpSession,
  startObservabilityFixture,
} from "./_observability_fixture.ts";

const SECRETS = {
  token: "SENTINEL-TOKEN-7f3a",
  cookie: "SENTINEL-COOKIE-91bc",
  variable: "SENTINEL-VARIABLE-c0de",
  query: "SENTINEL-QUERYSTRING-55aa",
  apiKey: "SENTINEL-APIKEY-e4e4",
};

Deno.test("issue 16: each request writes one access log line at info with the request's facts", async () => {
  const fixture = await startObservabilityFixture();
  try {
    const { headers } = await graphql(
      fixture,
      { query: "query GetHello($name: String) { hello(name: $name) }", variables: { name: "x" } },
      { "x-request-id": "access-1", "graphql-client-name": "web" },
    );
    assert.equal(headers.get("x-request-id"), "access-1");
    const lines = fixture.logs.filter((l) => l.msg === "request");
    assert.equal(lines.length, 1);
    const [line] = lines;
    assert.equal(line?.level, "info");
    const { duration_ms, operation_hash, bytes_in, bytes_out, ...rest } = line?.fields ?? {};
    assert.deepEqual(rest, {
      request_id: "access-1",
      method: "POST",
      path: "/graphql",
      status: 200,
      operation_name: "GetHello",
      operation_type: "query",
      client_name: "web",
      subgraph_fetches: 1,
    });
    assert.equal(typeof duration_ms, "number");
    assert.match(String(operation_hash), /^[0-9a-f]{14}$/);
    assert.ok(Number(bytes_in) > 50);
    // bytes_out is what was sent: the body of {"data":{"hello":"Hello x!"}}.
    assert.equal(bytes_out, JSON.stringify({ data: { hello: "Hello x!" } }).length);
  } finally {
    await fixture.close();
  }
});

Deno.test("access log: an operation name of any length is cut at 256 characters", async () => {
  const fixture = await startObservabilityFixture();
  try {
    const long = `Q${"x".repeat(20_000)}`;
    await graphql(fixture, { query: `query ${long} { hello(name: "a") }`, operationName: long });
    await graphql(fixture, {
      query: `{ hello(name: "a") }`,
      operationName: `N${"y".repeat(20_000)}`,
    });
    const names = fixture.logs.filter((l) => l.msg === "request").map((l) =>
      String(l.fields.operation_name)
    );
    assert.deepEqual(names, [`${long.slice(0, 256)}…`, `N${"y".repeat(255)}…`]);
  } finally {
    await fixture.close();
  }
});

Deno.test("issue 16: bytes_out counts UTF-8 bytes as sent, multi-byte text included", async () => {
  const fixture = await startObservabilityFixture();
  try {
    const name = "é€😀";
    const response = await fetch(`${fixture.router.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: "query($name: String) { hello(name: $name) }",
        variables: { name },
      }),
    });
    const sent = new Uint8Array(await response.arrayBuffer()).byteLength;
    const [line] = fixture.logs.filter((l) => l.msg === "request");
    assert.equal(line?.fields?.bytes_out, sent);
    // Not the UTF-16 length: the name alone is 4 code units longer in bytes.
    const text = JSON.stringify({ data: { hello: `Hello ${name}!` } });
    assert.equal(sent, new TextEncoder().encode(text).length);
    assert.notEqual(sent, text.length);
  } finally {
    await fixture.close();
  }
});

Deno.test("issue 16: access_logs.enabled=false writes no access line", async () => {
  const fixture = await startObservabilityFixture({ access_logs: { enabled: false } });
  try {
    await graphql(fixture, { query: "{ hello }" });
    assert.equal(fixture.logs.filter((l) => l.msg === "request").length, 0);
  } finally {
    await fixture.close();
  }
});

Deno.test("issue 16: access logs default to on, and to off in dev mode (which logs its own banner)", () => {
  assert.equal(parseConfig({}).access_logs.enabled, true);
  assert.equal(parseConfig({ dev_mode: true }).access_logs.enabled, false);
  assert.equal(
    parseConfig({ dev_mode: true, access_logs: { enabled: true } }).access_logs.enabled,
    true,
  );
});

Deno.test("issue 16: no token, cookie, API key, query string or variable value reaches any log line at any level", async () => {
  // log_level debug: the fixture's logger records every call of every level anyway.
  const fixture = await startObservabilityFixture({
    log_level: "debug",
    headers: { all: { request: [{ op: "propagate", named: "Authorization" }] } },
  });
  try {
    const secretHeaders = {
      authorization: `Bearer ${SECRETS.token}`,
      cookie: `session=${SECRETS.cookie}`,
      "x-api-key": SECRETS.apiKey,
    };
    await graphql(
      fixture,
      {
        query: "query GetHello($name: String) { hello(name: $name) }",
        variables: { name: SECRETS.variable },
      },
      secretHeaders,
    );
    // A request error that echoes nothing of the variables, and a failing subgraph.
    await graphql(fixture, {
      query: "query Bad($v: Int) { hello }",
      variables: { v: SECRETS.variable },
    }, secretHeaders);
    await graphql(fixture, { query: "{ down }" }, secretHeaders);
    const get = await fetch(
      `${fixture.router.url}/graphql?query=${
        encodeURIComponent("{ hello }")
      }&token=${SECRETS.query}`,
      { headers: secretHeaders },
    );
    await get.body?.cancel();
    await connect(fixture, "GetHello", { name: SECRETS.variable }, secretHeaders);
    const session = await mcpSession(fixture);
    await mcp(
      fixture,
      {
        id: 3,
        method: "tools/call",
        params: { name: "execute_operation_get_hello", arguments: { name: SECRETS.variable } },
      },
      session,
      secretHeaders,
    );
    const notFound = await fetch(`${fixture.router.url}/nowhere/${SECRETS.query}`, {
      headers: secretHeaders,
    });
    await notFound.body?.cancel();
    assert.ok(fixture.logs.filter((l) => l.msg === "request").length >= 7);
    for (const entry of fixture.logs) {
      const line = JSON.stringify(entry);
      for (const [name, secret] of Object.entries(SECRETS)) {
        assert.equal(line.includes(secret), false, `${name} leaked into: ${line}`);
      }
    }
  } finally {
    await fixture.close();
  }
});

Deno.test("issue 16: with log_level warn the access log writes nothing (and the answer is untouched)", async () => {
  const fixture = await startObservabilityFixture({ log_level: "warn" });
  try {
    const { status } = await graphql(fixture, { query: "{ hello }" });
    assert.equal(status, 200);
    assert.equal(fixture.logs.filter((l) => l.msg === "request").length, 0);
  } finally {
    await fixture.close();
  }
});
