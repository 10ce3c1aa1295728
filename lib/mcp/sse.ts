/**
 * Server-sent events framing for the MCP streams: one JSON-RPC message per
 * `message` event, event ids `<replica>-<sequence>` (the replica part is
 * random per process, so an id from another replica or an earlier process is
 * recognised as foreign), and the priming event (an id and empty data) that
 * gives a client a resumption point before any message. Pure.
 *
 * @module
 */

const encoder = new TextEncoder();

/**
 * One SSE `message` event carrying a JSON-RPC message.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { messageEvent } from "./sse.ts";
 * assert.equal(messageEvent({ jsonrpc: "2.0", method: "ping" }, "r1-3"),
 *   'id: r1-3\nevent: message\ndata: {"jsonrpc":"2.0","method":"ping"}\n\n');
 * ```
 * @param message The JSON-RPC message.
 * @param id The event id, or null for none.
 * @returns The event text.
 */
export function messageEvent(message: unknown, id: string | null): string {
  // JSON.stringify never emits a raw newline, so one data line suffices.
  return `${id === null ? "" : `id: ${id}\n`}event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/**
 * The priming event: an id to resume from and the reconnection delay.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { primingEvent } from "./sse.ts";
 * assert.equal(primingEvent("r1-0", 2000), "id: r1-0\nretry: 2000\ndata: \n\n");
 * ```
 * @param id The event id.
 * @param retryMs The `retry` field, milliseconds.
 * @returns The event text.
 */
export function primingEvent(id: string, retryMs: number): string {
  return `id: ${id}\nretry: ${retryMs}\ndata: \n\n`;
}

/** A comment line that keeps idle connections (and proxies) open. */
export const KEEP_ALIVE = ": keep-alive\n\n";

/**
 * UTF-8 bytes of an event.
 * @param text The event text.
 * @returns Its bytes.
 */
export function encodeEvent(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * Formats an event id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { eventId, parseEventId } from "./sse.ts";
 * assert.deepEqual(parseEventId(eventId("ab12", 7)), { replica: "ab12", sequence: 7 });
 * assert.equal(parseEventId("nonsense"), null);
 * ```
 * @param replica The replica part.
 * @param sequence The sequence number.
 * @returns The id.
 */
export function eventId(replica: string, sequence: number): string {
  return `${replica}-${sequence}`;
}

/**
 * Parses an event id (`Last-Event-ID`).
 * @param id The header value.
 * @returns Replica and sequence, or null when malformed.
 */
export function parseEventId(
  id: string,
): { readonly replica: string; readonly sequence: number } | null {
  const match = /^([A-Za-z0-9_]{1,32})-(\d{1,15})$/.exec(id);
  if (match === null) return null;
  return { replica: match[1]!, sequence: Number(match[2]) };
}
