/**
 * The Connect unary codec: which method a request names, whether its HTTP
 * method, headers and GET parameters are acceptable, and its message decoded
 * into GraphQL variables. Pure: plain values in, a call or a
 * {@linkcode ConnectFailure} out (DESIGN §4 fixes every refusal).
 *
 * @module
 */
import {
  checkJsonTextDepth,
  checkVariableValues,
  DEFAULT_OPERATION_LIMITS,
  type OperationLimits,
} from "../engine/mod.ts";
import { findDuplicateKey } from "../duplicate_keys.ts";
import { MAX_TIMER_DELAY_MS } from "../timers.ts";
import { type ConnectFailure, connectFailure } from "./errors.ts";
import { clipForMessage } from "../errors.ts";
import { isUtf8QueryString } from "../request/mod.ts";
import { decodeRequestMessage, MessageDecodeError } from "./json.ts";
import { isConnectStreamContentType, streamContentTypeFailure } from "./stream.ts";
import type { ContractModel, MethodModel } from "./model.ts";

/** What the codec reads of an HTTP request. */
export interface ConnectHttpRequest {
  /** HTTP method (`GET`, `POST`, …). */
  readonly method: string;
  readonly url: URL;
  readonly headers: Headers;
}

/** Where a call's message comes from. */
export type MessageSource =
  | {
    /** POST: the body, with its `Content-Encoding`. */
    readonly kind: "body";
    readonly compression: "identity" | "gzip";
  }
  | {
    /**
     * A server-streaming POST: the body is one enveloped message, compressed
     * (flag `0x01`) with `Connect-Content-Encoding` when it says so.
     */
    readonly kind: "envelope";
    readonly compression: "identity" | "gzip";
  }
  | {
    /** GET: the `message` parameter, as bytes when `base64=1`, with `compression`. */
    readonly kind: "query";
    readonly message: string | Uint8Array;
    readonly compression: "identity" | "gzip";
  };

/** A request accepted by the codec, its message not read yet. */
export interface ConnectCall {
  readonly method: MethodModel;
  /** `GET` calls are cacheable. */
  readonly get: boolean;
  readonly source: MessageSource;
  /** `Connect-Timeout-Ms`, or null when absent. */
  readonly timeoutMs: number | null;
}

/** A codec outcome: a value or the failure to answer with. */
export type CodecResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly failure: ConnectFailure };

function fail<T>(failure: ConnectFailure): CodecResult<T> {
  return { ok: false, failure };
}

/**
 * Whether a `Content-Type` is JSON as Connect unary sends it: `application/json`,
 * optionally with `charset=utf-8`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isJsonContentType } from "./codec.ts";
 * assert.equal(isJsonContentType("application/json; charset=utf-8"), true);
 * assert.equal(isJsonContentType("application/proto"), false);
 * assert.equal(isJsonContentType("application/json; charset=latin1"), false);
 * ```
 * @param value The header value, or null.
 * @returns True for JSON in UTF-8.
 */
export function isJsonContentType(value: string | null): boolean {
  if (value === null) return false;
  const [type, ...params] = value.split(";").map((part) => part.trim().toLowerCase());
  if (type !== "application/json") return false;
  return params.every((param) => {
    const [key, raw = ""] = param.split("=", 2).map((part) => part.trim());
    return key !== "charset" || raw.replace(/^"|"$/g, "") === "utf-8";
  });
}

function parseCompression(
  value: string | null,
  what: string,
): CodecResult<"identity" | "gzip"> {
  const encoding = (value ?? "identity").trim().toLowerCase();
  if (encoding === "" || encoding === "identity") return { ok: true, value: "identity" };
  if (encoding === "gzip") return { ok: true, value: "gzip" };
  return fail(connectFailure(
    "unimplemented",
    `Unsupported ${what} "${clipForMessage(value ?? "")}": use gzip or identity`,
    { headers: { "accept-encoding": "gzip" } },
  ));
}

function parseTimeout(value: string | null): CodecResult<number | null> {
  if (value === null) return { ok: true, value: null };
  if (!/^\d{1,10}$/.test(value)) {
    return fail(connectFailure(
      "invalid_argument",
      `Invalid Connect-Timeout-Ms "${
        clipForMessage(value)
      }": expected 1 to 10 digits of milliseconds`,
    ));
  }
  // Ten digits may exceed what a timer holds (2^31 − 1 ms, about 24.8 days): clamp.
  return { ok: true, value: Math.min(Number(value), MAX_TIMER_DELAY_MS) };
}

