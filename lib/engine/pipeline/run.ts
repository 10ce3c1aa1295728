/**
 * Running a prepared operation: {@linkcode execute} (whole answers),
 * {@linkcode executeIncremental} (`@defer`) and {@linkcode subscribe}:
 * variables coerced, the plan from the cache, fetches through the subgraph
 * client, the answer shaped and shared between identical operations.
 *
 * Over 600 lines: the three entries share one start (`begin`: variables,
 * plan, demand control, uploads, plugin stages) and its option builders;
 * splitting them by stage is issue 40's pipeline work, not done in this round.
 *
 * @module
 */
import { execute as graphqlExecute, type GraphQLFormattedError } from "graphql";
import { type MemoryBudget, overloaded } from "../admission/mod.ts";
import {
  CachePolicy,
  deliveriesOf,
  deliverIncrementally,
  deliverySelection,
  type ExecutedData,
  executePlan,
  type ExecutePlanOptions,
  type PlanRun,
  shapeResponse,
  startPlan,
  uploadFetchOf,
} from "../execute/mod.ts";
import { REQUEST_ID_HEADER } from "../../request/mod.ts";
import {
  checkVariableValues,
  coerceVariables,
  formatted,
  type NSelection,
  withPolicies,
} from "../prepare/mod.ts";
import {
  admissionRefusal,
  eventRunner,
  eventShareKey,
  refusal,
  rootFetchOf,
  startSubscription,
  type SubscribeOptions,
  type SubscribeResult,
  type UpstreamEvent,
} from "../subscriptions/mod.ts";
import type {
  CostReport,
  ExecuteOptions,
  ExecutionObserver,
  ExecutionResult,
  IncrementalResult,
  PartInfo,
  PreparedOperation,
  RequestHooks,
  UploadedFiles,
} from "../types.ts";

import { type CachedPlan, type Engine, responseTooLarge } from "./engine.ts";
import { planFor } from "./prepare_plan.ts";
import type { SubgraphSender } from "../execute/mod.ts";
import type { SendOptions } from "../fetch/mod.ts";
import type { FetchStep } from "../plan/mod.ts";
import {
  admitCost,
  type CostAdmission,
  measureCost,
  reportRefusal,
  subgraphTooExpensive,
} from "./demand_control.ts";

/**
 * The client's headers as header rules see them: with `X-Request-Id` set to
 * the request's id when they carry none or another (a copy; the client's
 * headers are immutable).
 */
function withRequestIdHeader(
  headers: Headers | undefined,
  requestId: string | null | undefined,
): Headers | undefined {
  if (requestId == null || headers?.get(REQUEST_ID_HEADER) === requestId) return headers;
  const copy = new Headers(headers);
  copy.set(REQUEST_ID_HEADER, requestId);
  return copy;
}

/** The operation's variables coerced (their nesting and count bounded first), or the request errors. */
function variablesOf(
  engine: Engine,
  operation: PreparedOperation,
  given: Readonly<Record<string, unknown>> | null | undefined,
): { readonly variables: Record<string, unknown> } | ExecutionResult & { errors: unknown[] } {
  const values = (given ?? {}) as Record<string, unknown>;
  // Coercion recurses per level of a value and costs per value: both are bounded first.
  const overLimit = checkVariableValues(values, engine.limits, {
    counted: operation.inputValues ?? 0,
  });
  if (overLimit !== null) return { errors: [overLimit] };
  const coerced = coerceVariables(
    engine.model.apiSchema,
    operation.operation.variableDefinitions ?? [],
    values,
    { maxErrors: 50, hideSuggestions: !engine.introspection },
  );
  if (coerced.errors) {
    return { errors: coerced.errors.map((e) => formatted(e, "BAD_USER_INPUT")) };
  }
  return { variables: coerced.coerced };
}

/**
 * Starts a subscription: coerces its variables, plans it (cached, with the identity's
 * protected fields removed), joins the upstream stream of its root fetch (deduplicated) and
 * gives the client's stream, whose results are each event run through the rest of the plan
 * and shaped like a query's answer.
 * @param engine The engine.
 * @param operation The prepared subscription.
 * @param options Variables, connect headers, identity.
 * @returns The client's stream, or the request errors.
 */
