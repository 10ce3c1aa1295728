/**
 * What the handler learned about a request before its facet runs, kept on the
 * request itself: the body it read (within the limit, inflated unless Connect
 * decodes its own), the request's id and the signal to follow. Deno's server
 * requests have immutable headers and a body that reads once, so before this
 * every request was copied (`new Request` with a new `Headers`): about 4 % of
 * a request's CPU and 7 % of its allocation on the federation benchmark
 * (`bench/load/results.md`, session 7). Facets read the body through
 * {@linkcode bodyOf} and the id through {@linkcode requestIdOf}; a request
 * made elsewhere (tests, a facet called directly) has no context and answers
 * from itself.
 *
 * @module
 */
import { withSignal } from "../cancellation.ts";
import { REQUEST_ID_HEADER } from "./request_id.ts";

/** What the handler read before the facet runs. */
export interface RequestContext {
  /** The body read within the limit, or null for a request without one. */
  readonly body: Uint8Array | null;
  /** The request's id: the client's valid `X-Request-Id`, else a generated one. */
  readonly requestId: string;
  /** The signal facets follow (the client's, or one that also aborts at the deadline). */
  readonly signal: AbortSignal;
  /**
   * Charges one more operation to the request's rate limit (a batch's operations
   * after its first): resolves to the refusal, or null. Absent: no limit applies.
   */
  readonly charge?: () => Promise<Error | null>;
}

const CONTEXT: unique symbol = Symbol("gw.requestContext");

type WithContext = { [CONTEXT]?: RequestContext };

/**
 * Attaches the context to the request (the same object, returned).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bodyOf, requestIdOf, withContext } from "./context.ts";
 * const request = new Request("http://r.test/graphql", { method: "POST", body: "{}" });
 * await request.bytes(); // the handler read it
 * withContext(request, { body: new Uint8Array([123, 125]), requestId: "r1", signal: request.signal });
 * assert.equal(new TextDecoder().decode(await bodyOf(request)), "{}");
 * assert.equal(requestIdOf(request), "r1");
 * ```
 * @param request The request as `Deno.serve` gave it.
 * @param context What the handler read.
 * @returns The same request.
 */
export function withContext(request: Request, context: RequestContext): Request {
  (request as unknown as WithContext)[CONTEXT] = context;
  return withSignal(request, context.signal);
}

/**
 * The request's body: the bytes the handler read, else (no context) read now.
 * @param request The request.
 * @returns The bytes (empty without a body).
 */
export async function bodyOf(request: Request): Promise<Uint8Array> {
  return readBodyOf(request) ?? await request.bytes();
}

/**
 * The bytes the handler read (empty without a body), or undefined when the
 * request has no context (its body, if any, is still to be read).
 * @param request The request.
 * @returns The bytes, or undefined.
 */
export function readBodyOf(request: Request): Uint8Array | undefined {
  const context = (request as unknown as WithContext)[CONTEXT];
  return context === undefined ? undefined : context.body ?? EMPTY;
}

/**
 * The request's id: the handler's (the client's valid one or a generated
 * one), else (no context) the `X-Request-Id` header.
 * @param request The request.
 * @returns The id, or null.
 */
export function requestIdOf(request: Request): string | null {
  return (request as unknown as WithContext)[CONTEXT]?.requestId ??
    request.headers.get(REQUEST_ID_HEADER);
}

const EMPTY = new Uint8Array(0);

/**
 * The request's extra rate-limit charge ({@linkcode RequestContext.charge}), or undefined.
 * @param request The request.
 * @returns The charge.
 */
export function chargeOf(request: Request): (() => Promise<Error | null>) | undefined {
  return (request as unknown as WithContext)[CONTEXT]?.charge;
}
