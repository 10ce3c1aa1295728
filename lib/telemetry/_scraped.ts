/**
 * The metrics read at scrape time from {@linkcode MetricSources} (admission,
 * caches, memory budget, connections, subscriptions, the supergraph registry),
 * declared once each in two tables in exposition order; `metrics.ts` registers
 * them between its hot-path series.
 *
 * @module
 */
import { Counter, Gauge, type Registry } from "prom-client";

/** The size of one cache (the engine's `Lru` has both). */
export interface CacheSize {
  /** Entries. */
  readonly size: number;
  /** Sum of the entries' estimated sizes, bytes. */
  readonly bytes: number;
}

/** Live values read at scrape time. */
export interface MetricSources {
  /** The admission gate of the current state. */
  admission(): { readonly active: number; readonly waiting: number; readonly limit: number } | null;
  /** The parse and plan caches of the current state. */
  caches(): { readonly parse: CacheSize; readonly plan: CacheSize } | null;
  /**
   * The in-flight memory budget of the current state (bytes held by open
   * operations, reads waiting for bytes). Absent: not exported.
   */
  memory?():
    | { readonly used: number; readonly waiting: number; readonly maxBytes: number }
    | null;
  /**
   * The connection guard of the listener (`lib/listen/guarded_serve.ts`): client
   * connections open, and closed or refused by a limit since start. Absent:
   * not exported.
   */
  connections?():
    | {
      readonly open: number;
      readonly headerReadTimeouts: number;
      readonly keepAliveTimeouts: number;
      readonly answerTimeouts?: number;
      readonly refused: number;
      /** TLS handshakes that failed or timed out (`tls.server`). */
      readonly tlsHandshakeFailures?: number;
    }
    | null;
  /**
   * Subscriptions (`lib/engine/subscriptions/subscribe.ts`): active client subscriptions and
   * upstream streams now; events received from subgraphs and results delivered to clients,
   * and upstream streams opened, since start. Absent: not exported.
   */
  subscriptions?():
    | {
      readonly active: number;
      readonly upstreams: number;
      readonly eventsIn: number;
      readonly eventsOut: number;
      readonly upstreamsOpened: number;
      /** Refusals and ends by the router's limits, since start (issue 39). */
      readonly limits?: {
        readonly refusedMaxTotal: number;
        readonly refusedCapacity: number;
        readonly refusedBehind: number;
        readonly refusedPerConnection: number;
        readonly endedClientTooSlow: number;
        readonly endedRouterBehind: number;
      };
      /** The serving thread's CPU share the fan-out is judged by (absent: not measured). */
      readonly cpuShare?: number;
    }
    | null;
  /**
   * The supergraph from a registry (`lib/cli/supergraph_source.ts`): when the
   * serving one was loaded and a poll last succeeded (ms since the epoch), and
   * polls failed since start. Absent or null: not exported (`file`).
   */
  supergraph?():
    | {
      readonly source: string;
      readonly loadedAt: number | null;
      readonly polledAt: number | null;
      readonly failures: number;
    }
    | null;
}

/**
 * A metric read from {@linkcode MetricSources} at each scrape: a gauge set to
 * what `read` returns, or (`counter`) a counter reset to the totals kept
 * elsewhere. A record sets one series per `label` value; undefined sets nothing.
 */
export interface Scraped {
  readonly name: string;
  readonly help: string;
  readonly label?: string;
  readonly counter?: true;
  read(sources: MetricSources): number | Readonly<Record<string, number>> | null | undefined;
}

/** What {@linkcode MetricSources.supergraph} reports. */
type SupergraphStatus = NonNullable<ReturnType<NonNullable<MetricSources["supergraph"]>>>;

/** Parse and plan cache figures by the `cache` label. */
function byCache(sources: MetricSources, key: keyof CacheSize): Record<string, number> | undefined {
  const sizes = sources.caches();
  return sizes ? { parse: sizes.parse[key], plan: sizes.plan[key] } : undefined;
}

/** A supergraph figure by the `source` label (none while `at` is null). */
function bySource(
  sources: MetricSources,
  value: (status: SupergraphStatus) => number | null,
): Record<string, number> | undefined {
  const status = sources.supergraph?.();
  const figure = status ? value(status) : null;
  return status && figure !== null ? { [status.source]: figure } : undefined;
}

