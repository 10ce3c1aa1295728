import assert from "node:assert/strict";
import { join } from "node:path";
import {
  configEnvKeys,
  loadConfig,
  parseConfig,
  resolveConfigPath,
  withBoundPort,
} from "../../lib/config/mod.ts";
import { RouterError } from "../../lib/errors.ts";

/** Asserts a CONFIG_INVALID error whose details.path is `path` and whose message names it. */
function assertConfigError(fn: () => unknown, path: string, fragment?: RegExp): RouterError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof RouterError, `expected a RouterError, got ${caught}`);
  assert.equal(caught.code, "CONFIG_INVALID");
  assert.equal(caught.details.path, path);
  // The message names the key as the user wrote it (`request_timeout`, not `request_timeout_ms`).
  const named = (caught.details.written as string | undefined) ?? path;
  assert.ok(caught.message.includes(`"${named}"`), `message names "${named}": ${caught.message}`);
  if (named !== path) assert.ok(!caught.message.includes(`"${path}"`), caught.message);
  if (fragment) assert.match(caught.message, fragment);
  return caught;
}

const JWKS_URL = { url: "https://idp.example/.well-known/jwks.json" };

Deno.test("DESIGN §2: an empty config gets the documented defaults", () => {
  const config = parseConfig(undefined);
  assert.equal(config.listen_addr, "localhost:3002");
  assert.equal(config.graphql_path, "/graphql");
  assert.equal(config.dev_mode, false);
  assert.equal(config.log_level, "info");
  assert.equal(config.supergraph_path, "schema/supergraph.graphql");
  assert.equal(config.operations_dir, "operations");
  assert.equal(config.max_request_body_bytes, 5_000_000);
  assert.equal(config.mcp.enabled, true);
  assert.equal(config.mcp.path, "/mcp");
  assert.equal(config.mcp.graph_name, "mygraph");
  assert.equal(config.mcp.enable_arbitrary_operations, false);
  assert.equal(config.mcp.expose_schema, false);
  assert.equal(config.mcp.oauth.enabled, false);
  assert.deepEqual(config.mcp.oauth.scopes, {
    initialize: [],
    tools_list: [],
    tools_call: [],
    execute_graphql: [],
    get_operation_info: [],
    get_schema: [],
  });
  assert.equal(config.mcp.oauth.scope_challenge_include_token_scopes, false);
  assert.equal(config.mcp.oauth.scope_challenge_all_levels, false);
  assert.equal(config.mcp.oauth.max_scope_combinations, 2048);
  assert.equal(config.connect_rpc.enabled, true);
  assert.equal(config.connect_rpc.package, "service.v1");
  assert.equal(config.connect_rpc.service, "GraphService");
  assert.equal(config.engine.enable_request_tracing, true);
  assert.equal(config.engine.force_unauthenticated_request_tracing, false);
  assert.equal(config.engine.request_tracing_public_key_file, "");
  assert.equal(config.engine.subgraph_request_timeout_ms, 30_000);
  assert.deepEqual(config.authentication.jwt.jwks, []);
  assert.equal(config.authentication.jwt.header_name, "Authorization");
  assert.deepEqual(config.headers, { all: { request: [], response: [] }, subgraphs: {} });
  assert.deepEqual(config.batching, { enabled: false, mode: "batch_http_link", maximum_size: 10 });
  assert.deepEqual(config.file_uploads, {
    enabled: false,
    max_file_size: 50_000_000,
    max_files: 10,
  });
  assert.deepEqual(config.override_labels, {});
  assert.equal(config.cors.enabled, true);
});

Deno.test("DESIGN §2: the config is deeply immutable", () => {
  const config = parseConfig({ mcp: { oauth: { scopes: { initialize: ["a"] } } } });
  assert.ok(Object.isFrozen(config));
  assert.ok(Object.isFrozen(config.mcp.oauth.scopes.initialize));
  assert.throws(() => {
    (config.mcp.oauth.scopes.initialize as string[]).push("b");
  }, TypeError);
});

