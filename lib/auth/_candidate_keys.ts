/**
 * jose leaves one case to the caller: a token without `kid` against a key set
 * holding several keys it could match (an identity provider rotating keys
 * without kids). Its `ERR_JWKS_MULTIPLE_MATCHING_KEYS` error iterates the
 * candidates; each is tried here, a bounded number of them, so a kid-less
 * token costs at most {@linkcode MAX_KEY_CANDIDATES} signature checks. A
 * candidate that fails for any reason but a claim is skipped.
 *
 * @module
 */
import { errors, jwtVerify, type JWTVerifyGetKey, type JWTVerifyOptions } from "jose";

/** Candidate keys tried for one kid-less token. */
export const MAX_KEY_CANDIDATES = 8;

function codeOf(error: unknown): string {
  return (error as { code?: unknown } | null)?.code === undefined
    ? ""
    : String((error as { code: unknown }).code);
}

/**
 * `jwtVerify` with a key set, trying each matching key when the token names
 * none and several match.
 * @param jwt The compact JWT.
 * @param keys The key set.
 * @param options jose's verify options.
 * @returns jose's verify result.
 * @throws jose's error; `ERR_JWS_SIGNATURE_VERIFICATION_FAILED` when no candidate verifies.
 */
export async function verifyWithKeySet(
  jwt: string,
  keys: JWTVerifyGetKey,
  options: JWTVerifyOptions,
): ReturnType<typeof jwtVerify> {
  try {
    return await jwtVerify(jwt, keys, options);
  } catch (error) {
    if (codeOf(error) !== "ERR_JWKS_MULTIPLE_MATCHING_KEYS") throw error;
    let tried = 0;
    for await (const candidate of error as AsyncIterable<CryptoKey>) {
      if (tried++ >= MAX_KEY_CANDIDATES) break;
      try {
        return await jwtVerify(jwt, candidate, options);
      } catch (inner) {
        // The signature verified and a claim failed: the token's own verdict. Anything else
        // (another key's signature, a key jose will not use, such as RSA under 2048 bits)
        // says only that this candidate is not the token's key; one unusable key in the set
        // must not refuse tokens signed by its siblings.
        if (codeOf(inner).startsWith("ERR_JWT_")) throw inner;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}
