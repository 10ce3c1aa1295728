/**
 * Issue 32: configuration errors that help — every problem at once
 * (`checkConfig`), top-level suggestions, env variables named in cross-key
 * errors, YAML code frames, the advertised URL of a wildcard `listen_addr`,
 * start-up warnings and bind errors.
 */
import assert from "node:assert/strict";
import {
  checkConfig,
  parseConfig,
  parseConfigYaml,
  startupWarnings,
  withBoundPort,
} from "../../lib/config/mod.ts";
import { listenError, RouterError } from "../../lib/errors.ts";

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof RouterError, String(error));
    return error.message;
  }
  throw new Error("expected an error");
}

Deno.test("issue 32: a top-level typo gets a suggestion (listen_address → listen_addr)", () => {
  assert.match(
    messageOf(() => parseConfig({ listen_address: "127.0.0.1:3002" })),
    /unknown key "listen_address" \(did you mean "listen_addr"\?\)/,
  );
  assert.match(
    messageOf(() => parseConfig({ graphql_pat: "/g" })),
    /did you mean "graphql_path"/,
  );
});

Deno.test("issue 32: a cross-key error on a key set by env names the variable", () => {
  const message = messageOf(() => parseConfig({}, { env: { LISTEN_ADDR: "3014" } }));
  assert.match(
    message,
    /"listen_addr" \(env LISTEN_ADDR\): expected "host:port"/,
  );
  // From YAML, no variable is named.
  assert.doesNotMatch(
    messageOf(() => parseConfig({ listen_addr: "3014" })),
    /env/,
  );
});

Deno.test("issue 32: a YAML syntax error keeps the parser's code frame", () => {
  const message = messageOf(() => parseConfigYaml("a: 1\nb: [c\n", "x.yaml"));
  assert.match(message, /^Cannot parse "x\.yaml:3:1"/);
  assert.match(message, /\n\s*b: \[c\n/);
  assert.match(message, /\n\s*\^/);
});

Deno.test("issue 32: checkConfig lists every problem: unknown key, type, env, cross-key rules", () => {
  const check = checkConfig({
    listen_address: "x",
    dev_mode: "yes",
    mcp: { path: "nope", oauth: { enabled: true } },
    cors: { allow_credentials: true },
  }, { env: { LISTEN_ADDR: "3014" } });
  assert.equal(check.config, undefined);
  assert.deepEqual(check.problems.map((p) => p.details.path), [
    "listen_address",
    "dev_mode",
    "listen_addr",
    "mcp.path",
    "mcp.oauth.enabled",
    "cors.allow_credentials",
  ]);
  assert.match(check.problems[2]!.message, /env LISTEN_ADDR/);
  const valid = checkConfig({ dev_mode: true });
  assert.deepEqual(valid.problems, []);
  assert.equal(valid.config?.dev_mode, true);
});

Deno.test("issue 32: 0.0.0.0 advertises the machine's name, and the bound port follows", () => {
  const config = parseConfig({ listen_addr: "0.0.0.0:0" }, { hostname: "vm1" });
  assert.equal(config.mcp.server.base_url, "http://vm1:0");
  assert.equal(
    withBoundPort(config, 4123).mcp.server.base_url,
    "http://vm1:4123",
  );
  const set = parseConfig({
    listen_addr: "0.0.0.0:0",
    mcp: { server: { base_url: "https://g.example" } },
  });
  assert.equal(
    withBoundPort(set, 4123).mcp.server.base_url,
    "https://g.example",
  );
  const warned = startupWarnings(
    parseConfig({ listen_addr: "0.0.0.0:3002" }, { hostname: "vm1" }),
  );
  assert.ok(
    warned.some((w) => w.key === "mcp.server.base_url" && w.message.includes("http://vm1:3002")),
  );
  assert.ok(
    !startupWarnings(config, { baseUrlSet: true }).some((w) => w.key === "mcp.server.base_url"),
  );
});

Deno.test("issue 32: start-up warnings for a production config that is not locked down", () => {
  const keys = (raw: Record<string, unknown>) =>
    startupWarnings(parseConfig(raw)).map((w) => w.key).sort();
  assert.deepEqual(keys({ playground: { enabled: true } }), [
    "engine.request_tracing_public_key_file",
    "playground.enabled",
  ]);
  assert.deepEqual(
    keys({
      mcp: { enable_arbitrary_operations: true },
      engine: { enable_request_tracing: false },
    }),
    [
      "mcp.enable_arbitrary_operations",
    ],
  );
  assert.deepEqual(
    keys({ engine: { request_tracing_public_key_file: "k.pem" } }),
    [],
  );
  // dev_mode is a developer's machine: none of these.
  assert.deepEqual(
    keys({ dev_mode: true, mcp: { enable_arbitrary_operations: true } }),
    [],
  );
});

Deno.test("issue 32: a bind failure names the address, the key and its env variable", () => {
  const inUse = listenError(
    new Deno.errors.AddrInUse("Address already in use (os error 98)"),
    {
      key: "telemetry.metrics.prometheus.listen_addr",
      address: "127.0.0.1:8088",
    },
  );
  assert.equal(
    inUse.message,
    'Cannot listen on 127.0.0.1:8088 ("telemetry.metrics.prometheus.listen_addr", env TELEMETRY_METRICS_PROMETHEUS_LISTEN_ADDR): the address is already in use (another process listens there: stop it, or choose another port)',
  );
  assert.equal(inUse.details.path, "telemetry.metrics.prometheus.listen_addr");
});

Deno.test("issue 43: file uploads without CSRF prevention are warned about at start-up", () => {
  const keys = (raw: Record<string, unknown>) =>
    startupWarnings(parseConfig({ dev_mode: true, ...raw })).map((w) => w.key);
  assert.deepEqual(
    keys({ file_uploads: { enabled: true }, csrf_prevention: { enabled: false } }),
    ["csrf_prevention.enabled"],
  );
  assert.deepEqual(keys({ file_uploads: { enabled: true } }), []);
  assert.deepEqual(keys({ csrf_prevention: { enabled: false } }), []);
});