Deno.test("issue 2: playground.enabled defaults to dev_mode; an explicit value wins", () => {
  assert.equal(parseConfig({ dev_mode: true }).playground.enabled, true);
  assert.equal(parseConfig({}).playground.enabled, false);
  assert.equal(
    parseConfig({ dev_mode: true, playground: { enabled: false } }).playground.enabled,
    false,
  );
  assert.equal(parseConfig({}, { env: { DEV_MODE: "true" } }).playground.enabled, true);
});

Deno.test("issue 2: mcp.server.base_url defaults to http://<listen_addr>", () => {
  assert.equal(parseConfig({}).mcp.server.base_url, "http://localhost:3002");
  assert.equal(
    parseConfig({ listen_addr: "0.0.0.0:8080" }).mcp.server.base_url,
    "http://localhost:8080",
  );
  assert.equal(
    parseConfig({ mcp: { server: { base_url: "https://api.example/" } } }).mcp.server.base_url,
    "https://api.example",
  );
  const bound = withBoundPort(parseConfig({ listen_addr: "127.0.0.1:0" }), 41234);
  assert.equal(bound.listen_addr, "127.0.0.1:41234");
  assert.equal(bound.mcp.server.base_url, "http://127.0.0.1:41234");
  const explicit = withBoundPort(
    parseConfig({ listen_addr: "127.0.0.1:0", mcp: { server: { base_url: "https://x.example" } } }),
    41234,
  );
  assert.equal(explicit.mcp.server.base_url, "https://x.example");
});

Deno.test("DESIGN §2: env overrides the named leaves and wins over YAML", () => {
  const config = parseConfig({ listen_addr: "localhost:1", dev_mode: false, log_level: "error" }, {
    env: {
      LISTEN_ADDR: "127.0.0.1:4000",
      DEV_MODE: "TRUE",
      SUPERGRAPH_PATH: "/abs/super.graphql",
      OPERATIONS_DIR: "ops",
      MCP_ENABLED: "false",
      MCP_OAUTH_SCOPES_INITIALIZE: "mcp:init, mcp:read",
      MCP_OAUTH_SCOPES_TOOLS_CALL: "a b\tc",
      MCP_SERVER_BASE_URL: "https://mcp.example",
      ENGINE_ENABLE_REQUEST_TRACING: "false",
      ENGINE_FORCE_UNAUTHENTICATED_REQUEST_TRACING: "true",
      LOG_LEVEL: "debug",
      MCP_SESSION_SECRET: "s3cret",
      MAX_REQUEST_BODY_BYTES: "1MB",
      ENGINE_SUBGRAPH_REQUEST_TIMEOUT: "1m",
    },
  });
  assert.equal(config.listen_addr, "127.0.0.1:4000");
  assert.equal(config.dev_mode, true);
  assert.equal(config.supergraph_path, "/abs/super.graphql");
  assert.equal(config.operations_dir, "ops");
  assert.equal(config.mcp.enabled, false);
  assert.deepEqual(config.mcp.oauth.scopes.initialize, ["mcp:init", "mcp:read"]);
  assert.deepEqual(config.mcp.oauth.scopes.tools_call, ["a", "b", "c"]);
  assert.equal(config.mcp.server.base_url, "https://mcp.example");
  assert.equal(config.engine.enable_request_tracing, false);
  assert.equal(config.engine.force_unauthenticated_request_tracing, true);
  assert.equal(config.log_level, "debug");
  assert.equal(config.mcp.session_secret, "s3cret");
  assert.equal(config.max_request_body_bytes, 1_000_000);
  assert.equal(config.engine.subgraph_request_timeout_ms, 60_000);
  // An empty variable leaves a derived default alone.
  const derived = parseConfig({}, { env: { MCP_SERVER_BASE_URL: "", LISTEN_ADDR: "127.0.0.1:5" } });
  assert.equal(derived.mcp.server.base_url, "http://127.0.0.1:5");
});

