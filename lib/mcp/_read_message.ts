/**
 * An MCP POST's JSON-RPC message (the MCP facet's, `handler.ts`): the body's
 * media types, `mcp.max_request_bytes`, strict UTF-8, a nesting bomb refused
 * on its text, JSON with every key once, one JSON-RPC 2.0 object (no batch),
 * and an id a client can match. Each refusal is the JSON-RPC error naming what
 * was wrong.
 *
 * @module
 */
import { clipForMessage } from "../errors.ts";
import { findDuplicateKey } from "../duplicate_keys.ts";
import { checkJsonTextDepth, type OperationLimits } from "../engine/mod.ts";
import { readBodyOf } from "../request/mod.ts";
import { isRecord, rpcError } from "./respond.ts";

/**
 * Longest string `id` of a request: a `subscriptions/listen` stream keeps its
 * id (and the farewell naming it) for its lifetime, so 1000 streams with ids
 * as long as the body allowed held gigabytes.
 */
const MAX_ID_LENGTH = 1024;

/**
 * Levels of JSON a message may nest before its text alone refuses it (far
 * past `approximate_depth_limit`, at most 1 000, which the arguments meet later;
 * JSON.parse takes 17 ms over 100 000 levels, 0.5 s over 2.4 million).
 */
const MESSAGE_DEPTH = 100_000;

/** `application/json` itself, parameters allowed (`\b` also let `application/json-seq` pass). */
const JSON_MEDIA_TYPE = /^application\/json[ \t]*(;|$)/i;

/** A JSON-RPC 2.0 message as read: its members, unchecked. */
export interface JsonRpcMessage {
  readonly jsonrpc?: unknown;
  readonly id?: unknown;
  readonly method?: unknown;
  readonly params?: unknown;
  readonly result?: unknown;
  readonly error?: unknown;
}

/**
 * A JSON-RPC response: an id and exactly one of `result` and `error`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isResponse } from "./_read_message.ts";
 * assert.equal(isResponse({ id: 1, result: {} }), true);
 * assert.equal(isResponse({ id: 1, result: {}, error: {} }), false);
 * ```
 * @param message The message.
 * @returns Whether it is a response.
 */
export function isResponse(message: JsonRpcMessage): boolean {
  return message.id !== undefined &&
    (message.result !== undefined) !== (message.error !== undefined);
}

/**
 * The error text of a message that is neither a request or notification (a
 * string `method`) nor a response.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { invalidMessage } from "./_read_message.ts";
 * assert.equal(invalidMessage(true), "Invalid request: method must be a string");
 * ```
 * @param hasMethod Whether it has a `method` (not a string).
 * @returns The message.
 */
export function invalidMessage(hasMethod: boolean): string {
  return hasMethod
    ? "Invalid request: method must be a string"
    : "Invalid request: expected a method (request, notification) or an id with result or error (response)";
}

/** Invalid UTF-8 is refused, never replaced with U+FFFD (issue 14). */
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads the body as UTF-8, or null once it exceeds `limit` bytes (the rest is
 * not read), or undefined when it is not valid UTF-8.
 */
