/**
 * Authorization of a request, the one door every facet goes through (GraphQL
 * over HTTP, its subscriptions over WebSocket/SSE/multipart, Connect, MCP):
 * {@linkcode resolveIdentity} verifies the bearer token when one is sent,
 * giving the identity the engine filters protected fields with, and
 * {@linkcode authorizeOperation} decides, in `reject_operation_if_unauthorized`
 * mode, whether the whole operation's `@authenticated` / `@requiresScopes`
 * requirement holds, else it is refused before any subgraph is called.
 *
 * @module
 */
import type { DocumentNode } from "graphql";
import type { Config } from "../config/mod.ts";
import { AuthError, RouterError } from "../errors.ts";
import type { SupergraphCore } from "../supergraph/mod.ts";
import { formatBearerChallenge } from "./challenge.ts";
import { authenticate, type AuthState, type VerifiedToken } from "./jwt.ts";
import { operationAccess, type OperationRequirement } from "./operation_access.ts";
import { bestScopeGroup, satisfiesScopes } from "./scopes.ts";

/** Compiled request authorization, one per router state. */
export interface RequestAuthorization {
  /** Token verifier; null when `authentication.jwt.jwks` is empty (every request is anonymous). */
  readonly auth: Promise<AuthState> | null;
  /** `authorization.require_authentication`. */
  readonly requireAuthentication: boolean;
  /** `authorization.reject_operation_if_unauthorized`. */
  readonly rejectUnauthorized: boolean;
  /** Cap on combined AND-groups (`mcp.oauth.max_scope_combinations`). */
  readonly maxCombinations: number;
  /** Requirement per prepared operation (prepared operations are cached by the engine). */
  readonly requirements: WeakMap<AuthorizedOperation, OperationRequirement>;
}

/**
 * What authorization reads of an operation: its document and which operation
 * of it runs (the engine's prepared operation is one).
 */
export interface AuthorizedOperation {
  /** The parsed document. */
  readonly document: DocumentNode;
  /** The operation's name, null when anonymous. */
  readonly name: string | null;
}

/** The parts of a supergraph authorization reads: the API schema and its access map. */
export type AccessModel = Pick<SupergraphCore, "apiSchema" | "access">;

/** A requirement nobody can meet: what an over-the-cap operation gets (fail closed). */
const UNSATISFIABLE: OperationRequirement = Object.freeze({
  authenticated: true,
  scopes: [["\u0000unsatisfiable"]],
});

/**
 * Compiles the request authorization of a configuration.
 *
 * @example Without key sources there is no verifier
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
    rejectUnauthorized: config.authorization.reject_operation_if_unauthorized,
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
  operation: AuthorizedOperation,
  options: { readonly authorization: RequestAuthorization; readonly supergraph: AccessModel },
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

/** The verified identity of a request, or why it was refused. */
export type IdentityResult =
  | { readonly ok: true; readonly token: VerifiedToken | null }
  | { readonly ok: false; readonly error: RouterError };

/**
 * Verifies a request's bearer token (when one is sent) with the state's
 * verifier. Without key sources no token can be verified: the request is
 * anonymous (so protected fields are never served). `require_authentication`
 * refuses anonymous requests with a 401.
 *
 * @example Without key sources a request is anonymous
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "../config/mod.ts";
 * import { buildRequestAuthorization, resolveIdentity } from "./authorize.ts";
 * const authorization = buildRequestAuthorization(parseConfig({}, { env: {}, baseDir: "." }), { auth: null });
 * const request = new Request("http://r/", { headers: { authorization: "Bearer x.y.z" } });
 * assert.deepEqual(await resolveIdentity(request, { authorization }), { ok: true, token: null });
 * ```
 * @param request The inbound request.
 * @param options The compiled authorization; `cookie: false` ignores the cookie source.
 * @returns The token (null: anonymous) or the error to answer with.
 */
export async function resolveIdentity(
  request: Request,
  options: {
    readonly authorization: RequestAuthorization;
    /** False: `authentication.jwt.cookie_name` is not read (MCP). @default {true} */
    readonly cookie?: boolean;
  },
): Promise<IdentityResult> {
  const { authorization } = options;
  let token: VerifiedToken | null = null;
  let headerName = "authorization";
  if (authorization.auth !== null) {
    let auth: AuthState;
    try {
      auth = await authorization.auth;
    } catch {
      return {
        ok: false,
        error: new RouterError(
          "INTERNAL",
          "Token verification is unavailable: its key sources failed to load",
        ),
      };
    }
    headerName = auth.headerName;
    const verified = await authenticate(request, auth, { cookie: options.cookie !== false });
    if (!verified.ok) return { ok: false, error: verified.error };
    token = verified.token;
  }
  if (token === null && authorization.requireAuthentication) {
    return {
      ok: false,
      error: new AuthError(
        "UNAUTHENTICATED",
        `The request needs authentication: send a bearer token in ${headerName}`,
        formatBearerChallenge([]),
      ),
    };
  }
  return { ok: true, token };
}