Deno.test("DESIGN §2: every leaf outside lists of objects has a working env name", () => {
  // Values that pass validation, per key or per kind.
  const special: Record<string, [string, unknown]> = {
    listen_addr: ["127.0.0.1:9", "127.0.0.1:9"],
    graphql_path: ["/gql", "/gql"],
    "mcp.path": ["/tools", "/tools"],
    "mcp.server.base_url": ["https://m.example", "https://m.example"],
    "connect_rpc.package": ["acme.v2", "acme.v2"],
    "connect_rpc.service": ["AcmeService", "AcmeService"],
    "cors.allow_credentials": ["false", false],
    "mcp.oauth.enabled": ["false", false],
    "authorization.require_authentication": ["false", false],
    "mcp.oauth.authorization_server_urls": ["https://as.example", ["https://as.example"]],
    log_level: ["warn", "warn"],
    "subgraph_error_propagation.mode": ["pass-through", "pass-through"],
    "engine.subgraph_transport": ["fetch", "fetch"],
    "batching.mode": ["batch_http_link", "batch_http_link"],
    "demand_control.mode": ["enforce", "enforce"],
    "automatic_persisted_queries.storage.provider_id": ["", ""],
    "rate_limit.storage.provider_id": ["", ""],
    "rate_limit.key": ["header:X-Api-Key", "header:X-Api-Key"],
    "rate_limit.trusted_proxies": ["10.0.0.0/8,::1", ["10.0.0.0/8", "::1"]],
    "entity_cache.private_id": ["header:X-User", "header:X-User"],
    "entity_cache.storage.provider_id": ["", ""],
    "entity_cache.invalidation.enabled": ["false", false],
    "entity_cache.invalidation.path": ["/invalidate", "/invalidate"],
    "supergraph_source.kind": ["file", "file"],
    "supergraph_source.endpoints": ["https://u.example/", ["https://u.example/"]],
    // Each needs the others (tls_config_test.ts sets them together).
    "tls.server.cert_file": ["", ""],
    "tls.server.key_file": ["", ""],
    "tls.server.client_ca_file": ["", ""],
    "tls.server.require_client_cert": ["false", false],
  };
  const byKind: Record<string, [string, unknown]> = {
    string: ["from-env", "from-env"],
    boolean: ["true", true],
    int: ["7", 7],
    size: ["2KiB", 2048],
    duration: ["2s", 2000],
    ratio: ["0.25", 0.25],
    list: ["x,y", ["x", "y"]],
  };
  const keys = configEnvKeys();
  assert.ok(keys.length >= 50, `expected the whole schema, got ${keys.length} keys`);
  for (const key of keys) {
    const [text, want] = special[key.path] ?? byKind[key.kind] ?? ["", undefined];
    assert.notEqual(want, undefined, `no sample value for ${key.path} (${key.kind})`);
    const config = parseConfig({}, { env: { [key.env]: text } });
    // deno-lint-ignore no-explicit-any
    const got = key.path.split(".").reduce((node: any, part) => node[part], config);
    assert.deepEqual(got, want, `${key.env} sets ${key.path}`);
  }
});

Deno.test("DESIGN §2: durations (1m, 30s, 500ms) and sizes (5MB) are read into _ms and bytes", () => {
  const config = parseConfig({
    max_request_body_bytes: "5MB",
    connect_rpc: { max_message_bytes: "1MiB" },
    engine: { subgraph_request_timeout: "500ms" },
    authentication: {
      jwt: {
        jwks: [
          { ...JWKS_URL, refresh_interval: "1m" },
          { ...JWKS_URL, refresh_interval: "30s" },
          { ...JWKS_URL, refresh_interval_ms: 1500 },
        ],
      },
    },
  });
  assert.equal(config.max_request_body_bytes, 5_000_000);
  assert.equal(config.connect_rpc.max_message_bytes, 1_048_576);
  assert.equal(config.engine.subgraph_request_timeout_ms, 500);
  assert.deepEqual(config.authentication.jwt.jwks.map((s) => s.refresh_interval_ms), [
    60_000,
    30_000,
    1500,
  ]);
});

