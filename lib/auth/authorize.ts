/**
 * Authorization of a GraphQL request (the GraphQL facet): the bearer token is
 * verified when one is sent, and the `@authenticated` / `@requiresScopes`
 * requirement of the operation's fields must hold, else the whole operation is
 * refused before any subgraph is called.
 *
 * @module
 */
import type { Config } from "../config/types.ts";
import type { PreparedOperation } from "../engine/types.ts";
import { AuthError, RouterError } from "../errors.ts";
import type { SupergraphCore } from "../supergraph/types.ts";
import { formatBearerChallenge } from "./challenge.ts";
import { authenticate, type AuthState } from "./jwt.ts";
import { operationAccess, type OperationRequirement } from "./operation_access.ts";
import { bestScopeGroup, satisfiesScopes } from "./scopes.ts";

/** Compiled request authorization, one per router state. */
export interface RequestAuthorization {
  /** Token verifier; null when `authentication.jwt.jwks` is empty (nothing is checked). */
  readonly auth: Promise<AuthState> | null;
  /** `authorization.require_authentication`. */
  readonly requireAuthentication: boolean;
  /** Cap on combined AND-groups (`mcp.oauth.max_scope_combinations`). */
  readonly maxCombinations: number;
  /** Requirement per prepared operation (prepared operations are cached by the engine). */
  readonly requirements: WeakMap<PreparedOperation, OperationRequirement>;
}

/** A requirement nobody can meet: what an over-the-cap operation gets (fail closed). */
const UNSATISFIABLE: OperationRequirement = Object.freeze({
  authenticated: true,
  scopes: [["\u0000unsatisfiable"]],
});

/**
 * Compiles the request authorization of a configuration.
 *
 * @example Without key sources nothing is checked
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "../config/mod.ts";
 * import { buildRequestAuthorization } from "./authorize.ts";
 * const config = parseConfig({}, { env: {}, baseDir: "." });
 * assert.equal(buildRequestAuthorization(config, { auth: null }).auth, null);
 * ```
 * @param config The configuration.
 * @param options The shared token verifier (built once per state).
 * @returns The compiled authorization.
 */
export function buildRequestAuthorization(
  config: Config,
  options: { readonly auth: Promise<AuthState> | null },
): RequestAuthorization {
  return {
    auth: options.auth,
    requireAuthentication: config.authorization.require_authentication,
    maxCombinations: config.mcp.oauth.max_scope_combinations,
    requirements: new WeakMap(),
  };
}

/**
 * The `@authenticated` / `@requiresScopes` requirement of a prepared operation
 * (computed once per prepared operation, then looked up).
 * @param operation The prepared operation.
 * @param options The authorization and the supergraph (schema + access map).
 * @returns The requirement.
 */
export function operationRequirement(
  operation: PreparedOperation,
  options: { readonly authorization: RequestAuthorization; readonly supergraph: SupergraphCore },
): OperationRequirement {
  const { authorization, supergraph } = options;
  const known = authorization.requirements.get(operation);
  if (known !== undefined) return known;
  const result = operationAccess(operation.document, supergraph.apiSchema, supergraph.access, {
    operationName: operation.name,
    maxCombinations: authorization.maxCombinations,
  });
  const requirement = result.ok ? result.requirement : UNSATISFIABLE;
  authorization.requirements.set(operation, requirement);
  return requirement;
}

/** Options for {@linkcode checkRequirement}. */
export interface CheckRequirementOptions {
  /** The token verifier. */
  readonly auth: AuthState;
  /** The operation's requirement. */
  readonly requirement: OperationRequirement;
  /** `authorization.require_authentication`. */
  readonly requireAuthentication: boolean;
  /** What is asked for, in messages ("The operation", "Method GetUser"). */
  readonly subject: string;
}

/**
 * Checks a request against a requirement (shared by the GraphQL and Connect facets).
 *
 * - An invalid token is refused (401, `error="invalid_token"`), required or not.
 * - No token: refused (401) when `requireAuthentication` is set or the
 *   requirement comes from an `@authenticated` / `@requiresScopes` element.
 * - A token lacking every AND-group: 403 `insufficient_scope` with the best group.
 *
 * @param request The inbound request (its token header).
 * @param options Verifier, requirement, flags and the subject named in messages.
 * @returns null when allowed, else the `AuthError` to answer with.
 */
export async function checkRequirement(
  request: Request,
  options: CheckRequirementOptions,
): Promise<AuthError | null> {
  const { auth, requirement } = options;
  const verified = await authenticate(request, auth);
  if (!verified.ok) return verified.error;
  const token = verified.token;
  if (token === null) {
    if (!options.requireAuthentication && !requirement.authenticated) return null;
    return new AuthError(
      "UNAUTHENTICATED",
      `${options.subject} needs an authenticated request: send a bearer token in ${auth.headerName}`,
      formatBearerChallenge([]),
    );
  }
  if (satisfiesScopes(requirement.scopes, token.scopeSet)) return null;
  const best = bestScopeGroup(requirement.scopes, token.scopeSet);
  return new AuthError(
    "FORBIDDEN",
    `${options.subject} needs the scopes ${best.join(" ")}${
      requirement.scopes.length > 1 ? " (or another group of its @requiresScopes)" : ""
    }`,
    formatBearerChallenge(best, { error: "insufficient_scope" }),
  );
}

/**
 * Checks a GraphQL request against its prepared operation's requirement
 * (see {@linkcode checkRequirement}); nothing is checked without key sources.
 *
 * @param request The inbound request (its `Authorization` header).
 * @param options The authorization, the supergraph and the prepared operation.
 * @returns null when allowed, else the error to answer with (an `AuthError`, or
 * `INTERNAL` when the key sources failed to load).
 */
export async function authorizeOperation(
  request: Request,
  options: {
    readonly authorization: RequestAuthorization;
    readonly supergraph: SupergraphCore;
    readonly operation: PreparedOperation;
  },
): Promise<RouterError | null> {
  const { authorization } = options;
  if (authorization.auth === null) return null;
  let auth: AuthState;
  try {
    auth = await authorization.auth;
  } catch {
    return new RouterError(
      "INTERNAL",
      "Token verification is unavailable: its key sources failed to load",
    );
  }
  return checkRequirement(request, {
    auth,
    requirement: operationRequirement(options.operation, options),
    requireAuthentication: authorization.requireAuthentication,
    subject: "The operation",
  });
}
