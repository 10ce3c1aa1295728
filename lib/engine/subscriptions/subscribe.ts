/**
 * Subscriptions of one engine: where each subgraph's subscriptions are opened (derived from
 * its routing URL unless `subscriptions.subgraphs.<name>` says otherwise), the deduplicated
 * upstream streams, the active client subscriptions and their limits and counts.
 *
 * A subscription's plan is the root fetch (the subgraph subscription: its answers are the
 * stream's events) followed by the fetches that depend on it; {@linkcode startSubscription}
 * joins the root fetch's upstream stream and runs the rest per event (`event_stream.ts`).
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import type { SupergraphModel } from "../../supergraph/mod.ts";
import type { FetchStep, PlanStep } from "../plan/mod.ts";
import { clientFor, type HeaderPropagator } from "../fetch/mod.ts";
import { type HubListener, SubscriptionHub, type UpstreamEvent } from "./upstream_hub.ts";
import {
  type OpenUpstream,
  openUpstream,
  type SubscriptionProtocol,
  type UpstreamFailure,
  type UpstreamTarget,
} from "./upstream_stream.ts";
import type { ExecutionObserver, ExecutionResult, SubgraphStages } from "../types.ts";
import { createFanoutCapacity, type FanoutCapacity } from "./fanout_capacity.ts";
import { cpuShare } from "../admission/mod.ts";
import { EventStream } from "./event_stream.ts";
import { unrefTimer } from "../../timers.ts";
import { printOnce } from "../execute/mod.ts";

/** `subscriptions.subgraphs.<name>`: where a subgraph's subscriptions are opened. */
export interface SubscriptionTargetOption {
  /** Absent: the routing URL (`http:` → `ws:` for the `ws` protocol). */
  readonly url?: string;
  /** @default "ws" */
  readonly protocol?: SubscriptionProtocol;
}

/** Options of the engine's subscriptions (`subscriptions`). */
export interface SubscriptionsOptions {
  /** `subscriptions.enabled`. @default true */
  readonly enabled?: boolean;
  /** Per subgraph. */
  readonly subgraphs?: Readonly<Record<string, SubscriptionTargetOption>>;
  /** `subscriptions.max_total`: active subscriptions of the engine. @default 10000 */
  readonly maxTotal?: number;
  /** `subscriptions.max_buffered_events`: results one client may leave untaken. @default 64 */
  readonly maxBuffered?: number;
  /** `subscriptions.deduplicate`: identical upstream streams are shared. @default true */
  readonly deduplicate?: boolean;
  /** Opens an upstream stream. @default openUpstream (graphql-ws / graphql-sse clients) */
  readonly open?: OpenUpstream;
  /** How long a subgraph may take to accept a stream, ms (`engine.subgraph_request_timeout`). */
  readonly connectTimeoutMs?: number;
  /**
   * Admission by capacity (`subscriptions.admission`): the share of the serving thread the
   * fan-out may be projected to take; absent: no admission by capacity (the fan-out is still
   * sampled when `cpuTime` is given: whether the router is behind decides who is too slow).
   */
  readonly admission?: { readonly maxCpuShare: number };
  /** The serving thread's CPU time so far, µs (`lib/state/thread_cpu.ts`); absent: not measured. */
  readonly cpuTime?: () => number;
  /** Cores `cpuTime` is a share of. @default 1 */
  readonly cores?: number;
  /** How often the fan-out is sampled, ms. @default 100 */
  readonly sampleIntervalMs?: number;
  /** Monotonic clock, ms. @default performance.now */
  readonly now?: () => number;
  /** Sets a timer (tests inject fakes). @default setTimeout, unref'd */
  readonly setTimer?: (callback: () => void, ms: number) => number;
  /** `tls.subgraphs`' clients by entry name (`all` for the rest). */
  readonly httpClients?: ReadonlyMap<string, Deno.HttpClient>;
}