Deno.test("DESIGN §2: jwks sources get pinned algorithms by kind", () => {
  const config = parseConfig({
    authentication: {
      jwt: { jwks: [JWKS_URL, { secret: "k", symmetric_algorithm: "HS256" }] },
    },
  });
  const [url, secret] = config.authentication.jwt.jwks;
  assert.ok(url?.algorithms.includes("RS256") && url.algorithms.includes("ES256"));
  assert.ok(!url?.algorithms.some((a) => a.startsWith("HS")));
  assert.deepEqual(secret?.algorithms, ["HS256"]);
});

Deno.test("issue 2: relative paths resolve against the config file's folder", () => {
  const config = parseConfig({
    supergraph_path: "schema/s.graphql",
    operations_dir: "/abs/ops",
    engine: { request_tracing_public_key_file: "keys/trace.pem" },
    subgraphs: [{ name: "a", routing_url: "http://127.0.0.1:1/graphql", schema_file: "a.graphql" }],
  }, { baseDir: "/etc/gw" });
  assert.equal(config.supergraph_path, "/etc/gw/schema/s.graphql");
  assert.equal(config.operations_dir, "/abs/ops");
  assert.equal(config.engine.request_tracing_public_key_file, "/etc/gw/keys/trace.pem");
  assert.equal(config.subgraphs[0]?.schema_file, "/etc/gw/a.graphql");
});

Deno.test("DESIGN §2: an unknown key stops start-up naming the key and its path", () => {
  assertConfigError(() => parseConfig({ listen: "x" }), "listen", /unknown key "listen"/);
  const error = assertConfigError(
    () => parseConfig({ mcp: { oauth: { scope: {} } } }),
    "mcp.oauth.scope",
    /unknown key "scope" \(did you mean "scopes"\?\)/,
  );
  assert.equal(error.details.path, "mcp.oauth.scope");
  assertConfigError(
    () => parseConfig({ authentication: { jwt: { jwks: [{ ...JWKS_URL, ttl: 1 }] } } }),
    "authentication.jwt.jwks[0].ttl",
  );
});

Deno.test("DESIGN §2: a wrong type stops start-up naming the key path", () => {
  assertConfigError(
    () => parseConfig({ mcp: { oauth: { scopes: { initialize: "mcp:init" } } } }),
    "mcp.oauth.scopes.initialize",
    /^Cannot read "mcp\.oauth\.scopes\.initialize": expected a list of strings$/,
  );
  assertConfigError(
    () => parseConfig({ mcp: { enabled: "yes" } }),
    "mcp.enabled",
    /expected a boolean/,
  );
  assertConfigError(() => parseConfig({ listen_addr: 3002 }), "listen_addr", /expected a string/);
  assertConfigError(() => parseConfig({ workers: 0 }), "workers", /whole number of at least 1/);
  assertConfigError(
    () => parseConfig({ log_level: "loud" }),
    "log_level",
    /expected one of "debug"/,
  );
  assertConfigError(
    () => parseConfig({ max_request_body_bytes: "lots" }),
    "max_request_body_bytes",
    /size/,
  );
  assertConfigError(() => parseConfig({ mcp: "on" }), "mcp", /expected a mapping/);
  assertConfigError(() => parseConfig({ subgraphs: {} }), "subgraphs", /expected a list/);
  assertConfigError(
    () =>
      parseConfig({
        authentication: { jwt: { jwks: [{ ...JWKS_URL, refresh_interval: "soon" }] } },
      }),
    "authentication.jwt.jwks[0].refresh_interval_ms",
    /"authentication\.jwt\.jwks\[0\]\.refresh_interval": expected a duration/,
  );
  assertConfigError(() => parseConfig([]), "(root)", /expected a mapping/);
});

Deno.test("DESIGN §2: a wrong env value names the key path and the variable", () => {
  const error = assertConfigError(
    () => parseConfig({}, { env: { DEV_MODE: "yes" } }),
    "dev_mode",
    /\(env DEV_MODE\): expected a boolean \(true or false\), got "yes"/,
  );
  assert.equal(error.details.env, "DEV_MODE");
  assertConfigError(
    () => parseConfig({}, { env: { ENGINE_SUBGRAPH_REQUEST_TIMEOUT: "forever" } }),
    "engine.subgraph_request_timeout_ms",
    /ENGINE_SUBGRAPH_REQUEST_TIMEOUT/,
  );
  assertConfigError(
    () => parseConfig({}, { env: { LISTEN_ADDR: "nohost" } }),
    "listen_addr",
    /host:port/,
  );
});

