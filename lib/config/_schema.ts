/**
 * The configuration schema as data: every key, its kind and its default. The
 * reader in `parse.ts` walks it, so unknown keys, env names and defaults all
 * come from this one table.
 *
 * Over 600 lines on purpose: it is the one table of every key with its
 * description; split by section, the docs generator, the env names and the
 * reader would have to gather it back.
 *
 * @module
 */

/** Shared by every node: what the key means, for the docs and the JSON Schema. */
export interface Described {
  /** One or two sentences: what the key does, when to change it. */
  readonly description?: string;
}

/** A string leaf. */
export interface StringNode extends Described {
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
export interface BooleanNode extends Described {
  readonly kind: "boolean";
  readonly default: boolean;
  readonly derived?: boolean;
}

/** A non-negative integer leaf. */
export interface IntNode extends Described {
  readonly kind: "int";
  readonly default: number;
  readonly min?: number;
}

/** A byte size: a number of bytes or `512KB`, `5MB`, `1MiB`. */
export interface SizeNode extends Described {
  readonly kind: "size";
  readonly default: number;
  /** The smallest accepted size (a limit of 0 bytes would refuse all traffic). */
  readonly min?: number;
}

/**
 * A duration in milliseconds. Its key ends in `_ms`; YAML and env also take
 * the key without `_ms` with a unit (`1m`, `30s`, `500ms`, `1h`).
 */
export interface DurationNode extends Described {
  readonly kind: "duration";
  readonly default: number;
  /** The shortest accepted duration, ms (a deadline of 0 would fail every request). */
  readonly min?: number;
}

/** A fraction from 0 to 1 (`telemetry.tracing.sampling_rate`). */
export interface RatioNode extends Described {
  readonly kind: "ratio";
  readonly default: number;
}

/** A list of strings (env: comma or space separated). */
export interface ListNode extends Described {
  readonly kind: "list";
  readonly default: readonly string[];
  /** YAML also takes a single string (a one-item list). */
  readonly scalar?: boolean;
  /** File paths: each resolved against the config file's folder. */
  readonly file?: boolean;
}

/** One of a fixed set of strings. */
export interface EnumNode extends Described {
  readonly kind: "enum";
  readonly values: readonly string[];
  readonly default?: string;
  readonly optional?: boolean;
}

/** A mapping with a fixed set of keys. */
export interface ObjectNode extends Described {
  readonly kind: "object";
  readonly fields: Readonly<Record<string, Node>>;
}

/** A list of objects (YAML only: no env names below it). */
export interface ArrayNode extends Described {
  readonly kind: "array";
  readonly item: ObjectNode;
}

/** A mapping with free keys (YAML only): each value a section, or a boolean. */
export interface RecordNode extends Described {
  readonly kind: "record";
  readonly value: ObjectNode | BooleanNode;
}

/** Any YAML value, passed on as written (a plugin's `config`, checked by the plugin). */
export interface ValueNode extends Described {
  readonly kind: "value";
}

/** Any schema node. */
export type Node =
  | ValueNode
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

function object(fields: Record<string, Node>, description?: string): ObjectNode {
  return { kind: "object", fields, ...(description === undefined ? {} : { description }) };
}
function str(defaultValue: string, extra: Omit<StringNode, "kind" | "default"> = {}): StringNode {
  return { kind: "string", default: defaultValue, ...extra };
}
function bool(defaultValue: boolean, description?: string): BooleanNode {
  return {
    kind: "boolean",
    default: defaultValue,
    ...(description === undefined ? {} : { description }),
  };
}
function list(defaultValue: readonly string[] = [], description?: string): ListNode {
  return {
    kind: "list",
    default: defaultValue,
    ...(description === undefined ? {} : { description }),
  };
}
function duration(
  defaultValue: number,
  description: string,
  extra: Omit<DurationNode, "kind" | "default" | "description"> = {},
): DurationNode {
  return { kind: "duration", default: defaultValue, description, ...extra };
}
function int(
  defaultValue: number,
  description: string,
  extra: Omit<IntNode, "kind" | "default" | "description"> = {},
): IntNode {
  return { kind: "int", default: defaultValue, description, ...extra };
}
function size(
  defaultValue: number,
  description: string,
  extra: Omit<SizeNode, "kind" | "default" | "description"> = {},
): SizeNode {
  return { kind: "size", default: defaultValue, description, ...extra };
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
  url: {
    kind: "string",
    optional: true,
    description:
      "JWKS URL of the identity provider (`https://idp/.well-known/jwks.json`), refreshed every `refresh_interval`. One of `url`, `file`, `secret`.",
  },
  file: {
    kind: "string",
    optional: true,
    file: true,
    description:
      "A JWKS file (JSON Web Key Set), read at start and on reload. One of `url`, `file`, `secret`.",
  },
  secret: {
    kind: "string",
    optional: true,
    description:
      "A shared secret for HS256/384/512 tokens, at least 32 characters (keep it in the environment). Needs `symmetric_algorithm`. One of `url`, `file`, `secret`.",
  },
  symmetric_algorithm: {
    kind: "enum",
    values: SYMMETRIC_ALGORITHMS,
    optional: true,
    description: "The algorithm of `secret` (required with it, refused without it).",
  },
  refresh_interval_ms: duration(60_000, "Time between refreshes of a `url` source."),
  algorithms: list(
    [],
    "Algorithms accepted from this source (pinned: never `none`, no HS/RS confusion). Empty: every asymmetric algorithm for `url`/`file`, `symmetric_algorithm` for `secret`.",
  ),
  audiences: list([], "Accepted `aud` values; empty: not checked."),
  // Issue 18: claims and key-source safety.
  issuer: {
    kind: "list",
    default: [],
    scalar: true,
    description: "Accepted `iss` values (a string or a list); empty: not checked.",
  },
  required_typ: str("", {
    description: "The `typ` header every token must carry (`at+jwt`); empty: not required.",
  }),
  // Issue 15 (secure defaults): a token without `exp` would be valid forever.
  required_claims: list(["exp"], "Claims every token from this source must carry; empty: none."),
  max_response_bytes: size(1_000_000, "Largest JWKS response body read from `url`."),
  // 0 would abort every fetch at once: keys never load, every token is answered 503.
  fetch_timeout_ms: duration(5_000, "Timeout of one JWKS fetch.", { min: 1 }),
  refresh_unknown_kid: object({
    enabled: bool(true, "Refetch the JWKS when a token names a key id (`kid`) it does not hold."),
    // Below a second the bucket refills so fast that any client sending random kids makes
    // the router refetch the provider's keys at its own request rate.
    interval_ms: duration(30_000, "One refetch credit per interval.", { min: 1_000 }),
    burst: int(2, "Refetch credits held at most.", { min: 1 }),
    max_wait_ms: duration(5_000, "Longest a request waits for a refetch credit."),
  }, "Refetches caused by tokens with an unknown `kid`, rate-limited by a token bucket."),
}, "One key source: exactly one of `url`, `file` or `secret`.");