export function subscribe(
  engine: Engine,
  operation: PreparedOperation,
  options: SubscribeOptions = {},
): SubscribeResult {
  const subs = engine.subscriptions;
  if (operation.kind !== "subscription") {
    return refusal(`Not a subscription: this is a ${operation.kind}`, "BAD_REQUEST");
  }
  if (!subs.enabled) {
    return refusal("Subscriptions are disabled (subscriptions.enabled)", "SUBSCRIPTIONS_DISABLED");
  }
  // Before the plan: a refusal at capacity stays cheap (startSubscription checks again).
  const refused = admissionRefusal(subs);
  if (refused !== null) return refused;
  const coerced = variablesOf(engine, operation, options.variables);
  if ("errors" in coerced) return { ok: false, result: coerced };
  const variables = coerced.variables;
  const planned = planFor(engine, operation, variables, {
    identity: withPolicies(options.identity ?? null, options.policies),
  });
  if (planned.error) return { ok: false, result: { errors: [planned.error] } };
  const cost = admitCost(engine, planned, variables);
  if (cost?.refusal) {
    reportRefusal(engine, cost);
    return { ok: false, result: refusalResult(engine, cost) };
  }
  const root = rootFetchOf(planned.planned.step);
  if (root === null) {
    return refusal(
      planned.removed.length > 0
        ? "The subscription's field is not authorized for this identity"
        : "The subscription selects no field a subgraph streams",
      planned.removed.length > 0 ? "UNAUTHORIZED_FIELD_OR_TYPE" : "BAD_REQUEST",
    );
  }
  const headers = engine.forwardsHeaders
    ? withRequestIdHeader(options.headers, options.requestId)
    : options.headers;
  const step = planned.planned.step;
  const limit = engine.memory.maxTicketBytes;
  const runEvent = async (
    event: UpstreamEvent,
    observer: ExecutionObserver | undefined,
  ): Promise<ExecutionResult> => {
    observer?.plan(planned.planned.plan, { cached: true });
    const ticket = engine.memory.open();
    const sendOptions = {
      ticket,
      idempotent: true,
      ...(headers ? { headers } : {}),
      ...(options.stages ? { stages: options.stages } : {}),
    };
    let executed;
    try {
      executed = await executePlan(step, {
        send: (subgraph, body) => engine.client.send(subgraph, body, sendOptions),
        answered: {
          step: root,
          response: {
            status: 200,
            headers: EMPTY_HEADERS,
            body: event.body,
            deduplicated: true,
            parsed: event.parsed,
          },
        },
        variables,
        operationKind: "subscription",
        sharedResponses: true,
        ...engineRunOptions(engine, { headers, observer }),
      });
    } finally {
      ticket.close();
    }
    if (ticket.exceeded) {
      const error = responseTooLarge(limit);
      return { data: null, errors: [{ message: error.message, extensions: { code: error.code } }] };
    }
    const result = shaped(planned, executed, limit);
    // Each event's answer is measured: its actual cost, by the same rules.
    return cost === null ? result : measureCost(engine, cost, {
      operation,
      variables,
      result,
      report: reporterOf(undefined, observer),
    });
  };
  // A plugin's subgraph stages run per subscriber (its context, its headers): not shared.
  const staged = options.stages?.request !== undefined || options.stages?.response !== undefined;
  const run = eventRunner({
    shareKey: staged ? null : eventShareKey(subs, { plan: planned, variables, headers }),
    run: runEvent,
    ...(options.traceEvent ? { traceEvent: options.traceEvent } : {}),
  });
  return startSubscription(subs, { root, variables, headers, run });
}

