/**
 * What clients see of subgraph errors (Cosmo's `subgraph_error_propagation`):
 * extensions filtered to an allow-list, a default code, the service name,
 * no `locations` (they point into the subgraph's operation); in `wrapped`
 * mode the errors of one fetch travel inside one router error. Stack traces
 * and exception details are never forwarded, whatever the policy. Pure.
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import type { SubgraphErrorPropagationConfig } from "../../config/mod.ts";
import { isRawNumber } from "../prepare/json_numbers.ts";

/** The policy applied to every subgraph error. */
export interface SubgraphErrorPolicy {
  /** `wrapped`: one router error per fetch; `pass-through`: the filtered errors. */
  readonly mode: "wrapped" | "pass-through";
  /** Extension keys kept; null keeps all (except stack traces). */
  readonly allowedExtensionFields: ReadonlySet<string> | null;
  /** Add `extensions.serviceName`. */
  readonly attachServiceName: boolean;
  /** Drop `locations`. */
  readonly omitLocations: boolean;
  /** `extensions.code` of an error without one; null: none added. */
  readonly defaultExtensionCode: string | null;
}

/** The engine's default: errors as sent (paths re-pathed), without locations or stack traces. */
export const RAW_SUBGRAPH_ERRORS: SubgraphErrorPolicy = Object.freeze({
  mode: "pass-through",
  allowedExtensionFields: null,
  attachServiceName: false,
  omitLocations: true,
  defaultExtensionCode: null,
});

/** Extension keys never forwarded: Apollo Server's and graphql-java's stack traces. */
const NEVER_FORWARDED: ReadonlySet<string> = new Set(["exception", "stacktrace", "stackTrace"]);

/**
 * The policy of the `subgraph_error_propagation` section.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "../../config/mod.ts";
 * import { subgraphErrorPolicyOf } from "./subgraph_errors.ts";
 * const policy = subgraphErrorPolicyOf(parseConfig({}).subgraph_error_propagation);
 * assert.equal(policy.mode, "wrapped");
 * assert.deepEqual([...policy.allowedExtensionFields ?? []], ["code"]);
 * ```
 * @param config The section.
 * @returns The policy.
 */
