/**
 * The authorization stage between normalization and planning (Apollo Router's
 * semantics): every field whose parent type, `Type.field` or return type
 * carries an `@authenticated` / `@requiresScopes` requirement that the
 * request's verified identity does not satisfy, or a `@policy` none of whose
 * groups was granted to the request, is removed from the operation
 * before it is planned, so no subgraph is ever asked for it. The shaper then
 * answers each removed field as `null` with an `UNAUTHORIZED_FIELD_OR_TYPE`
 * error at its path ({@linkcode unauthorizedError}), non-null propagation
 * included. Pure: works on the normalized operation only, so it does not
 * depend on the planner.
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import { satisfiesScopes } from "../../auth/mod.ts";
import type { AccessRequirement } from "../../supergraph/mod.ts";
import type { NField, NormalizedOperation, NSelection, TypeRef } from "./normalize.ts";

/**
 * The verified identity of a request: its token's scopes. `null` (or absent)
 * is an anonymous request, which satisfies no `@authenticated` element.
 */
export interface FieldIdentity {
  /** The token's scopes. */
  readonly scopeSet: ReadonlySet<string>;
  /** The `@policy` names a plugin or the coprocessor granted this request; absent: none. */
  readonly policies?: ReadonlySet<string>;
  /** True for an anonymous request that carries granted policies (no token). */
  readonly anonymous?: boolean;
}

const NO_POLICIES: ReadonlySet<string> = new Set();

/**
 * The identity the engine filters fields with: the token's, plus the `@policy`
 * names granted to the request (an anonymous request with grants is still
 * anonymous). Without grants, the identity as it is (nothing allocated).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withPolicies } from "./field_access.ts";
 * assert.equal(withPolicies(null, undefined), null);
 * const granted = withPolicies(null, new Set(["admin"]));
 * assert.equal(granted?.anonymous, true);
 * assert.deepEqual([...granted!.policies!], ["admin"]);
 * ```
 * @param identity The token's identity, null when anonymous.
 * @param policies The granted policy names.
 * @returns The identity to filter with.
 */
export function withPolicies(
  identity: FieldIdentity | null,
  policies: ReadonlySet<string> | undefined,
): FieldIdentity | null {
  if (policies === undefined || policies.size === 0) return identity;
  return identity === null
    ? { scopeSet: NO_POLICIES, policies, anonymous: true }
    : { scopeSet: identity.scopeSet, policies };
}

/** Result of {@linkcode filterOperation}. */
export interface FilteredOperation {
  /** The operation to plan: denied fields removed. */
  readonly operation: NormalizedOperation;
  /** The removed fields (objects of the input selection, for the shaper). */
  readonly denied: ReadonlySet<NField>;
  /** Response paths (keys, without list indices) of the removed fields, in document order. */
  readonly removed: readonly (readonly string[])[];
}

/** The `extensions.code` of a removed field's error. */
export const UNAUTHORIZED_FIELD_OR_TYPE = "UNAUTHORIZED_FIELD_OR_TYPE";

const TYPENAME_TYPE: TypeRef = { kind: "nonNull", of: { kind: "scalar" } };

/**
 * Tells whether an identity satisfies one access entry.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { satisfiesAccess } from "./field_access.ts";
 * const entry = { authenticated: false, requiresScopes: [["a"], ["b", "c"]] };
 * assert.equal(satisfiesAccess(entry, null), false);
 * assert.equal(satisfiesAccess(entry, { scopeSet: new Set(["b", "c"]) }), true);
 * assert.equal(satisfiesAccess({ authenticated: true, requiresScopes: null }, { scopeSet: new Set() }), true);
 * const policy = { authenticated: false, requiresScopes: null, policies: [["admin"]] };
 * assert.equal(satisfiesAccess(policy, null), false);
 * assert.equal(satisfiesAccess(policy, { scopeSet: new Set(), policies: new Set(["admin"]) }), true);
 * ```
 * @param entry The requirement of a type or field.
 * @param identity The request's identity, null when anonymous.
 * @returns True when allowed.
 */
