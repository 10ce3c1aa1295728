/**
 * OTLP exporter header lists (`key=value`, percent-decoded), apart from the
 * OpenTelemetry SDK so that reading a config does not load it.
 *
 * @module
 */

/**
 * Parses `Name=value` header entries (the `OTEL_EXPORTER_OTLP_HEADERS` format;
 * values may be percent-encoded).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseHeaderList } from "./otlp_headers.ts";
 * assert.deepEqual(parseHeaderList(["x-api-key=abc", "authorization=Bearer%20t"]), {
 *   "x-api-key": "abc",
 *   authorization: "Bearer t",
 * });
 * ```
 * @param entries The entries.
 * @returns The headers.
 */
export function parseHeaderList(entries: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const entry of entries) {
    const at = entry.indexOf("=");
    if (at <= 0) continue;
    headers[entry.slice(0, at).trim()] = decodeURIComponent(entry.slice(at + 1).trim());
  }
  return headers;
}
