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
  KeySources,
  type RequestAuthorization,
} from "../auth/mod.ts";
import type { Config } from "../config/mod.ts";
import { buildConnectState, type ConnectState } from "../connect/mod.ts";
import {
  createEngine,
  type Engine,
  type Http1Pool,
  operationLimitsOf,
  prepareUncached,
  resilienceOf,
  subgraphErrorPolicyOf,
  type SubgraphFetch,
} from "../engine/mod.ts";
import { parseConfig } from "../config/mod.ts";
import type { Logger } from "../log/mod.ts";
import { buildMcpState, type McpState } from "../mcp/mod.ts";
import {
  buildOperationRegistry,
  type OperationFile,
  type OperationRegistry,
} from "../operations/mod.ts";
import { engineEntityCache } from "./entity_cache.ts";
import { buildSupergraph, type SupergraphModel } from "../supergraph/mod.ts";
import {
  buildTrustedDocuments,
  parseManifest,
  type PersistedState,
  sha256Hex,
} from "../persisted/mod.ts";
import { createStores, type Stores } from "../store/mod.ts";
import { coprocessorPlugin, loadPlugins, type PluginHost } from "../plugins/mod.ts";
import type { Telemetry } from "../telemetry/mod.ts";
import { buildTraceState, type TraceState } from "../trace/mod.ts";
import { type CpuSource, servingThreadCpu } from "./thread_cpu.ts";
import { demandControlOf } from "./demand_control.ts";

export type { CpuSource } from "./thread_cpu.ts";

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
  /**
   * JWKS URL key sources of every verifier (background refresh, readiness,
   * the unknown-`kid` wait before admission); closed when the state is replaced.
   */
  readonly keySources: KeySources;
  /** Metrics, access logs and traces (one for the process, kept across reloads); null when off. */
  readonly telemetry: Telemetry | null;
  /** Trusted documents, the safelist and APQ (issue 30). */
  readonly persisted: PersistedState;
  /** Shared state of the process (APQ, rate limits; kept across reloads). */
  readonly stores: Stores;
  /** The loaded `plugins:`; absent or null without any (then no stage costs anything). */
  readonly plugins?: PluginHost | null;
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
  /**
   * The HTTP/1.1 pool of the process (kept across reloads); used when
   * `engine.subgraph_transport` is `http1`.
   */
  readonly http1?: Http1Pool | null;
  /** `tls.subgraphs`' clients by entry name (`all` for the rest), read by the caller. */
  readonly httpClients?: ReadonlyMap<string, Deno.HttpClient>;
  /** JWKS fetch (tests inject one). */
  readonly jwksFetch?: typeof fetch;
  /**
   * The CPU source of operation and subscription admission; default: the serving
   * thread's (tests inject a steady one).
   */
  readonly cpu?: CpuSource;
  /** The state being replaced (a reload): its JWKS sources and loaded keys carry over. */
  readonly previous?: RouterState | null;
  /** The process's telemetry (`lib/telemetry`); absent: none. */
  readonly telemetry?: Telemetry;
  /** The files of `persisted_operations.manifests`, read. */
  readonly manifests?: readonly { readonly path: string; readonly text: string }[];
  /** The process's stores (kept across reloads); absent: memory stores of this state's own. */
  readonly stores?: Stores;
}

/**
 * Builds the router state from config and file contents. No I/O beyond key imports.
 * @param inputs Config, logger and file contents.
 * @returns The state.
 */