Deno.test("DESIGN §2: impossible combinations stop start-up naming the key path", () => {
  assertConfigError(
    () => parseConfig({ mcp: { oauth: { enabled: true } } }),
    "mcp.oauth.enabled",
    /at least one key source/,
  );
  assertConfigError(
    () => parseConfig({}, { env: { MCP_OAUTH_ENABLED: "true" } }),
    "mcp.oauth.enabled",
  );
  // Either jwks list satisfies MCP OAuth.
  assert.equal(
    parseConfig({ mcp: { oauth: { enabled: true, jwks: [JWKS_URL] } } }).mcp.oauth.enabled,
    true,
  );
  assert.equal(
    parseConfig({
      mcp: { oauth: { enabled: true } },
      authentication: { jwt: { jwks: [JWKS_URL] } },
    })
      .mcp.oauth.enabled,
    true,
  );
  assertConfigError(
    () => parseConfig({ authentication: { jwt: { jwks: [{ refresh_interval: "1m" }] } } }),
    "authentication.jwt.jwks[0]",
    /needs one of "url", "file" or "secret"/,
  );
  assertConfigError(
    () => parseConfig({ mcp: { oauth: { jwks: [{ ...JWKS_URL, file: "jwks.json" }] } } }),
    "mcp.oauth.jwks[0]",
    /exactly one of .* got "url" and "file"/,
  );
  assertConfigError(
    () => parseConfig({ authentication: { jwt: { jwks: [{ ...JWKS_URL, secret: "k" }] } } }),
    "authentication.jwt.jwks[0]",
    /got "url" and "secret"/,
  );
  assertConfigError(
    () => parseConfig({ authentication: { jwt: { jwks: [{ secret: "k" }] } } }),
    "authentication.jwt.jwks[0].symmetric_algorithm",
    /needs "symmetric_algorithm"/,
  );
  assertConfigError(
    () =>
      parseConfig({
        authentication: { jwt: { jwks: [{ ...JWKS_URL, algorithms: ["RS256", "HS256"] }] } },
      }),
    "authentication.jwt.jwks[0].algorithms",
    /"HS256" is a shared-secret algorithm .* "url" key source/,
  );
  assertConfigError(
    () =>
      parseConfig({ authentication: { jwt: { jwks: [{ ...JWKS_URL, algorithms: ["none"] }] } } }),
    "authentication.jwt.jwks[0].algorithms[0]",
    /unsupported algorithm "none"/,
  );
  assertConfigError(
    () => parseConfig({ connect_rpc: { service: "Graph" } }),
    "connect_rpc.service",
    /ending in "Service"/,
  );
  assertConfigError(
    () => parseConfig({ connect_rpc: { package: "service" } }),
    "connect_rpc.package",
    /version like "v1"/,
  );
  assert.equal(
    parseConfig({ connect_rpc: { enabled: false, service: "Graph" } }).connect_rpc.enabled,
    false,
  );
  assertConfigError(() => parseConfig({ listen_addr: "localhost" }), "listen_addr", /host:port/);
  assertConfigError(() => parseConfig({ listen_addr: "localhost:70000" }), "listen_addr");
  assertConfigError(() => parseConfig({ mcp: { path: "/graphql" } }), "mcp.path", /must differ/);
  assertConfigError(
    () => parseConfig({ graphql_path: "graphql" }),
    "graphql_path",
    /starting with "\/"/,
  );
  assertConfigError(
    () => parseConfig({ cors: { allow_credentials: true } }),
    "cors.allow_credentials",
    /origin "\*"/,
  );
  assertConfigError(
    () =>
      parseConfig({
        headers: { all: { request: [{ op: "propagate", named: "a", matching: "b" }] } },
      }),
    "headers.all.request[0]",
    /exactly one of "named" or "matching"/,
  );
  assertConfigError(
    () =>
      parseConfig({
        headers: { subgraphs: { products: { request: [{ op: "set", name: "x" }] } } },
      }),
    "headers.subgraphs.products.request[0].value",
  );
  assertConfigError(
    () =>
      parseConfig({ engine: { subgraph_request_timeout: "1s", subgraph_request_timeout_ms: 5 } }),
    "engine.subgraph_request_timeout_ms",
    /not both/,
  );
  assertConfigError(
    () =>
      parseConfig({
        subgraphs: [{ routing_url: "http://127.0.0.1:1/", schema_file: "a.graphql" }],
      }),
    "subgraphs[0].name",
    /required/,
  );
});