/** What every plan run of the engine passes to `executePlan` (the rest is the request's). */
function engineRunOptions(
  engine: Engine,
  options: {
    readonly headers: Headers | undefined;
    readonly observer: ExecutionObserver | undefined;
  },
) {
  const { headers, observer } = options;
  const limit = engine.memory.maxTicketBytes;
  return {
    abstractNames: engine.abstractNames,
    subgraphErrors: engine.subgraphErrors,
    batchEntityFetches: engine.batchEntityFetches,
    maxBytes: limit,
    tooLarge: () => responseTooLarge(limit),
    ...(observer
      ? {
        observer,
        describe: (subgraph: string, body: string) =>
          engine.client.describe(subgraph, body, headers),
      }
      : {}),
  };
}

/** The client's answer: its selection shaped over the merged data (null propagation, limit). */
function shaped(planned: CachedPlan, executed: ExecutedData, limit: number): ExecutionResult {
  const errors = executed.errors;
  const data = shapeResponse(executed.data, planned.selection, {
    errors,
    layers: executed.layers,
    denied: planned.denied,
    bytes: executed.errorBytes,
    maxBytes: limit,
    tooLarge: () => responseTooLarge(limit),
  });
  return errors.length > 0 ? { data, errors } : { data };
}

/** The headers of an event's answer (none: it came over a stream). */
const EMPTY_HEADERS = new Headers();

/** What {@linkcode begin} settled: an answer already, or the plan and the coerced variables. */
type Begun =
  | { readonly result: ExecutionResult }
  | {
    readonly planned: CachedPlan;
    readonly variables: Record<string, unknown>;
    /** Demand control's decision; null when it is off. */
    readonly cost: CostAdmission | null;
    /** The fetch that takes the request's files (`uploads`). */
    readonly uploadStep?: FetchStep;
  };

/** Where a request's cost report goes: its telemetry hooks and its trace. */
function reporterOf(
  hooks: RequestHooks | undefined,
  observer: ExecutionObserver | undefined,
): ((report: CostReport) => void) | undefined {
  if (hooks?.cost === undefined && observer?.cost === undefined) return undefined;
  return (report) => {
    hooks?.cost?.(report);
    observer?.cost?.(report);
  };
}

/** The answer of an operation demand control refused before execution. */
function refusalResult(engine: Engine, cost: CostAdmission): ExecutionResult {
  const options = engine.demandControl!.options;
  const result: ExecutionResult = { errors: [...cost.refusal!] };
  if (options.exposeInExtensions) {
    result.extensions = {
      cost: {
        estimated: cost.estimate?.total ?? null,
        actual: null,
        max: options.max,
        result: cost.result,
        strategy: "static_estimated",
      },
    };
  }
  return result;
}

/** Coerces the variables and plans (cached): the steps before any fetch. */
function begin(
  engine: Engine,
  operation: PreparedOperation,
  options: ExecuteOptions,
  incremental: boolean,
): Begun {
  if (operation.kind === "subscription") {
    return {
      result: {
        errors: [{
          message:
            "A subscription is served as a stream: use GraphQL over WebSocket, GraphQL over SSE or multipart HTTP",
          extensions: { code: "BAD_REQUEST" },
        }],
      },
    };
  }
  const coerced = variablesOf(engine, operation, options.variables);
  if ("errors" in coerced) return { result: coerced };
  const variables = coerced.variables;
  const planned = planFor(engine, operation, variables, {
    ...(options.observer ? { observer: options.observer } : {}),
    identity: withPolicies(options.identity ?? null, options.policies),
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.overrideLabels ? { overrideLabels: options.overrideLabels } : {}),
    incremental,
  });
  if (planned.error) return { result: { data: null, errors: [planned.error] } };
  let uploadStep: FetchStep | undefined;
  if (options.uploads) {
    const routed = uploadFetchOf(planned.planned.step, options.uploads.variables);
    if ("error" in routed) return { result: { errors: [routed.error] } };
    uploadStep = routed.step;
  }
  // Demand control: estimated (cached with the plan) and, in enforce mode, refused before any fetch.
  const cost = admitCost(engine, planned, variables);
  if (cost?.refusal) {
    reportRefusal(engine, cost, reporterOf(options.hooks, options.observer));
    return { result: refusalResult(engine, cost) };
  }
  return { planned, variables, cost, ...(uploadStep ? { uploadStep } : {}) };
}

