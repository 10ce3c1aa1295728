/**
 * The configuration schema as data: every key, its kind and its default. The
 * reader in `parse.ts` walks it, so unknown keys, env names and defaults all
 * come from this one table.
 *
 * @module
 */

/** A string leaf. */
export interface StringNode {
  readonly kind: "string";
  /** Default; `undefined` with `optional` means "absent stays absent". */
  readonly default?: string;
  /** May be absent (the key is then left out of the result). */
  readonly optional?: boolean;
  /** Must be present (array items only). */
  readonly required?: boolean;
  /** A file path: resolved against the config file's folder. */
  readonly file?: boolean;
  /** Derived from other keys when absent (filled after the walk). */
  readonly derived?: boolean;
}

/** A boolean leaf (`true`/`false`; env is case-insensitive). */
export interface BooleanNode {
  readonly kind: "boolean";
  readonly default: boolean;
  readonly derived?: boolean;
}

/** A non-negative integer leaf. */
export interface IntNode {
  readonly kind: "int";
  readonly default: number;
  readonly min?: number;
}

/** A byte size: a number of bytes or `512KB`, `5MB`, `1MiB`. */
export interface SizeNode {
  readonly kind: "size";
  readonly default: number;
  /** The smallest accepted size (a limit of 0 bytes would refuse all traffic). */
  readonly min?: number;
}

/**
 * A duration in milliseconds. Its key ends in `_ms`; YAML and env also take
 * the key without `_ms` with a unit (`1m`, `30s`, `500ms`, `1h`).
 */
export interface DurationNode {
  readonly kind: "duration";
  readonly default: number;
  /** The shortest accepted duration, ms (a deadline of 0 would fail every request). */
  readonly min?: number;
}

/** A fraction from 0 to 1 (`telemetry.tracing.sampling_rate`). */
export interface RatioNode {
  readonly kind: "ratio";
  readonly default: number;
}

/** A list of strings (env: comma or space separated). */
export interface ListNode {
  readonly kind: "list";
  readonly default: readonly string[];
  /** YAML also takes a single string (a one-item list). */
  readonly scalar?: boolean;
}

/** One of a fixed set of strings. */
export interface EnumNode {
  readonly kind: "enum";
  readonly values: readonly string[];
  readonly default?: string;
  readonly optional?: boolean;
}

/** A mapping with a fixed set of keys. */
export interface ObjectNode {
  readonly kind: "object";
  readonly fields: Readonly<Record<string, Node>>;
}

/** A list of objects (YAML only: no env names below it). */
export interface ArrayNode {
  readonly kind: "array";
  readonly item: ObjectNode;
}

/** A mapping with free keys (YAML only). */
export interface RecordNode {
  readonly kind: "record";
  readonly value: ObjectNode;
}

/** Any schema node. */
export type Node =
  | StringNode
  | BooleanNode
  | IntNode
  | SizeNode
  | DurationNode
  | RatioNode
  | ListNode
  | EnumNode
  | ObjectNode
  | ArrayNode
  | RecordNode;

function object(fields: Record<string, Node>): ObjectNode {
  return { kind: "object", fields };
}
function str(defaultValue: string, extra: Omit<StringNode, "kind" | "default"> = {}): StringNode {
  return { kind: "string", default: defaultValue, ...extra };
}
function bool(defaultValue: boolean): BooleanNode {
  return { kind: "boolean", default: defaultValue };
}
function list(defaultValue: readonly string[] = []): ListNode {
  return { kind: "list", default: defaultValue };
}

/** Asymmetric JWS algorithms (what a `url` or `file` key source may use). */
export const ASYMMETRIC_ALGORITHMS: readonly string[] = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];

/** Symmetric JWS algorithms (only with a `secret` key source). */
export const SYMMETRIC_ALGORITHMS: readonly string[] = ["HS256", "HS384", "HS512"];