async function readLimited(request: Request, limit: number): Promise<string | null | undefined> {
  // The router's edge read it already (within max_request_body_bytes); MCP's own limit still holds.
  const read = readBodyOf(request);
  if (read !== undefined) return read.byteLength > limit ? null : decodeStrict(read);
  if (request.body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return decodeStrict(bytes);
}

/** The text, or undefined when the bytes are not valid UTF-8. */
function decodeStrict(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The POST body as a JSON-RPC 2.0 message, or the error response naming what
 * was wrong with it: its media types, size, UTF-8, nesting, JSON, a key given
 * twice, a batch, or not a JSON-RPC 2.0 object.
 *
 * @example A batch is refused
 * ```ts
 * import assert from "node:assert/strict";
 * import { readMessage } from "./_read_message.ts";
 * const request = new Request("http://x/mcp", {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: "[]",
 * });
 * const limits = { approximateDepth: 100 } as Parameters<typeof readMessage>[1]["limits"];
 * const read = await readMessage(request, { maxBodyBytes: 1024, limits });
 * assert.ok(read instanceof Response);
 * assert.equal(read.status, 400);
 * ```
 * @param request The POST.
 * @param options `mcp.max_request_bytes` and the engine's operation limits.
 * @returns The message, or the error response.
 */
export async function readMessage(
  request: Request,
  options: { readonly maxBodyBytes: number; readonly limits: OperationLimits },
): Promise<JsonRpcMessage | Response> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!JSON_MEDIA_TYPE.test(contentType)) {
    return rpcError(request, null, {
      status: 415,
      code: -32600,
      message: "Content-Type must be application/json",
    });
  }
  const accept = request.headers.get("accept");
  if (
    accept !== null && !/application\/json|\*\/\*|application\/\*|text\/event-stream/i.test(accept)
  ) {
    return rpcError(request, null, {
      status: 406,
      code: -32600,
      message: "Accept must include application/json or text/event-stream",
    });
  }
  const text = await readLimited(request, options.maxBodyBytes);
  if (text === null) {
    return rpcError(request, null, {
      status: 413,
      code: -32600,
      message: "Request body is too large",
    });
  }
  if (text === undefined) {
    return rpcError(request, null, {
      status: 400,
      code: -32700,
      message: "Parse error: the body is not valid UTF-8",
    });
  }
  // A nesting bomb (millions of `[`) is refused on its text before JSON.parse
  // spends a second on it. Past MESSAGE_DEPTH levels only: arguments nested
  // less deep (past the variables' limit too) still get the tool's own error,
  // naming the argument, as documented.
  const limits = options.limits;
  const bomb = checkJsonTextDepth(text, limits, {
    outer: MESSAGE_DEPTH - limits.approximateDepth,
    what: "nesting depth of the message",
  });
  if (bomb !== null) {
    return rpcError(request, null, {
      status: 400,
      code: -32600,
      message: `Invalid request: ${bomb.message}`,
    });
  }
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return rpcError(request, null, {
      status: 400,
      code: -32700,
      message: "Parse error: the body is not JSON",
    });
  }
  // JSON.parse keeps the last of two members with one name; a proxy or a log may read the first.
  const duplicate = findDuplicateKey(text);
  if (duplicate !== null) {
    return rpcError(request, null, {
      status: 400,
      code: -32600,
      message: `Invalid request: duplicate key "${clipForMessage(duplicate.key)}" (at ${
        clipForMessage(duplicate.at)
      })`,
    });
  }
  if (Array.isArray(message)) {
    return rpcError(request, null, {
      status: 400,
      code: -32600,
      message: "Batch requests are not supported",
    });
  }
  if (!isRecord(message) || message.jsonrpc !== "2.0") {
    return rpcError(request, null, {
      status: 400,
      code: -32600,
      message: "Invalid request: expected a JSON-RPC 2.0 object",
    });
  }
  return message as JsonRpcMessage;
}

/**
 * The 400 for an id that is not a string or a safe integer, or is too long; else null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkId } from "./_read_message.ts";
 * const request = new Request("http://x/mcp", { method: "POST" });
 * assert.equal(checkId(request, 7), null);
 * assert.equal(checkId(request, 1e400)?.status, 400);
 * ```
 * @param request The POST.
 * @param rawId The message's `id` as read.
 * @returns The error response, or null.
 */
export function checkId(request: Request, rawId: unknown): Response | null {
  // MCP ids are strings or integers. A number JSON cannot write back exactly (1e400 parses
  // to Infinity, 2^53 + 1 to 2^53, 1e29 is echoed as 1e+29) would never match the client's.
  if (rawId !== undefined && typeof rawId !== "string" && !Number.isSafeInteger(rawId)) {
    return rpcError(request, null, {
      status: 400,
      code: -32600,
      message:
        "Invalid request: id must be a string or an integer of at most 2^53 − 1 in magnitude",
    });
  }
  if (typeof rawId === "string" && rawId.length > MAX_ID_LENGTH) {
    return rpcError(request, null, {
      status: 400,
      code: -32600,
      message: `Invalid request: id is longer than ${MAX_ID_LENGTH} characters`,
    });
  }
  return null;
}