/** Why subscriptions were refused or ended by the router's limits, counted. */
export interface SubscriptionLimitCounts {
  /** Refused: `subscriptions.max_total`. */
  refusedMaxTotal: number;
  /** Refused: one more would pass `subscriptions.admission.max_cpu_share`. */
  refusedCapacity: number;
  /** Refused: the serving thread is saturated (behind its events). */
  refusedBehind: number;
  /** Refused: `subscriptions.max_per_connection` (counted by the WebSocket transport). */
  refusedPerConnection: number;
  /** Ended: the client took its results too slowly (`SUBSCRIPTION_CLIENT_TOO_SLOW`). */
  endedClientTooSlow: number;
  /** Ended: the router fell too far behind (`SUBSCRIPTION_LIMIT_REACHED`). */
  endedRouterBehind: number;
}

/** The engine's subscriptions state. */
export interface Subscriptions {
  readonly enabled: boolean;
  readonly hub: SubscriptionHub;
  /** Active client subscriptions. */
  readonly active: Set<EventStream>;
  readonly targets: ReadonlyMap<string, UpstreamTarget>;
  readonly maxTotal: number;
  readonly maxBuffered: number;
  /** Header rules per subgraph (the upstream connect's headers). */
  readonly propagators: ReadonlyMap<string, HeaderPropagator | null>;
  /** Counts: subscriptions started, results delivered to clients, plan ids given. */
  readonly counts: { started: number; eventsOut: number; planIds: number };
  /** Refusals and ends by the router's limits. */
  readonly limits: SubscriptionLimitCounts;
  /** The fan-out's capacity estimate; null: not measured (no `cpuTime`). */
  readonly capacity: FanoutCapacity | null;
  /** Whether new subscriptions are refused by the estimate (`subscriptions.admission.enabled`). */
  readonly admission: boolean;
  /** Events handed to client subscriptions (the capacity's samples read it). */
  pushes: number;
  /** Starts the fan-out sampler if it is not running (it stops once no subscription is active). */
  readonly sampling: () => void;
  /**
   * Told when the engine's subscriptions end for good (a reload, a shutdown): long-lived
   * client connections (WebSocket) registered here close, so their clients reconnect to the
   * state that replaced this one.
   */
  readonly connections: Set<(error: GraphQLFormattedError) => void>;
  /** Set once ended for good: later subscriptions are refused with this error. */
  retired: GraphQLFormattedError | null;
  /** Ids of the plans subscriptions run (part of the key under which events' results are shared). */
  readonly planIds: WeakMap<object, number>;
}

/**
 * Builds the subscriptions state of an engine.
 * @param model The supergraph (its subgraphs' routing URLs).
 * @param options `subscriptions` and the header rules.
 * @returns The state.
 */
export function createSubscriptions(
  model: SupergraphModel,
  options: SubscriptionsOptions & {
    readonly propagators: ReadonlyMap<string, HeaderPropagator | null>;
  },
): Subscriptions {
  const targets = new Map<string, UpstreamTarget>();
  for (const [name, info] of model.subgraphs) {
    const given = options.subgraphs?.[name];
    const protocol = given?.protocol ?? "ws";
    const url = given?.url ?? (protocol === "ws" ? info.url.replace(/^http/i, "ws") : info.url);
    const client = options.httpClients === undefined || !/^(https|wss):/i.test(url)
      ? undefined
      : clientFor(options.httpClients, name);
    targets.set(name, {
      url,
      protocol,
      ...(client === undefined ? {} : { client }),
      ...(options.connectTimeoutMs === undefined
        ? {}
        : { connectTimeoutMs: options.connectTimeoutMs }),
    });
  }
  const capacity = options.cpuTime === undefined ? null : createFanoutCapacity(
    options.admission === undefined ? {} : { maxShare: options.admission.maxCpuShare },
  );
  const subs: Subscriptions = {
    enabled: options.enabled ?? true,
    hub: new SubscriptionHub({
      open: options.open ?? openUpstream,
      ...(options.deduplicate === undefined ? {} : { deduplicate: options.deduplicate }),
    }),
    active: new Set(),
    targets,
    maxTotal: options.maxTotal ?? 10_000,
    maxBuffered: options.maxBuffered ?? 64,
    propagators: options.propagators,
    counts: { started: 0, eventsOut: 0, planIds: 0 },
    limits: {
      refusedMaxTotal: 0,
      refusedCapacity: 0,
      refusedBehind: 0,
      refusedPerConnection: 0,
      endedClientTooSlow: 0,
      endedRouterBehind: 0,
    },
    capacity,
    admission: options.admission !== undefined,
    pushes: 0,
    sampling: capacity === null ? () => {} : fanoutSampler(() => subs, capacity, options),
    connections: new Set(),
    retired: null,
    planIds: new WeakMap(),
  };
  return subs;
}