export function subgraphErrorPolicyOf(
  config: SubgraphErrorPropagationConfig,
): SubgraphErrorPolicy {
  return Object.freeze({
    mode: config.mode,
    allowedExtensionFields: new Set(config.allowed_extension_fields),
    attachServiceName: config.attach_service_name,
    omitLocations: config.omit_locations,
    defaultExtensionCode: config.default_extension_code === ""
      ? null
      : config.default_extension_code,
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * One subgraph error as the client may see it: its message (never edited),
 * its path, and the extensions the policy allows.
 *
 * @example Stack traces and unlisted keys are dropped, the service named
 * ```ts
 * import assert from "node:assert/strict";
 * import { filterSubgraphError } from "./subgraph_errors.ts";
 * const policy = {
 *   mode: "pass-through" as const, allowedExtensionFields: new Set(["code"]),
 *   attachServiceName: true, omitLocations: true, defaultExtensionCode: "DOWNSTREAM_SERVICE_ERROR",
 * };
 * const raw = { message: "No", extensions: { secret: 1, exception: { stacktrace: ["at x.js"] } } };
 * assert.deepEqual(filterSubgraphError(raw, "products", policy), {
 *   message: "No", extensions: { code: "DOWNSTREAM_SERVICE_ERROR", serviceName: "products" },
 * });
 * ```
 * @param raw The error object from the subgraph response.
 * @param subgraph The subgraph's name.
 * @param policy The policy.
 * @returns The error.
 */
export function filterSubgraphError(
  raw: Readonly<Record<string, unknown>>,
  subgraph: string,
  policy: SubgraphErrorPolicy,
): GraphQLFormattedError {
  const out: { message: string } & Record<string, unknown> = {
    message: typeof raw.message === "string" ? raw.message : "Subgraph error",
  };
  if (!policy.omitLocations && Array.isArray(raw.locations)) out.locations = raw.locations;
  if (isResponsePath(raw.path)) out.path = raw.path;
  const extensions: Record<string, unknown> = {};
  if (isObject(raw.extensions)) {
    for (const [key, value] of Object.entries(raw.extensions)) {
      if (NEVER_FORWARDED.has(key)) continue;
      if (policy.allowedExtensionFields !== null && !policy.allowedExtensionFields.has(key)) {
        continue;
      }
      extensions[key] = value;
    }
  }
  if (policy.defaultExtensionCode !== null && typeof extensions.code !== "string") {
    extensions.code = policy.defaultExtensionCode;
  }
  if (policy.attachServiceName) extensions.serviceName = subgraph;
  if (Object.keys(extensions).length > 0) out.extensions = extensions;
  return out as GraphQLFormattedError;
}

/**
 * `wrapped` mode: the errors one fetch got, inside one router error naming
 * the subgraph (as Cosmo does); the first inner error's path is the wrapper's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RAW_SUBGRAPH_ERRORS, wrapSubgraphErrors } from "./subgraph_errors.ts";
 * const policy = { ...RAW_SUBGRAPH_ERRORS, mode: "wrapped" as const, attachServiceName: true,
 *   defaultExtensionCode: "DOWNSTREAM_SERVICE_ERROR" };
 * const wrapped = wrapSubgraphErrors([{ message: "No", path: ["a"] }], "products", policy);
 * assert.equal(wrapped.message, "Failed to fetch from Subgraph 'products'");
 * assert.deepEqual(wrapped.path, ["a"]);
 * assert.equal(wrapped.extensions?.code, "DOWNSTREAM_SERVICE_ERROR");
 * ```
 * @param errors The fetch's filtered errors.
 * @param subgraph The subgraph's name.
 * @param policy The policy.
 * @returns The router error.
 */
export function wrapSubgraphErrors(
  errors: readonly GraphQLFormattedError[],
  subgraph: string,
  policy: SubgraphErrorPolicy,
): GraphQLFormattedError {
  const path = errors.find((e) => e.path !== undefined)?.path;
  return {
    message: `Failed to fetch from Subgraph '${subgraph}'`,
    ...(path === undefined ? {} : { path }),
    extensions: {
      code: policy.defaultExtensionCode ?? "SUBGRAPH_ERROR",
      ...(policy.attachServiceName ? { serviceName: subgraph } : {}),
      errors,
    },
  };
}

/**
 * The longest subgraph error path kept: deeper than any operation the depth
 * limit admits (1 000 levels, each with list indexes), so a longer one names no
 * field of the client's response and is dropped with the rest of a bad path.
 */
const MAX_ERROR_PATH = 4096;

/** A GraphQL response path: field names and list indexes, of a bounded length. */
function isResponsePath(path: unknown): path is (string | number)[] {
  if (!Array.isArray(path) || path.length > MAX_ERROR_PATH) return false;
  for (const key of path) {
    if (typeof key !== "string" && !(Number.isInteger(key) && key >= 0)) return false;
  }
  return true;
}

/** Subgraph errors forwarded per fetch; the rest are counted in one more error. */
export const MAX_ERRORS_PER_FETCH = 100;

/**
 * What is wrong with a subgraph's GraphQL response that has `data` or
 * `errors`, or null when its shape is right: `data` must be an object, or
 * null beside errors (with `_entities` a list of objects or nulls for an
 * entity fetch answered with data), `errors` a list when present.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { malformedResponse } from "./subgraph_errors.ts";
 * assert.equal(malformedResponse({ data: { a: 1 } }, { entities: false }), null);
 * assert.equal(malformedResponse({ data: [1] }, { entities: false }), "its data is not an object");
 * assert.equal(malformedResponse({ data: null }, { entities: false }), "it has neither data nor errors");
 * assert.equal(malformedResponse({ data: null, errors: [{}] }, { entities: false }), null);
 * assert.equal(malformedResponse({ data: {} }, { entities: true }), "its data has no _entities list");
 * assert.equal(
 *   malformedResponse({ data: { _entities: [{}, null, 1] } }, { entities: true }),
 *   "an entity in its _entities is neither an object nor null",
 * );
 * ```
 * @param payload The parsed response (an object with `data` or `errors`).
 * @param options Whether it answers an entity fetch.
 * @returns The reason, or null.
 */
export function malformedResponse(
  payload: Readonly<Record<string, unknown>>,
  options: { readonly entities: boolean },
): string | null {
  const { data, errors } = payload;
  if (errors !== undefined && errors !== null && !Array.isArray(errors)) {
    return "its errors are not a list";
  }
  if (data === undefined || data === null) {
    // No data is an answer only beside the errors that explain it (the spec requires them).
    return Array.isArray(errors) && errors.length > 0 ? null : "it has neither data nor errors";
  }
  // A number kept exact (a long integer) is an object in memory, not in the JSON.
  if (typeof data !== "object" || Array.isArray(data) || isRawNumber(data)) {
    return "its data is not an object";
  }
  if (!options.entities) return null;
  const entities = (data as Record<string, unknown>)._entities;
  if (!Array.isArray(entities)) {
    // An entity fetch that failed as a whole may answer `data: {}` beside its errors.
    return Array.isArray(errors) && errors.length > 0 ? null : "its data has no _entities list";
  }
  // An entity is an object, or null when it was not found; anything else is no answer.
  for (const entity of entities) {
    if (
      entity !== null &&
      (typeof entity !== "object" || Array.isArray(entity) || isRawNumber(entity))
    ) {
      return "an entity in its _entities is neither an object nor null";
    }
  }
  return null;
}
