/**
 * The engine: parse+validate (graphql-js) → normalize → plan (cached) →
 * execute the plan against subgraphs → shape the response.
 *
 * - `prepare.ts`: `parse` (`maxTokens`) + `validate` (`maxErrors`) against the API schema,
 *   operation selection; cached here by text + operation name, failures included.
 * - `normalize.ts`: fragments inlined, fields merged, `@skip`/`@include` applied, abstract
 *   selections split per concrete type.
 * - `plan.ts`: the federation planner (pure); plans cached by text + name + the values of
 *   the `@skip`/`@include` variables, in an LRU of `engine.plan_cache_size`.
 * - `execute.ts`: walks the plan; `subgraph_client.ts` sends (headers by `headers.ts`,
 *   timeout, single flight).
 * - `shape.ts`: the client's selection over the merged data, with null propagation.
 *
 * Introspection (`__schema`, `__type`) is answered from the API schema by graphql-js;
 * nothing else on the federated path uses graphql-js `execute`.
 *
 * @module
 */
import {
  type DocumentNode,
  execute as graphqlExecute,
  getVariableValues,
  type GraphQLFormattedError,
  Kind,
  type OperationDefinitionNode,
} from "graphql";
import type { HeadersConfig } from "../config/types.ts";
import type { SupergraphModel } from "../supergraph/mod.ts";
import { type AdmissionGate, createAdmissionGate } from "./admission.ts";
import { executePlan } from "./execute.ts";
import { compileHeaderRules, type HeaderPropagator } from "./headers.ts";
import { Lru } from "./_lru.ts";
import { normalizeOperation, type NSelection } from "./normalize.ts";
import { drawOverrideLabels, type OverrideLabel, overrideLabelsOf } from "./override_labels.ts";
import { type PlannedOperation, PlanningError, planOperation, type QueryPlan } from "./plan.ts";
import { formatted, prepareOperation } from "./prepare.ts";
import { shapeResponse } from "./shape.ts";
import { createSubgraphClient, type SubgraphClient } from "./subgraph_client.ts";
import type {
  ExecuteOptions,
  ExecutionObserver,
  ExecutionResult,
  GraphQLRequest,
  PreparedOperation,
  PrepareResult,
} from "./types.ts";

export type * from "./types.ts";
export type { FetchNode, FlattenNode, PlanNode, QueryPlan } from "./plan.ts";

/** Sends one subgraph HTTP request (injected, so tests and traces can see it). */
export type SubgraphFetch = (request: Request) => Promise<Response>;

/** Options for {@linkcode createEngine}. */
export interface EngineOptions {
  /** Defaults to the global `fetch` (keep-alive connection pool). */
  readonly fetch?: SubgraphFetch;
  /** Header propagation rules (`headers`); default: nothing forwarded. */
  readonly headers?: HeadersConfig;
  /** Share one response among identical in-flight subgraph requests. @default true */
  readonly enableSingleFlight?: boolean;
  /** Per-subgraph-request timeout in milliseconds. @default 30000 */
  readonly subgraphRequestTimeoutMs?: number;
  /** Plans (and prepared operations) kept. @default 1000 */
  readonly planCacheSize?: number;
  /** Largest subgraph response body read, bytes. @default Infinity */
  readonly maxSubgraphResponseBytes?: number;
  /**
   * Size of {@linkcode Engine.admission}: operations the HTTP edge lets run at
   * once, the others waiting in arrival order. 0 = no limit. @default 0
   */
  readonly maxConcurrentOperations?: number;
  /** Random source drawing progressive `@override` `percent(n)` labels per request. @default Math.random */
  readonly random?: () => number;
}

/** A cached plan with what shaping needs. */
interface CachedPlan {
  readonly planned: PlannedOperation;
  readonly selection: NSelection;
  readonly introspection: DocumentNode | null;
  readonly error: GraphQLFormattedError | null;
}

/** The engine state for one supergraph: model, plan cache, subgraph client. */
export interface Engine {
  readonly model: SupergraphModel;
  /** @internal Prepared operations by query text + operation name (failures included). */
  readonly prepared: Lru<string, PrepareResult>;
  /** @internal Plans by query text + operation name + `@skip`/`@include` values. */
  readonly plans: Lru<string, CachedPlan>;
  /** @internal The subgraph HTTP client. */
  readonly client: SubgraphClient;
  /** @internal Interface names (an `@interfaceObject` `__typename` never replaces a concrete one). */
  readonly abstractNames: ReadonlySet<string>;
  /**
   * Admission of operations (`engine.max_concurrent_operations`), taken by the
   * HTTP edge before a request's body is read (`lib/http/handler.ts`).
   */
  readonly admission: AdmissionGate;
  /** @internal Progressive `@override` labels of the supergraph, and the random source drawing them. */
  readonly overrideLabels: {
    readonly labels: readonly OverrideLabel[];
    readonly random: () => number;
  };
}

