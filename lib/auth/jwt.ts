/**
 * Bearer JWT verification with `npm:jose` against the configured key sources
 * (`authentication.jwt.jwks`): URLs (cached, see `_remote_keys.ts`), files
 * (JWKS JSON or a PEM SPKI key) and shared secrets. Algorithms are pinned per
 * source: `none` never, HS* only with a secret, asymmetric ones only with keys.
 *
 * @module
 */
export type { TokenCookie } from "./token_source.ts";
import {
  createLocalJWKSet,
  importSPKI,
  type JSONWebKeySet,
  type JWTPayload,
  jwtVerify,
  type JWTVerifyGetKey,
} from "jose";
import { ASYMMETRIC_ALGORITHMS, SYMMETRIC_ALGORITHMS } from "../config/mod.ts";
import type { Config, JwksSource as JwksSourceConfig } from "../config/mod.ts";
import { AuthError, RouterError } from "../errors.ts";
import { findToken, invalidTokenError, type TokenCookie } from "./token_source.ts";
import { type JwksSource, KeysUnavailableError } from "./jwks_source.ts";
import { KeySources } from "./key_sources.ts";
import { refuseClaims } from "./claims.ts";
import { parseScopeClaim } from "./scope_grammar.ts";
import { verifyWithKeySet } from "./_candidate_keys.ts";

/** The asymmetric algorithms accepted when a key source lists none. */
const ASYMMETRIC = ASYMMETRIC_ALGORITHMS;
const SYMMETRIC = SYMMETRIC_ALGORITHMS;
/** Claims a token must carry unless its source says otherwise: without `exp` it never expires. */
const DEFAULT_REQUIRED_CLAIMS: readonly string[] = ["exp"];

/** A key jose verifies with (its own `CryptoKey` type, which may be node's). */
type VerifyKey = Exclude<Parameters<typeof jwtVerify>[1], JWTVerifyGetKey>;

/** A compiled key source. */
export interface KeySource {
  /** `url`, `file` or `secret`, for logs. */
  readonly kind: "url" | "file" | "secret";
  readonly algorithms: readonly string[];
  readonly audiences: readonly string[];
  /** Accepted `iss` values; empty: not checked. */
  readonly issuers?: readonly string[];
  /** Required `typ` (`jwks[].required_typ`); `""` or absent: not required. */
  readonly requiredTyp?: string;
  /** Claims a token must carry (`jwks[].required_claims`); absent: `exp`. */
  readonly requiredClaims?: readonly string[];
  readonly key: JWTVerifyGetKey | VerifyKey;
  /** The running JWKS source, for URL sources (readiness and tests). */
  readonly remote: JwksSource | null;
}

/** Everything needed to authenticate requests, built once per state. */
export interface AuthState {
  readonly sources: readonly KeySource[];
  /** Lower-cased header name carrying the token (`authorization`). */
  readonly headerName: string;
  /** Prefix before the token (`Bearer `), matched case-insensitively. */
  readonly prefix: string;
  /** Verified tokens, so a client re-sending its token skips the signature check. */
  readonly cache?: VerifiedTokenCache;
  /** Clock for the cache and the claim checks, milliseconds. */
  readonly now?: () => number;
  /** The URL key sources the state reads (close them with the state). */
  readonly keySources?: KeySources;
  /** Leeway for `exp`, `nbf` and a future `iat`, seconds. @default {60} */
  readonly skewSec?: number;
  /**
   * `authentication.jwt.allow_query_token`: a GET without the header may carry
   * its token as `?access_token=` (RFC 6750 §2.3). Otherwise a token in the
   * URL is refused. @default {false}
   */
  readonly allowQueryToken?: boolean;
  /**
   * `authentication.jwt.cookie_name`: a request without the header may carry
   * its token in this cookie, read only from a request a cross-site page cannot
   * forge (not CORS-simple, or carrying one of `requiredHeaders`). Absent: off.
   */
  readonly cookie?: TokenCookie;
}