export async function buildState(inputs: StateInputs): Promise<RouterState> {
  const { config, log } = inputs;
  const supergraph = buildSupergraph(inputs.supergraphSdl);
  // One clock for the gate and the subscriptions, read on this (the serving) thread.
  const cpu = inputs.cpu ?? servingThreadCpu(config.workers);
  // Plugins first (issue 40): one that cannot load stops the start or the reload, holding nothing.
  const pluginMetrics = inputs.telemetry?.metrics;
  const coprocessor = coprocessorPlugin(config.coprocessor, {
    sdl: inputs.supergraphSdl,
    log,
    ...(pluginMetrics
      ? { onCall: (stage, outcome) => pluginMetrics.coprocessorCall(stage, outcome) }
      : {}),
  });
  const plugins = await loadPlugins(config.plugins, {
    log,
    supergraph,
    ...(pluginMetrics
      ? {
        events: {
          hook: (plugin, hook, outcome) => pluginMetrics.pluginHook(plugin, hook, outcome),
        },
      }
      : {}),
    ...(coprocessor === null ? {} : { builtIn: [coprocessor] }),
  });
  let unsentEnded = 0;
  const stores = inputs.stores ?? createStores(config, { log });
  const engine = createEngine(supergraph, {
    // The store outlives reloads; a reload that turns the cache off stops using it.
    ...(stores.entityCache && config.entity_cache.enabled
      ? {
        entityCache: engineEntityCache(config.entity_cache, {
          store: stores.entityCache,
          model: supergraph,
          unknownSubgraph: (subgraph) =>
            log.warn("entity_cache.subgraphs names a subgraph the supergraph does not have", {
              subgraph,
            }),
          ...(inputs.telemetry?.entityCacheEvents
            ? { events: inputs.telemetry.entityCacheEvents }
            : {}),
        }),
      }
      : {}),
    headers: config.headers,
    overrideLabels: config.override_labels,
    credentialHeaders: [config.authentication.jwt.header_name].filter((name) => name !== ""),
    enableSingleFlight: config.engine.enable_single_flight,
    batchEntityFetches: config.engine.batch_entity_fetches,
    maxConcurrentOperations: config.engine.max_concurrent_operations,
    ...(config.engine.adaptive_concurrency.enabled
      ? {
        adaptiveConcurrency: {
          targetDelayMs: config.engine.adaptive_concurrency.target_delay_ms,
          minLimit: config.engine.adaptive_concurrency.min_concurrency,
          maxLimit: config.engine.adaptive_concurrency.max_concurrency,
        },
        cpu,
      }
      : {}),
    maxSubgraphResponseBytes: config.engine.max_subgraph_response_bytes,
    subgraphRequestTimeoutMs: config.engine.subgraph_request_timeout_ms,
    planCacheSize: config.engine.plan_cache_size,
    limits: operationLimitsOf(config.security),
    introspection: config.introspection.enabled,
    subgraphErrors: subgraphErrorPolicyOf(config.subgraph_error_propagation),
    planCacheMaxBytes: config.engine.execution_plan_cache_max_bytes,
    parseCacheMaxBytes: config.engine.parse_cache_max_bytes,
    maxCachedDocumentBytes: config.engine.max_cached_document_bytes,
    maxResponseBytes: config.engine.max_response_bytes,
    maxInFlightBytes: config.traffic_shaping.router.max_in_flight_bytes,
    maxUnsentAnswerBytes: config.traffic_shaping.router.max_unsent_answer_bytes,
    onUnsentAnswerEnded: (bytes) => {
      // Logged at the 1st, 2nd, 4th, 8th… ended answer: a flood of them is a few lines.
      if ((++unsentEnded & (unsentEnded - 1)) !== 0) return;
      log.warn("Ended answers their clients did not take, to stay within the limit", {
        answers_ended: unsentEnded,
        bytes,
        max_unsent_answer_bytes: config.traffic_shaping.router.max_unsent_answer_bytes,
      });
    },
    maxBufferedBodyBytes: config.traffic_shaping.router.max_buffered_body_bytes,
    maxQueueSize: config.traffic_shaping.router.max_queue_size,
    maxQueueWaitMs: config.traffic_shaping.router.max_queue_wait_ms,
    resilience: resilienceOf(config.traffic_shaping, supergraph.subgraphs.keys(), {
      now: () => performance.now(),
      defaults: parseConfig({}).traffic_shaping.all,
    }),
    ...(inputs.fetch ? { fetch: inputs.fetch } : {}),
    ...(inputs.http1 && config.engine.subgraph_transport === "http1"
      ? { http1: inputs.http1 }
      : {}),
    ...(inputs.httpClients ? { httpClients: inputs.httpClients } : {}),
    ...(inputs.telemetry?.engineEvents ? { events: inputs.telemetry.engineEvents } : {}),
    ...(config.demand_control.enabled
      ? { demandControl: demandControlOf(config, supergraph.subgraphs, log) }
      : {}),
    subscriptions: {
      enabled: config.subscriptions.enabled,
      subgraphs: config.subscriptions.subgraphs,
      maxTotal: config.subscriptions.max_total,
      maxBuffered: config.subscriptions.max_buffered_events,
      deduplicate: config.subscriptions.deduplicate,
      // Sampled whatever admission says: whether the router is behind decides who is too slow.
      // With its cores: a process figure (no per-thread clock) is a share of every serving isolate.
      cpuTime: cpu.time,
      cores: cpu.cores,
      ...(config.subscriptions.admission.enabled
        ? { admission: { maxCpuShare: config.subscriptions.admission.max_cpu_share } }
        : {}),
    },
  });
  const operations = buildOperationRegistry(inputs.operationFiles, supergraph.apiSchema, {
    limits: engine.limits,
  });
  for (const skipped of operations.skipped) {
    log.warn("Operation skipped", { path: skipped.path, reason: skipped.reason });
  }
  const jwksMetrics = inputs.telemetry?.metrics;
  const keySources = new KeySources({
    headerName: (config.authentication.jwt.header_name || "Authorization").toLowerCase(),
    prefix: config.authentication.jwt.header_value_prefix,
    readinessRequiresKeys: config.authentication.jwt.readiness_requires_keys,
    log,
    ...(inputs.jwksFetch ? { fetch: inputs.jwksFetch } : {}),
    ...(inputs.previous ? { previous: inputs.previous.keySources } : {}),
    ...(jwksMetrics
      ? { onFetched: (ok: boolean) => jwksMetrics.jwksRefresh(ok ? "success" : "failure") }
      : {}),
  });
  // One token verifier (key sources, key cache) for the GraphQL and Connect facets.
  let auth: Promise<AuthState> | null = null;
  if (config.authentication.jwt.jwks.length > 0) {
    auth = buildAuthState(config, { keySources });
    // A key source that cannot be read (missing file, not a JWKS or PEM) is a config error:
    // it stops the start or the reload, never leaves a state answering every request 500.
    // URL sources load in the background: nothing waits for the identity provider here.
    await auth.catch((error) => {
      keySources.close();
      throw error;
    });
  }
  // A label the supergraph never uses would switch nothing: a typo, or a stale key.
  const used = new Set(engine.overrideLabels.labels.map((l) => l.label));
  const unused = Object.keys(config.override_labels).filter((label) => !used.has(label));
  if (unused.length > 0) {
    log.warn("override_labels names labels no @override of the supergraph uses", {
      labels: unused.join(", "),
    });
  }
  const authorization = buildRequestAuthorization(config, { auth });
  if (auth === null) {
    const guarded = [...supergraph.access.values()].filter((a) =>
      a.authenticated || a.requiresScopes !== null
    ).length;
    if (guarded > 0) {
      log.warn(
        "@authenticated / @requiresScopes fields are never served on GraphQL and Connect requests: authentication.jwt.jwks is empty, so no request has a verified identity",
        { guarded_elements: guarded },
      );
    }
  }
  const base = { config, log, engine, operations };
  const [mcp, trace] = await Promise.all([
    buildMcpState(base, { keySources }),
    buildTraceState(config, inputs.traceKeyPem),
  ]).catch((error) => {
    keySources.close();
    throw error;
  });
  const connect = buildConnectState(base);
  const telemetry = inputs.telemetry ?? null;
  const persisted = await buildPersisted(inputs, { engine, stores });
  return {
    config,
    log,
    supergraph,
    engine,
    operations,
    mcp,
    connect,
    trace,
    authorization,
    keySources,
    telemetry,
    persisted,
    stores,
    plugins,
  };
}

