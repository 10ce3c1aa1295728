/**
 * The `outputSchema` of an operation tool: the JSON Schema of the operation's
 * `data`, derived from its selection set and the API schema (MCP 2025-06-18+
 * structured tool output). Response keys follow aliases; a non-null GraphQL
 * type is required and not `null`; lists become arrays; enums list their
 * values; a selection on an abstract type becomes one object schema per
 * possible type (deduplicated, `anyOf` when they differ); fields under
 * `@skip`/`@include` or under a type condition that not every possible type
 * meets are optional. Pure: no I/O.
 *
 * @module
 */
import {
  type FieldNode,
  type FragmentDefinitionNode,
  getNamedType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  isAbstractType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
/** A JSON Schema object (draft 2020-12 / draft-07 common subset: type, properties, required, items, enum, const, anyOf). */
export type JsonSchema = { readonly [keyword: string]: unknown };

const SCALARS: Readonly<Record<string, JsonSchema>> = {
  ID: { type: "string" },
  String: { type: "string" },
  Int: { type: "integer" },
  Float: { type: "number" },
  Boolean: { type: "boolean" },
};

interface Collected {
  readonly node: FieldNode;
  /** False under `@skip`/`@include`. */
  readonly always: boolean;
}

function conditional(node: { readonly directives?: readonly { name: { value: string } }[] }) {
  return (node.directives ?? []).some((d) => d.name.value === "skip" || d.name.value === "include");
}

/** GraphQL's CollectFields for one concrete type, keyed by response name. */
function collect(
  schema: GraphQLSchema,
  type: GraphQLObjectType,
  selectionSet: SelectionSetNode,
  context: { fragments: ReadonlyMap<string, FragmentDefinitionNode>; always: boolean },
  out: Map<string, Collected[]>,
  visited: Set<string>,
): void {
  for (const selection of selectionSet.selections) {
    const always = context.always && !conditional(selection);
    if (selection.kind === Kind.FIELD) {
      const key = selection.alias?.value ?? selection.name.value;
      const list = out.get(key) ?? [];
      list.push({ node: selection, always });
      out.set(key, list);
      continue;
    }
    let condition: string | undefined;
    let set: SelectionSetNode;
    if (selection.kind === Kind.INLINE_FRAGMENT) {
      condition = selection.typeCondition?.name.value;
      set = selection.selectionSet;
    } else {
      const name = selection.name.value;
      const fragment = context.fragments.get(name);
      if (fragment === undefined || visited.has(name)) continue;
      visited.add(name);
      condition = fragment.typeCondition.name.value;
      set = fragment.selectionSet;
    }
    if (condition !== undefined && !applies(schema, condition, type)) continue;
    collect(schema, type, set, { ...context, always }, out, visited);
  }
}

function applies(schema: GraphQLSchema, condition: string, type: GraphQLObjectType): boolean {
  if (condition === type.name) return true;
  const conditionType = schema.getType(condition);
  return conditionType !== undefined && isAbstractType(conditionType) &&
    schema.isSubType(conditionType, type);
}

function nullable(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema.anyOf)) return { anyOf: [...schema.anyOf, { type: "null" }] };
  if (schema.type === undefined) return schema; // custom scalar: anything, null included
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const out: Record<string, unknown> = { ...schema, type: [...types, "null"] };
  if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
  return out;
}

interface Walk {
  readonly schema: GraphQLSchema;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  /** Guards against hostile depth (the registry already validated the document). */
  readonly depth: number;
}

function objectSchema(
  walk: Walk,
  type: GraphQLObjectType,
  selectionSets: readonly SelectionSetNode[],
): JsonSchema {
  const fields = new Map<string, Collected[]>();
  for (const set of selectionSets) {
    collect(walk.schema, type, set, { fragments: walk.fragments, always: true }, fields, new Set());
  }
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [key, collected] of fields) {
    const first = collected[0]!.node;
    const name = first.name.value;
    if (collected.some((c) => c.always)) required.push(key);
    if (name === "__typename") {
      properties[key] = { type: "string", const: type.name };
      continue;
    }
    const field = type.getFields()[name];
    if (field === undefined) continue;
    const subsets = collected.flatMap((c) => c.node.selectionSet ? [c.node.selectionSet] : []);
    properties[key] = typeSchema(walk, field.type, subsets);
  }
  return { type: "object", properties, required, additionalProperties: false };
}

function namedSchema(
  walk: Walk,
  type: GraphQLNamedType,
  selectionSets: readonly SelectionSetNode[],
): JsonSchema {
  if (isScalarType(type)) return SCALARS[type.name] ?? {};
  if (isEnumType(type)) return { type: "string", enum: type.getValues().map((v) => v.name) };
  if (walk.depth > 64) return {};
  const next = { ...walk, depth: walk.depth + 1 };
  if (isObjectType(type)) return objectSchema(next, type, selectionSets);
  if (!isAbstractType(type)) return {};
  const variants = new Map<string, JsonSchema>();
  for (const possible of walk.schema.getPossibleTypes(type)) {
    const schema = objectSchema(next, possible, selectionSets);
    variants.set(JSON.stringify(schema), schema);
  }
  const distinct = [...variants.values()];
  if (distinct.length === 1) return distinct[0]!;
  return { anyOf: distinct };
}

function typeSchema(
  walk: Walk,
  type: GraphQLOutputType,
  selectionSets: readonly SelectionSetNode[],
): JsonSchema {
  if (isNonNullType(type)) {
    const inner = type.ofType;
    if (isListType(inner)) {
      return { type: "array", items: typeSchema(walk, inner.ofType, selectionSets) };
    }
    return namedSchema(walk, getNamedType(inner), selectionSets);
  }
  if (isListType(type)) {
    return nullable({ type: "array", items: typeSchema(walk, type.ofType, selectionSets) });
  }
  return nullable(namedSchema(walk, type, selectionSets));
}

/**
 * The JSON Schema of an operation's `data` (an object: MCP requires an object
 * `outputSchema`).
 *
 * @example Aliases, nullability, enums, lists
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse, type OperationDefinitionNode } from "graphql";
 * import { outputSchema } from "./output_schema.ts";
 * const schema = buildSchema("enum E { A B } type Query { e: E!, names: [String!] }");
 * const document = parse("query Q { kind: e names }");
 * const out = outputSchema(document.definitions[0] as OperationDefinitionNode, { schema, document });
 * assert.deepEqual(out, {
 *   type: "object",
 *   properties: {
 *     kind: { type: "string", enum: ["A", "B"] },
 *     names: { type: ["array", "null"], items: { type: "string" } },
 *   },
 *   required: ["kind", "names"],
 *   additionalProperties: false,
 * });
 * ```
 * @param operation The operation definition.
 * @param options The API schema and the whole document (for its fragments).
 * @returns The schema.
 */
export function outputSchema(
  operation: OperationDefinitionNode,
  options: {
    readonly schema: GraphQLSchema;
    readonly document: { readonly definitions: readonly { readonly kind: string }[] };
  },
): JsonSchema {
  const root = options.schema.getRootType(operation.operation);
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of options.document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      const fragment = definition as FragmentDefinitionNode;
      fragments.set(fragment.name.value, fragment);
    }
  }
  if (!root) return { type: "object" };
  return objectSchema({ schema: options.schema, fragments, depth: 0 }, root, [
    operation.selectionSet,
  ]);
}
