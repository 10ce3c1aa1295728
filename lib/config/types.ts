/**
 * The typed, immutable router configuration. Key names are the YAML names
 * (Cosmo's where Cosmo has one), so one name means one idea in config, code,
 * docs and errors. Every leaf can also be set by an environment variable: the
 * key path upper-cased and joined with `_` (`mcp.oauth.scopes.tools_call` →
 * `MCP_OAUTH_SCOPES_TOOLS_CALL`); lists from env are comma or space separated.
 *
 * @module
 */

/** Log thresholds. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** One subgraph for the `compose` subcommand. */
export interface SubgraphSource {
  readonly name: string;
  readonly routing_url: string;
  /** Path of the subgraph SDL, relative to the config file. */
  readonly schema_file: string;
}

/** A header rule (Cosmo's shape). */
export type HeaderRule =
  | {
    readonly op: "propagate";
    /** Exact header name (case-insensitive). One of `named` / `matching`. */
    readonly named?: string;
    /** Regular expression over header names (case-insensitive). */
    readonly matching?: string;
    /** Send under this name instead. Only with `named`. */
    readonly rename?: string;
    /** Value to send when the client did not send the header. Only with `named`. */
    readonly default?: string;
  }
  | { readonly op: "set"; readonly name: string; readonly value: string };

/** `headers`: what is forwarded from client requests to subgraphs. */
export interface HeadersConfig {
  readonly all: { readonly request: readonly HeaderRule[] };
  readonly subgraphs: Readonly<Record<string, { readonly request: readonly HeaderRule[] }>>;
}

/** One JWKS key source: exactly one of `url`, `file`, `secret`. */
export interface JwksSource {
  readonly url?: string;
  readonly file?: string;
  /** Shared secret for HS256/384/512 (then `symmetric_algorithm` is required). */
  readonly secret?: string;
  readonly symmetric_algorithm?: "HS256" | "HS384" | "HS512";
  /** Milliseconds between refreshes of a URL source (YAML accepts `1m`, `30s`, `500ms`). */
  readonly refresh_interval_ms: number;
  /** Algorithms accepted from this source (pinned: no `none`, no HS/RS confusion). */
  readonly algorithms: readonly string[];
  /** Accepted `aud` values; empty means not checked. */
  readonly audiences: readonly string[];
}

/** `authentication`. */
export interface AuthenticationConfig {
  readonly jwt: {
    readonly jwks: readonly JwksSource[];
    /** Header carrying the token. */
    readonly header_name: string;
    /** Prefix before the token in that header. */
    readonly header_value_prefix: string;
  };
}

/** `authorization`: `@authenticated` / `@requiresScopes` on GraphQL and Connect requests. */
export interface AuthorizationConfig {
  readonly require_authentication: boolean;
  readonly reject_operation_if_unauthorized: boolean;
}

/** The six scope lists of spec §2.1. */
export interface ScopesConfig {
  readonly initialize: readonly string[];
  readonly tools_list: readonly string[];
  readonly tools_call: readonly string[];
  readonly execute_graphql: readonly string[];
  readonly get_operation_info: readonly string[];
  readonly get_schema: readonly string[];
}

/** `mcp`. */
export interface McpConfig {
  readonly enabled: boolean;
  readonly graph_name: string;
  /** Path of the MCP endpoint on the main listener. */
  readonly path: string;
  readonly server: { readonly base_url: string };
  readonly exclude_mutations: boolean;
  readonly enable_arbitrary_operations: boolean;
  readonly expose_schema: boolean;
  readonly omit_tool_name_prefix: boolean;
  /** HMAC secret for `Mcp-Session-Id` (env `MCP_SESSION_SECRET`); random per process when empty. */
  readonly session_secret: string;
  readonly oauth: {
    readonly enabled: boolean;
    readonly authorization_server_urls: readonly string[];
    readonly scopes: ScopesConfig;
    readonly scope_challenge_include_token_scopes: boolean;
    readonly max_scope_combinations: number;
  };
}

/** `connect_rpc`. */
export interface ConnectRpcConfig {
  readonly enabled: boolean;
  readonly package: string;
  readonly service: string;
  /** `Cache-Control: max-age` of GET responses, seconds. */
  readonly get_cache_max_age: number;
  /** Largest request body or GET `message`, bytes after decompression. */
  readonly max_message_bytes: number;
}

/** `engine`. */
export interface EngineConfig {
  readonly enable_request_tracing: boolean;
  readonly force_unauthenticated_request_tracing: boolean;
  /** PEM SPKI ES256 public key that verifies `X-GW-Token`. */
  readonly request_tracing_public_key_file: string;
  readonly request_tracing_issuer: string;
  readonly request_tracing_audience: string;
  /** Share one response among identical in-flight subgraph requests. */
  readonly enable_single_flight: boolean;
  /** Per-subgraph-request timeout, milliseconds. */
  readonly subgraph_request_timeout_ms: number;
  /** Plans kept in the plan cache. */
  readonly plan_cache_size: number;
}

/** `cors`. */
export interface CorsConfig {
  readonly enabled: boolean;
  readonly allow_origins: readonly string[];
  readonly allow_headers: readonly string[];
  readonly expose_headers: readonly string[];
  readonly allow_credentials: boolean;
  readonly max_age_seconds: number;
}

/** `playground`. */
export interface PlaygroundConfig {
  /** Default: on in dev mode, off otherwise. */
  readonly enabled: boolean;
}

/** The whole configuration. */
export interface Config {
  /** `host:port` of the one listener. */
  readonly listen_addr: string;
  readonly graphql_path: string;
  readonly dev_mode: boolean;
  readonly log_level: LogLevel;
  /** Worker processes/isolates serving the listener (1 = no extra workers). */
  readonly workers: number;
  readonly supergraph_path: string;
  readonly operations_dir: string;
  /** Largest accepted request body, bytes. */
  readonly max_request_body_bytes: number;
  readonly subgraphs: readonly SubgraphSource[];
  readonly headers: HeadersConfig;
  readonly authentication: AuthenticationConfig;
  readonly authorization: AuthorizationConfig;
  readonly cors: CorsConfig;
  readonly mcp: McpConfig;
  readonly connect_rpc: ConnectRpcConfig;
  readonly engine: EngineConfig;
  readonly playground: PlaygroundConfig;
}
