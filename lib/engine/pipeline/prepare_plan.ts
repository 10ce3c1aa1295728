/**
 * The cached front of the pipeline: {@linkcode prepare} (parse, validate and
 * select, cached by text and operation name) and the plan cache (plans keyed
 * by text, name, `@skip`/`@include` values and what field access removed).
 *
 * @module
 */
import { type GraphQLFormattedError } from "graphql";
import { touchedAccessKeys } from "../../auth/mod.ts";
import {
  accessSignature,
  drawOverrideLabels,
  type FieldIdentity,
  filterOperation,
  introspectionDocument,
  normalizeOperation,
  prepareOperation,
} from "../prepare/mod.ts";
import { entryCost } from "../admission/mod.ts";
import {
  type PlannedOperation,
  PlanningError,
  planOperation,
  type QueryPlan,
} from "../plan/mod.ts";
import type {
  ExecutionObserver,
  GraphQLRequest,
  PreparedOperation,
  PrepareResult,
  RequestHooks,
} from "../types.ts";

import { type CachedPlan, type Engine } from "./engine.ts";

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
  engine.events?.cache("parse", cached !== undefined);
  if (cached) return cached;
  const observer = options.observer;
  const result = prepareOperation(engine.model.apiSchema, request, {
    limits: engine.limits,
    introspection: engine.introspection,
    ...(observer ? { now: () => observer.now(), stage: (n, s, e) => observer.stage(n, s, e) } : {}),
  });
  // The key (document and operation name, both the client's) decides: a huge name is no cheaper.
  if (key.length <= engine.maxCachedDocumentBytes) {
    engine.prepared.set(key, result, entryCost(key));
  }
  return result;
}

/**
 * Prepares a trusted document once, at load (persisted operations): the same
 * checks as {@linkcode prepare}, never the parse cache.
 * @param engine The engine.
 * @param request The document and operation name.
 * @returns The prepared operation or request errors.
 */
export function prepareUncached(
  engine: Engine,
  request: { readonly query: string; readonly operationName: string | null },
): PrepareResult {
  return prepareOperation(engine.model.apiSchema, request, {
    limits: engine.limits,
    introspection: engine.introspection,
  });
}

function accessKeysOf(engine: Engine, operation: PreparedOperation): readonly string[] {
  let keys = engine.accessKeys.get(operation);
  if (keys === undefined) {
    keys = touchedAccessKeys(operation.document, engine.model.apiSchema, engine.model.access, {
      operationName: operation.name,
    });
    engine.accessKeys.set(operation, keys);
  }
  return keys;
}

/** @internal What planning an operation needs besides the operation. */
export interface PlanCallOptions {
  readonly observer?: ExecutionObserver;
  readonly identity: FieldIdentity | null;
  readonly incremental?: boolean;
  /** Progressive `@override` labels the request sets on or off (over `override_labels`). */
  readonly overrideLabels?: Readonly<Record<string, boolean>>;
}

/**
 * @internal The plan of an operation through the plan cache, reporting the
 * cache lookup (metrics) and the planning time (request hooks).
 */
export function planFor(
  engine: Engine,
  operation: PreparedOperation,
  variables: Readonly<Record<string, unknown>>,
  options: PlanCallOptions & { readonly hooks?: RequestHooks },
): CachedPlan {
  const hooks = options.hooks;
  const start = hooks ? performance.now() : 0;
  const entry = planOrCached(engine, operation, variables, options);
  engine.events?.cache("plan", entry.cached);
  hooks?.planned(entry.cached, start, performance.now());
  return entry.plan;
}

/** @internal The plan of an operation, from the plan cache or planned and cached. */
export function planOrCached(
  engine: Engine,
  operation: PreparedOperation,
  variables: Readonly<Record<string, unknown>>,
  options: PlanCallOptions,
): { readonly plan: CachedPlan; readonly cached: boolean } {
  const { observer, identity } = options;
  const incremental = options.incremental === true && operation.hasDefer === true;
  const conditions = operation.conditionVariables ?? [];
  let key = operation.key ?? "";
  for (const name of conditions) key += variables[name] === true ? "\u00011" : "\u00010";
  // What the identity removes is part of the plan (see field_access.ts). Only a
  // non-empty signature is appended: the common key stays the prepared operation's
  // own string, whose hash V8 has already computed (a cache hit hashes nothing new).
  const signature = accessSignature(accessKeysOf(engine, operation), engine.model.access, identity);
  if (signature !== "") key += `\u0002${signature}`;
  const { labels, random, configured } = engine.overrideLabels;
  const active = labels.length === 0 ? null : drawOverrideLabels(labels, random, {
    configured,
    requested: options.overrideLabels,
  });
  for (const label of active ?? []) key += "\u0003" + label;
  if (incremental) key += "\u0004";
  const cached = operation.key === undefined ? undefined : engine.plans.get(key);
  if (cached) {
    observer?.plan(cached.planned.plan, { cached: true });
    return { plan: cached, cached: true };
  }
  const t0 = observer?.now() ?? 0;
  const normalized = normalizeOperation(engine.model.apiSchema, operation.document, {
    operation: operation.operation,
    variables,
    incremental,
  });
  const t1 = observer?.now() ?? 0;
  observer?.stage("normalize", t0, t1);
  const filtered = filterOperation(normalized, { access: engine.model.access, identity });
  let planned: PlannedOperation = { plan: { kind: "QueryPlan", node: null }, step: null };
  let error: GraphQLFormattedError | null = null;
  try {
    // Every root field removed: nothing to fetch (the empty plan above), no planner call.
    if (filtered.operation.selection.fields.length > 0) {
      planned = planOperation(
        engine.model,
        filtered.operation,
        active ? { overrideLabels: active } : {},
      );
    }
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
    denied: filtered.denied,
    removed: filtered.removed,
    ...(planned.defer
      ? {
        parts: {
          selections: new Map(),
          denied: { from: filtered.denied, to: new Set(filtered.denied) },
        },
      }
      : {}),
  };
  if (operation.key !== undefined && operation.key.length <= engine.maxCachedDocumentBytes) {
    engine.plans.set(key, entry, entryCost(key));
  }
  observer?.plan(planned.plan, { cached: false });
  return { plan: entry, cached: false };
}

/**
 * The plan of a prepared operation (from the plan cache, or planned and cached now).
 * Variables only decide `@skip`/`@include`; the plan is an anonymous request's (protected
 * fields removed, see `field_access.ts`).
 *
 * @example A plan is plain data
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSupergraph } from "../../supergraph/mod.ts";
 * import { createEngine, planOf, prepare } from "../mod.ts";
 * const sdl = await Deno.readTextFile(new URL("../../../schema/supergraph.graphql", import.meta.url));
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
  return planFor(engine, operation, variables, { identity: null }).planned.plan;
}
