/**
 * Start-up warnings: configurations that start but are probably not what a
 * production deployment wants (issue 32). Pure: the config in, the warnings out;
 * `serve` logs them at `warn`.
 *
 * @module
 */
import type { Config } from "./types.ts";
import { isWildcardHost, parseListenAddr } from "./_values.ts";

/** One start-up warning: what is wrong, and the key that decides it. */
export interface ConfigWarning {
  /** The key path to change (`playground.enabled`). */
  readonly key: string;
  /** What it means and how to change it, in plain words. */
  readonly message: string;
}

/** Options for {@linkcode startupWarnings}. */
export interface StartupWarningOptions {
  /**
   * Whether `mcp.server.base_url` was set (YAML or env) rather than derived
   * from `listen_addr`.
   * @default {false}
   */
  readonly baseUrlSet?: boolean;
}

/**
 * The warnings a configuration deserves at start-up.
 *
 * @example The playground on outside dev_mode
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "./parse.ts";
 * import { startupWarnings } from "./warnings.ts";
 * const config = parseConfig({ dev_mode: false, playground: { enabled: true } });
 * assert.ok(startupWarnings(config).some((w) => w.key === "playground.enabled"));
 * assert.deepEqual(startupWarnings(parseConfig({ dev_mode: true })).map((w) => w.key), []);
 * ```
 * @param config The configuration.
 * @param options Whether `mcp.server.base_url` was set by hand.
 * @returns The warnings, possibly none.
 */
export function startupWarnings(
  config: Config,
  options: StartupWarningOptions = {},
): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  if (!config.dev_mode && config.playground.enabled) {
    warnings.push({
      key: "playground.enabled",
      message:
        "dev_mode is off but the playground is on: it serves an in-browser IDE (and introspection-based tooling) to anyone who reaches the router; set playground.enabled: false (PLAYGROUND_ENABLED=false) in production",
    });
  }
  const mcp = config.mcp;
  if (!config.dev_mode && mcp.enabled && !mcp.oauth.enabled && mcp.enable_arbitrary_operations) {
    warnings.push({
      key: "mcp.enable_arbitrary_operations",
      message:
        "MCP runs without OAuth (mcp.oauth.enabled: false) while its execute_graphql tool is on (mcp.enable_arbitrary_operations: true): any client that reaches the MCP endpoint can run any operation; turn on mcp.oauth or set mcp.enable_arbitrary_operations: false",
    });
  }
  const rateLimit = config.rate_limit;
  if (
    config.tls.server.cert_file !== "" && config.tls.server.http2 && rateLimit.enabled &&
    rateLimit.key !== "token_subject" && !rateLimit.key.startsWith("header:")
  ) {
    warnings.push({
      key: "tls.server.http2",
      message:
        "rate_limit keys requests by client_ip, but over HTTP/2 the router does not learn the client's address: every HTTP/2 client shares one limit (ip:unknown); set tls.server.http2: false, or key rate_limit by a header or token_subject",
    });
  }
  const engine = config.engine;
  if (
    engine.enable_request_tracing && !config.dev_mode &&
    !engine.force_unauthenticated_request_tracing && engine.request_tracing_public_key_file === ""
  ) {
    warnings.push({
      key: "engine.request_tracing_public_key_file",
      message:
        "Advanced Request Tracing is enabled without a token key: no request can be traced outside dev_mode; write a key pair with `gw-router trace-token --generate-key --out DIR` and set engine.request_tracing_public_key_file, or set engine.enable_request_tracing: false",
    });
  }
  if (config.file_uploads.enabled && !config.csrf_prevention.enabled) {
    warnings.push({
      key: "csrf_prevention.enabled",
      message:
        "File uploads are on (file_uploads.enabled) without CSRF prevention: a multipart request is a simple request, so any web page can make a browser send mutations with its cookies; set csrf_prevention.enabled: true",
    });
  }
  const address = parseListenAddr(config.listen_addr);
  if (
    mcp.enabled && options.baseUrlSet !== true && address !== undefined &&
    isWildcardHost(address.hostname)
  ) {
    warnings.push({
      key: "mcp.server.base_url",
      message:
        `listen_addr binds every interface, so the advertised URL (MCP OAuth metadata, logs) is ${mcp.server.base_url}, built from this machine's name; set mcp.server.base_url (MCP_SERVER_BASE_URL) to the URL clients use`,
    });
  }
  return warnings;
}