/**
 * Builds the engine for a supergraph model.
 * @param model The supergraph model.
 * @param options Subgraph client, header rules and cache options.
 * @returns The engine.
 */
export function createEngine(model: SupergraphModel, options: EngineOptions = {}): Engine {
  const size = options.planCacheSize ?? 1000;
  const propagators = new Map<string, HeaderPropagator | null>();
  for (const name of model.subgraphs.keys()) {
    propagators.set(name, compileHeaderRules(options.headers, name));
  }
  const client = createSubgraphClient({
    subgraphs: model.subgraphs,
    propagators,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    singleFlight: options.enableSingleFlight ?? true,
    timeoutMs: options.subgraphRequestTimeoutMs ?? 30_000,
    ...(options.maxSubgraphResponseBytes === undefined
      ? {}
      : { maxResponseBytes: options.maxSubgraphResponseBytes }),
  });
  const abstractNames = new Set<string>();
  for (const type of model.types.values()) {
    if (type.kind === "interface") abstractNames.add(type.name);
  }
  return {
    model,
    prepared: new Lru(size),
    plans: new Lru(size),
    client,
    abstractNames,
    overrideLabels: { labels: overrideLabelsOf(model), random: options.random ?? Math.random },
    admission: createAdmissionGate(options.maxConcurrentOperations ?? 0),
  };
}

/** Options of {@linkcode prepare}. */
export interface PrepareCallOptions {
  /** Trace hooks (parse/validate timings). */
  readonly observer?: ExecutionObserver;
}

/**
 * Parses, validates and selects the operation (cached by text + name, failures included).
 * @param engine The engine.
 * @param request The request.
 * @param options Observer for stage timings.
 * @returns The prepared operation or request errors.
 */
export function prepare(
  engine: Engine,
  request: GraphQLRequest,
  options: PrepareCallOptions = {},
): PrepareResult {
  const key = `${request.query}\u0000${request.operationName ?? ""}`;
  const cached = engine.prepared.get(key);
  if (cached) return cached;
  const observer = options.observer;
  const result = prepareOperation(
    engine.model.apiSchema,
    request,
    observer ? { now: () => observer.now(), stage: (n, s, e) => observer.stage(n, s, e) } : {},
  );
  engine.prepared.set(key, result);
  return result;
}

function introspectionDocument(
  document: DocumentNode,
  operation: OperationDefinitionNode,
): DocumentNode | null {
  const selections = operation.selectionSet.selections.filter((s) =>
    s.kind === Kind.FIELD && (s.name.value === "__schema" || s.name.value === "__type")
  );
  if (selections.length === 0) return null;
  return {
    kind: Kind.DOCUMENT,
    // Fragments stay: introspection queries (GraphiQL's) spread them.
    definitions: [
      { ...operation, selectionSet: { kind: Kind.SELECTION_SET, selections } },
      ...document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION),
    ],
  };
}

function planFor(
  engine: Engine,
  operation: PreparedOperation,
  variables: Readonly<Record<string, unknown>>,
  observer: ExecutionObserver | undefined,
): CachedPlan {
  const conditions = operation.conditionVariables ?? [];
  let key = operation.key ?? "";
  for (const name of conditions) key += variables[name] === true ? "\u00011" : "\u00010";
  const { labels, random } = engine.overrideLabels;
  const active = labels.length === 0 ? null : drawOverrideLabels(labels, random);
  for (const label of active ?? []) key += "\u0002" + label;
  const cached = operation.key === undefined ? undefined : engine.plans.get(key);
  if (cached) {
    observer?.plan(cached.planned.plan, { cached: true });
    return cached;
  }
  const t0 = observer?.now() ?? 0;
  const normalized = normalizeOperation(engine.model.apiSchema, operation.document, {
    operation: operation.operation,
    variables,
  });
  const t1 = observer?.now() ?? 0;
  observer?.stage("normalize", t0, t1);
  let planned: PlannedOperation = { plan: { kind: "QueryPlan", node: null }, step: null };
  let error: GraphQLFormattedError | null = null;
  try {
    planned = planOperation(engine.model, normalized, active ? { overrideLabels: active } : {});
  } catch (e) {
    // A planner bug must not become a 500: the client gets a request-scoped error.
    error = e instanceof PlanningError
      ? { message: e.message, extensions: { code: "QUERY_PLANNING_FAILED" } }
      : { message: "Query planning failed", extensions: { code: "INTERNAL" } };
  }
  observer?.stage("plan", t1, observer.now());
  const entry: CachedPlan = {
    planned,
    selection: normalized.selection,
    introspection: introspectionDocument(operation.document, operation.operation),
    error,
  };
  if (operation.key !== undefined) engine.plans.set(key, entry);
  observer?.plan(planned.plan, { cached: false });
  return entry;
}

