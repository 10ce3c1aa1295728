/**
 * The MCP slice of the router state: tools, scope policy, keys and metadata,
 * compiled once per state so the request path only looks things up.
 *
 * @module
 */
import type { PersistedState } from "../persisted/mod.ts";
import type { GraphQLSchema } from "graphql";
import {
  type AuthState,
  buildAuthState,
  type BuildAuthStateOptions,
  isValidScope,
  type OperationAccessResult,
  type RequestAuthorization,
} from "../auth/mod.ts";
import type { Config } from "../config/mod.ts";
import type { Engine, PreparedOperation } from "../engine/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { OperationRegistry } from "../operations/mod.ts";
import type { AccessRequirement } from "../supergraph/mod.ts";
import { compileScopePolicy, type ScopePolicy } from "./policy.ts";
import { importSessionKey, SessionRevocations } from "./session.ts";
import { McpStreamHub, type StreamHubOptions } from "./streams.ts";
import { buildTools, type McpTool } from "./tools.ts";
import type { Telemetry } from "../telemetry/mod.ts";

/** Everything MCP needs, compiled once per state (tools, scope policy, keys). */
export interface McpState {
  readonly enabled: boolean;
  /** `mcp.oauth.enabled`: bearer tokens required and scopes enforced. */
  readonly oauth: boolean;
  readonly tools: readonly McpTool[];
  readonly toolsByName: ReadonlyMap<string, McpTool>;
  /** Registered-operation tools by GraphQL operation name. */
  readonly toolsByOperation: ReadonlyMap<string, McpTool>;
  /** The `tools/list` entries, built once (with `outputSchema`: revisions 2025-06-18+). */
  readonly toolList: readonly Readonly<Record<string, unknown>>[];
  /** Identifies the tool list: a reload that changes it notifies the streams. */
  readonly toolListKey: string;
  /** Server-to-client streams of this replica (handed to the next state on reload). */
  readonly streams: McpStreamHub;
  /** The same without `outputSchema` (revision 2025-03-26). */
  readonly legacyToolList: readonly Readonly<Record<string, unknown>>[];
  readonly policy: ScopePolicy;
  readonly auth: AuthState | null;
  readonly sessionKey: CryptoKey;
  /** Session ids ended by DELETE (in-process; see `session.ts`). */
  readonly revocations: SessionRevocations;
  /** `<base_url>/mcp`. */
  readonly resource: string;
  /** `<base_url>/.well-known/oauth-protected-resource/mcp`. */
  readonly resourceMetadataUrl: string;
  /** The RFC 9728 document, serialized once. */
  readonly metadataJson: string;
  readonly includeTokenScopes: boolean;
  /** `mcp.oauth.scope_challenge_all_levels`: one `tools/call` challenge for gates 2–4. */
  readonly challengeAllLevels: boolean;
  readonly maxScopeCombinations: number;
  /** `<base_url><graphql_path>`, for `get_operation_info`. */
  readonly graphqlUrl: string;
  readonly schema: GraphQLSchema;
  readonly access: ReadonlyMap<string, AccessRequirement>;
  /** Gate 5's requirement per prepared inline query (the engine caches prepared operations). */
  readonly runtimeAccess: WeakMap<PreparedOperation, OperationAccessResult>;
  /** Largest accepted body, bytes. */
  readonly maxBodyBytes: number;
  /** Clock, milliseconds. */
  readonly now: () => number;
  /** Browser origins accepted (DNS-rebinding guard): own origin plus origins listed in `cors.allow_origins` (`*` is not honoured here). */
  readonly allowedOrigins: ReadonlySet<string>;
}

/** What the MCP handlers read from the router state. */
export interface McpDeps {
  readonly config: Config;
  readonly engine: Engine;
  readonly operations: OperationRegistry;
  readonly mcp: McpState | null;
  readonly log: Logger;
  /** Metrics and spans (`lib/telemetry`); absent or null when off. */
  readonly telemetry?: Telemetry | null;
  /**
   * The router's own authentication (`authentication.jwt`,
   * `authorization.require_authentication`): who calls when `mcp.oauth` is off.
   */
  readonly authorization?: RequestAuthorization;
  /** Trusted documents and the safelist (issue 30); absent: no safelist. */
  readonly persisted?: PersistedState;
}

/** Options for {@linkcode buildMcpState} (tests). */
export interface BuildMcpStateOptions extends BuildAuthStateOptions {
  /** Clock, milliseconds. */
  readonly now?: () => number;
  /** Stream bounds (tests). */
  readonly streams?: StreamHubOptions;
}

/** Per-process fallback secret when `mcp.session_secret` is empty (sessions then die with the process). */
const PROCESS_SECRET = crypto.getRandomValues(new Uint8Array(32));

/**
 * Builds the MCP state.
 * @param deps Config, engine, operations, logger (mcp not yet set).
 * @param options Fetch, file reader and clock (tests).
 * @returns The MCP state, or null when MCP is disabled.
 * @throws {RouterError} `CONFIG_INVALID` for a scope outside the RFC 6749 grammar or a bad key source.
 */