/** Options for {@linkcode authorizeOperation}. */
export interface AuthorizeOperationOptions {
  /** The verified token, null when anonymous (from {@linkcode resolveIdentity}). */
  readonly identity: VerifiedToken | null;
  /** The state's compiled authorization; absent: nothing to enforce (facet unit tests). */
  readonly authorization: RequestAuthorization | undefined;
  /** The API schema and access map the requirement is read from. */
  readonly supergraph: AccessModel;
  /** What is asked for, in messages ("The operation", "Method GetUser", "Tool get_user"). */
  readonly subject: string;
}

/**
 * The one authorization door of an operation, called by every facet once the
 * operation is parsed and validated and the identity settled, before anything
 * runs. With `authorization.reject_operation_if_unauthorized`, the whole
 * operation's `@authenticated` / `@requiresScopes` requirement must hold:
 * anonymous → 401 `UNAUTHENTICATED`, a token lacking every AND-group → 403
 * `FORBIDDEN` with the best group in the challenge. Without it, nothing is
 * refused here: the engine removes the fields the identity may not see.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse } from "graphql";
 * import { parseConfig } from "../config/mod.ts";
 * import { authorizeOperation, buildRequestAuthorization } from "./authorize.ts";
 * const config = parseConfig({ authorization: { reject_operation_if_unauthorized: true } }, {
 *   env: {},
 *   baseDir: ".",
 * });
 * const authorization = buildRequestAuthorization(config, { auth: null });
 * const supergraph = {
 *   apiSchema: buildSchema("type Query { me: String, hello: String }"),
 *   access: new Map([["Query.me", { authenticated: true, requiresScopes: null }]]),
 * };
 * const me = { document: parse("{ me }"), name: null };
 * const options = { identity: null, authorization, supergraph, subject: "The operation" };
 * assert.equal(authorizeOperation(me, options)?.code, "UNAUTHENTICATED");
 * assert.equal(authorizeOperation({ document: parse("{ hello }"), name: null }, options), null);
 * ```
 * @param operation The operation (document and name).
 * @param options Identity, authorization, supergraph and the subject named in messages.
 * @returns null when allowed, else the `AuthError` to answer with.
 */
export function authorizeOperation(
  operation: AuthorizedOperation,
  options: AuthorizeOperationOptions,
): AuthError | null {
  const { authorization } = options;
  if (authorization === undefined || !authorization.rejectUnauthorized) return null;
  return checkRequirement(options.identity, {
    requirement: operationRequirement(operation, {
      authorization,
      supergraph: options.supergraph,
    }),
    subject: options.subject,
  });
}

/**
 * The refusal of an anonymous caller of something protected (401 with a bare
 * `Bearer` challenge): what a facet answers when a field was refused to a
 * caller who sent no token.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { authenticationRequired } from "./authorize.ts";
 * assert.equal(authenticationRequired("Method GetMe").code, "UNAUTHENTICATED");
 * ```
 * @param subject What is asked for, in the message.
 * @returns The error.
 */
export function authenticationRequired(subject: string): AuthError {
  return checkRequirement(null, { requirement: AUTHENTICATED, subject })!;
}

const AUTHENTICATED: OperationRequirement = Object.freeze({ authenticated: true, scopes: [] });

/** Options for {@linkcode checkRequirement}. */
export interface CheckRequirementOptions {
  /** The operation's requirement. */
  readonly requirement: OperationRequirement;
  /** What is asked for, in messages ("The operation", "Method GetUser"). */
  readonly subject: string;
}

/**
 * Checks a verified identity against a whole operation's requirement (the
 * `authorization.reject_operation_if_unauthorized` mode, shared by the
 * GraphQL and Connect facets): anonymous and the requirement comes from an
 * `@authenticated` / `@requiresScopes` element → 401; a token lacking every
 * AND-group → 403 `insufficient_scope` with the best group.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkRequirement } from "./authorize.ts";
 * const requirement = { authenticated: true, scopes: [["a"]] };
 * assert.equal(checkRequirement(null, { requirement, subject: "Op" })?.code, "UNAUTHENTICATED");
 * const token = { issuer: "", subject: "u", scopes: ["a"], scopeSet: new Set(["a"]), claims: {} };
 * assert.equal(checkRequirement(token, { requirement, subject: "Op" }), null);
 * ```
 * @param token The verified token, null when anonymous.
 * @param options The requirement and the subject named in messages.
 * @returns null when allowed, else the `AuthError` to answer with.
 */
export function checkRequirement(
  token: VerifiedToken | null,
  options: CheckRequirementOptions,
): AuthError | null {
  const { requirement } = options;
  if (token === null) {
    if (!requirement.authenticated) return null;
    return new AuthError(
      "UNAUTHENTICATED",
      `${options.subject} needs an authenticated request: send a bearer token`,
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