/** Header values ART traces show by default (issue 18); all others are masked. */
export const DEFAULT_UNMASKED_TRACE_HEADERS: readonly string[] = [
  "Accept",
  "Content-Type",
  "User-Agent",
  "X-Request-Id",
  "GraphQL-Client-Name",
  "GraphQL-Client-Version",
  "Apollographql-Client-Name",
  "Apollographql-Client-Version",
  "X-GW-Trace",
];

/** Default request body limit: 5 MB. */
export const DEFAULT_MAX_BODY_BYTES = 5_000_000;

const JWKS_SOURCE = object({
  url: { kind: "string", optional: true },
  file: { kind: "string", optional: true, file: true },
  secret: { kind: "string", optional: true },
  symmetric_algorithm: { kind: "enum", values: SYMMETRIC_ALGORITHMS, optional: true },
  refresh_interval_ms: { kind: "duration", default: 60_000 },
  algorithms: { kind: "list", default: [] },
  audiences: list(),
  // Issue 18: claims and key-source safety.
  issuer: { kind: "list", default: [], scalar: true },
  required_typ: str(""),
  // Issue 15 (secure defaults): a token without `exp` would be valid forever.
  required_claims: { kind: "list", default: ["exp"] },
  max_response_bytes: { kind: "size", default: 1_000_000 },
  // 0 would abort every fetch at once: keys never load, every token is answered 503.
  fetch_timeout_ms: { kind: "duration", default: 5_000, min: 1 },
  refresh_unknown_kid: object({
    enabled: bool(true),
    // Below a second the bucket refills so fast that any client sending random kids makes
    // the router refetch the provider's keys at its own request rate.
    interval_ms: { kind: "duration", default: 30_000, min: 1_000 },
    burst: { kind: "int", default: 2, min: 1 },
    max_wait_ms: { kind: "duration", default: 5_000 },
  }),
});

const HEADER_RULE = object({
  op: { kind: "enum", values: ["propagate", "set"] },
  named: { kind: "string", optional: true },
  matching: { kind: "string", optional: true },
  rename: { kind: "string", optional: true },
  default: { kind: "string", optional: true },
  name: { kind: "string", optional: true },
  value: { kind: "string", optional: true },
});

/** `security.complexity_limits.*`: off by default, as in Cosmo. */
const COMPLEXITY_LIMIT = object({
  enabled: bool(false),
  limit: { kind: "int", default: 0 },
});

const HEADER_RULES = object({ request: { kind: "array", item: HEADER_RULE } });

/** `traffic_shaping.all` and `traffic_shaping.subgraphs.<name>` (Cosmo's keys). */
const SUBGRAPH_TRAFFIC = object({
  retry: object({
    enabled: bool(false),
    max_attempts: { kind: "int", default: 5 },
    interval_ms: { kind: "duration", default: 3_000 },
    max_duration_ms: { kind: "duration", default: 10_000 },
  }),
  circuit_breaker: object({
    enabled: bool(false),
    error_threshold_percentage: { kind: "int", default: 50 },
    request_threshold: { kind: "int", default: 20, min: 1 },
    sleep_window_ms: { kind: "duration", default: 5_000 },
    half_open_attempts: { kind: "int", default: 1, min: 1 },
    rolling_duration_ms: { kind: "duration", default: 10_000 },
  }),
});

