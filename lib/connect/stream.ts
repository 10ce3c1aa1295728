/**
 * The Connect streaming codec for `application/connect+json`: enveloped
 * messages (1 flag byte, a 4-byte big-endian length, the JSON bytes), the
 * end-of-stream message (flag `0x02`) carrying `{error?, metadata?}`, and the
 * reading of a server-streaming call's one request envelope. Pure: bytes and
 * values in, bytes or a {@linkcode ConnectFailure} out.
 *
 * Protocol: https://connectrpc.com/docs/protocol/#streaming-rpcs
 *
 * @module
 */
import { clipForMessage } from "../errors.ts";
import {
  type ConnectErrorBody,
  connectErrorBody,
  type ConnectFailure,
  connectFailure,
} from "./errors.ts";

/** Envelope flag: the message is compressed with the stream's `Connect-Content-Encoding`. */
export const FLAG_COMPRESSED = 0x01;
/** Envelope flag: the end-of-stream message (a server's last envelope). */
export const FLAG_END_STREAM = 0x02;
/** Bytes before an envelope's data: the flags and the length. */
export const ENVELOPE_HEADER_BYTES = 5;
/** The media type of Connect streams in JSON. */
export const CONNECT_STREAM_JSON = "application/connect+json";

const ENCODER = new TextEncoder();

/**
 * Whether a `Content-Type` is a Connect JSON stream: `application/connect+json`,
 * optionally with `charset=utf-8`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isConnectStreamContentType } from "./stream.ts";
 * assert.equal(isConnectStreamContentType("application/connect+json"), true);
 * assert.equal(isConnectStreamContentType("application/connect+proto"), false);
 * assert.equal(isConnectStreamContentType("application/json"), false);
 * ```
 * @param value The header value, or null.
 * @returns True for a JSON Connect stream in UTF-8.
 */
export function isConnectStreamContentType(value: string | null): boolean {
  if (value === null) return false;
  const [type, ...params] = value.split(";").map((part) => part.trim().toLowerCase());
  if (type !== CONNECT_STREAM_JSON) return false;
  return params.every((param) => {
    const [key, raw = ""] = param.split("=", 2).map((part) => part.trim());
    return key !== "charset" || raw.replace(/^"|"$/g, "") === "utf-8";
  });
}

/**
 * One envelope: the flags byte, the data's length as a big-endian uint32, the data.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { encodeEnvelope } from "./stream.ts";
 * const bytes = encodeEnvelope(0, new TextEncoder().encode("{}"));
 * assert.deepEqual([...bytes], [0, 0, 0, 0, 2, 123, 125]);
 * ```
 * @param flags The flags (`0`, {@linkcode FLAG_COMPRESSED}, {@linkcode FLAG_END_STREAM}).
 * @param data The message bytes.
 * @returns The enveloped bytes.
 */
export function encodeEnvelope(flags: number, data: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(ENVELOPE_HEADER_BYTES + data.byteLength);
  const view = new DataView(bytes.buffer);
  view.setUint8(0, flags);
  view.setUint32(1, data.byteLength, false);
  bytes.set(data, ENVELOPE_HEADER_BYTES);
  return bytes;
}

/**
 * A stream message: the JSON text of a response message in an envelope with no flag.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { encodeStreamMessage } from "./stream.ts";
 * const bytes = encodeStreamMessage({ id: "r1" });
 * assert.equal(bytes[0], 0);
 * assert.equal(new TextDecoder().decode(bytes.subarray(5)), '{"id":"r1"}');
 * ```
 * @param message The message in its proto3 JSON form.
 * @returns The enveloped bytes.
 */
export function encodeStreamMessage(message: unknown): Uint8Array {
  return encodeEnvelope(0, ENCODER.encode(JSON.stringify(message)));
}

/** The JSON of an end-of-stream message. */
export interface EndStreamJson {
  /** The error that ended the stream; absent when it ended well. */
  readonly error?: ConnectErrorBody;
  /** Trailers: lower-case names to their values. */
  readonly metadata?: Readonly<Record<string, readonly string[]>>;
}

/** Options for {@linkcode encodeEndStream}. */
export interface EndStreamOptions {
  /** The failure that ends the stream; absent for a stream that ended well. */
  readonly failure?: ConnectFailure;
  /** Trailers (`metadata`); omitted when empty. */
  readonly metadata?: Readonly<Record<string, readonly string[]>>;
}

/**
 * The end-of-stream JSON: `{}` for a good end, else `{error: {code, message,
 * graphql_errors?}}`; `metadata` when trailers are given.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { endStreamJson } from "./stream.ts";
 * assert.deepEqual(endStreamJson(), {});
 * assert.deepEqual(
 *   endStreamJson({ failure: { code: "unavailable", message: "Upstream closed" } }),
 *   { error: { code: "unavailable", message: "Upstream closed" } },
 * );
 * ```
 * @param options Failure and trailers.
 * @returns The JSON value.
 */
export function endStreamJson(options: EndStreamOptions = {}): EndStreamJson {
  const metadata = options.metadata !== undefined && Object.keys(options.metadata).length > 0
    ? { metadata: options.metadata }
    : {};
  return options.failure === undefined
    ? metadata
    : { error: connectErrorBody(options.failure), ...metadata };
}

