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
import type { SubgraphErrorPropagationConfig } from "../config/types.ts";

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
 * import { parseConfig } from "../config/mod.ts";
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
  if (Array.isArray(raw.path)) out.path = raw.path;
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
