/**
 * ART request tokens (`X-GW-Token`): ES256 JWTs verified against a PEM SPKI
 * public key. There is no control plane: `gw-router trace-token` mints them
 * with the matching PKCS8 private key.
 *
 * @module
 */
import {
  exportPKCS8,
  exportSPKI,
  generateKeyPair,
  importPKCS8,
  importSPKI,
  jwtVerify,
  SignJWT,
} from "jose";
import { RouterError } from "../errors.ts";

/** The only algorithm accepted for trace tokens. */
export const TRACE_TOKEN_ALGORITHM = "ES256";

/**
 * How far a token's `iat` may lie ahead of the router's clock (a minting
 * machine's clock a little ahead); beyond it the token is refused, since
 * `exp − iat` would no longer bound how long it is valid from now.
 */
export const TRACE_TOKEN_IAT_LEEWAY_SEC = 60;

/** The request header carrying the trace token. */
export const TRACE_TOKEN_HEADER = "x-gw-token";

/** Claims checked besides the signature and `exp`. */
export interface TraceTokenClaims {
  /** Required `iss`, or null to skip the check. */
  readonly issuer: string | null;
  /** Required `aud`, or null to skip the check. */
  readonly audience: string | null;
  /**
   * Longest accepted lifetime `exp − iat`, seconds
   * (`engine.request_tracing_max_token_age`). @default {3600}
   */
  readonly maxTokenAgeSec?: number;
}

/** Options for {@linkcode verifyTraceToken}. */
export interface VerifyTraceTokenOptions extends Partial<TraceTokenClaims> {
  /** The clock (tests freeze it). @default {new Date()} */
  readonly currentDate?: Date;
}

/** Outcome of {@linkcode verifyTraceToken}; `reason` never contains the token. */
export type TraceTokenVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: string };

/**
 * Imports the PEM SPKI public key of `engine.request_tracing_public_key_file`.
 * @param pem The PEM text.
 * @returns The ES256 verification key.
 * @throws {RouterError} `CONFIG_INVALID` naming the key path when the PEM is not an ES256 SPKI key.
 */
export async function importTraceVerificationKey(pem: string): Promise<CryptoKey> {
  try {
    return await importSPKI(pem.trim(), TRACE_TOKEN_ALGORITHM);
  } catch (error) {
    throw new RouterError(
      "CONFIG_INVALID",
      'Cannot read "engine.request_tracing_public_key_file": expected a PEM SPKI ES256 (P-256) public key',
      { cause: error, details: { path: "engine.request_tracing_public_key_file" } },
    );
  }
}

/**
 * Verifies a trace token: ES256 signature, `exp` required and not past,
 * `iss`/`aud` when given. Failures come back as a reason (from jose's error
 * `code`, never its message), so the caller can answer 400 without echoing
 * the token.
 *
 * @example A token from another key is refused
 * ```ts
 * import assert from "node:assert/strict";
 * import { generateTraceKeyPair, importTraceVerificationKey, mintTraceToken, verifyTraceToken } from "./token.ts";
 * const ours = await generateTraceKeyPair();
 * const theirs = await generateTraceKeyPair();
 * const key = await importTraceVerificationKey(ours.publicKeyPem);
 * assert.deepEqual(await verifyTraceToken(await mintTraceToken(ours.privateKeyPem), key), { ok: true });
 * const verdict = await verifyTraceToken(await mintTraceToken(theirs.privateKeyPem), key);
 * assert.equal(verdict.ok, false);
 * ```
 *
 * @param token The compact JWT.
 * @param key The verification key, or null when none is configured.
 * @param options Issuer, audience and clock.
 * @returns The verdict.
 */
export async function verifyTraceToken(
  token: string,
  key: CryptoKey | null,
  options: VerifyTraceTokenOptions = {},
): Promise<TraceTokenVerdict> {
  if (key === null) {
    return {
      ok: false,
      reason:
        "Trace token (X-GW-Token) cannot be verified: engine.request_tracing_public_key_file is not set",
    };
  }
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [TRACE_TOKEN_ALGORITHM],
      requiredClaims: ["exp", "iat"],
      ...(options.issuer ? { issuer: options.issuer } : {}),
      ...(options.audience ? { audience: options.audience } : {}),
      ...(options.currentDate ? { currentDate: options.currentDate } : {}),
    });
    const nowSec = Math.floor((options.currentDate ?? new Date()).getTime() / 1000);
    if ((payload.iat as number) > nowSec + TRACE_TOKEN_IAT_LEEWAY_SEC) {
      return {
        ok: false,
        reason: 'Trace token (X-GW-Token) has an unexpected "iat" claim: it is in the future',
      };
    }
    // A long-lived trace token is a standing pass to internals: its lifetime is capped.
    const maxAge = options.maxTokenAgeSec ?? 3600;
    if ((payload.exp as number) - (payload.iat as number) > maxAge) {
      return {
        ok: false,
        reason:
          `Trace token (X-GW-Token) lives longer than engine.request_tracing_max_token_age (${maxAge} s)`,
      };
    }
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: rejectionReason(error) };
  }
}