/**
 * The sum of two sets of limit counts (a replaced state's and the current one's).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sumLimits } from "./subscribe.ts";
 * const zero = {
 *   refusedMaxTotal: 0, refusedCapacity: 0, refusedBehind: 0, refusedPerConnection: 0,
 *   endedClientTooSlow: 0, endedRouterBehind: 0,
 * };
 * assert.equal(sumLimits({ ...zero, refusedCapacity: 2 }, { ...zero, refusedCapacity: 3 }).refusedCapacity, 5);
 * ```
 * @param a Counts.
 * @param b Counts.
 * @returns A new object with each count summed.
 */
export function sumLimits(
  a: SubscriptionLimitCounts,
  b: SubscriptionLimitCounts,
): SubscriptionLimitCounts {
  return {
    refusedMaxTotal: a.refusedMaxTotal + b.refusedMaxTotal,
    refusedCapacity: a.refusedCapacity + b.refusedCapacity,
    refusedBehind: a.refusedBehind + b.refusedBehind,
    refusedPerConnection: a.refusedPerConnection + b.refusedPerConnection,
    endedClientTooSlow: a.endedClientTooSlow + b.endedClientTooSlow,
    endedRouterBehind: a.endedRouterBehind + b.endedRouterBehind,
  };
}

/**
 * The fan-out sampler: every `sampleIntervalMs` while subscriptions are active, the serving
 * thread's CPU share, the active subscriptions and the events handed to them since the last
 * sample go to the capacity estimate. An idle router holds no timer.
 */
function fanoutSampler(
  subsOf: () => Subscriptions,
  capacity: FanoutCapacity,
  options: SubscriptionsOptions,
): () => void {
  const cpuTime = options.cpuTime!;
  const cores = Math.max(1, options.cores ?? 1);
  const interval = options.sampleIntervalMs ?? 100;
  const now = options.now ?? (() => performance.now());
  const setTimer = options.setTimer ?? ((callback, ms) => {
    const id = setTimeout(callback, ms);
    unrefTimer(id);
    return Number(id);
  });
  let timer: number | undefined;
  let cpuSeen = 0;
  let at = 0;
  let pushesSeen = 0;
  const sample = () => {
    timer = undefined;
    const subs = subsOf();
    const time = now();
    const cpu = cpuTime();
    const busy = cpuShare(cpu - cpuSeen, { windowMs: time - at, cores });
    capacity.sample({ busy, active: subs.active.size, pushes: subs.pushes - pushesSeen });
    cpuSeen = cpu;
    at = time;
    pushesSeen = subs.pushes;
    if (subs.active.size > 0) timer = setTimer(sample, interval);
  };
  return () => {
    if (timer !== undefined) return;
    const subs = subsOf();
    cpuSeen = cpuTime();
    at = now();
    pushesSeen = subs.pushes;
    timer = setTimer(sample, interval);
  };
}

/** What {@linkcode startSubscription} and the engine's `subscribe` give. */
export type SubscribeResult =
  | { readonly ok: true; readonly stream: EventStream }
  | { readonly ok: false; readonly result: ExecutionResult };

/** Options of the engine's `subscribe` (those of `execute`, minus tracing). */
export interface SubscribeOptions {
  readonly variables?: Readonly<Record<string, unknown>> | null | undefined;
  /** The client's connect headers (the header rules read them). */
  readonly headers?: Headers;
  readonly requestId?: string | null;
  /** The verified identity (`@authenticated` / `@requiresScopes`), null: anonymous. */
  readonly identity?: { readonly scopeSet: ReadonlySet<string> } | null;
  /** Extension stages around each subgraph fetch of the events (plugins, the coprocessor). */
  readonly stages?: SubgraphStages;
  /** The `@policy` names granted to the request; absent: none. */
  readonly policies?: ReadonlySet<string>;
  /**
   * Traces of the first events (ART): called with each event's index, it gives the observer
   * that records the plan and the event's fetches, and the step that puts the trace into the
   * result; null past the events traced (the edge bounds them).
   */
  readonly traceEvent?: (index: number) => EventTrace | null;
}