export async function buildMcpState(
  deps: Omit<McpDeps, "mcp">,
  options: BuildMcpStateOptions = {},
): Promise<McpState | null> {
  const { config, engine, operations, log } = deps;
  const mcp = config.mcp;
  if (!mcp.enabled) return null;
  const schema = engine.model.apiSchema;
  const access = engine.model.access;
  const built = buildTools({ config: mcp, registry: operations, schema, access });
  for (const skipped of built.skipped) {
    log.warn("MCP tool skipped", { operation: skipped.operation, reason: skipped.reason });
  }
  const tools = built.tools;
  const perTool = new Map<string, McpTool["requirement"]>();
  for (const tool of tools) {
    if (tool.kind !== "operation") continue;
    const bad = tool.requirement.flat().find((scope) => !isValidScope(scope));
    if (bad !== undefined) {
      log.warn("MCP tool has a scope outside the RFC 6749 grammar", {
        tool: tool.name,
        scope: bad,
      });
    }
    perTool.set(tool.name, tool.requirement);
  }
  const builtIns = tools.flatMap((tool) => tool.kind === "operation" ? [] : [tool.kind]);
  const policy = compileScopePolicy(mcp.oauth.scopes, { builtIns, tools: perTool });
  const base = mcp.server.base_url.replace(/\/+$/, "");
  const path = mcp.path || "/mcp";
  const resource = `${base}${path}`;
  const resourceMetadataUrl = `${base}/.well-known/oauth-protected-resource${path}`;
  const supported = new Set<string>([
    ...policy.initialize,
    ...policy.toolsList,
    ...policy.toolsCall,
    ...[...policy.builtIns.values()].flat(),
    ...tools.flatMap((tool) => tool.requirement.flat()),
  ]);
  const metadata = {
    resource,
    authorization_servers: [...mcp.oauth.authorization_server_urls],
    bearer_methods_supported: ["header"],
    scopes_supported: [...supported].filter(isValidScope).sort(),
  };
  const ownKeys = mcp.oauth.jwks.length > 0;
  const auth = mcp.oauth.enabled
    ? await buildAuthState(config, {
      ...options,
      ...(ownKeys ? { jwks: mcp.oauth.jwks, jwksPath: "mcp.oauth.jwks" } : {}),
      // The MCP spec's MUST (RFC 8707 / RFC 9728): tokens must be issued for this resource.
      defaultAudiences: [resource],
      // Issue 34: by the servers the metadata names (a key source's own `issuer` wins).
      // A trailing slash is the only difference tolerated between the two spellings.
      defaultIssuers: mcp.oauth.authorization_server_urls.flatMap((url) => [
        url,
        url.endsWith("/") ? url.slice(0, -1) : `${url}/`,
      ]),
      // The MCP authorization spec: tokens in the header only, never in the URL or a cookie.
      allowQueryToken: false,
      cookieName: "",
    })
    : null;
  const secret = mcp.session_secret ? mcp.session_secret : PROCESS_SECRET;
  if (!mcp.session_secret) {
    log.warn("mcp.session_secret is empty: MCP sessions are valid in this process only");
  }
  const toolList = tools.map((tool) =>
    Object.freeze({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      ...(tool.outputSchema === null ? {} : { outputSchema: tool.outputSchema }),
      annotations: tool.annotations,
    })
  );
  return Object.freeze({
    enabled: true,
    oauth: mcp.oauth.enabled,
    tools,
    toolsByName: new Map(tools.map((tool) => [tool.name, tool])),
    toolsByOperation: new Map(
      tools.flatMap((tool) => tool.operation ? [[tool.operation.name, tool] as const] : []),
    ),
    toolList,
    toolListKey: JSON.stringify(toolList),
    streams: new McpStreamHub({
      ...(options.now ? { now: options.now } : {}),
      ...options.streams,
    }),
    legacyToolList: tools.map((tool) =>
      Object.freeze({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
        annotations: tool.annotations,
      })
    ),
    policy,
    auth,
    sessionKey: await importSessionKey(secret),
    revocations: new SessionRevocations(),
    resource,
    resourceMetadataUrl,
    metadataJson: JSON.stringify(metadata),
    includeTokenScopes: mcp.oauth.scope_challenge_include_token_scopes,
    challengeAllLevels: mcp.oauth.scope_challenge_all_levels,
    maxScopeCombinations: mcp.oauth.max_scope_combinations,
    graphqlUrl: `${base}${config.graphql_path || "/graphql"}`,
    schema,
    access,
    runtimeAccess: new WeakMap<PreparedOperation, OperationAccessResult>(),
    maxBodyBytes: config.max_request_body_bytes > 0 ? config.max_request_body_bytes : 4 << 20,
    now: options.now ?? Date.now,
    allowedOrigins: new Set([
      new URL(base).origin,
      ...(config.cors.enabled ? config.cors.allow_origins.filter((o) => o !== "*") : []),
    ]),
  });
}