/** The executor's options of one request: its subgraph sender (headers, sharing), observer. */
function planOptionsOf(
  engine: Engine,
  operation: PreparedOperation,
  options: ExecuteOptions & {
    readonly ticket: ReturnType<MemoryBudget["open"]>;
    readonly variables: Record<string, unknown>;
    readonly cost: CostAdmission | null;
    readonly uploadStep?: FetchStep;
  },
): ExecutePlanOptions {
  const { observer, ticket } = options;
  // Only header rules read the client's headers: the copy with the id is made for them.
  const headers = engine.forwardsHeaders
    ? withRequestIdHeader(options.headers, options.requestId)
    : options.headers;
  const sendOptions = {
    ticket,
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.stages ? { stages: options.stages } : {}),
    ...(headers ? { headers } : {}),
    // Nothing changes these headers during the request: what each subgraph gets from
    // them is worked out once per request, not once per fetch.
    ...(engine.forwardsHeaders ? { forwarded: new Map() } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(observer ? { now: () => observer.now() } : {}),
  };
  // Only queries share subgraph responses, and only with single flight on.
  const shared = engine.client.singleFlight && operation.kind === "query";
  // A mutation merges in place: not even its entity queries join another request's
  // answer (its writes would land in the data that request reads).
  const queryOptions = { ...sendOptions, idempotent: true, ...(shared ? {} : { unshared: true }) };
  const mutationOptions = { ...sendOptions, unshared: true };
  // Only queries go through the entity cache: nothing of a mutation is looked up or
  // stored (its entity fetches neither), and its answer is never cacheable.
  const cache = operation.kind === "query" ? engine.entityCache : null;
  if (engine.entityCache !== null && cache === null) options.cachePolicy?.uncacheable();
  // Per-subgraph budgets (enforce mode): a subgraph over its share gets no request.
  const overBudget = options.cost?.overBudget;
  const refused = (subgraph: string): Error | null => {
    const budget = overBudget?.get(subgraph);
    return budget === undefined ? null : subgraphTooExpensive(subgraph, budget);
  };
  let send: SubgraphSender = (subgraph, body, shareable) => {
    const refusal = refused(subgraph);
    if (refusal !== null) return Promise.reject(refusal);
    return engine.client.send(subgraph, body, shareable ? queryOptions : mutationOptions);
  };
  const { uploads, uploadStep } = options;
  if (uploads && uploadStep) {
    send = withUploads(send, { engine, uploads, uploadStep, mutationOptions, refused });
  }
  const seen = options.subgraphHeaders;
  if (seen) send = withHeadersSeen(send, seen);
  return {
    send,
    variables: options.variables,
    operationKind: operation.kind,
    sharedResponses: shared,
    ...engineRunOptions(engine, { headers, observer }),
    ...(cache === null ? {} : {
      entityCache: {
        settings: cache,
        privateId: cache.privateId(options.headers, options.identity),
        policy: options.cachePolicy ?? new CachePolicy(),
        shared,
        ...(options.hooks?.cached ? { onLookup: options.hooks.cached.bind(options.hooks) } : {}),
      },
    }),
  };
}

/** Sends the fetch that takes the request's files as a multipart stream (once). */
function withUploads(
  send: SubgraphSender,
  context: {
    readonly engine: Engine;
    readonly uploads: UploadedFiles;
    readonly uploadStep: FetchStep;
    readonly mutationOptions: SendOptions;
    /** A subgraph over its demand-control budget: the refusal, else null. */
    readonly refused: (subgraph: string) => Error | null;
  },
): SubgraphSender {
  const { engine, uploads, uploadStep, mutationOptions } = context;
  // The executor writes a root fetch's body as `{"query":<queryJson>,"variables":…}`.
  const prefix = `{"query":${uploadStep.queryJson},`;
  let sent = false;
  return (subgraph, body, shareable) => {
    if (sent || subgraph !== uploadStep.subgraph || !body.startsWith(prefix)) {
      return send(subgraph, body, shareable);
    }
    sent = true;
    const refusal = context.refused(subgraph);
    if (refusal !== null) return Promise.reject(refusal);
    return engine.client.upload(subgraph, uploads.body(body), mutationOptions);
  };
}

