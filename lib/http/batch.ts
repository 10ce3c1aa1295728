/**
 * Query batching (`batching`, Apollo Router's keys; issue 43): a JSON array
 * body on `graphql_path`, as Apollo Client's `BatchHttpLink` sends it, is
 * answered with an array of results in the same order. Each item runs as its
 * own GraphQL request (its own plan, persisted document, authorization,
 * limits and rate-limit charge), all at once; one that fails answers its own
 * errors and the others go on. The batch shares the request's deadline, its
 * admission slot and its body limit (the body was read and counted once).
 *
 * An item runs through the single-operation handler on a request of its own
 * that carries the item's text as its body, the client's headers (with
 * `Accept` narrowed to the batch's media type: no streams in a batch), the
 * batch's id and signal, and the batch's telemetry scope (each operation is
 * counted; the access log writes one line for the batch).
 *
 * @module
 */
import type { BatchingConfig } from "../config/mod.ts";
import { RouterError } from "../errors.ts";
import { acceptRequestId, chargeOf, readBodyOf, requestIdOf, withContext } from "../request/mod.ts";
import { signalOf } from "../cancellation.ts";
import { utf8Length } from "../limited_body.ts";
import type { Telemetry } from "../telemetry/mod.ts";
import { withBodySize } from "../telemetry/access_log.ts";
import { errorResponse } from "./errors.ts";
import { mergeCacheControl } from "../engine/mod.ts";
import { pluginRequestOf } from "../plugins/mod.ts";
import type { GraphQLMediaType } from "./_media.ts";

/** What a batch reads of the router state. */
export interface BatchDeps {
  /** `batching`. */
  readonly config: { readonly batching: BatchingConfig };
  /** Metrics and access log; each item's operation is counted in the batch's scope. */
  readonly telemetry?: Telemetry | null;
  /** The largest response sent (`engine.max_response_bytes`); the batch's array is held to it. */
  readonly maxResponseBytes: number;
}

/** Options of {@linkcode handleBatch}. */
export interface BatchOptions {
  /** The array's JSON text (checked as a body: UTF-8, depth, duplicate keys). */
  readonly text: string;
  /** Its number of items. */
  readonly size: number;
  /** The batch's response media type (each item is answered in it). */
  readonly mediaType: GraphQLMediaType;
  /** Answers one item's request (the GraphQL facet's single-operation handler). */
  readonly single: (request: Request) => Promise<Response>;
}

/**
 * The error of a batch refused whole: batching off, or over `maximum_size`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { batchRefusal } from "./batch.ts";
 * const off = { enabled: false, mode: "batch_http_link", maximum_size: 10 } as const;
 * assert.equal(batchRefusal(off, 2)?.code, "BATCHING_NOT_ENABLED");
 * const on = { ...off, enabled: true };
 * assert.equal(batchRefusal(on, 10), null);
 * assert.equal(batchRefusal(on, 11)?.code, "BATCH_LIMIT_EXCEEDED");
 * assert.equal(batchRefusal(on, 0)?.code, "BAD_REQUEST");
 * ```
 * @param config `batching`.
 * @param size The batch's number of items.
 * @returns The error (a 400), or null when the batch may run.
 */
export function batchRefusal(config: BatchingConfig, size: number): RouterError | null {
  if (!config.enabled) {
    return new RouterError(
      "BATCHING_NOT_ENABLED",
      "Batched requests are not enabled; send one operation per request, or set batching.enabled",
    );
  }
  if (size === 0) return new RouterError("BAD_REQUEST", "Empty batch: send at least one operation");
  if (size > config.maximum_size) {
    return new RouterError(
      "BATCH_LIMIT_EXCEEDED",
      `The batch has ${size} operations, more than the ${config.maximum_size} allowed (batching.maximum_size)`,
      { details: { limit: config.maximum_size, size } },
    );
  }
  return null;
}

/**
 * Splits a JSON array's text into its items' texts, as sent (numbers, escapes
 * and key order untouched). The text must be a valid JSON array.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { splitBatch } from "./batch.ts";
 * assert.deepEqual(splitBatch(' [ {"query":"{a}"} , {"query":"{b(x: \\"],\\")}"} ] '), [
 *   '{"query":"{a}"}',
 *   '{"query":"{b(x: \\"],\\")}"}',
 * ]);
 * assert.deepEqual(splitBatch("[]"), []);
 * ```
 * @param text The array's JSON text.
 * @returns Each item's text.
 */
