/**
 * The GraphQL-over-HTTP facet's whole answers (`graphql.ts`): a result as
 * `application/json` or `application/graphql-response+json` with the status
 * its media type calls for, bounded by `engine.max_response_bytes` and counted
 * until its client took it; the 405 of a non-query over GET; and APQ's
 * `PersistedQueryNotFound`.
 *
 * @module
 */
import { type DocumentNode, getOperationAST, parse } from "graphql";
import { responseTooLarge, resultJson } from "../engine/mod.ts";
import { persistedQueryNotFound } from "../persisted/mod.ts";
import type {
  BudgetTicket,
  ExecutionResult,
  GraphQLRequest,
  UnsentAnswers,
} from "../engine/mod.ts";
import { RouterError } from "../errors.ts";
import { utf8Length } from "../limited_body.ts";
import { withRequestId } from "../request/mod.ts";
import { withBodySize } from "../telemetry/access_log.ts";
import { TRACED_RESPONSE_HEADERS } from "../trace/mod.ts";
import { GRAPHQL_RESPONSE_JSON, type GraphQLMediaType } from "./_media.ts";
import { errorResponse } from "./errors.ts";

/**
 * A GraphQL result as the HTTP answer.
 * @param result The result.
 * @param mediaType The negotiated media type.
 * @param options Tracing, refusal, request id, the size limit, the unsent-answer count and the memory ticket.
 * @returns The response.
 */
export function graphQLResponse(
  result: ExecutionResult,
  mediaType: GraphQLMediaType,
  options: {
    readonly traced: boolean;
    readonly refused?: boolean;
    readonly requestId: string | null;
    /** The largest response sent (`engine.max_response_bytes`). @default Infinity */
    readonly limit?: number;
    /** Where large answers are counted until taken. */
    readonly unsent?: UnsentAnswers;
    /**
     * The operation's memory-budget ticket: closed once the answer is sent as
     * text, or kept at the answer's bytes until its client took it.
     */
    readonly ticket?: BudgetTicket;
  },
): Response {
  const { traced, requestId } = options;
  if (requestId !== null && result.errors !== undefined) {
    result = { ...result, errors: withRequestId(result.errors, requestId) };
  }
  const requestError = !("data" in result) || result.data === undefined;
  const status = options.refused === true || (mediaType === GRAPHQL_RESPONSE_JSON && requestError)
    ? 400
    : 200;
  const headers = new Headers({ "content-type": `${mediaType}; charset=utf-8` });
  if (traced) {
    for (const [name, value] of Object.entries(TRACED_RESPONSE_HEADERS)) headers.set(name, value);
  }
  const text = resultJson(result);
  // The client response is bounded too (aliases can repeat subgraph data).
  const limit = options.limit ?? Infinity;
  // Measured once: the limit and the access log's bytes_out both read it.
  const bytes = utf8Length(text);
  const ticket = options.ticket;
  if (bytes > limit) {
    ticket?.close();
    return errorResponse(responseTooLarge(limit), { contentType: mediaType, requestId });
  }
  // Sent as a string: Deno.serve copies it into the socket write in Rust, where
  // an encoded `Uint8Array` would be an ArrayBuffer the size of the response
  // that lives until V8 collects it (under load: promoted, then freed only by
  // a full GC, tens of MiB of RSS).
  // A large one goes out counted until its client took it (unsent_answers.ts).
  const body = options.unsent
    ? options.unsent.body(text, bytes, ticket ? () => ticket.close() : undefined)
    : text;
  if (ticket && typeof body === "string") ticket.close();
  else ticket?.keep(bytes);
  return withBodySize(new Response(body, { status, headers }), bytes);
}

/** 405 for a mutation or subscription sent with GET, naming which it is. */
export function notQueryOverGet(
  kind: "mutation" | "subscription",
  options: { readonly mediaType: GraphQLMediaType; readonly requestId: string | null },
): Response {
  const { mediaType, requestId } = options;
  return errorResponse(
    new RouterError(
      "METHOD_NOT_ALLOWED",
      kind === "mutation"
        ? "Only queries can be sent with GET; send mutations with POST"
        : "Only queries can be sent with GET, and this is a subscription: POST it with Accept text/event-stream or multipart/mixed, or use GraphQL over WebSocket",
      { details: { allow: "POST" } },
    ),
    { contentType: mediaType, requestId },
  );
}

/** True when the selected operation of an (unvalidated) document is not a query. */
export function isMutationText(params: GraphQLRequest): boolean {
  let document: DocumentNode;
  try {
    document = parse(params.query, { noLocation: true, maxTokens: 10_000 });
  } catch {
    return false;
  }
  const operation = getOperationAST(document, params.operationName ?? undefined);
  return operation?.operation === "mutation";
}

/**
 * An unknown hash without query text: Apollo's `PersistedQueryNotFound`, a
 * GraphQL request error (200 for `application/json`), so APQ clients send the text.
 */
export function persistedNotFoundResponse(
  mediaType: GraphQLMediaType,
  requestId: string | null,
): Response {
  const error = persistedQueryNotFound();
  const errors = [{ message: error.message, extensions: { code: error.code } }];
  return graphQLResponse({ errors }, mediaType, { traced: false, requestId });
}