/** Tells `seen` each subgraph answer's headers (response header rules). */
function withHeadersSeen(
  send: SubgraphSender,
  seen: (subgraph: string, headers: Headers) => void,
): SubgraphSender {
  return async (subgraph, body, shareable) => {
    const response = await send(subgraph, body, shareable);
    seen(subgraph, response.headers);
    return response;
  };
}

/** Runs the introspection part of an operation (graphql-js), or null when it has none. */
function introspect(
  engine: Engine,
  planned: CachedPlan,
  variables: Record<string, unknown>,
) {
  return planned.introspection
    ? graphqlExecute({
      schema: engine.model.apiSchema,
      document: planned.introspection,
      variableValues: variables,
    })
    : null;
}

/** Merges an introspection answer into the data and errors (plain objects). */
function mergeIntrospection(
  introspected: Awaited<ReturnType<typeof introspect>>,
  into: { readonly data: Record<string, unknown>; readonly errors: GraphQLFormattedError[] },
): void {
  if (!introspected) return;
  // Plain objects (graphql-js builds null-prototype ones); introspection only, so rare.
  if (introspected.data) Object.assign(into.data, JSON.parse(JSON.stringify(introspected.data)));
  for (const e of introspected.errors ?? []) into.errors.push(e.toJSON());
}

/**
 * Coerces variables, plans (cached) and executes the operation. Requests that
 * merged the same shared subgraph answers get the same result object: treat
 * results as immutable (print one with {@linkcode resultJson}). `@defer` is
 * ignored here (one answer); see {@linkcode executeIncremental}.
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
  const begun = begin(engine, operation, options, false);
  if ("result" in begun) return begun.result;
  // The plugins' plan stage (issue 40): nothing to await without one.
  const planStage = options.stages?.plan?.(begun.planned.planned.plan);
  if (planStage) await planStage;
  const result = await executeWhole(engine, operation, { ...options, ...begun });
  return begun.cost === null ? result : measureCost(engine, begun.cost, {
    operation,
    variables: begun.variables,
    result,
    report: reporterOf(options.hooks, options.observer),
  });
}

async function executeWhole(
  engine: Engine,
  operation: PreparedOperation,
  options: ExecuteOptions & {
    readonly planned: CachedPlan;
    readonly variables: Record<string, unknown>;
    readonly cost: CostAdmission | null;
  },
): Promise<ExecutionResult> {
  const { planned, variables, observer } = options;
  // The GraphQL edge opens the ticket (it keeps the rendered answer charged while it is read).
  const ticket = options.ticket ?? engine.memory.open();
  let executed, introspected;
  try {
    [executed, introspected] = await Promise.all([
      executePlan(planned.planned.step, planOptionsOf(engine, operation, { ...options, ticket })),
      introspect(engine, planned, variables),
    ]);
  } finally {
    if (options.ticket === undefined) ticket.close();
  }
  if (ticket.exceeded) throw responseTooLarge(engine.memory.maxTicketBytes);
  if (ticket.refused) throw overloaded("memory_wait");
  const errors = executed.errors;
  mergeIntrospection(introspected, { data: executed.data, errors });
  // Requests that merged the same shared answers under one cached plan built the
  // same data: the first one's result serves them all (shared_results.ts). A
  // trace or an introspection part is the request's own.
  const answers = observer === undefined && introspected === null && operation.key !== undefined
    ? executed.answers
    : null;
  if (answers !== null) {
    const kept = engine.sharedResults.find(planned, answers);
    if (kept !== undefined) return kept;
  }
  const result = shaped(planned, executed, engine.memory.maxTicketBytes);
  if (answers !== null) engine.sharedResults.keep(planned, answers, result);
  return result;
}

/**
 * Like {@linkcode execute}, honouring `@defer`: an operation with deferred fragments that
 * need fetches of their own answers incrementally (the primary part, then each deferred part
 * as its branch completes; `docs/defer.md`); any other answers once.
 * @param engine The engine.
 * @param operation The prepared operation.
 * @param options Variables, headers, signal, observer.
 * @returns One result, or an incremental one.
 */