/**
 * The end-of-stream message: {@linkcode endStreamJson} in an envelope flagged `0x02`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { encodeEndStream } from "./stream.ts";
 * const bytes = encodeEndStream();
 * assert.deepEqual([...bytes], [2, 0, 0, 0, 2, 123, 125]);
 * ```
 * @param options Failure and trailers.
 * @returns The enveloped bytes.
 */
export function encodeEndStream(options: EndStreamOptions = {}): Uint8Array {
  return encodeEnvelope(FLAG_END_STREAM, ENCODER.encode(JSON.stringify(endStreamJson(options))));
}

/** A request envelope read by {@linkcode decodeRequestEnvelope}. */
export interface RequestEnvelope {
  /** Whether flag `0x01` is set: the data is compressed with `Connect-Content-Encoding`. */
  readonly compressed: boolean;
  /** The message bytes (a view into the body). */
  readonly data: Uint8Array;
}

/** The outcome of {@linkcode decodeRequestEnvelope} (the codec's result shape). */
export type EnvelopeResult =
  | { readonly ok: true; readonly value: RequestEnvelope }
  | { readonly ok: false; readonly failure: ConnectFailure };

/**
 * Reads the body of a server-streaming call: exactly one envelope carrying the
 * request message. Refusals (all `invalid_argument` but the size): a body
 * shorter than an envelope header, a length that does not match the body
 * (truncated, or more than one message), the end-stream flag or an unknown
 * flag from a client, a compressed message on a stream without
 * `Connect-Content-Encoding`; a length over `limit` → `resource_exhausted`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeRequestEnvelope, encodeEnvelope } from "./stream.ts";
 * const body = encodeEnvelope(0, new TextEncoder().encode('{"a":1}'));
 * const read = decodeRequestEnvelope(body, { limit: 1024, compression: "identity" });
 * assert.equal(read.ok && new TextDecoder().decode(read.value.data), '{"a":1}');
 * const cut = decodeRequestEnvelope(body.subarray(0, 7), { limit: 1024, compression: "identity" });
 * assert.equal(cut.ok, false);
 * ```
 * @param body The whole request body.
 * @param options The message size limit (bytes, before decompression is also checked by the
 *   reader of compressed data) and the stream's compression.
 * @returns The envelope, or the failure to answer with.
 */
export function decodeRequestEnvelope(
  body: Uint8Array,
  options: { readonly limit: number; readonly compression: "identity" | "gzip" },
): EnvelopeResult {
  const fail = (message: string): EnvelopeResult => ({
    ok: false,
    failure: connectFailure("invalid_argument", message),
  });
  if (body.byteLength < ENVELOPE_HEADER_BYTES) {
    return fail(
      `The request body has ${body.byteLength} bytes: a Connect stream needs one enveloped message (5-byte header, then the message)`,
    );
  }
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const flags = view.getUint8(0);
  const length = view.getUint32(1, false);
  if ((flags & ~FLAG_COMPRESSED) !== 0) {
    return fail(
      `Unexpected envelope flags 0x${
        flags.toString(16).padStart(2, "0")
      } in the request: a client sends messages with flags 0x00 or 0x01 (compressed)`,
    );
  }
  if (length > options.limit) {
    return {
      ok: false,
      failure: connectFailure(
        "resource_exhausted",
        `The request message exceeds the limit of ${options.limit} bytes`,
      ),
    };
  }
  const rest = body.byteLength - ENVELOPE_HEADER_BYTES;
  if (rest < length) {
    return fail(`The request envelope is truncated: it announces ${length} bytes, ${rest} came`);
  }
  if (rest > length) {
    return fail(
      `The request body holds more than one message (${
        rest - length
      } bytes after the first): a server-streaming call takes exactly one`,
    );
  }
  const compressed = (flags & FLAG_COMPRESSED) !== 0;
  if (compressed && options.compression === "identity") {
    return fail(
      "The request message is flagged compressed but the call sent no Connect-Content-Encoding",
    );
  }
  return {
    ok: true,
    value: { compressed, data: body.subarray(ENVELOPE_HEADER_BYTES) },
  };
}

/**
 * Refusal of a streaming call whose `Content-Type` is not a Connect JSON stream (415).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { streamContentTypeFailure } from "./stream.ts";
 * const failure = streamContentTypeFailure("application/json", "OnReviewAdded");
 * assert.equal(failure.status, 415);
 * assert.match(failure.message, /application\/connect\+json/);
 * ```
 * @param contentType The request's `Content-Type`, or null.
 * @param method The method's RPC name.
 * @returns The failure.
 */
export function streamContentTypeFailure(
  contentType: string | null,
  method: string,
): ConnectFailure {
  return connectFailure(
    "invalid_argument",
    `Unsupported Content-Type ${
      contentType === null ? "(none)" : `"${clipForMessage(contentType)}"`
    }: ${method} is a server-streaming method; call it with "${CONNECT_STREAM_JSON}"`,
    { status: 415, headers: { "accept-post": CONNECT_STREAM_JSON } },
  );
}