const HEADER_RULE = object({
  op: {
    kind: "enum",
    values: ["propagate", "set"],
    description: "`propagate` copies a client header; `set` sends a fixed one.",
  },
  named: {
    kind: "string",
    optional: true,
    description:
      "`propagate`: the exact header name (case-insensitive). One of `named`, `matching`.",
  },
  matching: {
    kind: "string",
    optional: true,
    description: "`propagate`: a regular expression over header names (case-insensitive).",
  },
  rename: {
    kind: "string",
    optional: true,
    description: "`propagate` with `named`: send the header under this name.",
  },
  default: {
    kind: "string",
    optional: true,
    description: "`propagate` with `named`: the value sent when the client sent none.",
  },
  name: { kind: "string", optional: true, description: "`set`: the header name." },
  value: { kind: "string", optional: true, description: "`set`: the header value." },
}, "One header rule (Cosmo's shape).");

/** `demand_control.strategy.static_estimated.subgraph.*`: 0 = not set. */
const SUBGRAPH_COST = object({
  list_size: int(0, "The subgraph's list size; 0: the router's `list_size`."),
  max: int(
    0,
    "The largest estimated share of this subgraph (enforce mode: its requests are not sent, its fields null with `SUBGRAPH_COST_ESTIMATED_TOO_EXPENSIVE`); 0: none.",
  ),
}, "One subgraph's demand control settings.");

/** `security.complexity_limits.*`: off by default, as in Cosmo. */
const COMPLEXITY_LIMIT = object({
  enabled: bool(false, "Check this limit."),
  limit: int(0, "The largest accepted value."),
}, "One complexity limit, computed on the operation after fragment expansion; off by default.");

const HEADER_RULES = object({
  request: {
    kind: "array",
    item: HEADER_RULE,
    description: "Rules applied, in order, to each subgraph request.",
  },
  // Issue 43: a subgraph's answer headers reach the client only by a rule.
  response: {
    kind: "array",
    item: HEADER_RULE,
    description:
      "Rules applied, in order, to each subgraph answer: which of its headers reach the client (docs/headers.md).",
  },
}, "Header rules.");

/** `traffic_shaping.all` and `traffic_shaping.subgraphs.<name>` (Cosmo's keys). */
const SUBGRAPH_TRAFFIC = object({
  // Issue 34: on by default for queries, held to a retry budget (Apollo Router's defaults).
  retry: object({
    enabled: bool(
      true,
      "Retry queries on a connection error, reset or close before the answer, 502/503/504, and 429 with `Retry-After`.",
    ),
    max_attempts: int(2, "Retries after the first attempt."),
    interval_ms: duration(100, "The first back-off (doubled per retry, with jitter)."),
    max_duration_ms: duration(10_000, "The longest back-off."),
    ttl_ms: duration(10_000, "The window the retry budget counts fetches and retries over.", {
      min: 1_000,
    }),
    min_per_sec: int(10, "Retries per second always allowed, whatever the budget."),
    retry_percent: {
      kind: "ratio",
      default: 0.2,
      description: "Retries allowed as a share of the fetches in the window (the retry budget).",
    },
  }, "Retries of subgraph fetches (queries only; mutations are never retried)."),
  circuit_breaker: object({
    enabled: bool(false, "Fail a failing subgraph's fetches fast instead of waiting on it."),
    error_threshold_percentage: int(
      50,
      "Failed share of the window, in percent, that opens the breaker.",
    ),
    request_threshold: int(20, "Fetches the window must hold before the breaker can open.", {
      min: 1,
    }),
    sleep_window_ms: duration(5_000, "How long the breaker stays open before probing."),
    half_open_attempts: int(1, "Probe fetches let through when half-open.", { min: 1 }),
    rolling_duration_ms: duration(10_000, "The rolling window the failure share is measured over."),
  }, "The circuit breaker of a subgraph."),
}, "Retry and circuit breaker of subgraph fetches.");

const SCOPE_LIST = (what: string) =>
  list([], `Scopes required ${what} (each entry: scopes separated by spaces, all needed).`);

/** `rate_limit.<facet>`: a facet's own numbers (0 = the `rate_limit` value). */
const FACET_RATE_LIMIT = object({
  enabled: bool(true, "Rate-limit this facet (when `rate_limit.enabled`)."),
  rate: int(0, "Requests per period for this facet; 0: `rate_limit.rate`."),
  burst: int(0, "Burst for this facet; 0: `rate_limit.burst`."),
  period_ms: duration(0, "Period for this facet; 0: `rate_limit.period`."),
}, "This facet's own rate-limit numbers (0: the `rate_limit` value).");

/** `<feature>.storage` (Cosmo's shape): which `storage_providers.redis` entry; "" = memory. */
/** The data switches of one coprocessor stage (Apollo's names). */
const COPROCESSOR_SWITCHES: Readonly<Record<string, string>> = {
  headers: "Send the headers (and take back changed ones).",
  body: "Send the body (and take back a changed one).",
  context: "Send the request's context (and take back a changed one).",
  sdl: "Send the supergraph's SDL (large: avoid).",
  path: "Send the request path.",
  method: "Send the HTTP method.",
  uri: "Send the subgraph's URL.",
  service_name: "Send the subgraph's name.",
  status_code: "Send the HTTP status.",
};

/** A coprocessor stage with these switches (each false by default). */
function coprocessorStage(switches: readonly string[]): ObjectNode {
  return object(
    Object.fromEntries(switches.map((name) => [name, bool(false, COPROCESSOR_SWITCHES[name])])),
    "Called when any switch is true.",
  );
}

function storage(prefix: string): ObjectNode {
  return object({
    provider_id: str("", {
      description: "Id of a `storage_providers.redis` entry; empty: this replica's memory.",
    }),
    key_prefix: str(prefix, { description: "Prefix of this feature's keys in Redis." }),
  }, "Where this feature keeps its shared state (docs/shared_state.md).");
}