export async function executeIncremental(
  engine: Engine,
  operation: PreparedOperation,
  options: ExecuteOptions = {},
): Promise<ExecutionResult | IncrementalResult> {
  const begun = begin(engine, operation, options, operation.hasDefer === true);
  if ("result" in begun) return begun.result;
  const planStage = options.stages?.plan?.(begun.planned.planned.plan);
  if (planStage) await planStage;
  const defer = begun.planned.planned.defer;
  const measure = <T extends ExecutionResult>(result: T): T =>
    begun.cost === null ? result : measureCost(engine, begun.cost, {
      operation,
      variables: begun.variables,
      result,
      report: reporterOf(options.hooks, options.observer),
    });
  if (defer === undefined) {
    return measure(await executeWhole(engine, operation, { ...options, ...begun }));
  }
  const { planned, variables } = begun;
  const ticket = engine.memory.open();
  const limit = engine.memory.maxTicketBytes;
  let run: PlanRun;
  let data: Record<string, unknown> | null;
  const errors: GraphQLFormattedError[] = [];
  const memo = planned.parts!;
  const denied = memo.denied;
  /** A part's selection, once per plan. */
  const select = (selection: NSelection, deliveries: ReadonlySet<number>): NSelection => {
    let bySet = memo.selections.get(selection);
    if (!bySet) memo.selections.set(selection, bySet = new Map());
    const key = [...deliveries].join(",");
    let out = bySet.get(key);
    if (!out) bySet.set(key, out = deliverySelection(selection, deliveries, denied));
    return out;
  };
  const shape = (
    raw: Record<string, unknown>,
    selection: NSelection,
    at: { readonly errors: GraphQLFormattedError[]; readonly at?: readonly (string | number)[] },
  ) =>
    shapeResponse(raw, selection, {
      errors: at.errors,
      layers: run.layers,
      denied: denied.to,
      bytes: run.errorBytes(),
      maxBytes: limit,
      tooLarge: () => responseTooLarge(limit),
      ...(at.at ? { at: at.at } : {}),
    });
  try {
    run = startPlan(
      planOptionsOf(engine, operation, { ...options, ticket, variables, cost: begun.cost }),
    );
    const [, introspected] = await Promise.all([
      run.run(defer.primary),
      introspect(engine, planned, variables),
    ]);
    if (ticket.exceeded) throw responseTooLarge(limit);
    errors.push(...run.takeErrors());
    mergeIntrospection(introspected, { data: run.data, errors });
    const primary = select(planned.selection, deliveriesOf(defer, 0));
    data = shape(run.data, primary, { errors });
  } catch (error) {
    ticket.close();
    throw error;
  }
  const observer = options.observer;
  // The primary part is measured (deferred parts are not, as in Apollo Router).
  let initial = measure({
    data,
    ...(errors.length > 0 ? { errors } : {}),
    hasNext: data !== null && defer.deferred.some((d) => d.step !== null),
  });
  // `enforce_actual_cost` may have withheld the primary part: then nothing follows it.
  if (initial.data === null) initial = { ...initial, hasNext: false };
  const more = initial.hasNext;
  observer?.part?.({ index: 0, labels: [], hasNext: more });
  engine.events?.part?.(more ? "primary" : "last");
  if (!more) {
    ticket.close();
    return { initial, subsequent: (async function* () {})() };
  }
  const parts = deliverIncrementally({
    run: run!,
    defer,
    selection: planned.selection,
    select,
    sent: structuredClone(data!),
    shape: (raw, selection, at) => shape(raw, selection, at),
    ...(observer ? { onPart: (info: PartInfo) => observer.part?.(info) } : {}),
  });
  const subsequent = (async function* () {
    try {
      for await (const part of parts) {
        if (ticket.exceeded) throw responseTooLarge(limit);
        engine.events?.part?.(part.hasNext ? "deferred" : "last");
        yield part;
      }
    } finally {
      ticket.close();
    }
  })();
  return { initial, subsequent };
}
