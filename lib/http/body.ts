/**
 * Request body limit: refuse by `Content-Length` first, then count the
 * streamed bytes, so a lying or chunked client cannot exceed the limit.
 *
 * @module
 */
import { RouterError } from "../errors.ts";

/**
 * Reads a request body, at most `limit` bytes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readBodyLimited } from "./body.ts";
 * const ok = new Request("http://x/", { method: "POST", body: "1234" });
 * assert.equal((await readBodyLimited(ok, 4))?.length, 4);
 * const big = new Request("http://x/", { method: "POST", body: "12345" });
 * await assert.rejects(readBodyLimited(big, 4), { code: "PAYLOAD_TOO_LARGE" });
 * ```
 * @param request The request.
 * @param limit The largest accepted body, bytes.
 * @returns The bytes, or null when the request has no body.
 * @throws {RouterError} `PAYLOAD_TOO_LARGE` over the limit; `BAD_REQUEST` when the body breaks off.
 */
export async function readBodyLimited(
  request: Request,
  limit: number,
): Promise<Uint8Array<ArrayBuffer> | null> {
  if (request.body === null) return null;
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) {
    await request.body.cancel().catch(() => {});
    throw tooLarge(limit);
  }
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  const reader = request.body.getReader();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        throw tooLarge(limit);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof RouterError) throw error;
    throw new RouterError("BAD_REQUEST", "Cannot read the request body", { cause: error });
  } finally {
    reader.releaseLock();
  }
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

function tooLarge(limit: number): RouterError {
  return new RouterError(
    "PAYLOAD_TOO_LARGE",
    `Request body is larger than ${limit} bytes (max_request_body_bytes)`,
    { details: { limit } },
  );
}