/** The whole configuration schema; key names are the YAML names. */
export const CONFIG_SCHEMA: ObjectNode = object({
  listen_addr: str("localhost:3002", {
    description:
      "`host:port` of the router's listener (`127.0.0.1:3002`; port 0: any free port). Use loopback behind a proxy; `0.0.0.0` listens on every interface.",
  }),
  graphql_path: str("/graphql", { description: "Path of the GraphQL endpoint." }),
  dev_mode: bool(
    false,
    "Development mode: the playground and introspection on, access logs off, Advanced Request Tracing without a token. Never in production.",
  ),
  log_level: {
    kind: "enum",
    values: ["debug", "info", "warn", "error"],
    default: "info",
    description: "Lowest level logged (JSON lines on stdout).",
  },
  workers: int(
    1,
    "Serving isolates sharing the listener (1: the main isolate serves). More use more cores and more memory.",
    { min: 1 },
  ),
  heap: object(
    {
      max_young_generation_mb: int(
        0,
        "V8 young generation of each serving isolate, MiB; 0: V8's default.",
      ),
      max_old_generation_mb: int(
        0,
        "V8 old generation of each serving isolate, MiB; 0: V8's default.",
      ),
    },
    "V8 heap limits of each serving isolate. Either above 0: the isolates are worker threads with these limits, supervised (and restarted when out of heap) by the main one.",
  ),
  supergraph_path: str("schema/supergraph.graphql", {
    file: true,
    description:
      "The supergraph SDL (Apollo Federation 2) the router serves; reloaded when it changes. `gw-router compose` writes it.",
  }),
  supergraph_source: object(
    {
      kind: {
        kind: "enum",
        values: ["file", "url", "hive_cdn", "apollo_uplink"],
        default: "file",
        description:
          "Where the supergraph comes from: `file` (`supergraph_path`), `url` (GET with `ETag`), `hive_cdn` (the Hive CDN's artifact), `apollo_uplink` (Apollo GraphOS). Other than `file`, `supergraph_path` keeps the last good one for restarts while the registry is away.",
      },
      url: str("", { description: "`url`: the address to GET the supergraph SDL from." }),
      headers: list(
        [],
        "`url`: request headers, `Name: value` each (keep secrets in the environment).",
      ),
      endpoint: str("", {
        description:
          "`hive_cdn`: the CDN endpoint of the target (`https://cdn.graphql-hive.com/artifacts/v1/<target>`).",
      }),
      key: str("", {
        description:
          "`hive_cdn`: the CDN access key (`X-Hive-CDN-Key`); `apollo_uplink`: the graph API key (default: env `APOLLO_KEY`).",
      }),
      graph_ref: str("", {
        description:
          "`apollo_uplink`: the graph ref, `graph@variant` (default: env `APOLLO_GRAPH_REF`).",
      }),
      endpoints: list(
        [],
        "`apollo_uplink`: Uplink URLs tried in turn; empty: Apollo's two public ones.",
      ),
      poll_interval_ms: duration(10_000, "Time between polls of the registry.", { min: 1_000 }),
      timeout_ms: duration(10_000, "Longest wait for one poll's answer.", { min: 1 }),
      max_bytes: size(64_000_000, "Largest supergraph accepted from the registry.", { min: 1 }),
    },
    "The supergraph's source: a file, or a registry polled for changes (docs/supergraph-source.md).",
  ),
  operations_dir: str("operations", {
    file: true,
    description:
      "Folder of named operations (`*.graphql`, one per file): the MCP tools and Connect methods. A missing folder is warned about and serves none.",
  }),
  max_request_body_bytes: size(
    DEFAULT_MAX_BODY_BYTES,
    "Largest accepted request body (413 past it).",
    {
      min: 1,
    },
  ),
  subgraphs: {
    kind: "array",
    item: object({
      name: {
        kind: "string",
        required: true,
        description: "The subgraph's name (`accounts`); its `join__Graph` value.",
      },
      routing_url: {
        kind: "string",
        required: true,
        description: "The URL the router sends this subgraph's requests to.",
      },
      schema_file: {
        kind: "string",
        required: true,
        file: true,
        description: "The subgraph's SDL file.",
      },
    }, "One subgraph."),
    description:
      "The subgraphs `gw-router compose` composes into `supergraph_path` (not read by `serve`).",
  },
  headers: object(
    {
      all: object(HEADER_RULES.fields, "Rules for every subgraph request."),
      subgraphs: {
        kind: "record",
        value: HEADER_RULES,
        description: "Rules per subgraph name, applied after `all`.",
      },
    },
    "Which client headers are forwarded to subgraphs, and which subgraph answer headers reach the client (none by default).",
  ),
  authentication: object({
    jwt: object({
      jwks: {
        kind: "array",
        item: JWKS_SOURCE,
        description: "Key sources that verify bearer tokens; the first that verifies a token wins.",
      },
      header_name: str("Authorization", { description: "The header carrying the token." }),
      header_value_prefix: str("Bearer", {
        description: "The prefix before the token in that header.",
      }),
      clock_skew_ms: duration(60_000, "Leeway for `exp`, `nbf` and a future `iat`."),
      readiness_requires_keys: bool(
        true,
        "`/health/ready` answers 503 until every `url` key source has loaded once.",
      ),
      // Issue 34: a browser sends cookies by itself, so a cookie token is read only from a
      // request a cross-site page cannot forge (see `findToken` in lib/auth/token_source.ts).
      cookie_name: str("", {
        description:
          "A cookie carrying the token when the header is absent (the header wins); empty: off. Needs a preflighted request (`csrf_prevention.required_headers`). Never on MCP.",
      }),
      // Issue 34: RFC 6750 §2.3 (SHOULD NOT): a URL ends up in logs and browser history.
      allow_query_token: bool(
        false,
        "Also read a token from `?access_token=` on GET (discouraged: URLs end up in logs). Never on MCP.",
      ),
    }, "JWT bearer tokens."),
  }, "Token verification for GraphQL and Connect requests (docs/authentication.md)."),
  authorization: object({
    require_authentication: bool(
      false,
      "Refuse GraphQL and Connect requests without a valid token (401).",
    ),
    reject_operation_if_unauthorized: bool(
      false,
      "Refuse the whole operation when a field is not authorized, instead of answering it as null with an error.",
    ),
  }, "Enforcement of `@authenticated` and `@requiresScopes`."),
  cors: object({
    enabled: bool(true, "Answer CORS preflights and add CORS headers."),
    allow_origins: list(
      ["*"],
      "Allowed origins: `*`, exact origins, or patterns like `https://*.example.com`.",
    ),
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
    ], "Request headers allowed in preflights."),
    expose_headers: list(
      [],
      "Headers exposed to browsers besides `Mcp-Session-Id` and `WWW-Authenticate`.",
    ),
    allow_credentials: bool(false, "Allow credentials (refused with the origin `*`)."),
    max_age_seconds: int(300, "How long browsers may cache a preflight, seconds."),
  }, "Cross-origin requests from browsers."),
  mcp: object({
    enabled: bool(true, "Serve the MCP (Model Context Protocol) tool server on `mcp.path`."),
    graph_name: str("mygraph", { description: "The graph's name as MCP clients see it." }),
    path: str("/mcp", {
      description: "Path of the MCP endpoint (must differ from `graphql_path`).",
    }),
    server: object({
      base_url: {
        kind: "string",
        derived: true,
        description:
          "The router's public URL as clients see it (OAuth metadata, tool descriptions). Default: `http://<listen_addr>`, with the machine's name for `0.0.0.0`; set it behind a proxy.",
      },
    }, "How clients reach the router."),
    exclude_mutations: bool(false, "Expose no mutation as a tool."),
    enable_arbitrary_operations: bool(
      false,
      "Register `execute_graphql`, which runs any GraphQL the client sends. Protect it with `mcp.oauth`.",
    ),
    // Issue 34: unset, it follows introspection.enabled (the SDL is what introspection tells).
    expose_schema: {
      kind: "boolean",
      default: false,
      derived: true,
      description:
        "Register `get_schema`, which returns the API schema; unset: follows `introspection.enabled`.",
    },
    omit_tool_name_prefix: bool(
      false,
      "Name tools `<snake_case name>` instead of `execute_operation_<snake_case name>`.",
    ),
    session_secret: str("", {
      description:
        "HMAC secret of `Mcp-Session-Id` (set `MCP_SESSION_SECRET`, 32+ random characters). Empty: random per process, so sessions end with it.",
    }),
    oauth: object({
      enabled: bool(
        false,
        "Require OAuth 2.0 bearer tokens on the MCP endpoint (needs a key source).",
      ),
      jwks: {
        kind: "array",
        item: JWKS_SOURCE,
        description: "Key sources for MCP tokens; empty: `authentication.jwt.jwks`.",
      },
      authorization_server_urls: list(
        [],
        "Authorization servers listed in the protected-resource metadata (RFC 9728).",
      ),
      scopes: object({
        initialize: SCOPE_LIST("on every MCP request"),
        tools_list: SCOPE_LIST("in addition for `tools/list`"),
        tools_call: SCOPE_LIST("in addition for `tools/call` (any tool)"),
        execute_graphql: SCOPE_LIST("in addition for the `execute_graphql` tool"),
        get_operation_info: SCOPE_LIST("in addition for the `get_operation_info` tool"),
        get_schema: SCOPE_LIST("in addition for the `get_schema` tool"),
      }, "Scope gates; a token's scopes are its `scope` claim, a space-separated string."),
      scope_challenge_include_token_scopes: bool(
        false,
        "Put the token's own scopes into a 403's `scope` challenge too.",
      ),
      scope_challenge_all_levels: bool(
        false,
        "A 403 on `tools/call` names what every failing gate needs, not only the first.",
      ),
      max_scope_combinations: int(
        2048,
        "Most OR-of-AND groups an operation's combined scope requirement may have.",
        { min: 1 },
      ),
    }, "OAuth 2.0 protection of the MCP endpoint (docs/authentication.md)."),
  }, "The MCP tool server: registered operations as tools for AI agents (docs/mcp.md)."),
  connect_rpc: object({
    enabled: bool(true, "Serve the registered operations as Connect RPC methods (POST and GET)."),
    package: str("service.v1", {
      description: "Protobuf package, lower-case and dotted, ending in a version (`service.v1`).",
    }),
    service: str("GraphService", {
      description: "Protobuf service name, PascalCase, ending in `Service`.",
    }),
    get_cache_max_age: int(0, "`Cache-Control: max-age` of GET answers, seconds; 0: none."),
    max_message_bytes: size(
      DEFAULT_MAX_BODY_BYTES,
      "Largest request message (body or GET `message`), after decompression.",
      { min: 1 },
    ),
  }, "Connect RPC: the registered operations as typed RPC methods (docs/connect.md)."),
  engine: object({
    enable_request_tracing: bool(
      true,
      "Advanced Request Tracing (ART): a request with `X-GW-Trace` gets its execution trace, if admitted (dev_mode, or a signed `X-GW-Token`).",
    ),
    force_unauthenticated_request_tracing: bool(
      false,
      "Trace without a token outside dev_mode. Exposes internals to any client; logs a warning.",
    ),
    request_tracing_public_key_file: str("", {
      file: true,
      description:
        "PEM ES256 public key that verifies `X-GW-Token` (`gw-router trace-token --generate-key` writes a pair).",
    }),
    request_tracing_issuer: str("", {
      description: "Required `iss` of `X-GW-Token`; empty: not checked.",
    }),
    request_tracing_audience: str("", {
      description: "Required `aud` of `X-GW-Token`; empty: not checked.",
    }),
    request_tracing_masked_headers: list(
      [],
      "More header names masked in traces (besides credentials).",
    ),
    // Issue 18: traces without secrets.
    request_tracing_unmasked_headers: list(
      DEFAULT_UNMASKED_TRACE_HEADERS,
      "Header names whose values traces show; every other value is masked.",
    ),
    request_tracing_max_token_age_ms: duration(
      3_600_000,
      "Longest accepted `X-GW-Token` lifetime (`exp - iat`).",
    ),
    enable_single_flight: bool(
      true,
      "Share one answer among identical in-flight subgraph queries.",
    ),
    // Issue 33: many small fetches at one level become one request per subgraph.
    batch_entity_fetches: bool(
      true,
      "Send sibling entity fetches to one subgraph (same plan level) as one request, each an aliased `_entities` field.",
    ),
    // Session 9: our HTTP/1.1 pool for plain-http subgraphs (Deno's fetch is the fallback).
    subgraph_transport: {
      kind: "enum",
      values: ["http1", "fetch"],
      default: "http1",
      description:
        "`http1`: the router's keep-alive HTTP/1.1 pool for plain `http:` subgraphs (others use fetch); `fetch`: Deno's fetch for all.",
    },
    subgraph_request_timeout_ms: duration(30_000, "Timeout of one subgraph request.", { min: 1 }),
    plan_cache_size: int(1000, "Query plans kept in the plan cache."),
    // Issue 33: 0 = no fixed count; the adaptive limit sizes admission (unless disabled).
    max_concurrent_operations: int(
      0,
      "A fixed count of operations executing at once per isolate (the others wait in arrival order); 0: none, `adaptive_concurrency` sizes admission.",
    ),
    adaptive_concurrency: object({
      enabled: bool(
        true,
        "Size admission by the event-loop delay and the CPU left (when no fixed `max_concurrent_operations` is set).",
      ),
      target_delay_ms: duration(
        20,
        "Event-loop delay above which the limit shrinks (two late samples in a row).",
        { min: 1 },
      ),
      min_concurrency: int(8, "The limit never falls below this; it starts at twice this.", {
        min: 1,
      }),
      max_concurrency: int(1_000, "The limit never grows above this.", { min: 1 }),
    }, "Admission sized by capacity: an adaptive concurrency limit (docs/performance.md)."),
    max_subgraph_response_bytes: size(
      16_000_000,
      "Largest subgraph answer read (more is a `SUBGRAPH_ERROR`).",
      {
        min: 1,
      },
    ),
    execution_plan_cache_max_bytes: size(
      16_000_000,
      "Estimated heap bytes the plan cache may hold.",
    ),
    parse_cache_max_bytes: size(
      16_000_000,
      "Estimated heap bytes the parse and validation cache may hold.",
    ),
    max_cached_document_bytes: size(
      64_000,
      "Longer documents are parsed and planned per request, never cached.",
    ),
    max_response_bytes: size(
      32_000_000,
      "Subgraph answer bytes one operation may read; more is a 502 `RESPONSE_TOO_LARGE`.",
      { min: 1 },
    ),
  }, "The query engine: tracing, caches, subgraph transport and limits."),
  playground: object({
    enabled: {
      kind: "boolean",
      default: false,
      derived: true,
      description: "Serve the playground (an in-browser IDE) on `/`. Default: `dev_mode`.",
    },
  }, "The playground."),
  // Issue 14: safe by default at the request edge.
  security: object({
    parser_limits: object({
      approximate_depth_limit: int(
        200,
        "Nesting of `{`, `(` and `[` in the query text, and field depth after fragments (at most 1000).",
        { min: 1 },
      ),
      total_fields_limit: int(3500, "Fields after fragment expansion (counted, never expanded).", {
        min: 1,
      }),
      // Issue 34: coercion costs per value; a 5 MB body holds 600 000 of them.
      max_input_values: int(
        100_000,
        "Input values (variables and argument literals) a request may hold, counted before coercion.",
        { min: 1 },
      ),
    }, "Limits checked while parsing, before validation."),
    complexity_limits: object({
      depth: object(COMPLEXITY_LIMIT.fields, "Field depth."),
      total_fields: object(COMPLEXITY_LIMIT.fields, "Fields in total."),
      root_fields: object(COMPLEXITY_LIMIT.fields, "Root fields."),
      root_field_aliases: object(COMPLEXITY_LIMIT.fields, "Aliased root fields."),
      ignore_introspection: bool(
        false,
        "Introspection-only operations skip the complexity limits.",
      ),
    }, "Complexity limits (Cosmo's), each off by default."),
  }, "Operation limits, checked before planning (docs/security.md)."),
  introspection: object({
    enabled: {
      kind: "boolean",
      default: false,
      derived: true,
      description: "Answer `__schema` and `__type`. Default: `dev_mode`.",
    },
  }, "Schema introspection."),
  csrf_prevention: object({
    enabled: bool(
      true,
      "Refuse GETs and CORS-simple POSTs without a preflight header (Apollo's rule).",
    ),
    required_headers: list([
      "apollo-require-preflight",
      "x-apollo-operation-name",
      "graphql-preflight",
    ], "Any one of these, non-empty, lets such a request run."),
  }, "CSRF prevention."),
  // Issue 43: progressive @override labels other than percent(n), set by the operator.
  override_labels: {
    kind: "record",
    value: bool(false, "Whether this label is on."),
    description:
      "Progressive `@override(label:)` labels on (`true`) or off (`false`) by name; a `percent(n)` label named here is no longer drawn (docs/override_labels.md).",
  },
  // Issue 43: Apollo Client's BatchHttpLink (Apollo Router's keys).
  batching: object({
    enabled: bool(
      false,
      "Answer a JSON array of operations on `graphql_path` with an array of results; off: 400 `BATCHING_NOT_ENABLED`.",
    ),
    mode: {
      kind: "enum",
      values: ["batch_http_link"],
      default: "batch_http_link",
      description: "The batch format: `batch_http_link` (a JSON array, Apollo Client's).",
    },
    maximum_size: int(
      10,
      "The most operations in one batch; more: 400 `BATCH_LIMIT_EXCEEDED`.",
      { min: 1 },
    ),
  }, "Query batching (docs/batching.md)."),
  // Issue 43: the GraphQL multipart request specification (Cosmo's limits).
  file_uploads: object({
    enabled: bool(
      false,
      "Accept multipart file uploads on `graphql_path`; each file is streamed to the subgraph whose field takes it, never held whole.",
    ),
    max_file_size: size(
      50_000_000,
      "The largest file, bytes; larger: 413 `PAYLOAD_TOO_LARGE` (the `operations` and `map` fields are held to `max_request_body_bytes`).",
      { min: 1 },
    ),
    max_files: int(10, "The most files in one request; more: 413 `PAYLOAD_TOO_LARGE`.", {
      min: 1,
    }),
  }, "File uploads: the GraphQL multipart request specification (docs/file_uploads.md)."),
  subgraph_error_propagation: object({
    mode: {
      kind: "enum",
      values: ["wrapped", "pass-through"],
      default: "wrapped",
      description:
        "`wrapped`: one router error per subgraph carrying its filtered errors; `pass-through`: the filtered errors themselves.",
    },
    allowed_extension_fields: list(["code"], "Extension keys kept from subgraph errors."),
    attach_service_name: bool(true, "Add `extensions.serviceName`."),
    omit_locations: bool(true, "Drop `locations` (they point into the subgraph's operation)."),
    default_extension_code: str("DOWNSTREAM_SERVICE_ERROR", {
      description: "`extensions.code` of an error that carries no allowed one.",
    }),
  }, "What clients see of subgraph errors."),
  // Issue 16: observability (Cosmo's key names).
  telemetry: object({
    metrics: object({
      prometheus: object({
        enabled: bool(false, "Serve Prometheus metrics on a listener of their own."),
        listen_addr: str("127.0.0.1:8088", {
          description: "`host:port` of the metrics listener (keep it private).",
        }),
        path: str("/metrics", { description: "Path of the text exposition." }),
      }, "The Prometheus listener."),
      otlp: object({
        enabled: bool(false, "Push the metrics over OTLP/HTTP (protobuf) periodically."),
        endpoint: str("", {
          description:
            "Full metrics URL (`http://collector:4318/v1/metrics`); empty: `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/metrics`.",
        }),
        headers: list([], "Request headers, each `Name=value`."),
        interval_ms: duration(15_000, "Time between exports."),
        export_timeout_ms: duration(10_000, "Longest wait for one export request."),
      }, "Metrics pushed over OTLP."),
    }, "Metrics (docs/observability.md)."),
    tracing: object({
      enabled: bool(false, "Record OpenTelemetry spans and export them over OTLP/HTTP."),
      service_name: str("gw-router", {
        description: "`service.name` of the spans (`OTEL_SERVICE_NAME` wins).",
      }),
      sampling_rate: {
        kind: "ratio",
        default: 1,
        description: "Fraction of new traces sampled (a sampled parent is always followed).",
      },
      exporters: {
        kind: "array",
        item: object({
          endpoint: {
            kind: "string",
            required: true,
            description: "Full traces URL (`http://collector:4318/v1/traces`).",
          },
          headers: list([], "Request headers, each `Name=value`."),
          batch_timeout_ms: duration(5_000, "Longest wait before a batch is sent."),
          export_timeout_ms: duration(10_000, "Longest wait for one export request."),
        }, "One OTLP/HTTP (protobuf) exporter."),
        description: "Exporters; empty: `OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT` when set.",
      },
    }, "OpenTelemetry traces (docs/observability.md)."),
  }, "Metrics and traces."),
  access_logs: object({
    enabled: {
      kind: "boolean",
      default: true,
      derived: true,
      description: "One JSON line per request at `info`. Default: on, off in dev_mode.",
    },
  }, "The access log."),
  traffic_shaping: object({
    router: object({
      max_queue_size: int(
        128,
        "Operations that may wait for an execution slot; more get 503 `SERVICE_OVERLOADED`.",
      ),
      max_queue_wait_ms: duration(
        5_000,
        "Longest wait for a slot; longer gets 503 `SERVICE_OVERLOADED`.",
      ),
      request_timeout_ms: duration(
        60_000,
        "A request's deadline; past it the answer is 504 `GATEWAY_TIMEOUT`.",
        {
          min: 1,
        },
      ),
      max_in_flight_bytes: size(
        64_000_000,
        "Subgraph answer bytes all running operations may hold; 0: no budget.",
      ),
      max_buffered_body_bytes: size(
        64_000_000,
        "Request-body bytes all requests may hold before they are answered; past it 503. 0: no budget.",
      ),
      max_unsent_answer_bytes: size(
        64_000_000,
        "Bytes of large answers not yet taken by slow clients; past it the oldest are ended. 0: no budget.",
      ),
      // Session 10: what Deno.serve lacks (denoland/deno#3515), kept by lib/listen/guarded_serve.ts.
      header_read_timeout_ms: duration(
        10_000,
        "Longest wait for a complete request head; then the connection closes. 0: none.",
      ),
      keep_alive_timeout_ms: duration(
        75_000,
        "Longest wait for the next request on a kept-alive connection. 0: none.",
      ),
      max_connections: int(
        4_096,
        "Most client connections open at once; more are answered 503 and closed. 0: no limit.",
      ),
    }, "The router's own limits: admission, deadline, memory, connections (docs/memory.md)."),
    all: object(SUBGRAPH_TRAFFIC.fields, "Retry and circuit breaker of every subgraph."),
    subgraphs: {
      kind: "record",
      value: SUBGRAPH_TRAFFIC,
      description:
        "Per subgraph name: replaces `all` for that subgraph (omitted keys take the defaults).",
    },
  }, "Admission, deadlines, memory budgets, retries and circuit breakers."),
  // Issue 30: state shared across replicas (lib/store/), trusted documents, APQ, rate limits.
  storage_providers: object({
    redis: {
      kind: "array",
      item: object({
        id: { kind: "string", required: true, description: "The id features name in `storage`." },
        urls: list([], "Redis URLs (`redis://host:6379`, `rediss://` for TLS)."),
        cluster_enabled: bool(false, "The URLs are Redis Cluster nodes."),
        connect_timeout_ms: duration(1_000, "Longest wait to connect.", { min: 1 }),
        command_timeout_ms: duration(
          250,
          "Longest wait for one command; past it the feature's fallback applies.",
          { min: 1 },
        ),
      }, "One Redis server or cluster."),
      description: "Redis servers features can keep shared state in.",
    },
  }, "Stores of state shared across replicas."),
  persisted_operations: object({
    manifests: {
      kind: "list",
      default: [],
      file: true,
      description:
        "Trusted-document manifests (Apollo's persisted query manifest or a `{sha256: document}` map); reloaded when they change.",
    },
    safelist: object({
      enabled: bool(
        false,
        "Refuse every document that is not trusted (400 `PERSISTED_QUERY_NOT_IN_LIST`).",
      ),
    }, "The safelist of trusted documents."),
    log_unknown: bool(false, "Log documents the safelist would refuse (the rollout mode)."),
  }, "Trusted documents: manifests and `operations_dir`, sent by hash (docs/shared_state.md)."),
  automatic_persisted_queries: object({
    enabled: bool(true, "Apollo's automatic persisted queries (off while the safelist is on)."),
    cache: object({
      max_bytes: size(16_000_000, "Bytes of registered documents kept in memory."),
      ttl_ms: duration(86_400_000, "How long a registration lives.", { min: 1 }),
    }, "The APQ cache."),
    storage: storage("gw_apq"),
  }, "Automatic persisted queries (APQ)."),
  rate_limit: object({
    enabled: bool(false, "Rate-limit requests per client key (GCRA)."),
    key: str("client_ip", {
      description: "What a budget belongs to: `client_ip`, `token_subject` or `header:<Name>`.",
    }),
    rate: int(10, "Requests allowed per period.", { min: 1 }),
    burst: int(10, "Requests allowed at once above the steady rate.", { min: 1 }),
    period_ms: duration(1_000, "The period of `rate`.", { min: 1 }),
    reject_exceeding_requests: bool(
      true,
      "Answer 429 past the limit; false: serve and only count (log) them.",
    ),
    fail_open: bool(true, "While the store is unavailable, serve (true) or answer 503 (false)."),
    trusted_proxies: list(
      [],
      "Proxies (IPs or CIDRs) whose `X-Forwarded-For` names the client; nobody else's is read.",
    ),
    max_keys: int(100_000, "Client keys kept in memory (least recently seen dropped).", {
      min: 1,
    }),
    storage: storage("gw_rate_limit"),
    graphql: FACET_RATE_LIMIT,
    mcp: FACET_RATE_LIMIT,
    connect: FACET_RATE_LIMIT,
  }, "Per-client rate limits, answered 429 with `Retry-After` (docs/shared_state.md)."),
  // Issue 42: entity and root-field caching (docs/caching.md).
  entity_cache: object({
    enabled: bool(
      false,
      "Cache subgraph answers: each entity of an `_entities` fetch, and root-field query fetches whole.",
    ),
    default_ttl_ms: duration(
      60_000,
      "How long an answer is kept when its `Cache-Control` gives no `max-age` / `s-maxage`.",
      { min: 1 },
    ),
    max_bytes: size(
      64_000_000,
      "Bytes of entries kept in this replica's memory (no `storage.provider_id`).",
    ),
    max_entry_bytes: size(
      1_000_000,
      'The largest entry stored, in memory or on Redis; a larger one is not stored (counted in `gw_router_entity_cache_skipped_total{reason="too_large"}`).',
      { min: 1 },
    ),
    max_keys_per_tag: int(
      10_000,
      'Live keys one `@cacheTag` tag index holds; an entry a full index cannot take is not stored (`reason="tag_index_full"`).',
      { min: 1 },
    ),
    private_id: str("", {
      description:
        "Who private answers (`Cache-Control: private`) belong to: `token_subject` or `header:<Name>`. Empty: private answers are not cached.",
    }),
    storage: storage("gw_entity"),
    subgraphs: {
      kind: "record",
      value: object({
        enabled: bool(true, "Cache this subgraph's answers."),
        ttl_ms: duration(0, "Its TTL when its answers say none; 0: `default_ttl`."),
      }, "Caching of one subgraph's answers."),
      description:
        "Per subgraph, by name; `all` applies to every subgraph not named (default: all cached).",
    },
    invalidation: object({
      enabled: bool(false, "Serve the invalidation endpoint (Apollo Router's request shape)."),
      path: str("/invalidation", { description: "Its path on the router's listener (POST)." }),
      shared_key: str("", {
        description:
          "The `Authorization` value it requires (set `ENTITY_CACHE_INVALIDATION_SHARED_KEY`, 32+ random characters).",
      }),
    }, "Invalidation of cached entries over HTTP."),
  }, "Entity and root-field caching, in memory or on Redis (docs/caching.md)."),
  // Issue 29: federated subscriptions (docs/subscriptions.md).
  subscriptions: object({
    enabled: bool(true, "Serve subscriptions (off: refused with `SUBSCRIPTIONS_DISABLED`)."),
    max_per_connection: int(
      100,
      "Operations one WebSocket connection may hold at once: its subscriptions and its queries and mutations in flight.",
      { min: 1 },
    ),
    max_total: int(10_000, "Subscriptions this replica holds at once.", { min: 1 }),
    max_buffered_events: int(
      64,
      "Results a client may leave untaken before its stream ends (`SUBSCRIPTION_CLIENT_TOO_SLOW`); while the router is the slow one, 4 × this before `SUBSCRIPTION_LIMIT_REACHED`.",
      { min: 1 },
    ),
    max_unsent_bytes: size(
      1_000_000,
      "Bytes a WebSocket client may leave unread before it is closed (1008).",
      { min: 1 },
    ),
    max_message_bytes: size(
      262_144,
      "Bytes of one message a WebSocket client may send; a larger one closes the connection with 1009 before it is parsed.",
      { min: 1 },
    ),
    admission: object({
      enabled: bool(
        true,
        "Refuse new subscriptions (`SUBSCRIPTION_LIMIT_REACHED`) when the serving thread cannot deliver events to one more.",
      ),
      max_cpu_share: {
        kind: "ratio",
        default: 0.8,
        description:
          "The share of the serving thread's CPU the subscriptions' fan-out may be projected to take before new ones are refused.",
      },
    }, "Subscription admission by capacity (docs/subscriptions.md#admission-by-capacity)."),
    keep_alive_interval_ms: duration(15_000, "WebSocket ping interval (graphql-ws `ping`).", {
      min: 1,
    }),
    heartbeat_interval_ms: duration(5_000, "SSE comment and multipart `{}` heartbeat interval.", {
      min: 1,
    }),
    deduplicate: bool(
      true,
      "Identical upstream subscriptions (subgraph, document, variables, forwarded headers) share one stream.",
    ),
    subgraphs: {
      kind: "record",
      value: object({
        url: {
          kind: "string",
          optional: true,
          description: "The subgraph's subscription URL; default: its routing URL (`http` → `ws`).",
        },
        protocol: {
          kind: "enum",
          values: ["ws", "sse"],
          default: "ws",
          description: "`ws` (graphql-transport-ws) or `sse` (graphql-sse).",
        },
      }, "How the router opens this subgraph's subscription streams."),
      description: "Per-subgraph subscription transport, by subgraph name.",
    },
  }, "Federated subscriptions over WebSocket, SSE and multipart (docs/subscriptions.md)."),
  // Issue 41: Apollo Router's `demand_control` shape.
  demand_control: object({
    enabled: bool(
      false,
      "Estimate every operation's cost from `@cost` / `@listSize` and measure its answer's.",
    ),
    mode: {
      kind: "enum",
      values: ["measure", "enforce"],
      default: "measure",
      description:
        "`enforce`: refuse operations whose estimate passes `max` (`COST_ESTIMATED_TOO_EXPENSIVE`), before any fetch; `measure`: run them and record the figures.",
    },
    strategy: object({
      static_estimated: object({
        list_size: int(
          10,
          "The size assumed for a list no `@listSize` sizes (slicing argument or `assumedSize`).",
        ),
        max: int(
          1000,
          "The largest estimated cost admitted in `enforce` mode (admitted at exactly `max`).",
        ),
        enforce_actual_cost: bool(
          false,
          "In `enforce` mode, also refuse an answer whose actual cost passes `max` (`COST_ACTUAL_TOO_EXPENSIVE`; its data is withheld).",
        ),
        subgraph: object({
          all: object(SUBGRAPH_COST.fields, "Every subgraph's settings."),
          subgraphs: {
            kind: "record",
            value: SUBGRAPH_COST,
            description: "Per subgraph name, over `all`.",
          },
        }, "Per-subgraph list sizes and budgets."),
      }, "Apollo Router's static estimate (IBM GraphQL Cost Directives)."),
    }, "How the cost is computed."),
    expose_in_extensions: bool(
      false,
      "Add `extensions.cost` (`estimated`, `actual`, `max`, `result`, `strategy`) to answers.",
    ),
  }, "Demand control: cost analysis with `@cost` and `@listSize` (docs/demand-control.md)."),
  tls: object({
    server: object({
      cert_file: str("", {
        file: true,
        description:
          "PEM certificate (its chain after it) the listener serves HTTPS with; empty: plain HTTP. Reloaded on SIGHUP and when the file changes.",
      }),
      key_file: str("", {
        file: true,
        description: "PEM private key of `cert_file` (PKCS#8, PKCS#1 or SEC1).",
      }),
      client_ca_file: str("", {
        file: true,
        description:
          "PEM certificate authorities that sign client certificates (mutual TLS); needs `require_client_cert: true`.",
      }),
      require_client_cert: bool(
        false,
        "Refuse a connection whose client certificate is missing or not signed by `client_ca_file` (at the handshake).",
      ),
      http2: bool(
        true,
        "Offer HTTP/2 (ALPN `h2`) beside HTTP/1.1. Over HTTP/2 the router does not learn the client's address (`rate_limit` by `client_ip` sees one unknown client); a change needs a restart.",
      ),
    }, "HTTPS on `listen_addr`: HTTP/2 (ALPN `h2`) beside HTTP/1.1 (docs/tls.md)."),
    subgraphs: {
      kind: "record",
      value: object({
        ca_file: str("", {
          file: true,
          description:
            "PEM certificate authorities trusted for this subgraph's `https:`/`wss:` URL, besides the system's.",
        }),
        cert_file: str("", {
          file: true,
          description: "PEM client certificate (mutual TLS) sent to the subgraph.",
        }),
        key_file: str("", {
          file: true,
          description: "PEM private key of `cert_file`.",
        }),
      }, "TLS to one subgraph (or, under `all`, to every subgraph without its own)."),
      description:
        "TLS to subgraphs by subgraph name; `all` applies to every subgraph not named (queries, mutations, subscriptions over `wss:` and SSE).",
    },
  }, "TLS (docs/tls.md)."),
  shutdown_delay_ms: duration(
    0,
    "After SIGTERM, readiness answers 503 while the router still serves, for this long (a load balancer's time to notice).",
  ),
  grace_period_ms: duration(
    30_000,
    "Then in-flight requests get this long to finish; those still running are answered 503.",
  ),
  // Issue 40: Apollo Router's external coprocessor, its shape and JSON protocol (docs/extending.md).
  coprocessor: object(
    {
      url: str("", {
        description:
          "The coprocessor's HTTP endpoint (Apollo Router's protocol, version 1); empty: no coprocessor. A stage is called when any of its switches is true.",
      }),
      timeout_ms: duration(1_000, "Time budget of one coprocessor call.", { min: 1 }),
      max_response_bytes: size(
        5_000_000,
        "Largest coprocessor answer read (past it: a failed call).",
      ),
      fail_open: bool(
        false,
        "On a failed call (unreachable, timeout, non-2xx, a malformed answer) go on as if it said `continue` (logged); false: the request fails with 502 `COPROCESSOR_FAILED`.",
      ),
      router: object(
        {
          request: coprocessorStage(["headers", "body", "context", "sdl", "path", "method"]),
          response: coprocessorStage(["headers", "body", "context", "sdl", "status_code"]),
        },
        "The HTTP request as it arrives (`RouterRequest`) and the response as it leaves (`RouterResponse`).",
      ),
      supergraph: object(
        {
          request: coprocessorStage(["headers", "body", "context", "sdl", "method"]),
          response: coprocessorStage(["headers", "body", "context", "sdl", "status_code"]),
        },
        "The operation, parsed, validated and authorized (`SupergraphRequest`: where `@policy` is decided), and its GraphQL response (`SupergraphResponse`).",
      ),
      execution: object(
        {
          request: coprocessorStage(["headers", "body", "context", "sdl", "method"]),
          response: coprocessorStage(["headers", "body", "context", "sdl", "status_code"]),
        },
        "Apollo's execution stages: GW has no separate execution service; `ExecutionRequest` is sent right after `SupergraphRequest`, `ExecutionResponse` right before `SupergraphResponse`.",
      ),
      subgraph: object({
        all: object({
          request: coprocessorStage([
            "headers",
            "body",
            "context",
            "uri",
            "method",
            "service_name",
          ]),
          response: coprocessorStage(["headers", "body", "context", "service_name", "status_code"]),
        }, "Every subgraph request (`SubgraphRequest`) and its answer (`SubgraphResponse`)."),
      }, "Subgraph stages."),
    },
    "Apollo Router's external coprocessor (docs/extending.md): the same stages and JSON, so an Apollo coprocessor works unchanged.",
  ),
  // Issue 40: TypeScript plugins on the request pipeline's stages (docs/extending.md).
  plugins: {
    kind: "array",
    item: object({
      path: {
        kind: "string",
        required: true,
        file: true,
        description:
          "The plugin module: a file path (resolved against this file's folder) or an `npm:`, `jsr:`, `https:` or `file:` specifier. Its default export is the plugin.",
      },
      config: {
        kind: "value",
        description:
          "The plugin's config (any YAML value), checked by the plugin's `configSchema`.",
      },
      hook_timeout_ms: duration(
        1_000,
        "Time budget of each of the plugin's hooks; past it the request fails closed (`PLUGIN_FAILED`).",
        { min: 1 },
      ),
    }, "One plugin."),
    description:
      "TypeScript plugins, run in this order at each stage they hook (docs/extending.md). A module is imported once per process: a changed file needs a restart.",
  },
}, "The whole configuration.");