/** The trace of one event of a subscription. */
export interface EventTrace {
  readonly observer: ExecutionObserver;
  /** The result with its trace (`extensions.trace`). */
  finish(result: ExecutionResult): ExecutionResult;
}

/**
 * A request error of a subscription (no `data`).
 * @param message What was wrong.
 * @param code The `extensions.code`.
 * @returns The refusal.
 */
export function refusal(message: string, code: string): SubscribeResult {
  return { ok: false, result: { errors: [{ message, extensions: { code } }] } };
}

/**
 * The first fetch of a subscription's plan: the root fetch (the subgraph subscription).
 * @param step The plan's executable tree.
 * @returns The root fetch, or null when nothing is fetched.
 */
export function rootFetchOf(step: PlanStep | null): FetchStep | null {
  while (step !== null && step.kind !== "Fetch") step = step.steps[0] ?? null;
  return step !== null && step.node.operationKind === "subscription" ? step : null;
}

/**
 * Whether one more subscription may start: not after the engine's subscriptions ended, not
 * past `subscriptions.max_total`, not past the fan-out's capacity. Checked before a
 * subscription is planned too, so that a refusal costs little when subscribers crowd in.
 * @param subs The engine's subscriptions.
 * @returns null, or the refusal (counted).
 */
export function admissionRefusal(subs: Subscriptions): SubscribeResult | null {
  if (subs.retired !== null) {
    return { ok: false, result: { errors: [subs.retired] } };
  }
  if (subs.active.size >= subs.maxTotal) {
    subs.limits.refusedMaxTotal++;
    return refusal(
      `The router serves at most ${subs.maxTotal} subscriptions at once (subscriptions.max_total); try again later`,
      "SUBSCRIPTION_LIMIT_REACHED",
    );
  }
  const overCapacity = subs.admission ? subs.capacity?.admit(subs.active.size) ?? null : null;
  if (overCapacity !== null) {
    if (overCapacity.reason === "behind") subs.limits.refusedBehind++;
    else subs.limits.refusedCapacity++;
    return refusal(overCapacity.message, "SUBSCRIPTION_LIMIT_REACHED");
  }
  return null;
}

/**
 * Joins (or opens) the root fetch's upstream stream and returns the client's stream.
 * @param subs The engine's subscriptions.
 * @param options The root fetch, its variables, the client's headers, the per-event run.
 * @returns The client's stream, or the refusal (limit reached, no target).
 */
export function startSubscription(
  subs: Subscriptions,
  options: {
    readonly root: FetchStep;
    readonly variables: Readonly<Record<string, unknown>>;
    readonly headers: Headers | undefined;
    readonly run: (event: UpstreamEvent) => Promise<ExecutionResult>;
  },
): SubscribeResult {
  const { root } = options;
  const refused = admissionRefusal(subs);
  if (refused !== null) return refused;
  const target = subs.targets.get(root.subgraph);
  if (target === undefined) {
    return refusal(`No subscription URL for the subgraph "${root.subgraph}"`, "INTERNAL");
  }
  const forwarded = new Headers();
  subs.propagators.get(root.subgraph)?.(options.headers, forwarded);
  const headers: Record<string, string> = {};
  for (const [name, value] of forwarded) headers[name] = value;
  const variables: Record<string, unknown> = {};
  for (const name of root.variableUsages) {
    if (name in options.variables) variables[name] = options.variables[name];
  }
  let leave = () => {};
  const stream: EventStream = new EventStream({
    maxBuffered: subs.maxBuffered,
    run: options.run,
    onEnd: () => {
      subs.active.delete(stream);
      leave();
    },
    onDelivered: () => subs.counts.eventsOut++,
    ...(subs.capacity === null ? {} : { behind: () => subs.capacity!.behind }),
    onDropped: (reason) => {
      if (reason === "client_too_slow") subs.limits.endedClientTooSlow++;
      else subs.limits.endedRouterBehind++;
    },
  });
  subs.active.add(stream);
  subs.counts.started++;
  subs.sampling();
  const listener: HubListener = {
    next: (event) => {
      subs.pushes++;
      stream.push(event);
    },
    end: (failure) => {
      if (failure?.errors !== undefined) {
        // The subgraph's own errors go through the plan like an event's (re-pathed, filtered).
        stream.push({
          body: JSON.stringify({ data: null, errors: failure.errors }),
          parsed: {},
          shared: new Map(),
        });
      }
      stream.end(failure === null ? null : upstreamError(root.subgraph, failure));
    },
  };
  leave = subs.hub.listen(root.subgraph, {
    target,
    request: { query: root.node.operation, variables, headers },
    listener,
  });
  if (stream.ended) leave();
  return { ok: true, stream };
}