function checkProtocolVersion(headers: Headers): CodecResult<null> {
  const version = headers.get("connect-protocol-version");
  if (version === "1") return { ok: true, value: null };
  return fail(connectFailure(
    "invalid_argument",
    version === null
      ? 'Missing header "Connect-Protocol-Version": expected "1"'
      : `Unsupported Connect-Protocol-Version "${clipForMessage(version)}": expected "1"`,
  ));
}

/**
 * A server-streaming method's call: POST only, `application/connect+json`,
 * `Connect-Protocol-Version: 1`, compression from `Connect-Content-Encoding`.
 */
function resolveStreamCall(
  method: MethodModel,
  request: ConnectHttpRequest,
): CodecResult<ConnectCall> {
  if (request.method !== "POST") {
    return fail(connectFailure(
      "unimplemented",
      `Method ${method.name} is server-streaming (a subscription): call it with POST and Content-Type application/connect+json, not ${
        clipForMessage(request.method)
      }`,
      { status: 405, headers: { allow: "POST" } },
    ));
  }
  const timeout = parseTimeout(request.headers.get("connect-timeout-ms"));
  if (!timeout.ok) return timeout;
  const contentType = request.headers.get("content-type");
  if (!isConnectStreamContentType(contentType)) {
    return fail(streamContentTypeFailure(contentType, method.name));
  }
  return postCall(method, request, { kind: "envelope", timeoutMs: timeout.value });
}

/**
 * A POST whose `Content-Type` is accepted: the protocol version, then the
 * compression (`Content-Encoding` of a unary body, `Connect-Content-Encoding`
 * of a stream's envelopes).
 */
function postCall(
  method: MethodModel,
  request: ConnectHttpRequest,
  options: { readonly kind: "body" | "envelope"; readonly timeoutMs: number | null },
): CodecResult<ConnectCall> {
  const version = checkProtocolVersion(request.headers);
  if (!version.ok) return version;
  const header = options.kind === "body" ? "Content-Encoding" : "Connect-Content-Encoding";
  const compression = parseCompression(request.headers.get(header), header);
  if (!compression.ok) return compression;
  return {
    ok: true,
    value: {
      method,
      get: false,
      source: { kind: options.kind, compression: compression.value },
      timeoutMs: options.timeoutMs,
    },
  };
}

/** The GET parameters of the Connect protocol (each read once). */
const GET_PARAMETERS = ["connect", "encoding", "message", "base64", "compression"] as const;