/** Seconds since `at` (ms since the epoch), or null. */
function ageOf(at: number | null): number | null {
  return at === null ? null : (Date.now() - at) / 1_000;
}

/** The admission, memory, connection and subscription figures (in exposition order). */
export const SCRAPED_RUNTIME: readonly Scraped[] = [
  {
    name: "gw_router_cache_entries",
    help: "Entries in the parse/validate and plan caches.",
    label: "cache",
    read: (s) => byCache(s, "size"),
  },
  {
    name: "gw_router_cache_bytes",
    help: "Estimated bytes held by the parse/validate and plan caches (their bound is in bytes).",
    label: "cache",
    read: (s) => byCache(s, "bytes"),
  },
  {
    name: "gw_router_in_flight_bytes",
    help: "Subgraph response bytes held by in-flight operations (the in-flight memory budget).",
    read: (s) => s.memory?.()?.used,
  },
  {
    name: "gw_router_in_flight_bytes_limit",
    help: "The in-flight memory budget (traffic_shaping.router.max_in_flight_bytes; 0: none).",
    read: (s) => s.memory?.()?.maxBytes,
  },
  {
    name: "gw_router_in_flight_bytes_waiting_reads",
    help: "Subgraph reads waiting for in-flight memory budget bytes to be released.",
    read: (s) => s.memory?.()?.waiting,
  },
  {
    name: "gw_router_client_connections",
    help: "Client connections open on the listener (the connection guard's count).",
    read: (s) => s.connections?.()?.open,
  },
  {
    name: "gw_router_client_connections_closed_total",
    help:
      "Client connections the guard closed or refused, by limit (header_read_timeout, keep_alive_timeout, answer_timeout, max_connections).",
    label: "limit",
    counter: true,
    read(s) {
      const guard = s.connections?.();
      return guard && {
        header_read_timeout: guard.headerReadTimeouts,
        keep_alive_timeout: guard.keepAliveTimeouts,
        answer_timeout: guard.answerTimeouts ?? 0,
        max_connections: guard.refused,
      };
    },
  },
  {
    name: "gw_router_tls_handshake_failures_total",
    help:
      "TLS handshakes on the listener that failed (an untrusted or missing client certificate, a client that does not trust the router's) or timed out.",
    counter: true,
    read: (s) => s.connections?.()?.tlsHandshakeFailures,
  },
  {
    name: "gw_router_subscriptions_active",
    help: "Client subscriptions being served (WebSocket, SSE, multipart).",
    read: (s) => s.subscriptions?.()?.active,
  },
  {
    name: "gw_router_subscription_upstreams",
    help: "Subgraph subscription streams open (identical subscriptions share one).",
    read: (s) => s.subscriptions?.()?.upstreams,
  },
  {
    name: "gw_router_subscription_upstreams_opened_total",
    help: "Subgraph subscription streams opened.",
    counter: true,
    read: (s) => s.subscriptions?.()?.upstreamsOpened,
  },
  {
    name: "gw_router_subscription_events_total",
    help:
      "Subscription events: received from subgraphs (direction=in), results delivered to clients (direction=out).",
    label: "direction",
    counter: true,
    read(s) {
      const subs = s.subscriptions?.();
      return subs && { in: subs.eventsIn, out: subs.eventsOut };
    },
  },
  {
    name: "gw_router_subscriptions_refused_total",
    help:
      "Subscriptions refused with SUBSCRIPTION_LIMIT_REACHED, by limit: capacity (subscriptions.admission.max_cpu_share), behind (the serving thread saturated), max_total, max_per_connection.",
    label: "reason",
    counter: true,
    read(s) {
      const limits = s.subscriptions?.()?.limits;
      return limits && {
        capacity: limits.refusedCapacity,
        behind: limits.refusedBehind,
        max_total: limits.refusedMaxTotal,
        max_per_connection: limits.refusedPerConnection,
      };
    },
  },
  {
    name: "gw_router_subscriptions_dropped_total",
    help:
      "Subscriptions ended because their results waited too long: client_too_slow (SUBSCRIPTION_CLIENT_TOO_SLOW), router_behind (SUBSCRIPTION_LIMIT_REACHED).",
    label: "reason",
    counter: true,
    read(s) {
      const limits = s.subscriptions?.()?.limits;
      return limits &&
        { client_too_slow: limits.endedClientTooSlow, router_behind: limits.endedRouterBehind };
    },
  },
  {
    name: "gw_router_subscription_cpu_share",
    help:
      "The serving thread's CPU demand (share of the time, last 0.5 s) that subscription admission judges by.",
    read: (s) => s.subscriptions?.()?.cpuShare,
  },
  {
    name: "gw_router_admission_in_flight",
    help: "Operations holding an admission slot.",
    read: (s) => s.admission()?.active,
  },
  {
    name: "gw_router_admission_limit",
    help:
      "Operations admission lets run at once now (engine.adaptive_concurrency, or the fixed engine.max_concurrent_operations; -1: no limit).",
    read(s) {
      const gate = s.admission();
      return gate && (Number.isFinite(gate.limit) ? gate.limit : -1);
    },
  },
  {
    name: "gw_router_admission_queued",
    help: "Operations waiting for an admission slot.",
    read: (s) => s.admission()?.waiting,
  },
];