Deno.test("issue 2: CONFIG_PATH picks the config file when --config is absent", () => {
  assert.equal(resolveConfigPath(undefined, { CONFIG_PATH: "/etc/gw.yaml" }), "/etc/gw.yaml");
  assert.equal(resolveConfigPath("cli.yaml", { CONFIG_PATH: "/etc/gw.yaml" }), "cli.yaml");
  assert.equal(resolveConfigPath(undefined, {}), "config.yaml");
});

Deno.test("issue 2: loadConfig reads YAML, resolves paths and checks named files", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "schema"));
    await Deno.writeTextFile(join(dir, "schema", "supergraph.graphql"), "type Query { a: Int }\n");
    const path = join(dir, "config.yaml");
    await Deno.writeTextFile(
      path,
      "dev_mode: true\nmcp:\n  oauth:\n    scopes:\n      initialize: [mcp:init]\n",
    );
    const config = await loadConfig(path, { env: { LOG_LEVEL: "warn" } });
    assert.equal(config.supergraph_path, join(dir, "schema", "supergraph.graphql"));
    assert.equal(config.operations_dir, join(dir, "operations"));
    assert.deepEqual(config.mcp.oauth.scopes.initialize, ["mcp:init"]);
    assert.equal(config.log_level, "warn");

    // A missing supergraph file names supergraph_path.
    await assert.rejects(
      loadConfig(path, { env: { SUPERGRAPH_PATH: "missing.graphql" } }),
      (error: RouterError) => {
        assert.equal(error.code, "CONFIG_INVALID");
        assert.equal(error.details.path, "supergraph_path");
        assert.match(error.message, /"supergraph_path": file ".*missing\.graphql": no such file/);
        return true;
      },
    );
    // A missing trace key file names its key.
    await Deno.writeTextFile(path, "engine:\n  request_tracing_public_key_file: keys/none.pem\n");
    await assert.rejects(loadConfig(path), {
      code: "CONFIG_INVALID",
      details: {
        path: "engine.request_tracing_public_key_file",
        file: join(dir, "keys", "none.pem"),
        notYet: true,
      },
    });
    // YAML syntax errors carry the line.
    await Deno.writeTextFile(path, "mcp:\n  enabled: [true\n");
    await assert.rejects(loadConfig(path), (error: RouterError) => {
      assert.equal(error.code, "CONFIG_INVALID");
      assert.match(error.message, /config\.yaml:\d+:\d+/);
      return true;
    });
    // Unknown keys in a file are named with their path.
    await Deno.writeTextFile(path, "engine:\n  enable_tracing: true\n");
    await assert.rejects(loadConfig(path), {
      code: "CONFIG_INVALID",
      details: { path: "engine.enable_tracing" },
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("issue 2: a missing config file is a CONFIG_INVALID naming the file", async () => {
  await assert.rejects(loadConfig("/nonexistent/gw/config.yaml"), (error: RouterError) => {
    assert.equal(error.code, "CONFIG_INVALID");
    assert.equal(error.details.path, "CONFIG_PATH");
    assert.match(
      error.message,
      /Cannot read config file "\/nonexistent\/gw\/config\.yaml": no such file/,
    );
    return true;
  });
});

Deno.test("issue 16: telemetry.tracing.sampling_rate takes a fraction from 0 to 1, from YAML and env", () => {
  assert.equal(
    parseConfig({ telemetry: { tracing: { sampling_rate: 0.01 } } }).telemetry.tracing
      .sampling_rate,
    0.01,
  );
  assert.equal(
    parseConfig({}, { env: { TELEMETRY_TRACING_SAMPLING_RATE: "0.5" } }).telemetry.tracing
      .sampling_rate,
    0.5,
  );
  assert.throws(() => parseConfig({ telemetry: { tracing: { sampling_rate: 1.5 } } }), {
    code: "CONFIG_INVALID",
    details: { path: "telemetry.tracing.sampling_rate" },
  });
  assert.throws(() => parseConfig({}, { env: { TELEMETRY_TRACING_SAMPLING_RATE: "-1" } }), {
    code: "CONFIG_INVALID",
  });
});

Deno.test("issue 15: a duration longer than a timer holds (2^31 - 1 ms) is refused, not an instant deadline", () => {
  // A longer setTimeout fires at once: every request would end with GATEWAY_TIMEOUT.
  const key = "traffic_shaping.router.request_timeout_ms";
  for (const value of [2 ** 31, "9999999999s", "600h"]) {
    assertConfigError(
      () => parseConfig({ traffic_shaping: { router: { request_timeout: value } } }),
      key,
      /at most 2147483647 ms/,
    );
  }
  assertConfigError(
    () => parseConfig({}, { env: { ENGINE_SUBGRAPH_REQUEST_TIMEOUT: "99999999999" } }),
    "engine.subgraph_request_timeout_ms",
    /at most 2147483647 ms/,
  );
  const longest = parseConfig({ traffic_shaping: { router: { request_timeout: 2 ** 31 - 1 } } });
  assert.equal(longest.traffic_shaping.router.request_timeout_ms, 2 ** 31 - 1);
  assert.equal(
    parseConfig({ traffic_shaping: { router: { request_timeout: "240h" } } }).traffic_shaping
      .router.request_timeout_ms,
    864_000_000,
  );
});

Deno.test("config: a zero deadline or a zero-byte limit, which would fail every request, is refused with its floor", () => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [
      { traffic_shaping: { router: { request_timeout: "0s" } } },
      "traffic_shaping.router.request_timeout_ms",
      /at least 1 ms/,
    ],
    [
      { engine: { subgraph_request_timeout: 0 } },
      "engine.subgraph_request_timeout_ms",
      /at least 1 ms/,
    ],
    [{ max_request_body_bytes: 0 }, "max_request_body_bytes", /at least 1 byte$/],
    [{ engine: { max_response_bytes: "0MB" } }, "engine.max_response_bytes", /at least 1 byte$/],
    [
      { engine: { max_subgraph_response_bytes: 0 } },
      "engine.max_subgraph_response_bytes",
      /at least 1 byte$/,
    ],
    [
      { connect_rpc: { max_message_bytes: 0 } },
      "connect_rpc.max_message_bytes",
      /at least 1 byte$/,
    ],
    // Past 2^53 a size is no exact count (and no limit an operator meant).
    [
      { engine: { max_subgraph_response_bytes: "99999999999999999999GB" } },
      "engine.max_subgraph_response_bytes",
      /of at most 9007199254740991 bytes/,
    ],
    [
      { engine: { max_response_bytes: 2 ** 60 } },
      "engine.max_response_bytes",
      /of at most 9007199254740991 bytes/,
    ],
  ];
  for (const [raw, key, message] of cases) assertConfigError(() => parseConfig(raw), key, message);
  assertConfigError(
    () => parseConfig({}, { env: { TRAFFIC_SHAPING_ROUTER_REQUEST_TIMEOUT: "0ms" } }),
    "traffic_shaping.router.request_timeout_ms",
    /at least 1 ms/,
  );
  // 0 keeps its documented meaning where it has one: no budget, no fixed count.
  const off = parseConfig({
    engine: { max_concurrent_operations: 0 },
    traffic_shaping: { router: { max_in_flight_bytes: 0, max_buffered_body_bytes: 0 } },
  });
  assert.equal(off.engine.max_concurrent_operations, 0);
  assert.equal(off.traffic_shaping.router.max_buffered_body_bytes, 0);
});

