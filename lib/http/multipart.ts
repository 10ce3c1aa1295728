/**
 * A `multipart/mixed` body (RFC 2046) of JSON parts, as Apollo's incremental delivery and
 * multipart subscriptions send them: `\r\n--<boundary>`, then per part
 * `\r\ncontent-type: application/json; charset=utf-8\r\n\r\n<json>\r\n--<boundary>`, and
 * `--\r\n` to close. Each part is written with the delimiter after it, so a client (Apollo
 * Client splits on the delimiter) reads a part when it arrives, not when the next one does.
 * Pulled one part at a time (a slow client holds back the producer: one part is buffered at
 * most); a cancelled body returns the producer.
 *
 * @module
 */

/** Options of {@linkcode multipartBody}. */
export interface MultipartOptions {
  /** The boundary (`-` as Apollo Router's `boundary="-"`). @default "-" */
  readonly boundary?: string;
  /** A part's body is made of this (already JSON). */
  readonly contentType?: string;
  /**
   * Called when the producer throws after the head was sent: the text of a last part that
   * says so (the status is gone), or null to end the body there.
   */
  readonly onError?: (error: unknown) => string | null;
}

const encoder = new TextEncoder();

/** The part header this module writes by default: every part is JSON text. */
const JSON_PART = "application/json; charset=utf-8";

/**
 * The opening delimiter, written once before the first part.
 * @param boundary The boundary.
 * @returns `\r\n--<boundary>`.
 */
export function multipartOpening(boundary: string): string {
  return `\r\n--${boundary}`;
}

/**
 * One part followed by its delimiter, so that a client reads the part when it arrives (after
 * {@linkcode multipartOpening}; the body ends with {@linkcode MULTIPART_CLOSE}).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { multipartPart } from "./multipart.ts";
 * assert.equal(
 *   multipartPart("{}", "graphql"),
 *   "\r\ncontent-type: application/json; charset=utf-8\r\n\r\n{}\r\n--graphql",
 * );
 * ```
 * @param text The part's body text.
 * @param boundary The boundary.
 * @param contentType The part's `content-type`.
 * @returns The part's text.
 */
export function multipartPart(text: string, boundary: string, contentType = JSON_PART): string {
  return `\r\ncontent-type: ${contentType}\r\n\r\n${text}\r\n--${boundary}`;
}

/** What ends a body after the last part's delimiter. */
export const MULTIPART_CLOSE = "--\r\n";

/**
 * The `Content-Type` of a multipart body.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { multipartContentType } from "./multipart.ts";
 * assert.equal(multipartContentType("-", { deferSpec: "20220824" }), 'multipart/mixed; boundary="-"; deferSpec=20220824');
 * ```
 * @param boundary The boundary.
 * @param parameters Further parameters (`deferSpec`).
 * @returns The header value.
 */
export function multipartContentType(
  boundary: string,
  parameters: Readonly<Record<string, string>> = {},
): string {
  const rest = Object.entries(parameters).map(([k, v]) => `; ${k}=${v}`).join("");
  return `multipart/mixed; boundary="${boundary}"${rest}`;
}

/**
 * A `multipart/mixed` body of the given parts.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { multipartBody } from "./multipart.ts";
 * async function* parts() { yield '{"a":1}'; }
 * const text = await new Response(multipartBody(parts())).text();
 * assert.equal(text, '\r\n---\r\ncontent-type: application/json; charset=utf-8\r\n\r\n{"a":1}\r\n-----\r\n');
 * ```
 * @param parts Each part's body text, in order.
 * @param options Boundary, part type, last part on error.
 * @returns The body stream.
 */
export function multipartBody(
  parts: AsyncIterator<string> | AsyncIterable<string>,
  options: MultipartOptions = {},
): ReadableStream<Uint8Array> {
  const boundary = options.boundary ?? "-";
  const delimiter = multipartOpening(boundary);
  let started = false;
  /** A part with its delimiters: the opening one before the first part. */
  const part = (text: string): string => {
    const open = started ? "" : delimiter;
    started = true;
    return `${open}${multipartPart(text, boundary, options.contentType)}`;
  };
  const iterator = Symbol.asyncIterator in parts
    ? (parts as AsyncIterable<string>)[Symbol.asyncIterator]()
    : parts as AsyncIterator<string>;
  let ended = false;
  const end = (controller: ReadableStreamDefaultController<Uint8Array>, last: string | null) => {
    ended = true;
    const tail = last === null ? "" : part(last);
    controller.enqueue(encoder.encode(`${tail}${started ? "" : delimiter}${MULTIPART_CLOSE}`));
    controller.close();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (ended) return;
      let next: IteratorResult<string>;
      try {
        next = await iterator.next();
      } catch (error) {
        end(controller, options.onError?.(error) ?? null);
        return;
      }
      if (next.done) end(controller, null);
      else controller.enqueue(encoder.encode(part(next.value)));
    },
    async cancel() {
      ended = true;
      await iterator.return?.();
    },
  }, { highWaterMark: 0 });
}