/**
 * The trusted documents (manifests, then `operations_dir` under each file's
 * SHA-256), prepared once here, and the safelist and APQ settings.
 */
async function buildPersisted(
  inputs: StateInputs,
  options: { readonly engine: Engine; readonly stores: Stores },
): Promise<PersistedState> {
  const { config, log } = inputs;
  const { engine, stores } = options;
  const entries = [
    ...(inputs.manifests ?? []).flatMap((file) => parseManifest(file.text, file.path)),
    ...await Promise.all(
      inputs.operationFiles.map(async (file) => ({
        id: await sha256Hex(file.text),
        body: file.text,
      })),
    ),
  ];
  const documents = await buildTrustedDocuments(entries, {
    prepare: (query, operationName) => prepareUncached(engine, { query, operationName }),
  });
  for (const invalid of documents.invalid) {
    log.warn("Persisted operation does not validate against this supergraph", invalid);
  }
  const safelist = config.persisted_operations.safelist.enabled;
  const metrics = inputs.telemetry?.metrics;
  return {
    documents,
    safelist,
    logUnknown: config.persisted_operations.log_unknown,
    // As Apollo Router: APQ registrations would let anyone add to the safelist.
    apq: safelist || !config.automatic_persisted_queries.enabled ? null : stores.apq,
    onUnknown: (refused, { hash }) => {
      metrics?.persistedRefusal(refused ? "refused" : "logged");
      if (!refused) log.info("Operation is not a trusted document (log_unknown)", { hash });
    },
  };
}
