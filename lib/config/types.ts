/**
 * The typed, immutable router configuration. Key names are the YAML names
 * (Cosmo's where Cosmo has one), so one name means one idea in config, code,
 * docs and errors. Every leaf can also be set by an environment variable: the
 * key path upper-cased and joined with `_` (`mcp.oauth.scopes.tools_call` →
 * `MCP_OAUTH_SCOPES_TOOLS_CALL`); lists from env are comma or space separated.
 *
 * Over 600 lines on purpose: one interface per config section, in the order of
 * `_schema.ts`, so the two read side by side. Written by hand (named interfaces,
 * unions, JSDoc for editors); `tests/unit/config_types_test.ts` fails, naming
 * the key, when it and the schema disagree on a key, its type or optionality.
 *
 * @module
 */

/** Log thresholds. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** One subgraph for the `compose` subcommand. */
export interface SubgraphSource {
  /** Subgraph name (`accounts`); becomes its `join__Graph` value. */
  readonly name: string;
  /** URL the router sends this subgraph's requests to. */
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

/** Header rules of requests to subgraphs and of their answers. */
export interface HeaderRules {
  /** Client headers → each subgraph request. */
  readonly request: readonly HeaderRule[];
  /** Subgraph answer headers → the client response (issue 43); absent: none. */
  readonly response?: readonly HeaderRule[];
}

/** `headers`: what is forwarded from client requests to subgraphs, and back. */
export interface HeadersConfig {
  /** Rules for every subgraph. */
  readonly all: HeaderRules;
  /** Rules per subgraph name, applied after `all`. */
  readonly subgraphs: Readonly<Record<string, HeaderRules>>;
}

/** One JWKS key source: exactly one of `url`, `file`, `secret`. */
export interface JwksSource {
  /** JWKS URL (refreshed every `refresh_interval_ms`). */
  readonly url?: string;
  /** JWKS file, resolved against the config file's folder. */
  readonly file?: string;
  /** Shared secret for HS256/384/512 (then `symmetric_algorithm` is required). */
  readonly secret?: string;
  /** Algorithm of `secret` (required with it). */
  readonly symmetric_algorithm?: "HS256" | "HS384" | "HS512";
  /** Milliseconds between refreshes of a URL source (YAML accepts `1m`, `30s`, `500ms`). */
  readonly refresh_interval_ms: number;
  /** Algorithms accepted from this source (pinned: no `none`, no HS/RS confusion). */
  readonly algorithms: readonly string[];
  /** Accepted `aud` values; empty means not checked (MCP: its own resource URL). */
  readonly audiences: readonly string[];
  /** Accepted `iss` values (YAML: a string or a list); empty means not checked. */
  readonly issuer: readonly string[];
  /** `typ` every token from this source must carry (e.g. `at+jwt`); `""`: not required. */
  readonly required_typ: string;
  /** Claims every token from this source must carry (default `exp`); empty: none. */
  readonly required_claims: readonly string[];
  /** Largest JWKS response body read from `url`, bytes. */
  readonly max_response_bytes: number;
  /** Timeout of one JWKS fetch, milliseconds. */
  readonly fetch_timeout_ms: number;
  /** Refetches caused by tokens with an unknown `kid` (a token bucket). */
  readonly refresh_unknown_kid: {
    readonly enabled: boolean;
    /** One refetch credit per interval, milliseconds. */
    readonly interval_ms: number;
    /** Credits held at most. */
    readonly burst: number;
    /** Longest a token request waits for a credit (before admission), milliseconds. */
    readonly max_wait_ms: number;
  };
}

/** `authentication`. */
export interface AuthenticationConfig {
  /** JWT bearer tokens. */
  readonly jwt: {
    /** Key sources; the first that verifies a token wins. */
    readonly jwks: readonly JwksSource[];
    /** Header carrying the token. */
    readonly header_name: string;
    /** Prefix before the token in that header. */
    readonly header_value_prefix: string;
    /** Leeway for `exp`, `nbf` and a future `iat`, milliseconds. */
    readonly clock_skew_ms: number;
    /** `/health/ready` stays 503 until every URL key source has loaded once. */
    readonly readiness_requires_keys: boolean;
    /**
     * Read a token from `?access_token=` on GET requests without the header
     * (RFC 6750 §2.3; discouraged). Off: a token in the URL is refused (400).
     */
    readonly allow_query_token: boolean;
    /**
     * A cookie carrying the token when the header is absent; `""`: off. Read only
     * from preflighted requests (CSRF), never on MCP.
     */
    readonly cookie_name: string;
  };
}

/** `authorization`: `@authenticated` / `@requiresScopes` on GraphQL and Connect requests. */
export interface AuthorizationConfig {
  /** Refuse GraphQL and Connect requests without a valid token. */
  readonly require_authentication: boolean;
  /** Refuse the whole operation (instead of nulling fields) when a field is not authorized. */
  readonly reject_operation_if_unauthorized: boolean;
}

/** The six scope lists of spec §2.1. */
export interface ScopesConfig {
  /** Scopes required on every MCP request. */
  readonly initialize: readonly string[];
  /** Additional scopes for `tools/list`. */
  readonly tools_list: readonly string[];
  /** Additional scopes for `tools/call` (any tool). */
  readonly tools_call: readonly string[];
  /** Additional scopes for the `execute_graphql` tool. */
  readonly execute_graphql: readonly string[];
  /** Additional scopes for the `get_operation_info` tool. */
  readonly get_operation_info: readonly string[];
  /** Additional scopes for the `get_schema` tool. */
  readonly get_schema: readonly string[];
}

/** `mcp`. */
export interface McpConfig {
  /** Serve the MCP tool server. */
  readonly enabled: boolean;
  /** Name of the graph shown to MCP clients. */
  readonly graph_name: string;
  /** Path of the MCP endpoint on the main listener. */
  readonly path: string;
  /** Public address of the router as MCP clients see it. */
  readonly server: { readonly base_url: string };
  /** Do not expose mutations as tools. */
  readonly exclude_mutations: boolean;
  /** Register `execute_graphql` (inline GraphQL). */
  readonly enable_arbitrary_operations: boolean;
  /** Register `get_schema`; unset, it follows `introspection.enabled`. */
  readonly expose_schema: boolean;
  /** Name tools `<snake_case name>` instead of `execute_operation_<snake_case name>`. */
  readonly omit_tool_name_prefix: boolean;
  /** HMAC secret for `Mcp-Session-Id` (env `MCP_SESSION_SECRET`); random per process when empty. */
  readonly session_secret: string;
  /** OAuth 2.0 protection of the MCP endpoint. */
  readonly oauth: {
    /** Require bearer tokens (needs a key source). */
    readonly enabled: boolean;
    /** Key sources for MCP tokens; empty means `authentication.jwt.jwks`. */
    readonly jwks: readonly JwksSource[];
    /** Authorization servers listed in the RFC 9728 metadata. */
    readonly authorization_server_urls: readonly string[];
    /** Scope gates of spec §2.1. */
    readonly scopes: ScopesConfig;
    /** Put the token's scopes into 403 `scope` challenges too (spec §7.3). */
    readonly scope_challenge_include_token_scopes: boolean;
    /** A 403 on `tools/call` names what every failing gate 2–4 level needs, not only the first (issue 17). */
    readonly scope_challenge_all_levels: boolean;
    /** Most OR-of-AND groups an operation's combined requirement may have. */
    readonly max_scope_combinations: number;
  };
}

/** `connect_rpc`. */
export interface ConnectRpcConfig {
  /** Serve Connect RPC. */
  readonly enabled: boolean;
  /** Protobuf package, ending in a version (`service.v1`). */
  readonly package: string;
  /** Protobuf service name, ending in `Service`. */
  readonly service: string;
  /** `Cache-Control: max-age` of GET responses, seconds. */
  readonly get_cache_max_age: number;
  /** Largest request body or GET `message`, bytes after decompression. */
  readonly max_message_bytes: number;
}

/** `engine`. */
export interface EngineConfig {
  /** Advanced Request Tracing on (`false` disables it entirely). */
  readonly enable_request_tracing: boolean;
  /** Trace without a signed token and without dev mode (logs a warning). */
  readonly force_unauthenticated_request_tracing: boolean;
  /** PEM SPKI ES256 public key that verifies `X-GW-Token`. */
  readonly request_tracing_public_key_file: string;
  /** Required `iss` of `X-GW-Token`; empty: not checked. */
  readonly request_tracing_issuer: string;
  /** Required `aud` of `X-GW-Token`; empty: not checked. */
  readonly request_tracing_audience: string;
  /** Extra header names masked in traces (besides the fixed list and the JWT header). */
  readonly request_tracing_masked_headers: readonly string[];
  /**
   * Header names whose values traces show; every other value is `****` (the
   * always-masked credentials and `request_tracing_masked_headers` even if listed).
   */
  readonly request_tracing_unmasked_headers: readonly string[];
  /** Longest accepted trace-token lifetime (`exp − iat`), milliseconds. */
  readonly request_tracing_max_token_age_ms: number;
  /** Share one response among identical in-flight subgraph requests. */
  readonly enable_single_flight: boolean;
  /** Send sibling entity fetches to one subgraph as one request (aliased `_entities` fields). */
  readonly batch_entity_fetches: boolean;
  /**
   * How subgraph requests go out: `http1`, the router's keep-alive HTTP/1.1
   * pool (plain `http:` URLs without a proxy in the environment; the others
   * use `fetch`), or `fetch` for every subgraph.
   */
  readonly subgraph_transport: "http1" | "fetch";
  /** Per-subgraph-request timeout, milliseconds. */
  readonly subgraph_request_timeout_ms: number;
  /** Plans kept in the plan cache. */
  readonly plan_cache_size: number;
  /**
   * A fixed count of operations executing at once per isolate (the others
   * wait in arrival order); 0 = no fixed count: the adaptive limit sizes
   * admission, or, with it disabled, no limit.
   */
  readonly max_concurrent_operations: number;
  /** The default admission: a concurrency limit sized by the event-loop delay (issue 33). */
  readonly adaptive_concurrency: AdaptiveConcurrencyConfig;
  /** Largest subgraph response body the router reads, bytes (a larger one is a SUBGRAPH_ERROR). */
  readonly max_subgraph_response_bytes: number;
  /** Estimated heap bytes of the plan cache (≈ 40 bytes per byte of document text per plan). */
  readonly execution_plan_cache_max_bytes: number;
  /** Estimated heap bytes of the parse + validation cache. */
  readonly parse_cache_max_bytes: number;
  /** Longer documents are parsed and planned per request, never cached. */
  readonly max_cached_document_bytes: number;
  /** Subgraph answer bytes one operation may read; more is a `RESPONSE_TOO_LARGE` (502). */
  readonly max_response_bytes: number;
}

/** `engine.adaptive_concurrency`: admission sized by what the process can do. */
export interface AdaptiveConcurrencyConfig {
  /** On unless `engine.max_concurrent_operations` sets a fixed count. */
  readonly enabled: boolean;
  /** Event-loop delay tolerated, ms: two samples in a row above it cut the limit. */
  readonly target_delay_ms: number;
  /** The limit never goes below this many operations. */
  readonly min_concurrency: number;
  /** ... nor above this many. */
  readonly max_concurrency: number;
}

/**
 * `heap`: V8 heap limits of each serving isolate, MiB. When either is above 0
 * the serving isolates are worker threads created with these limits and the
 * main isolate only supervises them (restarting one that runs out of heap).
 * Both 0: the main isolate serves, with V8's defaults.
 */
export interface HeapConfig {
  /** Young generation (V8 `max_young_generation_size`); 0 = V8's default. */
  readonly max_young_generation_mb: number;
  /** Old generation (V8 `max_old_generation_size`); 0 = V8's default. */
  readonly max_old_generation_mb: number;
}

/** `cors`. */
export interface CorsConfig {
  /** Answer CORS preflights and add CORS headers. */
  readonly enabled: boolean;
  /** Allowed origins: `*`, exact origins, or patterns like `https://*.example.com`. */
  readonly allow_origins: readonly string[];
  /** Request headers allowed in preflights. */
  readonly allow_headers: readonly string[];
  /** Headers exposed to browsers besides `Mcp-Session-Id` and `WWW-Authenticate`. */
  readonly expose_headers: readonly string[];
  /** Allow credentials (not with the origin `*`). */
  readonly allow_credentials: boolean;
  /** How long browsers may cache a preflight, seconds. */
  readonly max_age_seconds: number;
}

/** `playground`. */
export interface PlaygroundConfig {
  /** Default: on in dev mode, off otherwise. */
  readonly enabled: boolean;
}

/** `telemetry.metrics.prometheus`: the Prometheus listener. */
export interface PrometheusConfig {
  /** Serve the metrics on a listener of their own. */
  readonly enabled: boolean;
  /** `host:port` of that listener (default `127.0.0.1:8088`, loopback only). */
  readonly listen_addr: string;
  /** Path of the text exposition. */
  readonly path: string;
}

/** `telemetry.metrics.otlp`: the registry pushed over OTLP/HTTP (protobuf). */
export interface MetricsOtlpConfig {
  /** Export the metrics periodically. */
  readonly enabled: boolean;
  /**
   * Full URL of the metrics endpoint (`http://collector:4318/v1/metrics`);
   * empty: `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/metrics`.
   */
  readonly endpoint: string;
  /** Request headers, each `Name=value` (the `OTEL_EXPORTER_OTLP_HEADERS` format). */
  readonly headers: readonly string[];
  /** Time between exports, milliseconds. */
  readonly interval_ms: number;
  /** Longest wait for one export request, milliseconds. */
  readonly export_timeout_ms: number;
}

/** One OTLP/HTTP (protobuf) trace exporter. */
export interface TracingExporterConfig {
  /** Full URL of the traces endpoint (`http://collector:4318/v1/traces`). */
  readonly endpoint: string;
  /** Request headers, each `Name=value` (the `OTEL_EXPORTER_OTLP_HEADERS` format). */
  readonly headers: readonly string[];
  /** Longest wait before a batch is sent, milliseconds. */
  readonly batch_timeout_ms: number;
  /** Longest wait for one export request, milliseconds. */
  readonly export_timeout_ms: number;
}

/** `telemetry.tracing`: OpenTelemetry spans over OTLP/HTTP. */
export interface TracingConfig {
  /** Record and export spans. */
  readonly enabled: boolean;
  /** `service.name` of the resource (`OTEL_SERVICE_NAME` wins). */
  readonly service_name: string;
  /** Fraction of new traces sampled (parent-based: a sampled parent is always followed). */
  readonly sampling_rate: number;
  /** Exporters; empty: `OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT` when set. */
  readonly exporters: readonly TracingExporterConfig[];
}

/** `telemetry`: metrics and traces. */
export interface TelemetryConfig {
  /** Metrics. */
  readonly metrics: { readonly prometheus: PrometheusConfig; readonly otlp: MetricsOtlpConfig };
  /** Traces. */
  readonly tracing: TracingConfig;
}

/** `access_logs`. */
export interface AccessLogsConfig {
  /** One JSON line per request at `info`; default: on, off in dev mode. */
  readonly enabled: boolean;
}

/** `traffic_shaping.router`: admission floor, deadline and in-flight memory (issue 15). */
export interface RouterTrafficConfig {
  /** Operations that may wait for a slot; more get 503 `SERVICE_OVERLOADED`. */
  readonly max_queue_size: number;
  /** How long one may wait for a slot, ms; longer gets 503 `SERVICE_OVERLOADED`. */
  readonly max_queue_wait_ms: number;
  /** A client request's deadline, ms; past it the answer is 504 `GATEWAY_TIMEOUT`. */
  readonly request_timeout_ms: number;
  /** Subgraph answer bytes all running operations may hold; 0 = no budget. */
  readonly max_in_flight_bytes: number;
  /**
   * Request-body bytes all requests may hold, read and not yet answered
   * (bodies are read before a request takes a slot); past it 503
   * `SERVICE_OVERLOADED`. 0 = no budget.
   */
  readonly max_buffered_body_bytes: number;
  /**
   * Bytes of answers (64 KiB and up) handed to clients and not yet taken by
   * them; past it the oldest are ended (their connections close). 0 = none.
   */
  readonly max_unsent_answer_bytes: number;
  /**
   * Longest wait for a complete request head, from a connection's start or the
   * first byte of its next request, ms; past it the connection closes. 0 = none.
   */
  readonly header_read_timeout_ms: number;
  /** Longest wait for the next request on a kept-alive connection, ms. 0 = none. */
  readonly keep_alive_timeout_ms: number;
  /** Most client connections open at once; more are answered 503 and closed. 0 = no limit. */
  readonly max_connections: number;
}

/** `traffic_shaping.{all,subgraphs.<name>}.retry`: queries only. */
export interface RetryConfig {
  /** Retry connection errors, 502/503/504, and 429 with `Retry-After` (on by default). */
  readonly enabled: boolean;
  /** Retries after the first attempt. */
  readonly max_attempts: number;
  /** First back-off, ms (doubled per retry, with jitter). */
  readonly interval_ms: number;
  /** Longest back-off, ms. */
  readonly max_duration_ms: number;
  /** How long a fetch counts toward the retry budget, ms. */
  readonly ttl_ms: number;
  /** Retries allowed per second whatever the traffic (the budget's reserve). */
  readonly min_per_sec: number;
  /** Retries earned per fetch, 0 to 1: at most this share of extra requests over `ttl`. */
  readonly retry_percent: number;
}

/** `traffic_shaping.{all,subgraphs.<name>}.circuit_breaker`. */
export interface CircuitBreakerConfig {
  /** Fail a failing subgraph's fetches fast. */
  readonly enabled: boolean;
  /** Failed share of the window that opens it, %. */
  readonly error_threshold_percentage: number;
  /** Fetches the window must hold before it can open. */
  readonly request_threshold: number;
  /** How long it stays open, ms. */
  readonly sleep_window_ms: number;
  /** Probes when half-open. */
  readonly half_open_attempts: number;
  /** The rolling window, ms. */
  readonly rolling_duration_ms: number;
}

/** Retry and circuit breaker of one subgraph (or of all). */
export interface SubgraphTrafficConfig {
  /** Retries. */
  readonly retry: RetryConfig;
  /** The circuit breaker. */
  readonly circuit_breaker: CircuitBreakerConfig;
}

/** `supergraph_source`: where the supergraph comes from (docs/supergraph-source.md). */
export interface SupergraphSourceConfig {
  /** `file`, `url`, `hive_cdn` or `apollo_uplink`. */
  readonly kind: "file" | "url" | "hive_cdn" | "apollo_uplink";
  /** `url`: the address. */
  readonly url: string;
  /** `url`: `Name: value` request headers. */
  readonly headers: readonly string[];
  /** `hive_cdn`: the CDN endpoint. */
  readonly endpoint: string;
  /** `hive_cdn`: the CDN key; `apollo_uplink`: the API key. */
  readonly key: string;
  /** `apollo_uplink`: `graph@variant`. */
  readonly graph_ref: string;
  /** `apollo_uplink`: Uplink URLs; empty: the public ones. */
  readonly endpoints: readonly string[];
  /** Time between polls, ms. */
  readonly poll_interval_ms: number;
  /** Longest wait for one poll, ms. */
  readonly timeout_ms: number;
  /** Largest supergraph accepted, bytes. */
  readonly max_bytes: number;
}

/** `tls.server`: HTTPS on the listener (docs/tls.md). */
export interface TlsServerConfig {
  /** PEM certificate and chain; empty: plain HTTP. */
  readonly cert_file: string;
  /** PEM private key of `cert_file`. */
  readonly key_file: string;
  /** PEM authorities of client certificates; empty: none asked for. */
  readonly client_ca_file: string;
  /** Refuse connections without a client certificate `client_ca_file` signed. */
  readonly require_client_cert: boolean;
  /** Offer HTTP/2 by ALPN beside HTTP/1.1. */
  readonly http2: boolean;
}

/** `tls.subgraphs.<name>`: TLS to one subgraph. */
export interface TlsSubgraphConfig {
  /** PEM authorities trusted besides the system's; empty: the system's only. */
  readonly ca_file: string;
  /** PEM client certificate (mutual TLS); empty: none. */
  readonly cert_file: string;
  /** PEM private key of `cert_file`. */
  readonly key_file: string;
}

/** `tls`. */
export interface TlsConfig {
  /** The listener's certificate. */
  readonly server: TlsServerConfig;
  /** TLS to subgraphs by name; `all`: every subgraph not named. */
  readonly subgraphs: Readonly<Record<string, TlsSubgraphConfig>>;
}

/** `traffic_shaping`. */
export interface TrafficShapingConfig {
  /** The router's own limits. */
  readonly router: RouterTrafficConfig;
  /** Every subgraph's retry and circuit breaker. */
  readonly all: SubgraphTrafficConfig;
  /** Per subgraph name: replaces `all` for that subgraph (omitted keys take the defaults). */
  readonly subgraphs: Readonly<Record<string, SubgraphTrafficConfig>>;
}

/** One Redis deployment (`storage_providers.redis[]`, Cosmo's shape). */
export interface RedisProviderConfig {
  /** What `<feature>.storage.provider_id` names. */
  readonly id: string;
  /** `redis://` / `rediss://` URLs (one, or the cluster's seed nodes). */
  readonly urls: readonly string[];
  /** A Redis Cluster (the URLs are seed nodes). */
  readonly cluster_enabled: boolean;
  /** Longest wait for a connection, ms; then the store counts as unavailable. */
  readonly connect_timeout_ms: number;
  /** Longest wait for one command, ms; then the feature's fallback answers. */
  readonly command_timeout_ms: number;
}

/** `storage_providers`: shared stores features can name. */
export interface StorageProvidersConfig {
  /** Redis deployments. */
  readonly redis: readonly RedisProviderConfig[];
}

/** `<feature>.storage`: where a feature keeps shared state. */
export interface FeatureStorageConfig {
  /** A `storage_providers.redis[].id`; "" keeps the state in this replica's memory. */
  readonly provider_id: string;
  /** Prefix of every key the feature writes. */
  readonly key_prefix: string;
}

/** `persisted_operations`: trusted documents. */
export interface PersistedOperationsConfig {
  /** Manifest files: Apollo's persisted query manifest or a `{ "<sha256>": "<document>" }` map. */
  readonly manifests: readonly string[];
  /** Refuse every operation that is not a trusted document (400 `PERSISTED_QUERY_NOT_IN_LIST`). */
  readonly safelist: { readonly enabled: boolean };
  /** Log operations the safelist would refuse (the rollout mode). */
  readonly log_unknown: boolean;
}

/** `automatic_persisted_queries` (Apollo's APQ protocol). */
export interface AutomaticPersistedQueriesConfig {
  /** Register documents by hash and serve them by hash (off while the safelist is on). */
  readonly enabled: boolean;
  /** The in-memory cache (and the TTL of Redis entries). */
  readonly cache: { readonly max_bytes: number; readonly ttl_ms: number };
  /** Shared registrations in Redis. */
  readonly storage: FeatureStorageConfig;
}

/** `rate_limit.<facet>`: a facet's own numbers (0 = the `rate_limit` value). */
export interface FacetRateLimitConfig {
  /** Limit this facet. */
  readonly enabled: boolean;
  /** Requests per period (0 = inherit). */
  readonly rate: number;
  /** Requests at once (0 = inherit). */
  readonly burst: number;
  /** The period, ms (0 = inherit). */
  readonly period_ms: number;
}

/** `rate_limit`: GCRA per client key (Cosmo's keys). */
export interface RateLimitConfig {
  /** Limit requests. */
  readonly enabled: boolean;
  /** `client_ip`, `token_subject` or `header:<Name>`. */
  readonly key: string;
  /** Requests per period. */
  readonly rate: number;
  /** Requests at once (the bucket's depth). */
  readonly burst: number;
  /** The period, ms. */
  readonly period_ms: number;
  /** Answer 429; false: only count and log (the rollout mode). */
  readonly reject_exceeding_requests: boolean;
  /** While the store is unavailable: let requests through (true) or answer 503. */
  readonly fail_open: boolean;
  /** Peers (CIDRs) whose `X-Forwarded-For` is believed. */
  readonly trusted_proxies: readonly string[];
  /** Keys tracked in memory (memory store). */
  readonly max_keys: number;
  /** Shared budgets in Redis. */
  readonly storage: FeatureStorageConfig;
  /** GraphQL over HTTP's own numbers. */
  readonly graphql: FacetRateLimitConfig;
  /** MCP's own numbers. */
  readonly mcp: FacetRateLimitConfig;
  /** Connect's own numbers. */
  readonly connect: FacetRateLimitConfig;
}

/** `entity_cache.subgraphs.<name>` (and `all`). */
export interface EntityCacheSubgraphConfig {
  /** Cache this subgraph's answers. */
  readonly enabled: boolean;
  /** Its TTL when its answers say none, ms; 0: `default_ttl_ms`. */
  readonly ttl_ms: number;
}

/** `entity_cache`: subgraph answers cached (docs/caching.md). */
export interface EntityCacheConfig {
  /** Cache entities and root-field query fetches. */
  readonly enabled: boolean;
  /** TTL of answers whose `Cache-Control` says none, ms. */
  readonly default_ttl_ms: number;
  /** Bytes kept in memory (without a Redis provider). */
  readonly max_bytes: number;
  /** UTF-8 bytes of the largest entry stored (memory or Redis). */
  readonly max_entry_bytes: number;
  /** Live keys one `@cacheTag` tag index holds (an entry a full index cannot take is not stored). */
  readonly max_keys_per_tag: number;
  /** `token_subject`, `header:<Name>`, or "" (private answers not cached). */
  readonly private_id: string;
  /** Redis, or this replica's memory. */
  readonly storage: FeatureStorageConfig;
  /** Per subgraph; `all` for every subgraph not named. */
  readonly subgraphs: Readonly<Record<string, EntityCacheSubgraphConfig>>;
  /** The invalidation endpoint. */
  readonly invalidation: {
    readonly enabled: boolean;
    readonly path: string;
    readonly shared_key: string;
  };
}

/** The whole configuration. */
export interface Config {
  /** `host:port` of the one listener. */
  readonly listen_addr: string;
  /** Path of the GraphQL endpoint. */
  readonly graphql_path: string;
  /** Development mode: tracing without token, playground on. */
  readonly dev_mode: boolean;
  /** Lowest level logged. */
  readonly log_level: LogLevel;
  /** Worker processes/isolates serving the listener (1 = no extra workers). */
  readonly workers: number;
  /** V8 heap limits of each serving isolate (`workers.ts`). */
  readonly heap: HeapConfig;
  /** Supergraph SDL file (Apollo Federation), relative to the config file. */
  readonly supergraph_path: string;
  /** Where the supergraph comes from (issue 44). */
  readonly supergraph_source: SupergraphSourceConfig;
  /** Folder of named operations (`*.graphql`): the MCP and Connect contract. */
  readonly operations_dir: string;
  /** Largest accepted request body, bytes. */
  readonly max_request_body_bytes: number;
  /** Subgraphs for `compose`. */
  readonly subgraphs: readonly SubgraphSource[];
  /** Header propagation to subgraphs. */
  readonly headers: HeadersConfig;
  /** Token verification. */
  readonly authentication: AuthenticationConfig;
  /** `@authenticated` / `@requiresScopes` enforcement. */
  readonly authorization: AuthorizationConfig;
  /** CORS. */
  readonly cors: CorsConfig;
  /** The MCP tool server. */
  readonly mcp: McpConfig;
  /** Connect RPC. */
  readonly connect_rpc: ConnectRpcConfig;
  /** Query engine and tracing. */
  readonly engine: EngineConfig;
  /** The local playground. */
  readonly playground: PlaygroundConfig;
  /** Operation limits (issue 14). */
  readonly security: SecurityConfig;
  /** Introspection (issue 14). */
  readonly introspection: IntrospectionConfig;
  /** CSRF prevention (issue 14). */
  readonly csrf_prevention: CsrfPreventionConfig;
  /** Progressive `@override` labels set on or off by name (issue 43). */
  readonly override_labels: Readonly<Record<string, boolean>>;
  /** Query batching (issue 43). */
  readonly batching: BatchingConfig;
  /** File uploads (issue 43). */
  readonly file_uploads: FileUploadsConfig;
  /** What clients see of subgraph errors (issue 14). */
  readonly subgraph_error_propagation: SubgraphErrorPropagationConfig;
  /** Metrics and traces (issue 16). */
  readonly telemetry: TelemetryConfig;
  /** The access log (issue 16). */
  readonly access_logs: AccessLogsConfig;
  /** Admission, deadlines, retries (issue 15). */
  readonly traffic_shaping: TrafficShapingConfig;
  /** HTTPS on the listener (issue 44). */
  readonly tls: TlsConfig;
  /** Federated subscriptions (docs/subscriptions.md). */
  readonly subscriptions: SubscriptionsConfig;
  /** After SIGTERM: readiness 503 and still accepting for this long, ms (behind a load balancer). */
  readonly shutdown_delay_ms: number;
  /** Then in-flight requests get this long to finish, ms; those still running get 503. */
  readonly grace_period_ms: number;
  /** Shared stores (issue 30). */
  readonly storage_providers: StorageProvidersConfig;
  /** Trusted documents (issue 30). */
  readonly persisted_operations: PersistedOperationsConfig;
  /** APQ (issue 30). */
  readonly automatic_persisted_queries: AutomaticPersistedQueriesConfig;
  /** Rate limits (issue 30). */
  readonly rate_limit: RateLimitConfig;
  /** TypeScript plugins, in order (issue 40, docs/extending.md). */
  readonly plugins: readonly PluginConfig[];
  /** Apollo Router's external coprocessor (issue 40, docs/extending.md). */
  readonly coprocessor: CoprocessorConfig;
  /** Entity and root-field caching. */
  readonly entity_cache: EntityCacheConfig;
  /** Demand control (issue 41, docs/demand-control.md). */
  readonly demand_control: DemandControlConfig;
}

/** The switches of one coprocessor stage (Apollo's names; those a stage lacks are absent). */
export interface CoprocessorStageConfig {
  readonly headers: boolean;
  readonly context: boolean;
  readonly body?: boolean;
  readonly sdl?: boolean;
  readonly path?: boolean;
  readonly method?: boolean;
  readonly uri?: boolean;
  readonly service_name?: boolean;
  readonly status_code?: boolean;
}

/** A request/response pair of coprocessor stages. */
export interface CoprocessorStagePair {
  readonly request: CoprocessorStageConfig;
  readonly response: CoprocessorStageConfig;
}

/** `coprocessor`. */
export interface CoprocessorConfig {
  /** Empty: no coprocessor. */
  readonly url: string;
  readonly timeout_ms: number;
  readonly max_response_bytes: number;
  readonly fail_open: boolean;
  readonly router: CoprocessorStagePair;
  readonly supergraph: CoprocessorStagePair;
  readonly execution: CoprocessorStagePair;
  readonly subgraph: { readonly all: CoprocessorStagePair };
}

/** One `plugins:` entry. */
export interface PluginConfig {
  /** The module: a file path (resolved against the config's folder) or a specifier. */
  readonly path: string;
  /** The plugin's config, as written (checked by the plugin's `configSchema`). */
  readonly config: unknown;
  /** Time budget of each hook, ms. */
  readonly hook_timeout_ms: number;
}

/** `demand_control.strategy.static_estimated.subgraph.*` (0 = not set). */
export interface SubgraphCostConfig {
  /** The subgraph's list size; 0: the router's. */
  readonly list_size: number;
  /** The largest estimated share of this subgraph; 0: none. */
  readonly max: number;
}

/** `demand_control` (Apollo Router's shape). */
export interface DemandControlConfig {
  /** Estimate and measure operations' costs. */
  readonly enabled: boolean;
  /** `enforce` refuses over `max`; `measure` records. */
  readonly mode: "measure" | "enforce";
  readonly strategy: {
    readonly static_estimated: {
      /** The size of a list nothing else sizes. */
      readonly list_size: number;
      /** The largest estimated cost admitted. */
      readonly max: number;
      /** Also refuse answers whose actual cost passes `max` (enforce mode). */
      readonly enforce_actual_cost: boolean;
      readonly subgraph: {
        readonly all: SubgraphCostConfig;
        readonly subgraphs: Readonly<Record<string, SubgraphCostConfig>>;
      };
    };
  };
  /** Add `extensions.cost` to answers. */
  readonly expose_in_extensions: boolean;
}

/** `security.complexity_limits.*`. */
export interface ComplexityLimitConfig {
  /** Check this limit. */
  readonly enabled: boolean;
  /** The largest accepted value. */
  readonly limit: number;
}

/** `security`: operation limits, checked before validation and planning. */
export interface SecurityConfig {
  readonly parser_limits: {
    /** Nesting of `{`, `(` and `[` in the query text. */
    readonly approximate_depth_limit: number;
    /** Fields after fragment expansion (counted, never expanded). */
    readonly total_fields_limit: number;
    /** Input values (variables and argument literals) of one request, counted before coercion. */
    readonly max_input_values: number;
  };
  readonly complexity_limits: {
    readonly depth: ComplexityLimitConfig;
    readonly total_fields: ComplexityLimitConfig;
    readonly root_fields: ComplexityLimitConfig;
    readonly root_field_aliases: ComplexityLimitConfig;
    /** Introspection-only operations skip the complexity limits. */
    readonly ignore_introspection: boolean;
  };
}

/** `introspection`. */
export interface IntrospectionConfig {
  /** Answer `__schema` / `__type`; default: `dev_mode`. */
  readonly enabled: boolean;
}

/** `csrf_prevention` (Apollo's rule). */
export interface CsrfPreventionConfig {
  /** Refuse GETs and CORS-simple POSTs without a preflight header. */
  readonly enabled: boolean;
  /** Any one of these, non-empty, lets such a request run. */
  readonly required_headers: readonly string[];
}

/** `batching` (Apollo Router's keys): Apollo Client's `BatchHttpLink`. */
export interface BatchingConfig {
  /** Answer a JSON array of operations with an array of results; off: 400 `BATCHING_NOT_ENABLED`. */
  readonly enabled: boolean;
  /** The batch format (a JSON array). */
  readonly mode: "batch_http_link";
  /** The most operations in one batch; more: 400 `BATCH_LIMIT_EXCEEDED`. */
  readonly maximum_size: number;
}

/** `file_uploads`: the GraphQL multipart request specification. */
export interface FileUploadsConfig {
  /** Accept multipart file uploads on `graphql_path` (streamed to the subgraph). */
  readonly enabled: boolean;
  /** The largest file, bytes (413 past it). */
  readonly max_file_size: number;
  /** The most files in one request (413 past it). */
  readonly max_files: number;
}

/** `subgraph_error_propagation` (Cosmo's names). */
export interface SubgraphErrorPropagationConfig {
  /** `wrapped`: one router error per subgraph carrying the filtered errors; `pass-through`: the filtered errors themselves. */
  readonly mode: "wrapped" | "pass-through";
  /** Extension keys kept from subgraph errors. */
  readonly allowed_extension_fields: readonly string[];
  /** Add `extensions.serviceName`. */
  readonly attach_service_name: boolean;
  /** Drop `locations` (they point into the subgraph's operation). */
  readonly omit_locations: boolean;
  /** `extensions.code` of an error without an allowed one. */
  readonly default_extension_code: string;
}

/** `subscriptions`: federated subscriptions (docs/subscriptions.md). */
export interface SubscriptionsConfig {
  /** Serve subscriptions (WebSocket, SSE, multipart); off: refused with `SUBSCRIPTIONS_DISABLED`. */
  readonly enabled: boolean;
  /** Operations one WebSocket connection may hold at once (subscriptions and queries in flight). */
  readonly max_per_connection: number;
  /** Subscriptions the router (each worker) serves at once. */
  readonly max_total: number;
  /** Results one client may leave untaken before it is dropped (`SUBSCRIPTION_CLIENT_TOO_SLOW`). */
  readonly max_buffered_events: number;
  /** Bytes sent to one WebSocket client and not yet taken before it is dropped. */
  readonly max_unsent_bytes: number;
  /** Bytes of one message a WebSocket client may send (larger: close 1009). */
  readonly max_message_bytes: number;
  /** Admission by capacity: new subscriptions refused when the fan-out cannot take one more. */
  readonly admission: SubscriptionAdmissionConfig;
  /** WebSocket ping interval, ms. */
  readonly keep_alive_interval_ms: number;
  /** SSE comment and multipart `{}` heartbeat interval, ms. */
  readonly heartbeat_interval_ms: number;
  /** Identical upstream subscriptions share one subgraph stream. */
  readonly deduplicate: boolean;
  /** Per subgraph: where its subscriptions are opened. */
  readonly subgraphs: Readonly<Record<string, SubscriptionSubgraphConfig>>;
}

/** `subscriptions.admission`. */
export interface SubscriptionAdmissionConfig {
  /** Refuse new subscriptions when the serving thread cannot take one more's fan-out. */
  readonly enabled: boolean;
  /** The share of the serving thread the fan-out may be projected to take. */
  readonly max_cpu_share: number;
}

/** `subscriptions.subgraphs.<name>`. */
export interface SubscriptionSubgraphConfig {
  /** Absent: the routing URL (`http:` becomes `ws:` for `ws`). */
  readonly url?: string;
  /** `ws` (graphql-transport-ws) or `sse` (graphql-sse, distinct connections). */
  readonly protocol: "ws" | "sse";
}
