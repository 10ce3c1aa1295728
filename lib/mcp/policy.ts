/**
 * The five scope gates of spec §5.2 as one pure decision over a policy
 * compiled once per state. At request time a decision is a few lookups and
 * set tests: no parsing and no allocation unless it denies.
 *
 * @module
 */
import {
  bestScopeGroup,
  hasAllScopes,
  isValidScope,
  satisfiesScopes,
  type ScopeRequirement,
} from "../auth/mod.ts";
import type { ScopesConfig } from "../config/mod.ts";
import { RouterError } from "../errors.ts";

/** The gate levels, in the spec's order (§5.2). */
export type GateLevel = "initialize" | "method" | "built-in" | "tool" | "runtime";

/** The compiled scope policy. */
export interface ScopePolicy {
  readonly initialize: readonly string[];
  readonly toolsList: readonly string[];
  readonly toolsCall: readonly string[];
  /** Enabled built-in tools → their scopes (`execute_graphql`, `get_operation_info`, `get_schema`). */
  readonly builtIns: ReadonlyMap<string, readonly string[]>;
  /** Registered-operation tools → their `@requiresScopes` requirement (empty when none). */
  readonly tools: ReadonlyMap<string, ScopeRequirement>;
}

/** A gate decision. */
export type GateDecision =
  | { readonly allow: true }
  | {
    readonly allow: false;
    /** The first level that failed. */
    readonly level: GateLevel;
    /** That level's requirement: its scope list, or the best AND-group. */
    readonly scopes: readonly string[];
    /** Every failing level, with {@linkcode checkCallAllLevels} (first = `level`). */
    readonly levels?: readonly GateLevel[];
  };

/** The one allow value (no allocation on the happy path). */
export const ALLOW: GateDecision = Object.freeze({ allow: true });

function checkList(path: string, scopes: readonly string[]): readonly string[] {
  for (const scope of scopes) {
    if (!isValidScope(scope)) {
      throw new RouterError(
        "CONFIG_INVALID",
        `Cannot read "${path}": ${JSON.stringify(scope)} is not an RFC 6749 scope`,
        { details: { path } },
      );
    }
  }
  return Object.freeze([...scopes]);
}

/**
 * Compiles the policy; every configured scope is checked against the RFC 6749 grammar.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileScopePolicy } from "./policy.ts";
 * const scopes = { initialize: ["mcp"], tools_list: [], tools_call: ["call"], execute_graphql: [],
 *   get_operation_info: ["info"], get_schema: [] };
 * const policy = compileScopePolicy(scopes, { builtIns: ["get_operation_info"], tools: new Map() });
 * assert.deepEqual(policy.builtIns.get("get_operation_info"), ["info"]);
 * assert.throws(() => compileScopePolicy({ ...scopes, initialize: ['a"b'] }, { builtIns: [], tools: new Map() }));
 * ```
 * @param scopes `mcp.oauth.scopes`.
 * @param options Enabled built-in tool names and per-tool requirements.
 * @returns The policy.
 * @throws {RouterError} `CONFIG_INVALID` naming a scope outside the grammar.
 */
export function compileScopePolicy(
  scopes: ScopesConfig,
  options: {
    readonly builtIns: readonly ("execute_graphql" | "get_operation_info" | "get_schema")[];
    readonly tools: ReadonlyMap<string, ScopeRequirement>;
  },
): ScopePolicy {
  const builtIns = new Map<string, readonly string[]>();
  for (const name of options.builtIns) {
    builtIns.set(name, checkList(`mcp.oauth.scopes.${name}`, scopes[name]));
  }
  return Object.freeze({
    initialize: checkList("mcp.oauth.scopes.initialize", scopes.initialize),
    toolsList: checkList("mcp.oauth.scopes.tools_list", scopes.tools_list),
    toolsCall: checkList("mcp.oauth.scopes.tools_call", scopes.tools_call),
    builtIns,
    tools: options.tools,
  });
}

function deny(level: GateLevel, scopes: readonly string[]): GateDecision {
  return { allow: false, level, scopes };
}

/**
 * Gate 1 (spec §5.1): the `initialize` scopes, on every request, before the body is read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkInitialize, compileScopePolicy } from "./policy.ts";
 * const policy = compileScopePolicy({ initialize: ["mcp"], tools_list: [], tools_call: [],
 *   execute_graphql: [], get_operation_info: [], get_schema: [] }, { builtIns: [], tools: new Map() });
 * assert.equal(checkInitialize(policy, new Set(["mcp"])).allow, true);
 * assert.deepEqual(checkInitialize(policy, new Set()), { allow: false, level: "initialize", scopes: ["mcp"] });
 * ```
 * @param policy The policy.
 * @param scopes The token's scopes.
 * @returns The decision.
 */
export function checkInitialize(policy: ScopePolicy, scopes: ReadonlySet<string>): GateDecision {
  return hasAllScopes(policy.initialize, scopes) ? ALLOW : deny("initialize", policy.initialize);
}

