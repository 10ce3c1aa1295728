/**
 * Request body limit: refuse by `Content-Length` first, then count the
 * streamed bytes, so a lying or chunked client cannot exceed the limit.
 *
 * @module
 */
import { RouterError } from "../errors.ts";
import { readLimited } from "../limited_body.ts";

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
  return await readLimited(request, limit, {
    tooLarge: () => tooLarge(limit),
    broken: (cause) => new RouterError("BAD_REQUEST", "Cannot read the request body", { cause }),
  });
}

function tooLarge(limit: number): RouterError {
  return new RouterError(
    "PAYLOAD_TOO_LARGE",
    `Request body is larger than ${limit} bytes (max_request_body_bytes)`,
    { details: { limit } },
  );
}
