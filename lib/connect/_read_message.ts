/**
 * A Connect call's request message as text (the Connect facet's, `handler.ts`):
 * from the body, a streaming call's envelope or a GET's `message` parameter,
 * gunzipped when compressed, within `connect_rpc`'s message limit measured
 * after decompression, and valid UTF-8.
 *
 * @module
 */
import { readGzipLimited } from "../limited_body.ts";
import { bodyOf } from "../request/mod.ts";
import type { CodecResult, ConnectCall } from "./codec.ts";
import { type ConnectFailure, connectFailure } from "./errors.ts";
import { decodeRequestEnvelope } from "./stream.ts";

const DECODER = new TextDecoder("utf-8", { fatal: true });
const ENCODER = new TextEncoder();

function tooLarge(limit: number): ConnectFailure {
  return connectFailure(
    "resource_exhausted",
    `The request message exceeds the limit of ${limit} bytes (measured after decompression)`,
  );
}

/** Gunzips `bytes`, refusing once the output passes `limit`. */
async function gunzipLimited(
  bytes: Uint8Array,
  limit: number,
): Promise<CodecResult<Uint8Array>> {
  const failures = {
    tooLarge: tooLarge(limit),
    malformed: connectFailure("invalid_argument", "Malformed gzip data in the request message"),
  };
  // Inflated in small slices and counted as it runs (one shared reader: lib/limited_body.ts).
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream();
  try {
    const value = await readGzipLimited(stream, limit, {
      tooLarge: () => new GunzipRefused(failures.tooLarge),
      broken: () => new GunzipRefused(failures.malformed),
    });
    return { ok: true, value };
  } catch (error) {
    if (error instanceof GunzipRefused) return { ok: false, failure: error.failure };
    throw error;
  }
}

/** Carries a Connect failure out of `readStreamLimited`. */
class GunzipRefused extends Error {
  readonly failure: ConnectFailure;
  constructor(failure: ConnectFailure) {
    super(failure.message);
    this.failure = failure;
  }
}

/**
 * The call's message as text, at most `limit` bytes after decompression.
 * @param request The facet's request (its body read by the edge).
 * @param call The resolved call (where its message is).
 * @param limit The message limit, bytes after decompression.
 * @returns The text, or the failure to answer with.
 * The router's edge (`lib/http/`) has already buffered a POST body within
 * `max_request_body_bytes`, so only the Connect limit is checked here.
 */
export async function readMessage(
  request: Request,
  call: ConnectCall,
  limit: number,
): Promise<CodecResult<string>> {
  const source = call.source;
  let raw: Uint8Array;
  let gzip = source.compression === "gzip";
  if (source.kind === "body") raw = await bodyOf(request);
  else if (source.kind === "envelope") {
    const envelope = decodeRequestEnvelope(await bodyOf(request), {
      limit,
      compression: source.compression,
    });
    if (!envelope.ok) return envelope;
    raw = envelope.value.data;
    gzip = envelope.value.compressed;
  } else if (typeof source.message !== "string") raw = source.message;
  else {
    return ENCODER.encode(source.message).byteLength > limit
      ? { ok: false, failure: tooLarge(limit) }
      : { ok: true, value: source.message };
  }
  const bytes: CodecResult<Uint8Array> = gzip
    ? await gunzipLimited(raw, limit)
    : raw.byteLength > limit
    ? { ok: false, failure: tooLarge(limit) }
    : { ok: true, value: raw };
  if (!bytes.ok) return bytes;
  try {
    return { ok: true, value: DECODER.decode(bytes.value) };
  } catch {
    return {
      ok: false,
      failure: connectFailure("invalid_argument", "The request message is not valid UTF-8"),
    };
  }
}