/** The supergraph registry's figures (in exposition order). */
export const SCRAPED_SUPERGRAPH: readonly Scraped[] = [
  {
    name: "gw_router_supergraph_age_seconds",
    help: "Age of the serving supergraph from a registry (since it was loaded), by source.",
    label: "source",
    read: (s) => bySource(s, (status) => ageOf(status.loadedAt)),
  },
  {
    name: "gw_router_supergraph_poll_age_seconds",
    help: "Time since a poll of the supergraph registry last succeeded, by source.",
    label: "source",
    read: (s) => bySource(s, (status) => ageOf(status.polledAt)),
  },
  {
    name: "gw_router_supergraph_poll_failures",
    help: "Polls of the supergraph registry that failed since start, by source.",
    label: "source",
    read: (s) => bySource(s, (status) => status.failures),
  },
];

/**
 * Registers metrics read at scrape time. Counters mirror totals the engine or
 * the connection guard keep: each scrape resets them to those totals.
 *
 * @example A gauge and a labelled gauge
 * ```ts
 * import assert from "node:assert/strict";
 * import { Registry } from "prom-client";
 * import { registerScraped, SCRAPED_RUNTIME } from "./_scraped.ts";
 * const registry = new Registry();
 * const cache = { size: 2, bytes: 64 };
 * const sources = { admission: () => null, caches: () => ({ parse: cache, plan: cache }) };
 * registerScraped(registry, { sources, metrics: SCRAPED_RUNTIME });
 * const text = await registry.metrics();
 * assert.match(text, /gw_router_cache_entries\{cache="plan"\} 2/);
 * assert.match(text, /gw_router_admission_in_flight 0/);
 * ```
 * @param registry Where they are exposed.
 * @param options The live sources (none: nothing is set) and the metrics.
 */
export function registerScraped(
  registry: Registry,
  options: { readonly sources: MetricSources | undefined; readonly metrics: readonly Scraped[] },
): void {
  const { sources } = options;
  for (const { name, help, label, counter, read } of options.metrics) {
    const labelNames = label === undefined ? [] : [label];
    const collect = (metric: Gauge | Counter) => {
      const figure = sources && read(sources);
      if (figure === undefined || figure === null) return;
      if (metric instanceof Counter) metric.reset();
      const add = (labels: Record<string, string>, value: number) =>
        metric instanceof Counter ? metric.inc(labels, value) : metric.set(labels, value);
      if (typeof figure === "number") add({}, figure);
      else for (const [key, value] of Object.entries(figure)) add({ [label ?? ""]: key }, value);
    };
    const config = { name, help, labelNames, registers: [registry] };
    if (counter) {
      new Counter({
        ...config,
        collect() {
          collect(this);
        },
      });
    } else {new Gauge({
        ...config,
        collect() {
          collect(this);
        },
      });}
  }
}