/**
 * Gates 2–4 for one JSON-RPC request (gate 1 already passed): method scopes
 * (`tools/list`, `tools/call`), then for `tools/call` the built-in tool's
 * scopes or the registered operation's requirement (best AND-group on a
 * shortfall). Gate 5 (runtime, `execute_graphql`) needs the query: see
 * {@linkcode checkRuntime}. Other methods and unknown tools pass here.
 *
 * @example Spec §7.2 example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkRequest, compileScopePolicy } from "./policy.ts";
 * const policy = compileScopePolicy({ initialize: [], tools_list: [], tools_call: [],
 *   execute_graphql: [], get_operation_info: [], get_schema: [] },
 *   { builtIns: [], tools: new Map([["t", [["A", "B", "C"], ["D"]]]]) });
 * assert.deepEqual(checkRequest(policy, new Set(["A", "B"]), "tools/call", "t"),
 *   { allow: false, level: "tool", scopes: ["A", "B", "C"] });
 * ```
 * @param policy The policy.
 * @param scopes The token's scopes.
 * @param method The JSON-RPC method.
 * @param tool For `tools/call`, `params.name`.
 * @returns The decision.
 */
export function checkRequest(
  policy: ScopePolicy,
  scopes: ReadonlySet<string>,
  method: string,
  tool?: string,
): GateDecision {
  if (method === "tools/list") {
    return hasAllScopes(policy.toolsList, scopes) ? ALLOW : deny("method", policy.toolsList);
  }
  if (method !== "tools/call") return ALLOW;
  if (!hasAllScopes(policy.toolsCall, scopes)) return deny("method", policy.toolsCall);
  if (tool === undefined) return ALLOW;
  const builtIn = policy.builtIns.get(tool);
  if (builtIn !== undefined) {
    return hasAllScopes(builtIn, scopes) ? ALLOW : deny("built-in", builtIn);
  }
  const requirement = policy.tools.get(tool);
  if (requirement === undefined || satisfiesScopes(requirement, scopes)) return ALLOW;
  return deny("tool", bestScopeGroup(requirement, scopes));
}

/**
 * Gates 2–4 of `tools/call` at once (`mcp.oauth.scope_challenge_all_levels`):
 * when any fails, the denial names the union, in gate order, of what each
 * failing level would name on its own (method scopes, the built-in tool's
 * scopes, the tool's best AND-group), so one new token passes them all. One
 * failing level gives exactly the per-level denial of {@linkcode checkRequest}.
 *
 * @example Method and tool both lacking: one denial naming both
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkCallAllLevels, compileScopePolicy } from "./policy.ts";
 * const policy = compileScopePolicy({ initialize: [], tools_list: [], tools_call: ["mcp:call"],
 *   execute_graphql: [], get_operation_info: [], get_schema: [] },
 *   { builtIns: [], tools: new Map([["t", [["A", "B"], ["D"]]]]) });
 * assert.deepEqual(checkCallAllLevels(policy, new Set(["A"]), "t"),
 *   { allow: false, level: "method", levels: ["method", "tool"], scopes: ["mcp:call", "A", "B"] });
 * assert.equal(checkCallAllLevels(policy, new Set(["mcp:call", "D"]), "t").allow, true);
 * ```
 * @param policy The policy.
 * @param scopes The token's scopes.
 * @param tool `params.name` (undefined or unknown: only the method level).
 * @returns The decision.
 */
export function checkCallAllLevels(
  policy: ScopePolicy,
  scopes: ReadonlySet<string>,
  tool?: string,
): GateDecision {
  const failing: [GateLevel, readonly string[]][] = [];
  if (!hasAllScopes(policy.toolsCall, scopes)) failing.push(["method", policy.toolsCall]);
  const builtIn = tool === undefined ? undefined : policy.builtIns.get(tool);
  const requirement = tool === undefined ? undefined : policy.tools.get(tool);
  if (builtIn !== undefined && !hasAllScopes(builtIn, scopes)) failing.push(["built-in", builtIn]);
  if (requirement !== undefined && !satisfiesScopes(requirement, scopes)) {
    failing.push(["tool", bestScopeGroup(requirement, scopes)]);
  }
  if (failing.length === 0) return ALLOW;
  const union: string[] = [];
  for (const [, list] of failing) {
    for (const scope of list) if (!union.includes(scope)) union.push(scope);
  }
  return {
    allow: false,
    level: failing[0]![0],
    levels: failing.map(([level]) => level),
    scopes: union,
  };
}

/**
 * Gate 5 (spec §5.3 rule 5): an inline query's requirement, best AND-group on a shortfall.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkRuntime } from "./policy.ts";
 * assert.equal(checkRuntime([["a"]], new Set(["a"])).allow, true);
 * assert.deepEqual(checkRuntime([["a", "b"], ["c"]], new Set(["a"])),
 *   { allow: false, level: "runtime", scopes: ["a", "b"] });
 * ```
 * @param requirement The query's combined requirement.
 * @param scopes The token's scopes.
 * @returns The decision.
 */
export function checkRuntime(
  requirement: ScopeRequirement,
  scopes: ReadonlySet<string>,
): GateDecision {
  return satisfiesScopes(requirement, scopes)
    ? ALLOW
    : deny("runtime", bestScopeGroup(requirement, scopes));
}
