/**
 * Reading a GraphQL-over-HTTP request: the JSON body (UTF-8, depth and size checked on the text
 * before it is parsed) and GET's query parameters, into one raw request with its persisted
 * document hash (`extensions.persistedQuery.sha256Hash` or `documentId`); a JSON array body is a
 * batch (`batch.ts`).
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import { checkJsonTextDepth, parseJsonExact } from "../engine/mod.ts";
import type { OperationLimits } from "../engine/mod.ts";
import { clipForMessage, RouterError } from "../errors.ts";
import { APPLICATION_JSON, isJsonContentType } from "./_media.ts";
import { bodyOf, isUtf8QueryString } from "../request/mod.ts";
import { findDuplicateKey } from "../duplicate_keys.ts";
import { documentIdOf } from "../persisted/mod.ts";

/** Invalid UTF-8 is refused, never replaced with U+FFFD and executed. */
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The request's parameters as sent: the text may be missing when a hash names the document. */
export interface RawRequest {
  readonly query: string | null;
  readonly operationName: string | null;
  readonly variables: Readonly<Record<string, unknown>> | null;
  readonly extensions: Readonly<Record<string, unknown>> | null;
  /** `documentId` or `extensions.persistedQuery.sha256Hash`, normalized; null when absent. */
  readonly hash: string | null;
}

/**
 * A JSON array body (a batch, Apollo Client's `BatchHttpLink`): its text, checked
 * as the whole body is (UTF-8, depth, duplicate keys), and how many items it holds.
 */
export interface BatchBody {
  /** The array's JSON text. */
  readonly batch: string;
  /** Its number of items. */
  readonly size: number;
}

/** Thrown for JSON nested past the depth limit, found before it is parsed; answered 400. */
export class JsonTooDeep extends Error {
  constructor(readonly error: GraphQLFormattedError) {
    super(error.message);
  }
}

/**
 * Parses a request's JSON text (a body, a GET parameter) once its nesting is
 * known to be within the limit: parsing deep nesting costs far more than
 * refusing it (2.4 million `[`: 0.5 s of CPU).
 */
function parseWithin(
  text: string,
  limits: OperationLimits,
  options: { readonly outer: number; readonly where: string },
): unknown {
  const tooDeep = checkJsonTextDepth(text, limits, { outer: options.outer });
  if (tooDeep !== null) throw new JsonTooDeep(tooDeep);
  try {
    return parseJsonExact(text);
  } catch (error) {
    throw badRequest(`Malformed JSON in ${options.where}: ${(error as Error).message}`);
  }
}

function badRequest(message: string): RouterError {
  return new RouterError("BAD_REQUEST", message);
}

/**
 * Reads `query`, `operationName`, `variables` and `extensions` from a POST body,
 * or a batch's text when the body is a JSON array.
 * @param request The request.
 * @param limits The depth limit its JSON is held to (a batch's items: one level in).
 * @returns The GraphQL request, or the batch.
 */
export async function readJsonBody(
  request: Request,
  limits: OperationLimits,
): Promise<RawRequest | BatchBody> {
  const contentType = request.headers.get("content-type");
  if (!isJsonContentType(contentType)) {
    throw new RouterError(
      "UNSUPPORTED_MEDIA_TYPE",
      contentType === null
        ? `Missing Content-Type; send the request body as ${APPLICATION_JSON}`
        : `Unsupported Content-Type "${
          clipForMessage(contentType)
        }"; send the request body as ${APPLICATION_JSON}`,
    );
  }
  return parseJsonRequest(await bodyOf(request), limits, "the request body");
}

/**
 * Reads a GraphQL request's JSON (a POST body, a multipart upload's `operations`
 * field): UTF-8, depth and duplicate keys checked before it is read.
 * @param bytes The JSON bytes.
 * @param limits The depth limit its JSON is held to.
 * @param where What the messages call it (`the request body`).
 * @returns The GraphQL request, or the batch.
 */
export function parseJsonRequest(
  bytes: Uint8Array,
  limits: OperationLimits,
  where: string,
): RawRequest | BatchBody {
  let text: string;
  try {
    text = STRICT_UTF8.decode(bytes);
  } catch {
    throw badRequest(`${capitalized(where)} is not valid UTF-8`);
  }
  if (text.trim() === "") {
    throw badRequest(`Empty ${where.replace(/^the /, "")}; expected a JSON object with a "query"`);
  }
  // A batch's variables are one level deeper: held to the limit a single operation's are.
  const outer = firstJsonCharacter(text) === "[" ? 2 : 1;
  const body = parseWithin(text, limits, { outer, where });
  refuseAmbiguousJson(text, where);
  if (Array.isArray(body)) return { batch: text, size: body.length };
  if (typeof body !== "object" || body === null) {
    throw badRequest(`Expected ${where} to be a JSON object with a "query"`);
  }
  const record = body as Record<string, unknown>;
  return checkParams(
    record.query,
    record.operationName,
    record.variables,
    record.extensions,
    record.documentId,
  );
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The first character of a JSON text past its leading whitespace, or "". */
function firstJsonCharacter(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== " " && c !== "\t" && c !== "\n" && c !== "\r") return c;
  }
  return "";
}