/**
 * Verified tokens by their exact compact form, each kept until the earlier of
 * its `exp` and `maxAgeMs` after verification (so a key removed from the JWKS
 * stops being honoured within `maxAgeMs`); bounded, oldest dropped first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { VerifiedTokenCache } from "./jwt.ts";
 * const cache = new VerifiedTokenCache({ maxAgeMs: 1000 });
 * const token = { issuer: "", subject: "u", scopes: [], scopeSet: new Set<string>(), claims: {} };
 * cache.set("jwt", token, { now: 0 });
 * assert.equal(cache.get("jwt", { now: 999 }), token);
 * assert.equal(cache.get("jwt", { now: 1000 }), undefined);
 * ```
 */
export class VerifiedTokenCache {
  readonly #entries = new Map<string, { token: VerifiedToken; expires: number }>();
  readonly #maxAgeMs: number;
  readonly #maxEntries: number;

  /** @param options `maxAgeMs` (default 60000), `maxEntries` (default 10000). */
  constructor(options: { readonly maxAgeMs?: number; readonly maxEntries?: number } = {}) {
    this.#maxAgeMs = options.maxAgeMs ?? 60_000;
    this.#maxEntries = options.maxEntries ?? 10_000;
  }

  /**
   * Looks a token up.
   * @param jwt The compact JWT.
   * @param options `now` in milliseconds.
   * @returns The verified token, or undefined.
   */
  get(jwt: string, options: { readonly now: number }): VerifiedToken | undefined {
    const entry = this.#entries.get(jwt);
    if (entry === undefined) return undefined;
    if (entry.expires <= options.now) {
      this.#entries.delete(jwt);
      return undefined;
    }
    return entry.token;
  }

