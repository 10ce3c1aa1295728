/**
 * What an operation requires (`@authenticated`, `@requiresScopes`) from the
 * fields and types it touches (DESIGN §4). Works on unvalidated documents, so
 * it guards itself: each fragment is expanded once (cycles and fan-out bombs
 * cost nothing), and depth and the number of visited selections are capped
 * (a bomb fails closed).
 *
 * @module
 */
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  getNamedType,
  type GraphQLNamedType,
  type GraphQLSchema,
  isInterfaceType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import type { AccessRequirement } from "../supergraph/mod.ts";
import { foldScopes, type ScopeRequirement } from "./scopes.ts";

/** What an operation needs. */
export interface OperationRequirement {
  /** True when any touched field or type carries `@authenticated` or `@requiresScopes`. */
  readonly authenticated: boolean;
  /** Combined OR-of-AND requirement; empty when none. */
  readonly scopes: ScopeRequirement;
}

/** Result of {@linkcode operationAccess}: the requirement, or why it failed closed. */
export type OperationAccessResult =
  | { readonly ok: true; readonly requirement: OperationRequirement }
  | { readonly ok: false; readonly reason: string };

/** Options for {@linkcode operationAccess}. */
export interface OperationAccessOptions {
  /** Which operation of the document (default: the only one). */
  readonly operationName?: string | null | undefined;
  /** Cap on combined AND-groups (`mcp.oauth.max_scope_combinations`). @default {2048} */
  readonly maxCombinations?: number;
  /** Cap on selection-set nesting. @default {64} */
  readonly maxDepth?: number;
  /** Cap on visited selections. @default {10000} */
  readonly maxSelections?: number;
}

const NONE: OperationRequirement = Object.freeze({ authenticated: false, scopes: [] });

class Overflow extends Error {}

function selectOperation(
  document: DocumentNode,
  name: string | null | undefined,
): OperationDefinitionNode | undefined {
  let found: OperationDefinitionNode | undefined;
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    if (name ? definition.name?.value === name : found === undefined) {
      found = definition;
      if (name) break;
    } else if (!name) return undefined; // several operations and no name: the engine refuses
  }
  return found;
}

/**
 * Walks an operation's fields in document order (fragments inlined, each
 * expanded once) and collects, for every field, the keys of its parent type,
 * of `Type.field` and of its return type.
 * @returns The keys, or null when the operation is absent; throws Overflow over a cap.
 */
function collectKeys(
  document: DocumentNode,
  schema: GraphQLSchema,
  options: OperationAccessOptions,
): Set<string> | null {
  const operation = selectOperation(document, options.operationName);
  if (!operation) return null;
  const root = schema.getRootType(operation.operation);
  if (!root) return null;
  const maxDepth = options.maxDepth ?? 64;
  const maxSelections = options.maxSelections ?? 10_000;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION && !fragments.has(definition.name.value)) {
      fragments.set(definition.name.value, definition);
    }
  }
  const keys = new Set<string>();
  const expanded = new Set<string>();
  let visited = 0;

  const walk = (set: SelectionSetNode, parent: GraphQLNamedType, depth: number): void => {
    if (depth > maxDepth) throw new Overflow(`Selection depth exceeds ${maxDepth}`);
    for (const selection of set.selections) {
      if (++visited > maxSelections) throw new Overflow(`More than ${maxSelections} selections`);
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (name.startsWith("__")) continue;
        if (!isObjectType(parent) && !isInterfaceType(parent)) continue;
        const field = parent.getFields()[name];
        if (!field) continue;
        const type = getNamedType(field.type);
        keys.add(parent.name).add(`${parent.name}.${name}`).add(type.name);
        if (selection.selectionSet) walk(selection.selectionSet, type, depth + 1);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition
          ? schema.getType(selection.typeCondition.name.value)
          : parent;
        if (type) walk(selection.selectionSet, type, depth + 1);
      } else {
        const name = selection.name.value;
        if (expanded.has(name)) continue;
        expanded.add(name);
        const fragment = fragments.get(name);
        const type = fragment && schema.getType(fragment.typeCondition.name.value);
        if (fragment && type) walk(fragment.selectionSet, type, depth + 1);
      }
    }
  };
  walk(operation.selectionSet, root, 1);
  return keys;
}

