/**
 * Where a request's bearer token comes from (RFC 6750 §2): the configured
 * header, else a configured cookie (only from requests a cross-site page
 * cannot forge), else the URL's `access_token` when allowed (GET only). One
 * method only; one token only. Verifying the token is `jwt.ts`'s. Pure.
 *
 * @module
 */
import { AuthError } from "../errors.ts";
import { hasPreflightHeader, isSimpleRequest } from "../request/mod.ts";
import { formatBearerChallenge } from "./challenge.ts";

/** The cookie token source (`authentication.jwt.cookie_name`). */
export interface TokenCookie {
  /** The cookie's name (case-sensitive, RFC 6265). */
  readonly name: string;
  /** `csrf_prevention.required_headers`: one of them, non-empty, lets a simple request use it. */
  readonly requiredHeaders: readonly string[];
}

/** Where tokens may come from. */
export interface TokenSources {
  /** Lower-cased header name carrying the token (`authorization`). */
  readonly headerName: string;
  /** Prefix before the token (`Bearer `), matched case-insensitively. */
  readonly prefix: string;
  /** `authentication.jwt.allow_query_token`: `?access_token=` on GET. @default {false} */
  readonly allowQueryToken?: boolean;
  /** `authentication.jwt.cookie_name`; absent: off. */
  readonly cookie?: TokenCookie;
}

/** The token found (null: none sent), or why the request's token cannot be read. */
export type FoundToken = { readonly token: string | null } | { readonly error: AuthError };

/**
 * The request's bearer token.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findToken } from "./token_source.ts";
 * const sources = { headerName: "authorization", prefix: "Bearer " };
 * const found = findToken(new Request("http://x/", { headers: { authorization: "Bearer abc" } }), sources);
 * assert.deepEqual(found, { token: "abc" });
 * assert.deepEqual(findToken(new Request("http://x/"), sources), { token: null });
 * ```
 * @param request The request.
 * @param sources Where tokens may come from.
 * @param options `cookie: false`: the cookie source is not read (MCP).
 * @returns The token, none, or the error.
 */
export function findToken(
  request: Request,
  sources: TokenSources,
  options: { readonly cookie?: boolean } = {},
): FoundToken {
  const header = request.headers.get(sources.headerName);
  const query = queryTokens(request.url);
  if (header !== null) {
    if (query !== null) return twoMethods("header");
    const prefix = sources.prefix;
    if (
      header.length <= prefix.length ||
      header.slice(0, prefix.length).toLowerCase() !== prefix.toLowerCase()
    ) {
      return {
        error: invalidTokenError(
          `Expected "${prefix.trim()} <token>" in the ${sources.headerName} header`,
        ),
      };
    }
    // A JWT holds no space or comma: two headers (joined with ", ") or two tokens.
    return oneToken([header.slice(prefix.length).trim()], `one ${sources.headerName} header`);
  }
  const cookie = options.cookie === false ? undefined : sources.cookie;
  const fromCookie = cookie && cookieTokens(request.headers.get("cookie"), cookie.name);
  if (cookie && fromCookie) {
    // A browser attaches cookies to cross-site requests by itself: read only from a
    // request no cross-site form, link, image or WebSocket upgrade can produce.
    if (isSimpleRequest(request) && !hasPreflightHeader(request, cookie.requiredHeaders)) {
      return invalidRequest(
        `This request has been blocked as a potential Cross-Site Request Forgery (CSRF): ` +
          `a token in the ${cookie.name} cookie is read only from a request with a Content-Type other than ` +
          `application/x-www-form-urlencoded, multipart/form-data or text/plain, or with a ` +
          `non-empty value for one of these headers: ${cookie.requiredHeaders.join(", ")}` +
          ` (or send the token in the ${sources.headerName} header)`,
      );
    }
    if (query !== null) return twoMethods("cookie");
    return oneToken(fromCookie, `one ${cookie.name} cookie`);
  }
  if (query === null) return { token: null };
  // Issue 34: never from the URL (RFC 6750 §2.3: proxy logs, browser history),
  // unless allowed, and then on GET only (a POST carries its token in a header).
  if (sources.allowQueryToken !== true || request.method !== "GET") {
    return invalidRequest(
      `Send the access token in the ${sources.headerName} header, not in the URL` +
        (sources.allowQueryToken === true
          ? " (a token in the URL is read on GET only)"
          : " (authentication.jwt.allow_query_token is off)"),
    );
  }
  return oneToken(query, "one access_token parameter");
}

/** The `invalid_token` error (401): the token itself is not accepted. */
export function invalidTokenError(description: string): AuthError {
  const challenge = formatBearerChallenge([], {
    error: "invalid_token",
    errorDescription: description,
  });
  return new AuthError("UNAUTHENTICATED", description, challenge);
}

/** The one token of a method, or `invalid_request` when it sent none, several or a joined one. */
function oneToken(values: readonly string[], where: string): FoundToken {
  const [token] = values;
  if (values.length !== 1 || token === undefined || token === "" || /[\s,]/.test(token)) {
    return invalidRequest(`Send one access token in ${where}`);
  }
  return { token };
}

/** RFC 6750 §2: a client MUST NOT use more than one method to transmit the token. */
function twoMethods(other: "header" | "cookie"): FoundToken {
  return invalidRequest(`Send the access token in one place: the ${other} or the query, not both`);
}

/** RFC 6750 §3.1 `invalid_request` (400): the request is malformed, not the token. */
function invalidRequest(description: string): FoundToken {
  return {
    error: new AuthError(
      "BAD_REQUEST",
      description,
      formatBearerChallenge([], { error: "invalid_request", errorDescription: description }),
    ),
  };
}

/**
 * The values of cookie `name` in a `Cookie` header (RFC 6265 §4.2.1: pairs
 * separated by `;`, a value optionally in double quotes), or null when absent.
 */
function cookieTokens(header: string | null, name: string): string[] | null {
  if (header === null || !header.includes(name)) return null;
  const values: string[] = [];
  for (const pair of header.split(";")) {
    const eq = pair.indexOf("=");
    if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
    let value = pair.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1);
    }
    values.push(value);
  }
  return values.length === 0 ? null : values;
}

/**
 * The URL's `access_token` values (RFC 6750 §2.3), or null when it has none;
 * the URL is parsed only when the name occurs in its query.
 */
function queryTokens(url: string): string[] | null {
  const q = url.indexOf("?");
  if (q < 0 || !url.includes("access_token", q)) return null;
  const values = new URL(url).searchParams.getAll("access_token");
  return values.length === 0 ? null : values;
}