Deno.test("issue 33: admission is adaptive by default; a fixed count only when set; env names derive from the keys", () => {
  const defaults = parseConfig({});
  assert.equal(defaults.engine.max_concurrent_operations, 0);
  assert.deepEqual(defaults.engine.adaptive_concurrency, {
    enabled: true,
    target_delay_ms: 20,
    min_concurrency: 8,
    max_concurrency: 1000,
  });
  const tuned = parseConfig({}, {
    env: {
      ENGINE_ADAPTIVE_CONCURRENCY_TARGET_DELAY: "50ms",
      ENGINE_ADAPTIVE_CONCURRENCY_MIN_CONCURRENCY: "4",
      ENGINE_MAX_CONCURRENT_OPERATIONS: "32",
    },
  });
  assert.equal(tuned.engine.adaptive_concurrency.target_delay_ms, 50);
  assert.equal(tuned.engine.adaptive_concurrency.min_concurrency, 4);
  assert.equal(tuned.engine.max_concurrent_operations, 32);
  assertConfigError(
    () => parseConfig({ engine: { adaptive_concurrency: { min_concurrency: 0 } } }),
    "engine.adaptive_concurrency.min_concurrency",
    /at least 1/,
  );
});

Deno.test("JWKS key sources: settings that would storm the provider or never load keys are refused, naming the key", () => {
  const jwks = (source: Record<string, unknown>) => () =>
    parseConfig({ authentication: { jwt: { jwks: [{ ...JWKS_URL, ...source }] } } });
  // interval 0 refilled the unknown-kid bucket every millisecond: any client sending random
  // kids made the router refetch the JWKS at its request rate.
  for (const interval of ["0s", "999ms"]) {
    assertConfigError(
      jwks({ refresh_unknown_kid: { interval } }),
      "authentication.jwt.jwks[0].refresh_unknown_kid.interval_ms",
      /at least 1000 ms/,
    );
  }
  // A fetch timeout of 0 aborted every fetch at once: keys never loaded, every token 503.
  assertConfigError(
    jwks({ fetch_timeout: "0s" }),
    "authentication.jwt.jwks[0].fetch_timeout_ms",
    /at least 1 ms/,
  );
  assertConfigError(
    () =>
      parseConfig({
        mcp: { oauth: { jwks: [{ ...JWKS_URL, refresh_unknown_kid: { interval: "0s" } }] } },
      }),
    "mcp.oauth.jwks[0].refresh_unknown_kid.interval_ms",
    /at least 1000 ms/,
  );
  const ok = parseConfig({
    authentication: {
      jwt: {
        jwks: [{ ...JWKS_URL, refresh_unknown_kid: { interval: "1s" }, fetch_timeout: "1s" }],
      },
    },
  });
  assert.equal(ok.authentication.jwt.jwks[0]?.refresh_unknown_kid?.interval_ms, 1000);
});