export function satisfiesAccess(
  entry: AccessRequirement,
  identity: FieldIdentity | null,
): boolean {
  // `@policy`: one AND-group of policy names granted to the request (token or not).
  if (
    entry.policies != null &&
    !satisfiesScopes(entry.policies, identity?.policies ?? NO_POLICIES)
  ) return false;
  if (!entry.authenticated && entry.requiresScopes === null) return true;
  if (identity === null || identity.anonymous === true) return false;
  return entry.requiresScopes === null || satisfiesScopes(entry.requiresScopes, identity.scopeSet);
}

/**
 * The part of the plan cache key that says what the identity removes: the
 * indices (in `keys`) of the access entries it fails. Two identities with the
 * same signature remove exactly the same fields from an operation whose
 * touched access keys are `keys`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { accessSignature } from "./field_access.ts";
 * const access = new Map([
 *   ["User.email", { authenticated: false, requiresScopes: [["read:email"]] }],
 *   ["Query.me", { authenticated: true, requiresScopes: null }],
 * ]);
 * const keys = ["Query.me", "User.email"];
 * assert.equal(accessSignature(keys, access, null), "0,1");
 * assert.equal(accessSignature(keys, access, { scopeSet: new Set() }), "1");
 * assert.equal(accessSignature(keys, access, { scopeSet: new Set(["read:email"]) }), "");
 * ```
 * @param keys Access keys the operation touches (see `touchedAccessKeys`).
 * @param access The supergraph's access map.
 * @param identity The request's identity.
 * @returns Comma-separated failing indices (`""`: nothing removed).
 */
export function accessSignature(
  keys: readonly string[],
  access: ReadonlyMap<string, AccessRequirement>,
  identity: FieldIdentity | null,
): string {
  let out = "";
  for (let i = 0; i < keys.length; i++) {
    const entry = access.get(keys[i]!);
    if (entry !== undefined && !satisfiesAccess(entry, identity)) {
      out += out === "" ? `${i}` : `,${i}`;
    }
  }
  return out;
}

function typenameField(parentType: string): NField {
  return {
    key: "__typename",
    name: "__typename",
    args: "",
    variables: [],
    parentType,
    namedType: "String",
    type: TYPENAME_TYPE,
    selection: null,
    introspection: false,
  };
}

class FieldFilter {
  readonly #access: ReadonlyMap<string, AccessRequirement>;
  readonly #identity: FieldIdentity | null;
  readonly #allowed = new Map<string, boolean>();
  readonly #path: string[] = [];
  readonly #removedKeys = new Set<string>();
  readonly denied = new Set<NField>();
  readonly removed: string[][] = [];

  constructor(access: ReadonlyMap<string, AccessRequirement>, identity: FieldIdentity | null) {
    this.#access = access;
    this.#identity = identity;
  }

  #allows(key: string): boolean {
    let known = this.#allowed.get(key);
    if (known === undefined) {
      const entry = this.#access.get(key);
      known = entry === undefined || satisfiesAccess(entry, this.#identity);
      this.#allowed.set(key, known);
    }
    return known;
  }

