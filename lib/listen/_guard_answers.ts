/**
 * The connection guard's own answers (`guarded_serve.ts`), in HTTP/1.1 bytes:
 * the 503 of a connection past `max_connections`, and the 400 that replaces
 * `Deno.serve`'s bare one for a request head it cannot read. Pure.
 *
 * @module
 */
import { overloaded } from "../engine/admission/queue.ts";
import { RouterError } from "../errors.ts";
import { errorResponse } from "../http/errors.ts";

/**
 * An error answer in HTTP/1.1 bytes, with `Connection: close`: the guard's
 * own answers, sent without `Deno.serve`.
 */
async function answerBytes(error: RouterError): Promise<Uint8Array> {
  const response = errorResponse(error);
  const body = new TextEncoder().encode(await response.text());
  let head = `HTTP/1.1 ${response.status} ${STATUS_TEXT[response.status] ?? ""}\r\n`;
  for (const [name, value] of response.headers) head += `${name}: ${value}\r\n`;
  head += `content-length: ${body.length}\r\nconnection: close\r\n\r\n`;
  const headBytes = new TextEncoder().encode(head);
  const bytes = new Uint8Array(headBytes.length + body.length);
  bytes.set(headBytes);
  bytes.set(body, headBytes.length);
  return bytes;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: "Bad Request",
  503: "Service Unavailable",
};

/**
 * The answer of a refused connection: 503 `SERVICE_OVERLOADED` with
 * `Retry-After`, as the admission gate's. Sent without reading the request:
 * a refused client costs no parsing.
 */
export const refusalAnswer = (): Promise<Uint8Array> => answerBytes(overloaded("max_connections"));

/**
 * What replaces `Deno.serve`'s own answer to a request it cannot read (hyper's
 * 400 with an empty body, for a malformed request line or header, a header
 * section over 64 KiB or more than 100 header fields): a 400 that says so,
 * with a stable code, as every other refusal of the router.
 */
export const unreadableAnswer = (): Promise<Uint8Array> =>
  answerBytes(
    new RouterError(
      "BAD_REQUEST",
      "The request head could not be read: a malformed request line or header field, a header section over 64 KiB, or more than 100 header fields",
    ),
  );

/** hyper's bare 400, whole in one read (it closes the connection after it). */
const BARE_400 =
  /^HTTP\/1\.1 400 Bad Request\r\ncontent-length: 0\r\ndate: [^\r\n]*\r\nconnection: close\r\n\r\n$/;
const latin1 = new TextDecoder("latin1");

/**
 * True for hyper's own 400 (never one of the router's: those have a body).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isBare400 } from "./_guard_answers.ts";
 * const bytes = (text: string) => new TextEncoder().encode(text);
 * const date = "Thu, 26 Nov 2026 15:46:13 GMT";
 * assert.equal(isBare400(bytes(`HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\ndate: ${date}\r\nconnection: close\r\n\r\n`)), true);
 * assert.equal(isBare400(bytes("HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}")), false);
 * ```
 * @param bytes One read of the inner server's answer bytes.
 * @returns Whether it is hyper's bare 400, whole.
 */
export function isBare400(bytes: Uint8Array): boolean {
  // "HTTP/1.1 400" at its start, and short: most answers fail the first test.
  if (bytes.length > 160 || bytes[9] !== 0x34 || bytes[10] !== 0x30 || bytes[11] !== 0x30) {
    return false;
  }
  return BARE_400.test(latin1.decode(bytes));
}
