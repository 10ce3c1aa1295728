/**
 * Reading an HTTP body with a byte limit: refuse by `Content-Length` first,
 * then count the streamed bytes, so a lying or chunked sender cannot exceed
 * the limit. Shared by the request edge and the subgraph client.
 *
 * @module
 */

import { onAbort } from "./cancellation.ts";

/** Options of {@linkcode readLimited}. */
export interface ReadLimitedOptions {
  /** The error to throw over the limit. */
  readonly tooLarge: () => Error;
  /** The error to throw when the body breaks off. */
  readonly broken: (cause: unknown) => Error;
  /**
   * Told the size of each chunk before it is kept; what it throws stops the
   * read (the stream is cancelled) and is thrown as it is.
   */
  readonly count?: (bytes: number) => void;
  /** Cancels the read: its reason is thrown (a stalled sender cannot hold the reader). */
  readonly signal?: AbortSignal;
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
 * @param options The errors to throw, a counter, a signal.
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
  const { signal, count } = options;
  // Cancelling the reader ends a read that waits on a sender that sends nothing.
  const offAbort = signal ? onAbort(signal, () => void reader.cancel().catch(() => {})) : null;
  let stop: { readonly error: unknown } | null = null;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (signal?.aborted) {
        stop = { error: signal.reason };
        break;
      }
      if (done) break;
      size += value.length;
      if (size > limit) {
        stop = { error: options.tooLarge() };
        break;
      }
      if (count) {
        try {
          count(value.length);
        } catch (error) {
          stop = { error };
          break;
        }
      }
      chunks.push(value);
    }
  } catch (error) {
    stop = { error: signal?.aborted ? signal.reason : options.broken(error) };
  } finally {
    offAbort?.();
  }
  if (stop !== null) await reader.cancel().catch(() => {});
  reader.releaseLock();
  if (stop !== null) throw stop.error;
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

/** Compressed bytes handed to the decompressor at a time: bounds each inflated chunk (gzip's ratio is at most ~1032:1). */
const INFLATE_SLICE_BYTES = 8 * 1024;

/**
 * A pull-based copy of `stream` in chunks of at most `size` bytes, so a
 * downstream transform never receives (or inflates) one huge chunk.
 */
function sliced(stream: ReadableStream<Uint8Array>, size: number): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  let pending: Uint8Array | null = null;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (pending === null || pending.length === 0) {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          return;
        }
        pending = value;
      }
      controller.enqueue(pending.subarray(0, size));
      pending = pending.length > size ? pending.subarray(size) : null;
    },
    async cancel(reason) {
      await reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

/**
 * Inflates a gzip stream while counting: the compressed input and the
 * inflated output are each refused once past `limit`, and the input is fed
 * to the decompressor in small slices, so memory stays near `limit` whatever
 * the compression ratio (a "gzip bomb" stops after `limit` bytes of output).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readGzipLimited } from "./limited_body.ts";
 * const errors = { tooLarge: () => new Error("too large"), broken: () => new Error("broken") };
 * const gzip = () => new Blob([new Uint8Array(100_000)]).stream().pipeThrough(new CompressionStream("gzip"));
 * assert.equal((await readGzipLimited(gzip(), 100_000, errors)).length, 100_000);
 * await assert.rejects(readGzipLimited(gzip(), 99_999, errors), /too large/);
 * await assert.rejects(readGzipLimited(new Blob(["not gzip"]).stream(), 10, errors), /broken/);
 * ```
 * @param stream The compressed bytes.
 * @param limit The largest accepted size, compressed and inflated, bytes.
 * @param options The errors to throw.
 * @returns The inflated bytes.
 */
export async function readGzipLimited(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  options: ReadLimitedOptions,
): Promise<Uint8Array<ArrayBuffer>> {
  let compressed = 0;
  let overInput = false;
  const counted = stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        compressed += chunk.length;
        if (compressed > limit) {
          overInput = true;
          controller.error(options.tooLarge());
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  const inflated = sliced(counted, INFLATE_SLICE_BYTES).pipeThrough(
    new DecompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>,
  );
  try {
    return await readStreamLimited(inflated, limit, options);
  } catch (error) {
    if (overInput) throw options.tooLarge();
    throw error;
  }
}

const UTF8 = new TextEncoder();

/** Scratch space for {@linkcode utf8Length}: texts up to a third of it are measured in it. */
let scratch: Uint8Array | null = null;
const SCRATCH_BYTES = 1 << 20;

/**
 * The UTF-8 byte length of `text`, encoded into one reused 1 MiB buffer (a
 * memory copy for ASCII, about 1.6 µs for a 55 KB response), a slice of
 * ~340 K code units at a time: no copy of the text is allocated.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { utf8Length } from "./limited_body.ts";
 * assert.equal(utf8Length("abc"), 3);
 * assert.equal(utf8Length("é€😀"), 2 + 3 + 4);
 * assert.equal(utf8Length("x".repeat(500_000)), 500_000);
 * assert.equal(utf8Length("😀".repeat(400_000)), 1_600_000); // pairs across slices stay whole
 * ```
 * @param text The text.
 * @returns Its size in bytes as UTF-8.
 */
export function utf8Length(text: string): number {
  scratch ??= new Uint8Array(SCRATCH_BYTES);
  if (text.length * 3 <= SCRATCH_BYTES) return UTF8.encodeInto(text, scratch).written;
  // A long text is measured a slice at a time in the same buffer: an encoded
  // copy of a 15 MB answer was 15 MB of garbage per answer (issue 34).
  let bytes = 0;
  for (let at = 0; at < text.length;) {
    let end = Math.min(text.length, at + SCRATCH_BYTES / 3);
    // A surrogate pair stays whole (a lone half would count as U+FFFD's 3 bytes).
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    bytes += UTF8.encodeInto(text.slice(at, end), scratch).written;
    at = end;
  }
  return bytes;
}
