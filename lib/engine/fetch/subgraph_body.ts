/**
 * Reading a subgraph's answer within `engine.max_subgraph_response_bytes`,
 * counting the bytes *after* decompression as they arrive (issue 15). Deno's
 * `fetch` inflates a `Content-Encoding: gzip|br|deflate` answer transparently
 * while its `Content-Length` still gives the compressed size, so the declared
 * length is trusted only for an unencoded answer: a 199 KB gzip body can
 * inflate to 200 MB. Every chunk is also charged to the in-flight memory
 * budget (`memory_budget.ts`), which may make the next read wait.
 *
 * The request side (client bodies) lives in `lib/limited_body.ts`.
 *
 * @module
 */

/** Options of {@linkcode readSubgraphBody}. */
export interface ReadSubgraphBodyOptions {
  /** Largest body, bytes after decompression. */
  readonly limit: number;
  /** The error thrown over the limit. */
  readonly tooLarge: () => Error;
  /** The error thrown for a body that is not valid UTF-8. */
  readonly notUtf8: () => Error;
  /**
   * The error thrown when reading the body itself fails (a reset, a chunked
   * body cut short, a malformed content coding), given the stream's error;
   * absent: that error. Errors of `charge` and `reserve` are never passed here.
   */
  readonly broken?: (cause: unknown) => unknown;
  /**
   * Charges bytes read; a returned promise delays the next read (it may
   * reject: the read stops with that error).
   */
  readonly charge?: (bytes: number) => Promise<void> | undefined;
  /** Charges a declared length before it is read; a returned promise delays the read. */
  readonly reserve?: (bytes: number) => Promise<void> | undefined;
  /**
   * The body when it arrived whole with the answer (the HTTP/1.1 pool's
   * `wholeBody`): read from here, not through the response's stream.
   */
  readonly whole?: Uint8Array;
}

/**
 * The replacing decoder: Deno decodes UTF-8 with it in one native step, about
 * five times faster than with a fatal one (which copies through a Rust
 * string), and `JSON.parse` then reads a flat one-byte string for ASCII text.
 */
const LOOSE = new TextDecoder("utf-8");
/** Strict: invalid UTF-8 is refused, never replaced with U+FFFD and merged as data. */
const STRICT = new TextDecoder("utf-8", { fatal: true });

/**
 * Strict UTF-8 decoding at the cost of the replacing one: every malformed
 * sequence decodes to U+FFFD, so a text without one came from valid UTF-8 and
 * equals the strict decoding. Only a text holding U+FFFD (sent as such, or
 * replaced) is decoded again, strictly, to tell which.
 */
function decode(bytes: Uint8Array, notUtf8: () => Error): string {
  const text = LOOSE.decode(bytes);
  if (!text.includes("\uFFFD")) return text;
  try {
    return STRICT.decode(bytes);
  } catch {
    throw notUtf8();
  }
}

/** A `Content-Length` value that is one length. */
const DECIMAL = /^[0-9]{1,15}$/;

/**
 * True when the `Content-Length` of an answer is its body's size as read:
 * no content coding, or `identity`.
 * @param headers The answer's headers.
 * @returns Whether the declared length can be trusted.
 */
function plainLength(headers: Headers): boolean {
  const coding = headers.get("content-encoding");
  return coding === null || coding.trim() === "" || coding.trim().toLowerCase() === "identity";
}

/**
 * Reads a subgraph answer's text, at most `limit` bytes after decompression.
 *
 * @example A gzip answer whose declared length is small but whose body is not
 * ```ts
 * import assert from "node:assert/strict";
 * import { readSubgraphBody } from "./subgraph_body.ts";
 * // What Deno's fetch hands over: the inflated body, the compressed length.
 * const inflated = new Response("x".repeat(5000), {
 *   headers: { "content-encoding": "gzip", "content-length": "40" },
 * });
 * const tooLarge = () => new RangeError("too large");
 * const notUtf8 = () => new TypeError("not UTF-8");
 * const options = { limit: 1000, tooLarge, notUtf8 };
 * await assert.rejects(readSubgraphBody(inflated, options), /too large/);
 * assert.equal(await readSubgraphBody(new Response("{}"), options), "{}");
 * ```
 *
 * @example Invalid UTF-8 is refused, never replaced
 * ```ts
 * import assert from "node:assert/strict";
 * import { readSubgraphBody } from "./subgraph_body.ts";
 * const options = { limit: 1000, tooLarge: () => new RangeError(), notUtf8: () => new TypeError("not UTF-8") };
 * const body = new Uint8Array([0x22, 0xff, 0x22]);
 * await assert.rejects(readSubgraphBody(new Response(body), options), /not UTF-8/);
 * ```
 * @param response The subgraph's response.
 * @param options Limit, the errors, budget charge.
 * @returns The body text.
 * @throws The `tooLarge` error over the limit, the `notUtf8` error, the `broken` error, or the charge's rejection.
 */
export async function readSubgraphBody(
  response: Response,
  options: ReadSubgraphBodyOptions,
): Promise<string> {
  const { limit, charge, reserve, whole } = options;
  if (whole !== undefined) {
    if (whole.length > limit) throw options.tooLarge();
    const wait = reserve?.(whole.length);
    if (wait !== undefined) await wait;
    return decode(whole, options.notUtf8);
  }
  const body = response.body;
  if (body === null) return "";
  const declared = response.headers.get("content-length");
  // Only one decimal length is trusted: a repeated header reads "5, 5" (NaN), which
  // passes every comparison with the limit and the budget.
  if (declared !== null && DECIMAL.test(declared) && plainLength(response.headers)) {
    const length = Number(declared);
    if (length > limit) {
      await body.cancel().catch(() => {});
      throw options.tooLarge();
    }
    // The fast native read: Deno holds an unencoded body to its Content-Length.
    try {
      const wait = reserve?.(length);
      if (wait !== undefined) await wait;
    } catch (error) {
      await body.cancel().catch(() => {});
      throw error;
    }
    let bytes: Uint8Array;
    try {
      bytes = await response.bytes();
    } catch (error) {
      throw options.broken?.(error) ?? error;
    }
    return decode(bytes, options.notUtf8);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  try {
    while (true) {
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch (error) {
        throw options.broken?.(error) ?? error;
      }
      const { done, value } = read;
      if (done) break;
      size += value.length;
      if (size > limit) throw options.tooLarge();
      chunks.push(value);
      const wait = charge?.(value.length);
      if (wait !== undefined) await wait;
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    throw error;
  } finally {
    reader.releaseLock();
  }
  if (chunks.length === 1) return decode(chunks[0]!, options.notUtf8);
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return decode(bytes, options.notUtf8);
}