  #fieldAllowed(field: NField): boolean {
    if (field.introspection || field.name === "__typename") return true;
    return this.#allows(field.parentType) && this.#allows(`${field.parentType}.${field.name}`) &&
      this.#allows(field.namedType);
  }

  /** Filters a field list; returns the same array when nothing changed. */
  fields(fields: readonly NField[], parentType: string, keepOne: boolean): readonly NField[] {
    let out: NField[] | null = null;
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!;
      let next: NField | null = field;
      if (!this.#fieldAllowed(field)) {
        const path = [...this.#path, field.key];
        const key = path.join("\u0000");
        if (!this.#removedKeys.has(key)) {
          // Once per response path (an interface field is split per implementation).
          this.#removedKeys.add(key);
          this.removed.push(path);
        }
        this.denied.add(field);
        next = null;
      } else if (field.selection !== null) {
        this.#path.push(field.key);
        const selection = this.selection(field.selection);
        this.#path.pop();
        if (selection !== field.selection) next = { ...field, selection };
      }
      if (next !== field && out === null) out = fields.slice(0, i);
      if (out !== null && next !== null) out.push(next);
    }
    if (out === null) return fields;
    // A sub-selection left empty still needs its object: ask for `__typename` only.
    if (out.length === 0 && keepOne) out.push(typenameField(parentType));
    return out;
  }

  selection(selection: NSelection): NSelection {
    if (!selection.abstract) {
      const fields = this.fields(selection.fields, selection.typeName, true);
      return fields === selection.fields ? selection : { ...selection, fields };
    }
    let changed = false;
    const byType = new Map<string, readonly NField[]>();
    for (const [type, fields] of selection.byType) {
      const next = this.fields(fields, type, fields.length > 0);
      if (next !== fields) changed = true;
      byType.set(type, next);
    }
    const interfaceFields = this.fields(
      selection.interfaceFields,
      selection.typeName,
      selection.interfaceFields.length > 0,
    );
    if (!changed && interfaceFields === selection.interfaceFields) return selection;
    return { ...selection, byType, interfaceFields };
  }
}

/**
 * Removes the fields an identity may not see from a normalized operation.
 *
 * @example An anonymous request loses `User.email`; `me` stays (as `__typename`)
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse } from "graphql";
 * import { normalizeOperation } from "./normalize.ts";
 * import { filterOperation } from "./field_access.ts";
 * const schema = buildSchema("type Query { me: User } type User { name: String email: String }");
 * const access = new Map([["User.email", { authenticated: false, requiresScopes: [["read:email"]] }]]);
 * const op = normalizeOperation(schema, parse("{ me { email } }"));
 * const { operation, denied, removed } = filterOperation(op, { access, identity: null });
 * assert.equal(denied.size, 1);
 * assert.deepEqual(removed, [["me", "email"]]);
 * assert.deepEqual(operation.selection.fields[0]?.selection?.fields.map((f) => f.name), ["__typename"]);
 * assert.equal(filterOperation(op, { access, identity: { scopeSet: new Set(["read:email"]) } }).operation, op);
 * ```
 * @param operation The normalized operation.
 * @param options The supergraph's access map and the request's identity.
 * @returns The operation to plan (the input itself when nothing is removed) and the removed fields.
 */
export function filterOperation(
  operation: NormalizedOperation,
  options: {
    readonly access: ReadonlyMap<string, AccessRequirement>;
    readonly identity: FieldIdentity | null;
  },
): FilteredOperation {
  if (options.access.size === 0) return { operation, denied: new Set(), removed: [] };
  const filter = new FieldFilter(options.access, options.identity);
  const root = operation.selection;
  const fields = filter.fields(root.fields, root.typeName, false);
  const { denied, removed } = filter;
  if (fields === root.fields) return { operation, denied, removed };
  return { operation: { ...operation, selection: { ...root, fields } }, denied, removed };
}

/**
 * The error of a removed field (Apollo Router's message and code).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unauthorizedError } from "./field_access.ts";
 * assert.deepEqual(unauthorizedError(["me", "email"]), {
 *   message: "Unauthorized field or type",
 *   path: ["me", "email"],
 *   extensions: { code: "UNAUTHORIZED_FIELD_OR_TYPE" },
 * });
 * ```
 * @param path The response path of the field.
 * @returns The formatted error.
 */
export function unauthorizedError(path: readonly (string | number)[]): GraphQLFormattedError {
  return {
    message: "Unauthorized field or type",
    path,
    extensions: { code: UNAUTHORIZED_FIELD_OR_TYPE },
  };
}