/**
 * The keys of the access map an operation touches (parent types, `Type.field`,
 * return types), in a stable order: what decides which of its fields an
 * identity may see. Over a cap, every key of the map (fail closed).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse } from "graphql";
 * import { touchedAccessKeys } from "./operation_access.ts";
 * const schema = buildSchema("type Query { a: String, b: String }");
 * const access = new Map([["Query.a", { authenticated: true, requiresScopes: null }]]);
 * assert.deepEqual(touchedAccessKeys(parse("{ a b }"), schema, access), ["Query.a"]);
 * assert.deepEqual(touchedAccessKeys(parse("{ b }"), schema, access), []);
 * ```
 * @param document A parsed document.
 * @param schema The API schema.
 * @param access Requirements keyed `Type` and `Type.field`.
 * @param options Operation name and caps.
 * @returns Sorted access keys.
 */
export function touchedAccessKeys(
  document: DocumentNode,
  schema: GraphQLSchema,
  access: ReadonlyMap<string, AccessRequirement>,
  options: OperationAccessOptions = {},
): string[] {
  let keys: Set<string> | null;
  try {
    keys = collectKeys(document, schema, options);
  } catch (error) {
    if (error instanceof Overflow) return [...access.keys()].sort();
    throw error;
  }
  if (keys === null) return [];
  // Fields selected on an interface are split per implementation by normalization:
  // their concrete `Type.field` entries count too.
  for (const key of [...keys]) {
    const dot = key.indexOf(".");
    const type = schema.getType(dot < 0 ? key : key.slice(0, dot));
    if (!type || !isInterfaceType(type)) continue;
    for (const possible of schema.getPossibleTypes(type)) {
      keys.add(possible.name);
      if (dot >= 0) keys.add(`${possible.name}${key.slice(dot)}`);
    }
  }
  return [...keys].filter((key) => access.has(key)).sort();
}

/**
 * Computes an operation's access requirement: walks its fields in document
 * order (fragments inlined, each key once), collecting for every field the
 * requirement of its parent type, of `Type.field`, and of its return type, then
 * folds the `@requiresScopes` lists with {@linkcode foldScopes}. Unknown fields
 * are skipped (validation reports them); a document without the operation
 * requires nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse } from "graphql";
 * import { operationAccess } from "./operation_access.ts";
 * const schema = buildSchema("type Query { a: String, b: String }");
 * const access = new Map([
 *   ["Query.a", { authenticated: false, requiresScopes: [["x"], ["y"]] }],
 *   ["Query.b", { authenticated: false, requiresScopes: [["z"]] }],
 * ]);
 * const result = operationAccess(parse("{ a b }"), schema, access);
 * assert.deepEqual(result, {
 *   ok: true,
 *   requirement: { authenticated: true, scopes: [["x", "z"], ["y", "z"]] },
 * });
 * ```
 * @param document A parsed (not necessarily valid) document.
 * @param schema The API schema.
 * @param access Requirements keyed `Type` and `Type.field`.
 * @param options Operation name and caps.
 * @returns The requirement, or a failure (over a cap: fail closed).
 */
export function operationAccess(
  document: DocumentNode,
  schema: GraphQLSchema,
  access: ReadonlyMap<string, AccessRequirement>,
  options: OperationAccessOptions = {},
): OperationAccessResult {
  let keys: Set<string> | null;
  try {
    keys = collectKeys(document, schema, options);
  } catch (error) {
    if (error instanceof Overflow) return { ok: false, reason: error.message };
    throw error;
  }
  if (keys === null) return { ok: true, requirement: NONE };
  let authenticated = false;
  const requirements: ScopeRequirement[] = [];
  for (const key of keys) {
    const entry = access.get(key);
    if (!entry) continue;
    if (entry.authenticated) authenticated = true;
    if (entry.requiresScopes) {
      authenticated = true;
      requirements.push(entry.requiresScopes);
    }
  }
  const scopes = foldScopes(
    requirements,
    options.maxCombinations === undefined ? {} : { maxCombinations: options.maxCombinations },
  );
  if (scopes === null) {
    return {
      ok: false,
      reason: `The scope requirement exceeds ${options.maxCombinations ?? 2048} combinations`,
    };
  }
  return { ok: true, requirement: { authenticated, scopes } };
}
