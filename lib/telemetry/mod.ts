/**
 * Observability: request ids, the metrics registry (Prometheus), access logs
 * and OpenTelemetry traces. The engine and the facets report through small
 * hooks; everything that counts, times or exports lives here.
 *
 * @module
 */
export {
  acceptRequestId,
  type AcceptRequestIdOptions,
  type ErrorWithExtensions,
  MAX_REQUEST_ID_LENGTH,
  REQUEST_ID_HEADER,
  withRequestId,
} from "../request/mod.ts";
export {
  accessLogRecord,
  type AccessLogScope,
  knownBodySize,
  knownErrorCode,
  withBodySize,
  withErrorCode,
} from "./access_log.ts";
export { type BodyEnd, observeBody, type ObservedBody } from "./observe_body.ts";
export {
  type BoundedLabel,
  cleanLabelValue,
  clientOf,
  createBoundedLabel,
  MAX_LABEL_LENGTH,
  OTHER_LABEL,
  UNKNOWN_LABEL,
} from "./labels.ts";
export {
  type CacheSize,
  createRouterMetrics,
  DURATION_BUCKETS,
  type FetchMetric,
  type FetchOutcome,
  methodLabel,
  type MetricSources,
  type OperationOutcome,
  type OperationRecord,
  type RouterMetrics,
  type RouterMetricsOptions,
} from "./metrics.ts";
export { operationHash } from "./operation_hash.ts";
export {
  createTelemetry,
  fetchOutcome,
  type RequestScope,
  type RouteTable,
  type Telemetry,
  type TelemetryOptions,
} from "./telemetry.ts";
export type { RequestSpan, Tracer } from "./tracing.ts";
export {
  metricsHandler,
  type MetricsServer,
  PROMETHEUS_CONTENT_TYPE,
  serveMetrics,
} from "./metrics_server.ts";
export {
  createLiveHistory,
  type LiveHistory,
  type LiveHistoryOptions,
  type LivePoint,
  type MetricJson,
  pointBetween,
  quantileMs,
  type Snapshot,
  snapshotOf,
} from "./live_view.ts";
export { handleLiveView, isLiveViewPath, LIVE_VIEW_PATHS } from "./live_view_page.ts";
export {
  createOtelTracer,
  type OtelTracerOptions,
  type OtlpExporterOptions,
  parseHeaderList,
} from "./otel.ts";
export { createOtlpHttpExporter, type OtlpHttpExporterOptions } from "./otlp_exporter.ts";
export {
  type PromMetric,
  toResourceMetrics,
  type ToResourceMetricsOptions,
} from "./otlp_metrics.ts";
export {
  type OtlpMetricsExport,
  type OtlpMetricsExportOptions,
  startOtlpMetricsExport,
} from "./otlp_metrics_exporter.ts";
