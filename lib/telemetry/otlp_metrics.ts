/**
 * The metrics registry as OTLP: prom-client's JSON snapshot
 * (`registry.getMetricsAsJSON()`) converted to the OpenTelemetry SDK's
 * `ResourceMetrics`, which the official `ProtobufMetricsSerializer` encodes.
 * Counters become cumulative monotonic Sums, gauges Gauges, histograms
 * cumulative explicit-bucket Histograms; names and labels are kept as they are
 * (the names the Prometheus exposition shows). Pure: the times are arguments.
 *
 * @module
 */
import { type HrTime, ValueType } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  type DataPoint,
  DataPointType,
  type Histogram,
  type MetricData,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";

/** One metric of prom-client's JSON snapshot (`registry.getMetricsAsJSON()`). */
export interface PromMetric {
  /** Prometheus name (`gw_router_operations_total`). */
  readonly name: string;
  /** Help text (the OTLP description). */
  readonly help: string;
  /**
   * `"counter"`, `"gauge"`, `"histogram"` or `"summary"` (prom-client types it
   * as a numeric enum; its value at run time is the name).
   */
  readonly type: string | number;
  /** The samples; a histogram's carry `metricName` (`_bucket`, `_sum`, `_count`). */
  readonly values: readonly {
    readonly value: number;
    readonly labels: Readonly<Partial<Record<string, string | number>>>;
    readonly metricName?: string;
  }[];
}

/** Options for {@linkcode toResourceMetrics}. */
export interface ToResourceMetricsOptions {
  /** Resource attributes (`service.name`, `service.version`). */
  readonly resource: Readonly<Record<string, string>>;
  /** Start of the cumulative series (the registry's creation), epoch ms. */
  readonly startMs: number;
  /** The time of the snapshot, epoch ms. */
  readonly nowMs: number;
}

/** The instrumentation scope of the router's metrics. */
const SCOPE = { name: "gw-router" };

function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/** The OTel unit of a Prometheus name's unit suffix. */
function unitOf(name: string): string {
  if (name.endsWith("_seconds")) return "s";
  if (name.endsWith("_bytes")) return "By";
  return "";
}

function labelsKey(labels: Readonly<Record<string, string | number>>): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function histogramPoints(
  metric: PromMetric,
  times: { startTime: HrTime; endTime: HrTime },
): DataPoint<Histogram>[] {
  interface Series {
    attributes: Record<string, string | number>;
    buckets: [number, number][];
    sum: number;
    count: number;
  }
  const series = new Map<string, Series>();
  const seriesOf = (labels: Record<string, string | number>): Series => {
    const key = labelsKey(labels);
    let found = series.get(key);
    if (found === undefined) {
      found = { attributes: labels, buckets: [], sum: 0, count: 0 };
      series.set(key, found);
    }
    return found;
  };
  for (const value of metric.values) {
    const { le, ...labels } = value.labels as Record<string, string | number>;
    const entry = seriesOf(labels);
    if (value.metricName === `${metric.name}_bucket` && le !== undefined) {
      const bound = le === "+Inf" ? Infinity : Number(le);
      entry.buckets.push([bound, value.value]);
    } else if (value.metricName === `${metric.name}_sum`) entry.sum = value.value;
    else if (value.metricName === `${metric.name}_count`) entry.count = value.value;
  }
  return [...series.values()].map((entry) => {
    // prom-client's buckets are cumulative (`le`); OTLP counts each bucket alone.
    const buckets = entry.buckets.sort(([a], [b]) => a - b);
    const boundaries = buckets.filter(([bound]) => Number.isFinite(bound)).map(([bound]) => bound);
    const counts = buckets.map(([, cumulative], i) => cumulative - (buckets[i - 1]?.[1] ?? 0));
    if (!buckets.some(([bound]) => bound === Infinity)) {
      counts.push(entry.count - (buckets.at(-1)?.[1] ?? 0));
    }
    return {
      ...times,
      attributes: entry.attributes,
      value: { buckets: { boundaries, counts }, sum: entry.sum, count: entry.count },
    };
  });
}

function toMetricData(
  metric: PromMetric,
  times: { startTime: HrTime; endTime: HrTime },
): MetricData | null {
  const descriptor = {
    name: metric.name,
    description: metric.help,
    unit: unitOf(metric.name),
    valueType: ValueType.DOUBLE,
  };
  const singular = () =>
    metric.values.map((v) => ({ ...times, attributes: { ...v.labels }, value: v.value }));
  switch (String(metric.type)) {
    case "counter":
      return {
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.SUM,
        isMonotonic: true,
        dataPoints: singular(),
      };
    case "gauge":
      return {
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.GAUGE,
        dataPoints: singular(),
      };
    case "histogram":
      return {
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints: histogramPoints(metric, times),
      };
    default:
      // Summaries have no OTLP equivalent the collector keeps; the registry has none.
      return null;
  }
}

/**
 * Converts a prom-client JSON snapshot to OTLP `ResourceMetrics`.
 *
 * @example A counter becomes a cumulative monotonic Sum
 * ```ts
 * import assert from "node:assert/strict";
 * import { toResourceMetrics } from "./otlp_metrics.ts";
 * const resourceMetrics = toResourceMetrics([{
 *   name: "gw_router_reloads_total",
 *   help: "Reloads.",
 *   type: "counter",
 *   values: [{ value: 2, labels: { outcome: "success" } }],
 * }], { resource: { "service.name": "gw-router" }, startMs: 0, nowMs: 1_500 });
 * const metric = resourceMetrics.scopeMetrics[0]?.metrics[0];
 * assert.equal(metric?.descriptor.name, "gw_router_reloads_total");
 * assert.equal(metric?.dataPoints[0]?.value, 2);
 * assert.deepEqual(metric?.dataPoints[0]?.endTime, [1, 500_000_000]);
 * ```
 * @param metrics The snapshot (`registry.getMetricsAsJSON()`).
 * @param options Resource attributes and the times.
 * @returns The structure `ProtobufMetricsSerializer.serializeRequest` takes.
 */
export function toResourceMetrics(
  metrics: readonly PromMetric[],
  options: ToResourceMetricsOptions,
): ResourceMetrics {
  const times = { startTime: hrTime(options.startMs), endTime: hrTime(options.nowMs) };
  const converted = metrics.map((metric) => toMetricData(metric, times))
    .filter((metric): metric is MetricData => metric !== null);
  return {
    resource: resourceFromAttributes(options.resource),
    scopeMetrics: [{ scope: SCOPE, metrics: converted }],
  };
}