export function splitBatch(text: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      depth++;
      if (depth === 1) start = i + 1;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
      if (depth === 0) pushItem(items, text.slice(start, i));
    } else if (c === COMMA && depth === 1) {
      pushItem(items, text.slice(start, i));
      start = i + 1;
    }
  }
  return items;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function pushItem(items: string[], item: string): void {
  const trimmed = item.trim();
  if (trimmed !== "") items.push(trimmed);
}

/**
 * Answers a batch: refused whole with a 400 when batching is off or the batch
 * is over `maximum_size`, else an array of the items' results in order (200).
 * @param request The batch's request (its body already read).
 * @param deps `batching`, telemetry and the response limit.
 * @param options The batch's text and size, media type, and the single-operation handler.
 * @returns The response.
 */
export async function handleBatch(
  request: Request,
  deps: BatchDeps,
  options: BatchOptions,
): Promise<Response> {
  const { mediaType } = options;
  const requestId = requestIdOf(request);
  const refusal = batchRefusal(deps.config.batching, options.size);
  const metrics = deps.telemetry?.metrics ?? null;
  if (refusal !== null) {
    if (refusal.code === "BATCHING_NOT_ENABLED") metrics?.batch("disabled", options.size);
    else if (refusal.code === "BATCH_LIMIT_EXCEEDED") metrics?.batch("too_large", options.size);
    return errorResponse(refusal, { contentType: mediaType, requestId });
  }
  metrics?.batch("answered", options.size);
  const items = splitBatch(options.text);
  const headers = new Headers(request.headers);
  headers.set("accept", mediaType);
  headers.delete("content-length");
  headers.delete("content-encoding");
  const signal = signalOf(request);
  const scope = deps.telemetry?.scopeOf(request);
  const whole = readBodyOf(request) ?? null;
  const charge = chargeOf(request);
  const encoder = new TextEncoder();
  const answers = await Promise.all(items.map(async (item, index) => {
    // The first operation was charged at the edge, with the request.
    const refused = index > 0 && charge ? await charge() : null;
    if (refused !== null) return errorResponse(refused, { contentType: mediaType, requestId });
    // A batch holds operations, not batches.
    if (item.startsWith("[")) {
      return errorResponse(
        new RouterError(
          "BAD_REQUEST",
          `Batch item ${index} is an array; each item is one operation`,
        ),
        { contentType: mediaType, requestId },
      );
    }
    const one = new Request(request.url, { method: "POST", headers });
    const id = requestId ?? acceptRequestId(null);
    withContext(one, { body: encoder.encode(item), requestId: id, signal });
    // Each operation meets the plugins' stages on a run of its own (issue 40).
    pluginRequestOf(request)?.fork(one);
    if (scope) deps.telemetry?.bind(scope, one, whole);
    return await options.single(one);
  }));
  const texts: string[] = [];
  const merged = new Headers({ "content-type": `${mediaType}; charset=utf-8` });
  const cacheControls: string[] = [];
  for (const answer of answers) {
    texts.push(await answer.text());
    for (const [name, value] of answer.headers) {
      if (name === "content-type" || name === "content-length") continue;
      if (name === "set-cookie") merged.append(name, value);
      else if (name === "cache-control") cacheControls.push(value);
      else if (!merged.has(name)) merged.set(name, value);
    }
  }
  // Each item's headers merge as its subgraphs' did (response header rules): the most restrictive.
  // An item that says nothing is not cacheable: then neither is the batch.
  const cacheControl = cacheControls.length === answers.length
    ? mergeCacheControl(cacheControls)
    : null;
  if (cacheControl !== null) merged.set("cache-control", cacheControl);
  const text = `[${texts.join(",")}]`;
  const bytes = utf8Length(text);
  if (bytes > deps.maxResponseBytes) {
    return errorResponse(
      new RouterError(
        "RESPONSE_TOO_LARGE",
        `The batch's response would exceed ${deps.maxResponseBytes} bytes (engine.max_response_bytes)`,
        { details: { limit: deps.maxResponseBytes } },
      ),
      { contentType: mediaType, requestId },
    );
  }
  return withBodySize(new Response(text, { status: 200, headers: merged }), bytes);
}