  /**
   * Records a verified token.
   * @param jwt The compact JWT.
   * @param token The verified token.
   * @param options `now` in milliseconds.
   */
  set(jwt: string, token: VerifiedToken, options: { readonly now: number }): void {
    const exp = typeof token.claims.exp === "number" ? token.claims.exp * 1000 : Infinity;
    const expires = Math.min(exp, options.now + this.#maxAgeMs);
    if (expires <= options.now) return;
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(jwt, { token, expires });
  }
}

/** A verified token. */
export interface VerifiedToken {
  readonly issuer: string;
  readonly subject: string;
  /** The `scope` claim's scopes in claim order (valid RFC 6749 tokens only). */
  readonly scopes: readonly string[];
  /** The same, for set tests. */
  readonly scopeSet: ReadonlySet<string>;
  readonly claims: JWTPayload;
}

/** Result of {@linkcode authenticate}. */
export type AuthResult =
  | { readonly ok: true; readonly token: VerifiedToken | null }
  | { readonly ok: false; readonly error: AuthError };

/** Options for {@linkcode buildAuthState}. */
export interface BuildAuthStateOptions {
  /** Fetch for JWKS URLs (tests inject one). */
  readonly fetch?: typeof fetch;
  /** Reads a key file (defaults to `Deno.readTextFile`). */
  readonly readTextFile?: (path: string) => Promise<string>;
  /** Clock for the key sources and claim checks, milliseconds. */
  readonly now?: () => number;
  /**
   * The state's URL key sources (shared by GraphQL, Connect and MCP); without
   * one a private set is made (its `close` is then the caller's).
   */
  readonly keySources?: KeySources;
  /** Key sources to use instead of `authentication.jwt.jwks` (e.g. `mcp.oauth.jwks`). */
  readonly jwks?: readonly JwksSourceConfig[];
  /** Config path of `jwks`, for error messages. @default {"authentication.jwt.jwks"} */
  readonly jwksPath?: string;
  /**
   * Audiences for sources whose `audiences` are empty (MCP: its own resource
   * URL, RFC 8707 / RFC 9728), so a token issued for another API is refused.
   */
  readonly defaultAudiences?: readonly string[];
  /**
   * Issuers for sources whose `issuer` is empty (MCP: its
   * `authorization_server_urls`, RFC 9728), so a token from another server is refused.
   */
  readonly defaultIssuers?: readonly string[];
  /** Overrides `authentication.jwt.allow_query_token` (MCP: never). */
  readonly allowQueryToken?: boolean;
  /** Overrides `authentication.jwt.cookie_name` (MCP: `""`, never). */
  readonly cookieName?: string;
}

function invalid(path: string, message: string): RouterError {
  return new RouterError("CONFIG_INVALID", message, { details: { path } });
}

function pinAlgorithms(source: JwksSourceConfig, path: string): readonly string[] {
  for (const alg of source.algorithms) {
    if (alg.toLowerCase() === "none") {
      throw invalid(`${path}.algorithms`, `Cannot use "none" in "${path}.algorithms"`);
    }
  }
  if (source.secret !== undefined) {
    const alg = source.symmetric_algorithm;
    if (!alg) {
      throw invalid(
        `${path}.symmetric_algorithm`,
        `Cannot read "${path}.symmetric_algorithm": required with "secret"`,
      );
    }
    const extra = source.algorithms.filter((a) => a !== alg);
    if (extra.length > 0) {
      throw invalid(
        `${path}.algorithms`,
        `Cannot use ${extra.join(", ")} with a shared secret in "${path}"`,
      );
    }
    return [alg];
  }
  const symmetric = source.algorithms.filter((a) =>
    SYMMETRIC.includes(a) || !ASYMMETRIC.includes(a)
  );
  if (symmetric.length > 0) {
    throw invalid(
      `${path}.algorithms`,
      `Cannot use ${symmetric.join(", ")} with a public key source in "${path}"`,
    );
  }
  return source.algorithms.length > 0 ? source.algorithms : ASYMMETRIC;
}

async function compileSource(
  source: JwksSourceConfig,
  path: string,
  options: BuildAuthStateOptions & { readonly keySources: KeySources },
): Promise<KeySource> {
  const algorithms = pinAlgorithms(source, path);
  const base = {
    algorithms,
    audiences: source.audiences.length > 0 ? source.audiences : options.defaultAudiences ?? [],
    issuers: (source.issuer ?? []).length > 0 ? source.issuer : options.defaultIssuers ?? [],
    requiredTyp: source.required_typ ?? "",
    requiredClaims: source.required_claims ?? DEFAULT_REQUIRED_CLAIMS,
  };
  if (source.secret !== undefined) {
    if (source.secret.length < 32) {
      throw invalid(`${path}.secret`, `Cannot use "${path}.secret": shorter than 32 characters`);
    }
    return { ...base, kind: "secret", key: new TextEncoder().encode(source.secret), remote: null };
  }
  if (source.file !== undefined) {
    const read = options.readTextFile ?? Deno.readTextFile;
    let text: string;
    try {
      text = await read(source.file);
    } catch (error) {
      throw new RouterError(
        "CONFIG_INVALID",
        `Cannot read "${path}.file": ${(error as Error).message}`,
        {
          cause: error,
          details: { path: `${path}.file` },
        },
      );
    }
    try {
      if (text.trimStart().startsWith("-----BEGIN")) {
        const key = await importSPKI(text, algorithms[0]!);
        return { ...base, kind: "file", key, remote: null };
      }
      const jwks = JSON.parse(text) as JSONWebKeySet;
      if (!Array.isArray(jwks.keys)) throw new TypeError("no keys array");
      return { ...base, kind: "file", key: createLocalJWKSet(jwks), remote: null };
    } catch (error) {
      throw new RouterError(
        "CONFIG_INVALID",
        `Cannot read "${path}.file": not a JWKS or PEM public key`,
        {
          cause: error,
          details: { path: `${path}.file` },
        },
      );
    }
  }
  if (source.url !== undefined) {
    const remote = options.keySources.source({ ...source, url: source.url });
    return {
      ...base,
      kind: "url",
      key: (header, token) => remote.getKey(header, token),
      remote,
    };
  }
  throw invalid(path, `Cannot read "${path}": expected one of url, file, secret`);
}

/**
 * Builds the authentication state from `authentication.jwt` (reads key files;
 * URL sources load in the background from now on, see `jwks_source.ts`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildAuthState } from "./jwt.ts";
 * import type { Config } from "../config/types.ts";
 * const config = { authentication: { jwt: { header_name: "Authorization", header_value_prefix: "Bearer ", jwks: [
 *   { secret: "0123456789abcdef0123456789abcdef", symmetric_algorithm: "HS256", algorithms: [], audiences: [], refresh_interval_ms: 0 },
 * ] } } } as unknown as Config;
 * const state = await buildAuthState(config);
 * assert.deepEqual(state.sources[0]?.algorithms, ["HS256"]);
 * ```
 * @param config The router config.
 * @param options Fetch, file reader and clock (tests).
 * @returns The state.
 * @throws {RouterError} `CONFIG_INVALID` naming the bad key source.
 */
export async function buildAuthState(
  config: Config,
  options: BuildAuthStateOptions = {},
): Promise<AuthState> {
  const jwt = config.authentication.jwt;
  const jwks = options.jwks ?? jwt.jwks;
  const cookieName = options.cookieName ?? jwt.cookie_name ?? "";
  const path = options.jwksPath ?? "authentication.jwt.jwks";
  const keySources = options.keySources ?? new KeySources({
    headerName: (jwt.header_name || "Authorization").toLowerCase(),
    prefix: jwt.header_value_prefix ?? "Bearer ",
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const sources = await Promise.all(
    jwks.map((source, i) => compileSource(source, `${path}[${i}]`, { ...options, keySources })),
  );
  return {
    sources,
    keySources,
    cache: new VerifiedTokenCache(),
    skewSec: Math.floor((jwt.clock_skew_ms ?? 60_000) / 1000),
    ...(options.now ? { now: options.now } : {}),
    headerName: (jwt.header_name || "Authorization").toLowerCase(),
    prefix: jwt.header_value_prefix ?? "Bearer ",
    allowQueryToken: options.allowQueryToken ?? jwt.allow_query_token ?? false,
    ...(cookieName === "" ? {} : {
      cookie: { name: cookieName, requiredHeaders: config.csrf_prevention.required_headers },
    }),
  };
}

/** A token refused by {@linkcode refuseClaims} (its message is client-safe). */
class ClaimRefused extends Error {
  readonly code = "ERR_GW_CLAIM_REFUSED";
}

function describe(error: unknown): string {
  const { code, claim, reason } = error as { code?: string; claim?: string; reason?: string };
  switch (code) {
    case "ERR_GW_CLAIM_REFUSED":
      return (error as Error).message;
    case "ERR_JWT_EXPIRED":
      return "The access token expired";
    case "ERR_JWT_CLAIM_VALIDATION_FAILED":
      if (reason === "missing") return `The access token has no "${claim ?? "?"}" claim`;
      return `The access token's "${claim ?? "?"}" claim is invalid`;
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return "The access token signature is invalid";
    case "ERR_JOSE_ALG_NOT_ALLOWED":
      return "The access token algorithm is not accepted";
    case "ERR_JWKS_NO_MATCHING_KEY":
    case "ERR_JWKS_MULTIPLE_MATCHING_KEYS":
      return "No signing key matches the access token";
    case "ERR_JWKS_UNAVAILABLE":
      return "The signing keys are unavailable";
    case "ERR_JWS_INVALID":
    case "ERR_JWT_INVALID":
      return "The access token is malformed";
    default:
      return "The access token is invalid";
  }
}

/** Errors that only say "this source does not hold the key": another one may. */
const NOT_THIS_SOURCE = new Set([
  "ERR_JWKS_NO_MATCHING_KEY",
  "ERR_JOSE_ALG_NOT_ALLOWED",
  "ERR_JWS_SIGNATURE_VERIFICATION_FAILED",
  "ERR_JWKS_UNAVAILABLE",
]);

function failure(description: string): AuthResult {
  return { ok: false, error: invalidTokenError(description) };
}

/**
 * Verifies a raw JWT against the key sources, first that verifies wins.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SignJWT } from "jose";
 * import { verifyToken, type AuthState } from "./jwt.ts";
 * const secret = new TextEncoder().encode("0123456789abcdef0123456789abcdef");
 * const state: AuthState = { headerName: "authorization", prefix: "Bearer ", sources: [
 *   { kind: "secret", algorithms: ["HS256"], audiences: [], key: secret, remote: null },
 * ] };
 * const jwt = await new SignJWT({ scope: "a b" }).setProtectedHeader({ alg: "HS256" })
 *   .setSubject("u1").setIssuer("idp").setExpirationTime("5m").sign(secret);
 * const result = await verifyToken(jwt, state);
 * assert.equal(result.ok && result.token?.subject, "u1");
 * assert.deepEqual(result.ok && result.token?.scopes, ["a", "b"]);
 * ```
 * @param jwt The compact JWT.
 * @param state The auth state.
 * @param options `currentDate` for claim checks (tests).
 * @returns The verified token or an `invalid_token` error.
 */
export async function verifyToken(
  jwt: string,
  state: AuthState,
  options: { readonly currentDate?: Date } = {},
): Promise<AuthResult> {
  if (state.sources.length === 0) return failure("No key source is configured to verify tokens");
  const cache = options.currentDate ? undefined : state.cache;
  const now = options.currentDate?.getTime() ?? (state.now ?? Date.now)();
  const cached = cache?.get(jwt, { now });
  if (cached) return { ok: true, token: cached };
  const skewSec = state.skewSec ?? 60;
  let first: unknown = undefined;
  for (const source of state.sources) {
    try {
      const verifyOptions = {
        algorithms: [...source.algorithms],
        clockTolerance: skewSec,
        currentDate: new Date(now),
        ...(source.audiences.length > 0 ? { audience: [...source.audiences] } : {}),
        ...(source.issuers && source.issuers.length > 0 ? { issuer: [...source.issuers] } : {}),
        requiredClaims: [...(source.requiredClaims ?? DEFAULT_REQUIRED_CLAIMS)],
      };
      const { payload, protectedHeader } = typeof source.key === "function"
        ? await verifyWithKeySet(jwt, source.key, verifyOptions)
        : await jwtVerify(jwt, source.key, verifyOptions);
      const refused = refuseClaims(protectedHeader, payload, {
        nowSec: Math.floor(now / 1000),
        skewSec,
        ...(source.requiredTyp ? { requiredTyp: source.requiredTyp } : {}),
      });
      if (refused !== null) throw new ClaimRefused(refused);
      const scopes = parseScopeClaim(payload.scope);
      const token: VerifiedToken = {
        issuer: typeof payload.iss === "string" ? payload.iss : "",
        subject: typeof payload.sub === "string" ? payload.sub : "",
        scopes,
        scopeSet: new Set(scopes),
        claims: payload,
      };
      cache?.set(jwt, token, { now });
      return { ok: true, token };
    } catch (error) {
      const code = (error as { code?: string }).code ?? "";
      const firstCode = (first as { code?: string } | undefined)?.code ?? "";
      // A real claim failure beats "not this source"; missing keys beat "not this source"
      // too (the token may be signed by the source that has not loaded).
      if (
        first === undefined ||
        (NOT_THIS_SOURCE.has(firstCode) &&
          (!NOT_THIS_SOURCE.has(code) || error instanceof KeysUnavailableError))
      ) {
        first = error;
      }
    }
  }
  if (first instanceof KeysUnavailableError) return unavailable(first);
  return failure(describe(first));
}

function unavailable(error: KeysUnavailableError): AuthResult {
  return {
    ok: false,
    error: new AuthError(
      "KEYS_UNAVAILABLE",
      "The signing keys are not loaded yet; retry later",
      "",
      { details: { retry_after: error.retryAfter } },
    ),
  };
}

/**
 * Authenticates a request: no token → `{ ok: true, token: null }`; a token →
 * verified, or an `invalid_token` {@linkcode AuthError} (401). Facets add their
 * own challenge parameters (MCP: `scope`, `resource_metadata`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { authenticate, type AuthState } from "./jwt.ts";
 * const state: AuthState = { headerName: "authorization", prefix: "Bearer ", sources: [] };
 * assert.deepEqual(await authenticate(new Request("http://x/"), state), { ok: true, token: null });
 * const bad = await authenticate(new Request("http://x/", { headers: { authorization: "Basic x" } }), state);
 * assert.equal(bad.ok, false);
 * ```
 * @param request The request.
 * @param state The auth state.
 * @param options `currentDate` for claim checks (tests).
 * @returns The result.
 */
export function authenticate(
  request: Request,
  state: AuthState,
  options: AuthenticateOptions = {},
): Promise<AuthResult> {
  const found = findToken(request, state, options);
  if ("error" in found) return Promise.resolve({ ok: false, error: found.error });
  if (found.token === null) return Promise.resolve({ ok: true, token: null });
  return verifyToken(found.token, state, options);
}

/** Options for {@linkcode authenticate}. */
export interface AuthenticateOptions {
  /** The clock for claim checks (tests). */
  readonly currentDate?: Date;
  /** False: the state's cookie source is not read (MCP). @default {true} */
  readonly cookie?: boolean;
}
