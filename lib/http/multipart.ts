/**
 * A minimal `multipart/mixed` writer (RFC 2046 §5.1.1) for answers sent in parts: each part
 * a JSON text with its own `content-type`, the stream closed by the final delimiter. Pure: it
 * builds strings; the caller writes them.
 *
 * @module
 */

/** The boundary GraphQL routers use (Apollo's multipart protocols). */
export const MULTIPART_BOUNDARY = "graphql";

/**
 * The `Content-Type` of a multipart answer.
 * @param parameters Extra parameters (`subscriptionSpec="1.0"`), written as given.
 * @returns `multipart/mixed;boundary="graphql"` and the parameters.
 */
export function multipartContentType(parameters: readonly string[] = []): string {
  return [`multipart/mixed;boundary="${MULTIPART_BOUNDARY}"`, ...parameters].join(";");
}

/**
 * One part: the delimiter, its headers and the JSON text (the delimiter before the next part
 * or the close follows it).
 *
 * @example A part
 * ```ts
 * import assert from "node:assert/strict";
 * import { multipartPart } from "./multipart.ts";
 * assert.equal(
 *   multipartPart("{}"),
 *   '\r\n--graphql\r\ncontent-type: application/json; charset=utf-8\r\n\r\n{}',
 * );
 * ```
 * @param json The part's JSON text.
 * @returns The part's text.
 */
export function multipartPart(json: string): string {
  return `\r\n--${MULTIPART_BOUNDARY}\r\ncontent-type: application/json; charset=utf-8\r\n\r\n${json}`;
}

/** The close delimiter: no part follows. */
export const MULTIPART_END = `\r\n--${MULTIPART_BOUNDARY}--\r\n`;