Deno.test("issue 34: mcp.expose_schema follows introspection.enabled unless set", () => {
  assert.equal(parseConfig({}).mcp.expose_schema, false);
  assert.equal(parseConfig({ introspection: { enabled: true } }).mcp.expose_schema, true);
  assert.equal(parseConfig({ dev_mode: true }).mcp.expose_schema, true);
  const off = parseConfig({ dev_mode: true, introspection: { enabled: false } });
  assert.equal(off.mcp.expose_schema, false, "introspection off: no get_schema");
  const explicit = parseConfig({ introspection: { enabled: false }, mcp: { expose_schema: true } });
  assert.equal(explicit.mcp.expose_schema, true, "an explicit setting wins");
  const env = parseConfig({ dev_mode: true }, { env: { MCP_EXPOSE_SCHEMA: "false" } });
  assert.equal(env.mcp.expose_schema, false);
});

Deno.test("issue 34: retries are on by default, held to Apollo Router's retry budget; query tokens are off", () => {
  const config = parseConfig({});
  assert.deepEqual(config.traffic_shaping.all.retry, {
    enabled: true,
    max_attempts: 2,
    interval_ms: 100,
    max_duration_ms: 10_000,
    ttl_ms: 10_000,
    min_per_sec: 10,
    retry_percent: 0.2,
  });
  assert.equal(config.authentication.jwt.allow_query_token, false);
});
