/**
 * Reading an HTTP body with a byte limit: refuse by `Content-Length` first,
 * then count the streamed bytes, so a lying or chunked sender cannot exceed
 * the limit. Shared by the request edge and the subgraph client.
 *
 * @module
 */

/** Options of {@linkcode readLimited}. */
export interface ReadLimitedOptions {
  /** The error to throw over the limit. */
  readonly tooLarge: () => Error;
  /** The error to throw when the body breaks off. */
  readonly broken: (cause: unknown) => Error;
}

/**
 * Reads a request's or response's body, at most `limit` bytes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readLimited } from "./limited_body.ts";
 * const errors = { tooLarge: () => new Error("too large"), broken: () => new Error("broken") };
 * assert.equal((await readLimited(new Response("1234"), 4, errors))?.length, 4);
 * await assert.rejects(readLimited(new Response("12345"), 4, errors), /too large/);
 * ```
 * @param message The request or response.
 * @param limit The largest accepted body, bytes.
 * @param options The errors to throw.
 * @returns The bytes, or null when there is no body.
 */
export async function readLimited(
  message: Request | Response,
  limit: number,
  options: ReadLimitedOptions,
): Promise<Uint8Array<ArrayBuffer> | null> {
  if (message.body === null) return null;
  const declared = message.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) {
    await message.body.cancel().catch(() => {});
    throw options.tooLarge();
  }
  return await readStreamLimited(message.body, limit, options);
}

/**
 * Reads a byte stream, at most `limit` bytes (cancelled as soon as it passes).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readStreamLimited } from "./limited_body.ts";
 * const errors = { tooLarge: () => new Error("too large"), broken: () => new Error("broken") };
 * const stream = new Response("12345").body!;
 * await assert.rejects(readStreamLimited(stream, 4, errors), /too large/);
 * ```
 * @param stream The bytes.
 * @param limit The largest accepted size, bytes.
 * @param options The errors to throw.
 * @returns The bytes.
 */
export async function readStreamLimited(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  options: ReadLimitedOptions,
): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        throw options.tooLarge();
      }
      chunks.push(value);
    }
  } catch (error) {
    if (size > limit) throw error;
    await reader.cancel().catch(() => {});
    throw options.broken(error);
  } finally {
    reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}
