/**
 * Authentication and authorization: JWT/JWKS verification (jose), the scope
 * algebra of `@requiresScopes` (OR-of-AND), operation requirements and the
 * RFC 6750 challenge builder. Outside code imports only this module.
 *
 * @module
 */
export {
  authenticate,
  type AuthResult,
  type AuthState,
  buildAuthState,
  type BuildAuthStateOptions,
  type KeySource,
  type VerifiedToken,
  VerifiedTokenCache,
  verifyToken,
} from "./jwt.ts";
export { type BearerChallengeOptions, formatBearerChallenge } from "./challenge.ts";
export { ACCESS_TOKEN_TYP, normalizeTyp, refuseClaims } from "./claims.ts";
export { type JwksCounters, JwksSource, KeysUnavailableError, type Timers } from "./jwks_source.ts";
export { KeySources, type KeySourcesOptions } from "./key_sources.ts";
export { isValidScope, parseScopeClaim } from "./scope_grammar.ts";
export {
  bestScopeGroup,
  challengeScopes,
  combineScopes,
  foldScopes,
  hasAllScopes,
  normalizeScopes,
  satisfiesScopes,
  type ScopeGroup,
  type ScopeRequirement,
} from "./scopes.ts";
export {
  operationAccess,
  type OperationAccessOptions,
  type OperationAccessResult,
  type OperationRequirement,
  touchedAccessKeys,
} from "./operation_access.ts";
export {
  type AccessModel,
  authenticationRequired,
  type AuthorizedOperation,
  authorizeOperation,
  type AuthorizeOperationOptions,
  buildRequestAuthorization,
  type IdentityResult,
  type RequestAuthorization,
  resolveIdentity,
} from "./authorize.ts";