/** The parameters of a GraphQL GET request. */
const GET_PARAMETERS = ["query", "operationName", "variables", "extensions", "documentId"] as const;

/**
 * Reads the GET parameters (`variables` and `extensions` as JSON text); a
 * query string that is not UTF-8 once percent-decoded is refused, as a body is.
 * @param url The request URL.
 * @param limits The depth limit its JSON is held to.
 * @returns The GraphQL request.
 */
export function readSearchParams(url: URL, limits: OperationLimits): RawRequest {
  if (!isUtf8QueryString(url.search)) {
    throw badRequest("The query string is not valid UTF-8 once percent-decoded");
  }
  const search = url.searchParams;
  // A repeated parameter is as ambiguous as a repeated JSON key (`get` reads the first).
  for (const name of GET_PARAMETERS) {
    if (search.getAll(name).length > 1) {
      throw badRequest(`The "${name}" parameter is given more than once; give it once`);
    }
  }
  const json = (name: string): unknown => {
    const text = search.get(name);
    if (text === null || text === "") return undefined;
    const value = parseWithin(text, limits, { outer: 0, where: `the "${name}" parameter` });
    refuseAmbiguousJson(text, `the "${name}" parameter`);
    return value;
  };
  return checkParams(
    search.get("query") ?? undefined,
    search.get("operationName") ?? undefined,
    json("variables"),
    json("extensions"),
    search.get("documentId") ?? undefined,
  );
}

/**
 * Refuses JSON that `JSON.parse` reads otherwise than written: a member name
 * twice in one object (it keeps the last, other parsers such as a proxy, a
 * WAF or an allow-list the first; Apollo and Hive Router refuse it too).
 * Integers beyond 2^53 are read exactly instead (`parseJsonExact`).
 */
function refuseAmbiguousJson(text: string, where: string): void {
  const duplicate = findDuplicateKey(text);
  if (duplicate !== null) {
    throw badRequest(
      `Duplicate key "${clipForMessage(duplicate.key)}" in ${where} (at ${
        clipForMessage(duplicate.at)
      }): a JSON object must name each member once`,
    );
  }
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkParams(
  query: unknown,
  operationName: unknown,
  variables: unknown,
  extensions: unknown,
  documentId: unknown,
): RawRequest {
  const hash = hashOf(extensions, documentId);
  if ((query === undefined || query === null) && hash === null) {
    throw badRequest('Missing the "query" parameter');
  }
  if (query !== undefined && query !== null && typeof query !== "string") {
    throw badRequest('The "query" parameter must be a string');
  }
  if (operationName !== undefined && operationName !== null && typeof operationName !== "string") {
    throw badRequest('The "operationName" parameter must be a string or null');
  }
  if (variables !== undefined && variables !== null && !isMap(variables)) {
    throw badRequest('The "variables" parameter must be a JSON object or null');
  }
  if (extensions !== undefined && extensions !== null && !isMap(extensions)) {
    throw badRequest('The "extensions" parameter must be a JSON object or null');
  }
  return {
    query: query ?? null,
    operationName: operationName ?? null,
    variables: variables ?? null,
    extensions: extensions ?? null,
    hash,
  };
}

/**
 * The document's hash: `documentId` (GraphQL over HTTP; `sha256:<hex>` or
 * bare hex) or Apollo's `extensions.persistedQuery.sha256Hash` (version 1).
 */
function hashOf(extensions: unknown, documentId: unknown): string | null {
  if (documentId !== undefined && documentId !== null) {
    if (typeof documentId !== "string" || documentId === "") {
      throw badRequest('The "documentId" parameter must be a non-empty string');
    }
    return documentIdOf(documentId);
  }
  if (!isMap(extensions) || extensions.persistedQuery === undefined) return null;
  const persisted = extensions.persistedQuery;
  if (!isMap(persisted) || typeof persisted.sha256Hash !== "string") {
    throw badRequest('"extensions.persistedQuery" must be an object with a string "sha256Hash"');
  }
  if (persisted.version !== undefined && persisted.version !== 1) {
    throw badRequest('Unsupported "extensions.persistedQuery.version"; expected 1');
  }
  return documentIdOf(persisted.sha256Hash);
}
