/**
 * Request body limit: refuse by `Content-Length` first, then count the
 * streamed bytes, so a lying or chunked client cannot exceed the limit.
 * A gzip body is inflated while it streams and counted after inflation.
 *
 * @module
 */
import { clipForMessage, RouterError } from "../errors.ts";
import { readGzipLimited, readLimited } from "../limited_body.ts";

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
  options: BodyReadOptions = {},
): Promise<Uint8Array<ArrayBuffer> | null> {
  return await readLimited(request, limit, {
    tooLarge: () => tooLarge(limit),
    broken: (cause) =>
      new RouterError("BAD_REQUEST", "Cannot read the request body", {
        cause,
        details: { reason: BODY_INTERRUPTED },
      }),
    ...options,
  });
}

/** `details.reason` of the error of a body that broke off while it was read. */
export const BODY_INTERRUPTED = "body_interrupted";

/** How a body read is counted and cancelled (see `ReadLimitedOptions`). */
export interface BodyReadOptions {
  /** Told each chunk's size before it is kept (after inflation); what it throws stops the read. */
  readonly count?: (bytes: number) => void;
  /** Cancels the read; its reason is thrown. */
  readonly signal?: AbortSignal;
}

function tooLarge(limit: number): RouterError {
  return new RouterError(
    "PAYLOAD_TOO_LARGE",
    `Request body is larger than ${limit} bytes (max_request_body_bytes)`,
    { details: { limit } },
  );
}

/** What {@linkcode readBodyDecoded} read. */
export interface DecodedBody {
  /** The body bytes (inflated when `decoded`), or null without a body. */
  readonly bytes: Uint8Array<ArrayBuffer> | null;
  /** True when a `Content-Encoding` was removed (the bytes are identity). */
  readonly decoded: boolean;
}

/** Options of {@linkcode readBodyDecoded}. */
export interface ReadBodyDecodedOptions extends BodyReadOptions {
  /**
   * Leave the `Content-Encoding` to the facet: Connect inflates its messages
   * itself (through the same limited reader, within `connect_rpc.max_message_bytes`)
   * and answers an unsupported encoding with its own `unimplemented` error.
   */
  readonly leaveEncoded?: boolean;
}

/**
 * Reads a request body within `limit` bytes after decompression: `identity`
 * (or none) as is, `gzip` inflated while streaming (compressed and inflated
 * sizes both counted); any other `Content-Encoding` is a 415.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readBodyDecoded } from "./body.ts";
 * const body = new Blob(["hello"]).stream().pipeThrough(new CompressionStream("gzip"));
 * const gzip = new Request("http://x/", { method: "POST", headers: { "content-encoding": "gzip" }, body });
 * const read = await readBodyDecoded(gzip, 100);
 * assert.equal(new TextDecoder().decode(read.bytes!), "hello");
 * const br = new Request("http://x/", { method: "POST", headers: { "content-encoding": "br" }, body: "x" });
 * await assert.rejects(readBodyDecoded(br, 100), { code: "UNSUPPORTED_MEDIA_TYPE" });
 * ```
 * @param request The request.
 * @param limit The largest accepted body after decompression, bytes.
 * @param options Whether the encoding is left to the facet; a chunk counter; a signal that cancels the read.
 * @returns The bytes and whether they were decoded.
 * @throws {RouterError} `PAYLOAD_TOO_LARGE`, `UNSUPPORTED_MEDIA_TYPE`, or `BAD_REQUEST` (broken or malformed body).
 */
export async function readBodyDecoded(
  request: Request,
  limit: number,
  options: ReadBodyDecodedOptions = {},
): Promise<DecodedBody> {
  const header = request.headers.get("content-encoding");
  const encoding = (header ?? "").trim().toLowerCase();
  if (
    encoding === "" || encoding === "identity" || request.body === null ||
    options.leaveEncoded === true
  ) {
    return { bytes: await readBodyLimited(request, limit, readOptions(options)), decoded: false };
  }
  if (encoding !== "gzip" && encoding !== "x-gzip") {
    await request.body.cancel().catch(() => {});
    throw new RouterError(
      "UNSUPPORTED_MEDIA_TYPE",
      `Unsupported Content-Encoding "${
        clipForMessage(header ?? "")
      }"; send the body as gzip or identity`,
      { details: { accept_encoding: "gzip, identity" } },
    );
  }
  const bytes = await readGzipLimited(request.body, limit, {
    tooLarge: () => tooLarge(limit),
    broken: (cause) =>
      new RouterError("BAD_REQUEST", "Malformed gzip data in the request body", { cause }),
    ...readOptions(options),
  });
  return { bytes, decoded: true };
}

function readOptions(options: BodyReadOptions): BodyReadOptions {
  return {
    ...(options.count ? { count: options.count } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
}
