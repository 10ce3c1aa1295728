/**
 * `RouterState`: everything a request needs, built once by {@linkcode buildState}
 * and replaced whole on reload (in-flight requests keep the state they started with).
 *
 * @module
 */
import {
  type AuthState,
  buildAuthState,
  buildRequestAuthorization,
  type RequestAuthorization,
} from "../auth/mod.ts";
import type { Config } from "../config/types.ts";
import { buildConnectState, type ConnectState } from "../connect/mod.ts";
import { createEngine, type Engine, resilienceOf, type SubgraphFetch } from "../engine/mod.ts";
import { parseConfig } from "../config/parse.ts";
import type { Logger } from "../log/mod.ts";
import { buildMcpState, type McpState } from "../mcp/mod.ts";
import {
  buildOperationRegistry,
  type OperationFile,
  type OperationRegistry,
} from "../operations/mod.ts";
import { buildSupergraph, type SupergraphModel } from "../supergraph/mod.ts";
import { buildTraceState, type TraceState } from "../trace/mod.ts";

/** The immutable state shared by every facet. */
export interface RouterState {
  /** The validated, frozen configuration. */
  readonly config: Config;
  /** The logger at `config.log_level`. */
  readonly log: Logger;
  /** The supergraph model. */
  readonly supergraph: SupergraphModel;
  /** The engine (plan cache, subgraph client) for this supergraph. */
  readonly engine: Engine;
  /** Named operations of `operations_dir`. */
  readonly operations: OperationRegistry;
  /** MCP tools and scope policy; null when MCP is disabled. */
  readonly mcp: McpState | null;
  /** Connect methods; null when Connect is disabled. */
  readonly connect: ConnectState | null;
  /** The trace gate. */
  readonly trace: TraceState;
  /** `@authenticated` / `@requiresScopes` on GraphQL requests (token verifier shared with Connect). */
  readonly authorization: RequestAuthorization;
}

/** Inputs of {@linkcode buildState}: the config plus every file it names, already read. */
export interface StateInputs {
  /** The configuration. */
  readonly config: Config;
  /** The logger. */
  readonly log: Logger;
  /** Text of `supergraph_path`. */
  readonly supergraphSdl: string;
  /** The `*.graphql` files of `operations_dir`. */
  readonly operationFiles: readonly OperationFile[];
  /** PEM of `engine.request_tracing_public_key_file`, or null. */
  readonly traceKeyPem: string | null;
  /** Subgraph fetch (tests inject one). */
  readonly fetch?: SubgraphFetch;
}

/**
 * Builds the router state from config and file contents. No I/O beyond key imports.
 * @param inputs Config, logger and file contents.
 * @returns The state.
 */
export async function buildState(inputs: StateInputs): Promise<RouterState> {
  const { config, log } = inputs;
  const supergraph = buildSupergraph(inputs.supergraphSdl);
  const engine = createEngine(supergraph, {
    headers: config.headers,
    enableSingleFlight: config.engine.enable_single_flight,
    maxConcurrentOperations: config.engine.max_concurrent_operations,
    maxSubgraphResponseBytes: config.engine.max_subgraph_response_bytes,
    subgraphRequestTimeoutMs: config.engine.subgraph_request_timeout_ms,
    planCacheSize: config.engine.plan_cache_size,
    planCacheMaxBytes: config.engine.execution_plan_cache_max_bytes,
    parseCacheMaxBytes: config.engine.parse_cache_max_bytes,
    maxCachedDocumentBytes: config.engine.max_cached_document_bytes,
    maxResponseBytes: config.engine.max_response_bytes,
    maxInFlightBytes: config.traffic_shaping.router.max_in_flight_bytes,
    maxQueueSize: config.traffic_shaping.router.max_queue_size,
    maxQueueWaitMs: config.traffic_shaping.router.max_queue_wait_ms,
    resilience: resilienceOf(config.traffic_shaping, supergraph.subgraphs.keys(), {
      now: () => performance.now(),
      defaults: parseConfig({}).traffic_shaping.all,
    }),
    ...(inputs.fetch ? { fetch: inputs.fetch } : {}),
  });
  const operations = buildOperationRegistry(inputs.operationFiles, supergraph.apiSchema);
  for (const skipped of operations.skipped) {
    log.warn("Operation skipped", { path: skipped.path, reason: skipped.reason });
  }
  // One token verifier (key sources, key cache) for the GraphQL and Connect facets.
  let auth: Promise<AuthState> | null = null;
  if (config.authentication.jwt.jwks.length > 0) {
    auth = buildAuthState(config);
    auth.catch((error) => log.error("Token key sources failed", { error: String(error) }));
  }
  const authorization = buildRequestAuthorization(config, { auth });
  if (auth === null) {
    const guarded = [...supergraph.access.values()].filter((a) =>
      a.authenticated || a.requiresScopes !== null
    ).length;
    if (guarded > 0) {
      log.warn(
        "@authenticated / @requiresScopes are not enforced on GraphQL and Connect requests: authentication.jwt.jwks is empty",
        { guarded_elements: guarded },
      );
    }
  }
  const base = { config, log, engine, operations };
  const [mcp, trace] = await Promise.all([
    buildMcpState(base),
    buildTraceState(config, inputs.traceKeyPem),
  ]);
  const connect = buildConnectState({ ...base, auth });
  return { config, log, supergraph, engine, operations, mcp, connect, trace, authorization };
}