/**
 * The plan of a prepared operation (from the plan cache, or planned and cached now).
 * Variables only decide `@skip`/`@include`.
 *
 * @example A plan is plain data
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSupergraph } from "../supergraph/mod.ts";
 * import { createEngine, planOf, prepare } from "./mod.ts";
 * const sdl = await Deno.readTextFile(new URL("../../schema/supergraph.graphql", import.meta.url));
 * const engine = createEngine(buildSupergraph(sdl));
 * const prepared = prepare(engine, { query: "{ users { id } }" });
 * assert.ok(prepared.ok);
 * assert.equal(planOf(engine, prepared.operation).node?.kind, "Fetch");
 * ```
 * @param engine The engine.
 * @param operation The prepared operation.
 * @param variables Coerced variables.
 * @returns The query plan.
 */
export function planOf(
  engine: Engine,
  operation: PreparedOperation,
  variables: Readonly<Record<string, unknown>> = {},
): QueryPlan {
  return planFor(engine, operation, variables, undefined).planned.plan;
}

/**
 * Coerces variables, plans (cached) and executes the operation.
 * @param engine The engine.
 * @param operation The prepared operation.
 * @param options Variables, headers, signal, observer.
 * @returns The GraphQL response (no `data` key for request errors).
 */
export async function execute(
  engine: Engine,
  operation: PreparedOperation,
  options: ExecuteOptions = {},
): Promise<ExecutionResult> {
  const schema = engine.model.apiSchema;
  if (operation.kind === "subscription") {
    return {
      errors: [{
        message: "Subscriptions are not supported",
        extensions: { code: "BAD_REQUEST" },
      }],
    };
  }
  const coerced = getVariableValues(
    schema,
    operation.operation.variableDefinitions ?? [],
    (options.variables ?? {}) as Record<string, unknown>,
    { maxErrors: 50 },
  );
  if (coerced.errors) {
    return { errors: coerced.errors.map((e) => formatted(e, "BAD_USER_INPUT")) };
  }
  const variables = coerced.coerced;
  const observer = options.observer;
  const planned = planFor(engine, operation, variables, observer);
  if (planned.error) return { data: null, errors: [planned.error] };
  const sendOptions = {
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(observer ? { now: () => observer.now() } : {}),
  };
  const [executed, introspected] = await Promise.all([
    executePlan(planned.planned.step, {
      send: (subgraph, body, shareable) =>
        engine.client.send(
          subgraph,
          body,
          shareable ? sendOptions : { ...sendOptions, unshared: true },
        ),
      variables,
      operationKind: operation.kind,
      abstractNames: engine.abstractNames,
      // Only queries share subgraph responses, and only with single flight on.
      sharedResponses: engine.client.singleFlight && operation.kind === "query",
      ...(observer
        ? {
          observer,
          describe: (subgraph: string, body: string) =>
            engine.client.describe(subgraph, body, options.headers),
        }
        : {}),
    }),
    planned.introspection
      ? graphqlExecute({ schema, document: planned.introspection, variableValues: variables })
      : null,
  ]);
  const errors = executed.errors;
  if (introspected) {
    // Plain objects (graphql-js builds null-prototype ones); introspection only, so rare.
    if (introspected.data) {
      Object.assign(executed.data, JSON.parse(JSON.stringify(introspected.data)));
    }
    for (const e of introspected.errors ?? []) errors.push(e.toJSON());
  }
  const data = shapeResponse(executed.data, planned.selection, {
    errors,
    layers: executed.layers,
  });
  return errors.length > 0 ? { data, errors } : { data };
}