function rejectionReason(error: unknown): string {
  const code = typeof error === "object" && error !== null && "code" in error
    ? String(error.code)
    : "";
  const claim = typeof error === "object" && error !== null && "claim" in error
    ? String(error.claim)
    : "";
  const why = typeof error === "object" && error !== null && "reason" in error
    ? String(error.reason)
    : "";
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return "Trace token (X-GW-Token) has expired";
    case "ERR_JWT_CLAIM_VALIDATION_FAILED":
      return why === "missing"
        ? `Trace token (X-GW-Token) lacks the required "${claim}" claim`
        : `Trace token (X-GW-Token) has an unexpected "${claim}" claim`;
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return "Trace token (X-GW-Token) signature does not match the configured key";
    case "ERR_JOSE_ALG_NOT_ALLOWED":
    case "ERR_JOSE_NOT_SUPPORTED":
      return "Trace token (X-GW-Token) must be signed with ES256";
    default:
      return "Trace token (X-GW-Token) is not a valid JWT";
  }
}

/** Options for {@linkcode mintTraceToken}. */
export interface MintTraceTokenOptions {
  /** Lifetime in seconds. @default {3600} */
  readonly ttlSeconds?: number;
  /** `iss` claim. */
  readonly issuer?: string;
  /** `aud` claim. */
  readonly audience?: string;
  /** The clock. @default {new Date()} */
  readonly now?: Date;
}

/**
 * Mints a trace token with a PKCS8 PEM ES256 private key.
 *
 * @example Claims
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeJwt } from "jose";
 * import { generateTraceKeyPair, mintTraceToken } from "./token.ts";
 * const { privateKeyPem } = await generateTraceKeyPair();
 * const now = new Date("2026-01-01T00:00:00Z");
 * const claims = decodeJwt(await mintTraceToken(privateKeyPem, { ttlSeconds: 60, issuer: "me", now }));
 * assert.equal(claims.exp, 1767225660);
 * assert.equal(claims.iss, "me");
 * ```
 *
 * @param privateKeyPem PKCS8 PEM text.
 * @param options Lifetime, claims, clock.
 * @returns The compact JWT.
 * @throws {RouterError} `BAD_REQUEST` when the key is not a PKCS8 ES256 key.
 */
export async function mintTraceToken(
  privateKeyPem: string,
  options: MintTraceTokenOptions = {},
): Promise<string> {
  let key: CryptoKey;
  try {
    key = await importPKCS8(privateKeyPem.trim(), TRACE_TOKEN_ALGORITHM);
  } catch (error) {
    throw new RouterError("BAD_REQUEST", "Expected a PKCS8 PEM ES256 (P-256) private key", {
      cause: error,
    });
  }
  const issuedAt = Math.floor((options.now ?? new Date()).getTime() / 1000);
  let jwt = new SignJWT({})
    .setProtectedHeader({ alg: TRACE_TOKEN_ALGORITHM, typ: "JWT" })
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + (options.ttlSeconds ?? 3600));
  if (options.issuer) jwt = jwt.setIssuer(options.issuer);
  if (options.audience) jwt = jwt.setAudience(options.audience);
  return await jwt.sign(key);
}

/** A PEM key pair for trace tokens. */
export interface TraceKeyPair {
  /** PKCS8 PEM (for `trace-token --key`). */
  readonly privateKeyPem: string;
  /** SPKI PEM (for `engine.request_tracing_public_key_file`). */
  readonly publicKeyPem: string;
}

/**
 * Generates an ES256 key pair as PEM texts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generateTraceKeyPair } from "./token.ts";
 * const pair = await generateTraceKeyPair();
 * assert.ok(pair.publicKeyPem.startsWith("-----BEGIN PUBLIC KEY-----"));
 * assert.ok(pair.privateKeyPem.startsWith("-----BEGIN PRIVATE KEY-----"));
 * ```
 *
 * @returns The PEM pair.
 */
export async function generateTraceKeyPair(): Promise<TraceKeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(TRACE_TOKEN_ALGORITHM, {
    extractable: true,
  });
  return {
    privateKeyPem: await exportPKCS8(privateKey),
    publicKeyPem: await exportSPKI(publicKey),
  };
}