/** The whole configuration schema; key names are the YAML names. */
export const CONFIG_SCHEMA: ObjectNode = object({
  listen_addr: str("localhost:3002"),
  graphql_path: str("/graphql"),
  dev_mode: bool(false),
  log_level: { kind: "enum", values: ["debug", "info", "warn", "error"], default: "info" },
  workers: { kind: "int", default: 1, min: 1 },
  heap: object({
    max_young_generation_mb: { kind: "int", default: 0 },
    max_old_generation_mb: { kind: "int", default: 0 },
  }),
  supergraph_path: str("schema/supergraph.graphql", { file: true }),
  operations_dir: str("operations", { file: true }),
  max_request_body_bytes: { kind: "size", default: DEFAULT_MAX_BODY_BYTES, min: 1 },
  subgraphs: {
    kind: "array",
    item: object({
      name: { kind: "string", required: true },
      routing_url: { kind: "string", required: true },
      schema_file: { kind: "string", required: true, file: true },
    }),
  },
  headers: object({
    all: HEADER_RULES,
    subgraphs: { kind: "record", value: HEADER_RULES },
  }),
  authentication: object({
    jwt: object({
      jwks: { kind: "array", item: JWKS_SOURCE },
      header_name: str("Authorization"),
      header_value_prefix: str("Bearer"),
      clock_skew_ms: { kind: "duration", default: 60_000 },
      readiness_requires_keys: bool(true),
    }),
  }),
  authorization: object({
    require_authentication: bool(false),
    reject_operation_if_unauthorized: bool(false),
  }),
  cors: object({
    enabled: bool(true),
    allow_origins: list(["*"]),
    allow_headers: list([
      "Accept",
      "Authorization",
      "Content-Type",
      "Connect-Protocol-Version",
      "Connect-Timeout-Ms",
      "Last-Event-ID",
      "Mcp-Protocol-Version",
      "Mcp-Session-Id",
      "X-GW-Trace",
      "X-GW-Token",
    ]),
    expose_headers: list(),
    allow_credentials: bool(false),
    max_age_seconds: { kind: "int", default: 300 },
  }),
  mcp: object({
    enabled: bool(true),
    graph_name: str("mygraph"),
    path: str("/mcp"),
    server: object({ base_url: { kind: "string", derived: true } }),
    exclude_mutations: bool(false),
    enable_arbitrary_operations: bool(false),
    expose_schema: bool(false),
    omit_tool_name_prefix: bool(false),
    session_secret: str(""),
    oauth: object({
      enabled: bool(false),
      jwks: { kind: "array", item: JWKS_SOURCE },
      authorization_server_urls: list(),
      scopes: object({
        initialize: list(),
        tools_list: list(),
        tools_call: list(),
        execute_graphql: list(),
        get_operation_info: list(),
        get_schema: list(),
      }),
      scope_challenge_include_token_scopes: bool(false),
      scope_challenge_all_levels: bool(false),
      max_scope_combinations: { kind: "int", default: 2048, min: 1 },
    }),
  }),
  connect_rpc: object({
    enabled: bool(true),
    package: str("service.v1"),
    service: str("GraphService"),
    get_cache_max_age: { kind: "int", default: 0 },
    max_message_bytes: { kind: "size", default: DEFAULT_MAX_BODY_BYTES, min: 1 },
  }),
  engine: object({
    enable_request_tracing: bool(true),
    force_unauthenticated_request_tracing: bool(false),
    request_tracing_public_key_file: str("", { file: true }),
    request_tracing_issuer: str(""),
    request_tracing_audience: str(""),
    request_tracing_masked_headers: list(),
    // Issue 18: traces without secrets.
    request_tracing_unmasked_headers: list(DEFAULT_UNMASKED_TRACE_HEADERS),
    request_tracing_max_token_age_ms: { kind: "duration", default: 3_600_000 },
    enable_single_flight: bool(true),
    // Session 9: our HTTP/1.1 pool for plain-http subgraphs (Deno's fetch is the fallback).
    subgraph_transport: { kind: "enum", values: ["http1", "fetch"], default: "http1" },
    subgraph_request_timeout_ms: { kind: "duration", default: 30_000, min: 1 },
    plan_cache_size: { kind: "int", default: 1000 },
    // Issue 33: 0 = no fixed count; the adaptive limit sizes admission (unless disabled).
    max_concurrent_operations: { kind: "int", default: 0 },
    adaptive_concurrency: object({
      enabled: bool(true),
      target_delay_ms: { kind: "duration", default: 20, min: 1 },
      min_concurrency: { kind: "int", default: 8, min: 1 },
      max_concurrency: { kind: "int", default: 1_000, min: 1 },
    }),
    max_subgraph_response_bytes: { kind: "size", default: 16_000_000, min: 1 },
    execution_plan_cache_max_bytes: { kind: "size", default: 16_000_000 },
    parse_cache_max_bytes: { kind: "size", default: 16_000_000 },
    max_cached_document_bytes: { kind: "size", default: 64_000 },
    max_response_bytes: { kind: "size", default: 32_000_000, min: 1 },
  }),
  playground: object({ enabled: { kind: "boolean", default: false, derived: true } }),
  // Issue 14: safe by default at the request edge.
  security: object({
    parser_limits: object({
      approximate_depth_limit: { kind: "int", default: 200, min: 1 },
      total_fields_limit: { kind: "int", default: 3500, min: 1 },
    }),
    complexity_limits: object({
      depth: COMPLEXITY_LIMIT,
      total_fields: COMPLEXITY_LIMIT,
      root_fields: COMPLEXITY_LIMIT,
      root_field_aliases: COMPLEXITY_LIMIT,
      ignore_introspection: bool(false),
    }),
  }),
  introspection: object({ enabled: { kind: "boolean", default: false, derived: true } }),
  csrf_prevention: object({
    enabled: bool(true),
    required_headers: list([
      "apollo-require-preflight",
      "x-apollo-operation-name",
      "graphql-preflight",
    ]),
  }),
  subgraph_error_propagation: object({
    mode: { kind: "enum", values: ["wrapped", "pass-through"], default: "wrapped" },
    allowed_extension_fields: list(["code"]),
    attach_service_name: bool(true),
    omit_locations: bool(true),
    default_extension_code: str("DOWNSTREAM_SERVICE_ERROR"),
  }),
  // Issue 16: observability (Cosmo's key names).
  telemetry: object({
    metrics: object({
      prometheus: object({
        enabled: bool(false),
        listen_addr: str("127.0.0.1:8088"),
        path: str("/metrics"),
      }),
      otlp: object({
        enabled: bool(false),
        endpoint: str(""),
        headers: list(),
        interval_ms: { kind: "duration", default: 15_000 },
        export_timeout_ms: { kind: "duration", default: 10_000 },
      }),
    }),
    tracing: object({
      enabled: bool(false),
      service_name: str("gw-router"),
      sampling_rate: { kind: "ratio", default: 1 },
      exporters: {
        kind: "array",
        item: object({
          endpoint: { kind: "string", required: true },
          headers: list(),
          batch_timeout_ms: { kind: "duration", default: 5_000 },
          export_timeout_ms: { kind: "duration", default: 10_000 },
        }),
      },
    }),
  }),
  access_logs: object({ enabled: { kind: "boolean", default: true, derived: true } }),
  traffic_shaping: object({
    router: object({
      max_queue_size: { kind: "int", default: 128 },
      max_queue_wait_ms: { kind: "duration", default: 5_000 },
      request_timeout_ms: { kind: "duration", default: 60_000, min: 1 },
      max_in_flight_bytes: { kind: "size", default: 64_000_000 },
      max_buffered_body_bytes: { kind: "size", default: 64_000_000 },
      max_unsent_answer_bytes: { kind: "size", default: 64_000_000 },
      // Session 10: what Deno.serve lacks (denoland/deno#3515), kept by lib/cli/guarded_serve.ts.
      header_read_timeout_ms: { kind: "duration", default: 10_000 },
      keep_alive_timeout_ms: { kind: "duration", default: 75_000 },
      max_connections: { kind: "int", default: 4_096 },
    }),
    all: SUBGRAPH_TRAFFIC,
    subgraphs: { kind: "record", value: SUBGRAPH_TRAFFIC },
  }),
  shutdown_delay_ms: { kind: "duration", default: 0 },
  grace_period_ms: { kind: "duration", default: 30_000 },
});