function decodeBase64Url(text: string): Uint8Array | null {
  const normalized = text.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  if (!/^[A-Za-z0-9+/]*$/.test(normalized) || normalized.length % 4 === 1) return null;
  const binary = atob(normalized + "=".repeat((4 - (normalized.length % 4)) % 4));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/**
 * Resolves a request to a call: the method from the path, then the HTTP
 * method, then the protocol headers (POST) or parameters (GET). Refusals:
 * unknown method → 404 `unimplemented`; a server-streaming method (a
 * subscription) other than by POST → 405, or with a `Content-Type` other than
 * `application/connect+json` → 415; a mutation over GET → 405 with
 * `Allow: POST`; another HTTP method → 405; a POST whose `Content-Type` is not
 * JSON → 415; a missing or wrong `Connect-Protocol-Version` → 400
 * `invalid_argument`; missing, wrong or repeated `connect`, `encoding`,
 * `message`, `base64` or `compression` GET parameters → 400 `invalid_argument`; an unknown compression → `unimplemented`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveCall } from "./codec.ts";
 * const contract = { methods: [], byName: new Map(), enums: [], inputs: [], skipped: [] };
 * const result = resolveCall(contract, "/service.v1.GraphService/", {
 *   method: "POST",
 *   url: new URL("http://localhost/service.v1.GraphService/Nope"),
 *   headers: new Headers(),
 * });
 * assert.equal(result.ok, false);
 * if (!result.ok) {
 *   assert.equal(result.failure.code, "unimplemented");
 *   assert.equal(result.failure.status, 404);
 * }
 * ```
 * @param contract The contract model.
 * @param prefix The service path prefix (`/service.v1.GraphService/`).
 * @param request Method, URL and headers of the request.
 * @returns The call, or the failure to answer with.
 */
export function resolveCall(
  contract: ContractModel,
  prefix: string,
  request: ConnectHttpRequest,
): CodecResult<ConnectCall> {
  const pathname = request.url.pathname;
  const name = pathname.startsWith(prefix) ? pathname.slice(prefix.length) : "";
  const method = contract.byName.get(name);
  const service = prefix.slice(1, -1);
  if (method === undefined) {
    return fail(connectFailure(
      "unimplemented",
      name === ""
        ? `No method named in path "${clipForMessage(pathname)}": expected ${prefix}<Method>`
        : `Unknown method "${clipForMessage(name)}" of ${service}`,
      { status: 404 },
    ));
  }
  if (method.streaming) return resolveStreamCall(method, request);
  const allow = method.idempotent ? "GET, POST" : "POST";
  if (request.method === "GET" && !method.idempotent) {
    return fail(connectFailure(
      "unimplemented",
      `Method ${name} is a mutation: call it with POST, not GET`,
      { status: 405, headers: { allow } },
    ));
  }
  if (request.method !== "GET" && request.method !== "POST") {
    return fail(connectFailure(
      "unimplemented",
      `HTTP method ${clipForMessage(request.method)} is not allowed for ${name}: use ${
        allow.replace(", ", " or ")
      }`,
      { status: 405, headers: { allow } },
    ));
  }
  const timeout = parseTimeout(request.headers.get("connect-timeout-ms"));
  if (!timeout.ok) return timeout;
  if (request.method === "POST") {
    const contentType = request.headers.get("content-type");
    if (!isJsonContentType(contentType)) {
      return fail(connectFailure(
        "invalid_argument",
        `Unsupported Content-Type ${
          contentType === null ? "(none)" : `"${clipForMessage(contentType)}"`
        }: Connect calls here use "application/json"`,
        { status: 415, headers: { "accept-post": "application/json" } },
      ));
    }
    return postCall(method, request, { kind: "body", timeoutMs: timeout.value });
  }
  return getCall(method, request, timeout.value);
}

/**
 * A GET call (Connect's unary GET): its query string in UTF-8, each parameter
 * once, `connect=v1`, `encoding=json`, the message, and its compression and
 * base64 agreeing.
 */
function getCall(
  method: MethodModel,
  request: ConnectHttpRequest,
  timeoutMs: number | null,
): CodecResult<ConnectCall> {
  const searchParams = request.url.searchParams;
  if (!isUtf8QueryString(request.url.search)) {
    return fail(connectFailure(
      "invalid_argument",
      "The query string is not valid UTF-8 once percent-decoded",
    ));
  }
  // A repeated parameter is as ambiguous as a repeated JSON key: `get` reads the first,
  // while a cache key, a firewall or a log may read the last (/graphql refuses it too).
  for (const name of GET_PARAMETERS) {
    if (searchParams.getAll(name).length > 1) {
      return fail(connectFailure(
        "invalid_argument",
        `The "${name}" query parameter is given more than once; give it once`,
      ));
    }
  }
  const connect = searchParams.get("connect");
  if (connect !== "v1") {
    return fail(connectFailure(
      "invalid_argument",
      connect === null
        ? 'Missing query parameter "connect": expected "v1"'
        : `Unsupported query parameter connect="${clipForMessage(connect)}": expected "v1"`,
    ));
  }
  const encoding = searchParams.get("encoding");
  if (encoding !== "json") {
    return fail(connectFailure(
      "invalid_argument",
      encoding === null
        ? 'Missing query parameter "encoding": expected "json"'
        : `Unsupported query parameter encoding="${clipForMessage(encoding)}": expected "json"`,
    ));
  }
  const text = searchParams.get("message");
  if (text === null) {
    return fail(connectFailure(
      "invalid_argument",
      'Missing query parameter "message": the URL-encoded JSON request message ({} when empty)',
    ));
  }
  const compression = parseCompression(searchParams.get("compression"), "compression");
  if (!compression.ok) return compression;
  let message: string | Uint8Array = text;
  if (searchParams.get("base64") === "1") {
    const bytes = decodeBase64Url(text);
    if (bytes === null) {
      return fail(connectFailure(
        "invalid_argument",
        'Malformed query parameter "message": not base64url although base64=1',
      ));
    }
    message = bytes;
  } else if (compression.value === "gzip") {
    return fail(connectFailure(
      "invalid_argument",
      'Query parameter compression=gzip needs base64=1: a compressed "message" is binary',
    ));
  }
  return {
    ok: true,
    value: {
      method,
      get: true,
      source: { kind: "query", message, compression: compression.value },
      timeoutMs,
    },
  };
}

/**
 * Decodes a call's message text (JSON) into GraphQL variables. An empty text
 * is the empty message. Malformed JSON, a non-object, an unknown field or a
 * value of the wrong type → 400 `invalid_argument` naming the field.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse, type OperationDefinitionNode } from "graphql";
 * import { buildContractModel } from "./model.ts";
 * import { decodeCallMessage } from "./codec.ts";
 * const schema = buildSchema("type Query { hello(name: String!): String }");
 * const text = "query Hello($name: String!) { hello(name: $name) }";
 * const document = parse(text);
 * const operation = document.definitions[0] as OperationDefinitionNode;
 * const model = buildContractModel(schema, [{ name: "Hello", kind: "query", text, document, operation, description: null }]);
 * const method = model.methods[0]!;
 * assert.deepEqual(decodeCallMessage(method, '{"name":"Ada"}'), { ok: true, value: { name: "Ada" } });
 * const bad = decodeCallMessage(method, "[1]");
 * assert.equal(bad.ok, false);
 * ```
 * @param method The method.
 * @param text The message text.
 * @param options The operation limits (the message's nesting is checked before it is decoded).
 * @returns The variables, or the failure.
 */
export function decodeCallMessage(
  method: MethodModel,
  text: string,
  options: { readonly limits?: OperationLimits } = {},
): CodecResult<Record<string, unknown>> {
  let json: unknown;
  if (text.trim() === "") {
    json = {};
  } else {
    // Parsing deep nesting costs far more than refusing it: bound it on the text first.
    const tooDeepText = checkJsonTextDepth(text, options.limits ?? DEFAULT_OPERATION_LIMITS, {
      outer: 0,
      what: "nesting depth of variable values",
    });
    if (tooDeepText !== null) return fail(connectFailure("invalid_argument", tooDeepText.message));
    try {
      json = JSON.parse(text);
    } catch (error) {
      return fail(connectFailure(
        "invalid_argument",
        `Malformed ${method.request.name} message: ${(error as SyntaxError).message}`,
      ));
    }
    const duplicate = findDuplicateKey(text);
    if (duplicate !== null) {
      return fail(connectFailure(
        "invalid_argument",
        `Malformed ${method.request.name} message: duplicate key "${
          clipForMessage(duplicate.key)
        }" in ${clipForMessage(duplicate.at)}`,
      ));
    }
  }
  // Decoding recurses per level of a (possibly recursive) input type: bound the nesting first.
  const tooDeep = json !== null && typeof json === "object" && !Array.isArray(json)
    ? checkVariableValues(
      json as Record<string, unknown>,
      options.limits ?? DEFAULT_OPERATION_LIMITS,
    )
    : null;
  if (tooDeep !== null) return fail(connectFailure("invalid_argument", tooDeep.message));
  try {
    return { ok: true, value: decodeRequestMessage(method.request, json) };
  } catch (error) {
    if (error instanceof MessageDecodeError) {
      return fail(
        connectFailure("invalid_argument", `Invalid ${method.request.name}: ${error.message}`),
      );
    }
    throw error;
  }
}

/**
 * Whether an `If-None-Match` header matches an entity tag (weak comparison).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { matchesEtag } from "./codec.ts";
 * assert.equal(matchesEtag('W/"abc", "def"', '"def"'), true);
 * assert.equal(matchesEtag('"abc"', '"def"'), false);
 * assert.equal(matchesEtag("*", '"def"'), true);
 * ```
 * @param header The `If-None-Match` value, or null.
 * @param etag The response's entity tag.
 * @returns True when the client's copy is current.
 */
export function matchesEtag(header: string | null, etag: string): boolean {
  if (header === null) return false;
  const bare = etag.replace(/^W\//, "");
  return header.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed.replace(/^W\//, "") === bare;
  });
}

/**
 * `Cache-Control` of a successful GET: public for anonymous requests, private
 * when the answer may depend on the request (it carried credentials or a
 * header the router forwards to subgraphs).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cacheControl } from "./codec.ts";
 * assert.equal(cacheControl({ maxAge: 60, authorized: false }), "public, max-age=60");
 * assert.equal(cacheControl({ maxAge: 60, authorized: true }), "private, max-age=60");
 * ```
 * @param options `max-age` in seconds, and whether the answer depends on the request's headers.
 * @returns The header value.
 */
export function cacheControl(
  options: { readonly maxAge: number; readonly authorized: boolean },
): string {
  return `${options.authorized ? "private" : "public"}, max-age=${options.maxAge}`;
}