/**
 * The error a client's subscription ends with when its upstream failed.
 * @param subgraph The subgraph.
 * @param failure What happened.
 * @returns `SUBSCRIPTION_UPSTREAM_ERROR`.
 */
export function upstreamError(subgraph: string, failure: UpstreamFailure): GraphQLFormattedError {
  return {
    message: `The subgraph "${subgraph}" ended the subscription: ${failure.reason}`,
    extensions: { code: "SUBSCRIPTION_UPSTREAM_ERROR", serviceName: subgraph },
  };
}

/**
 * Ends every active subscription of an engine with an error (a reload:
 * `SUBSCRIPTION_SCHEMA_RELOAD`; a shutdown: `SUBSCRIPTION_SERVER_SHUTDOWN`), closes its
 * upstream streams and tells its client connections; later subscriptions on it are refused
 * with the same error.
 * @param subs The engine's subscriptions (`engine.subscriptions`).
 * @param error The last result's error.
 */
export function endSubscriptions(subs: Subscriptions, error: GraphQLFormattedError): void {
  subs.retired = error;
  for (const stream of [...subs.active]) stream.end(error);
  subs.hub.closeAll();
  for (const close of [...subs.connections]) close(error);
  subs.connections.clear();
}

/**
 * The key under which subscriptions share what they make of one event: the same plan, the same
 * variables and the same headers forwarded to subgraphs give the same result.
 * @param subs The engine's subscriptions.
 * @param options The plan (an object of the plan cache), the variables, the forwarded headers.
 * @returns The key.
 */
export function eventShareKey(
  subs: Subscriptions,
  options: {
    readonly plan: object;
    readonly variables: Readonly<Record<string, unknown>>;
    readonly headers: Headers | undefined;
  },
): string {
  let id = subs.planIds.get(options.plan);
  if (id === undefined) {
    id = ++subs.counts.planIds;
    subs.planIds.set(options.plan, id);
  }
  const forwarded: string[] = [];
  for (const [name, propagate] of subs.propagators) {
    if (propagate === null) continue;
    const out = new Headers();
    propagate(options.headers, out);
    forwarded.push(name, ...[...out].flat());
  }
  return `${id}\u0000${JSON.stringify(options.variables)}\u0000${forwarded.join("\u0001")}`;
}

/**
 * What a subscription does with each event: subscribers with the same plan, variables and
 * forwarded headers (`shareKey`) share one execution of it and one result, printed once
 * (`printOnce`: every transport writes the same JSON to each of them); the first events of a
 * traced subscription, and every event of one without a share key (plugins' subgraph stages
 * see each subscriber's fetches), are executed for it alone.
 * @param options The share key (null: not shared), the execution of one event, the traces of
 * the first events.
 * @returns The per-event run of `startSubscription`.
 */
export function eventRunner(options: {
  readonly shareKey: string | null;
  readonly run: (
    event: UpstreamEvent,
    observer: ExecutionObserver | undefined,
  ) => Promise<ExecutionResult>;
  readonly traceEvent?: (index: number) => EventTrace | null;
}): (event: UpstreamEvent) => Promise<ExecutionResult> {
  const { shareKey, run, traceEvent } = options;
  let events = 0;
  return (event) => {
    const trace = traceEvent?.(events++) ?? null;
    if (trace !== null) return run(event, trace.observer).then((r) => trace.finish(r));
    if (shareKey === null) return run(event, undefined);
    let shared = event.shared.get(shareKey) as Promise<ExecutionResult> | undefined;
    if (shared === undefined) {
      shared = run(event, undefined).then(printOnce);
      event.shared.set(shareKey, shared);
    }
    return shared;
  };
}
