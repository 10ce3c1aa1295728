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
} from "./request_id.ts";
