/**
 * Demand control's view of a schema: every output field's type, `@cost` weight, `@listSize`
 * directives and `@requires`, and every argument's and input field's type, weight and default,
 * read once from the SDL (hidden types and fields included: subgraph fetches select them).
 *
 * The directives are the IBM GraphQL Cost Directives as Apollo Federation composes them: a
 * supergraph links `https://specs.apollo.dev/cost/v0.1` (renames by `as:`/`import:` honoured);
 * without that link, directives named `@cost` and `@listSize` are read (a schema written by
 * hand, or one composed with `@composeDirective`). A field without its own `@cost` takes its
 * type's (`type T @cost(weight: 5)`, enums, scalars), as Apollo Router does.
 *
 * @module
 */
import {
  type ConstDirectiveNode,
  type ConstValueNode,
  type DocumentNode,
  Kind,
  parse,
  type SelectionSetNode,
  type TypeNode,
  valueFromASTUntyped,
} from "graphql";
import { RouterError } from "../errors.ts";
import { readLinks } from "./_links.ts";
import { TYPE_KIND_OF_NODE } from "./_type_kinds.ts";

/** `sizedFields` of a `@listSize`, parsed: the list fields at this level and the paths below. */
export interface SizedFields {
  /** Field names sized at this level (`page` in `["page"]`). */
  readonly leaves: ReadonlySet<string>;
  /** Nested paths (`results { page }` → `results` → `{ leaves: [page] }`). */
  readonly descend: ReadonlyMap<string, SizedFields>;
}

/** One `@listSize` on a field. */
export interface ListSizeModel {
  readonly assumedSize: number | null;
  /** Argument paths that size the list (`first`, `input.pagination.first`); null when absent. */
  readonly slicingArguments: readonly string[] | null;
  /** Fields of the returned type the size applies to (connections); null when absent. */
  readonly sizedFields: SizedFields | null;
  /** @default true (the specification's default) */
  readonly requireOneSlicingArgument: boolean;
}

/** An argument or input field. */
export interface CostInput {
  readonly name: string;
  readonly namedType: string;
  /** Its own `@cost`, else its type's; null when neither. */
  readonly weight: number | null;
  /** The declared default value; null when none. */
  readonly defaultValue: ConstValueNode | null;
}

/** An output field. */
export interface CostField {
  readonly name: string;
  readonly namedType: string;
  /** The type is a list (non-null wrappers aside). */
  readonly isList: boolean;
  /** Its own `@cost`, else its type's; null when neither. */
  readonly weight: number | null;
  readonly listSizes: readonly ListSizeModel[];
  readonly arguments: ReadonlyMap<string, CostInput>;
  /** The `@requires` field set (`join__field(requires:)`), selection form; null when none. */
  readonly requires: SelectionSetNode | null;
}

/** A named type. */
export interface CostType {
  readonly kind: "object" | "interface" | "union" | "enum" | "input" | "scalar";
  /** Output fields (objects, interfaces). */
  readonly fields: ReadonlyMap<string, CostField>;
  /** Input fields (input objects). */
  readonly inputFields: ReadonlyMap<string, CostInput>;
}

/** What the cost calculator reads of a schema. */
export interface CostSchema {
  readonly types: ReadonlyMap<string, CostType>;
  readonly rootTypes: {
    readonly query: string;
    readonly mutation: string | null;
    readonly subscription: string | null;
  };
  /** True when some field, type or argument carries `@cost` or `@listSize`. */
  readonly annotated: boolean;
}

const BUILT_IN_SCALARS = ["String", "Int", "Float", "Boolean", "ID"];

function namedTypeOf(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedTypeOf(type.type);
}

function isListType(type: TypeNode): boolean {
  return type.kind === Kind.LIST_TYPE ||
    (type.kind === Kind.NON_NULL_TYPE && type.type.kind === Kind.LIST_TYPE);
}

function argsOf(directive: ConstDirectiveNode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const arg of directive.arguments ?? []) out[arg.name.value] = valueFromASTUntyped(arg.value);
  return out;
}

function weightOf(
  directives: readonly ConstDirectiveNode[] | undefined,
  name: string,
): number | null {
  const directive = directives?.find((d) => d.name.value === name);
  if (directive === undefined) return null;
  const weight = argsOf(directive).weight;
  // The specification types it `String!` (a number as text); Apollo's `Int!`: both are read.
  const value = typeof weight === "string" ? Number(weight) : weight;
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/**
 * Parses `sizedFields` entries (`"items"`, `"results { page }"`) into one tree; a path with two
 * list fields at one level is refused, as Apollo Router refuses it at schema load.
 */
function sizedFieldsOf(entries: readonly string[], where: string): SizedFields {
  const sets: SelectionSetNode[] = [];
  for (const entry of entries) {
    let set: SelectionSetNode;
    try {
      const doc = parse(`{${entry}}`, { noLocation: true });
      set = (doc.definitions[0] as { selectionSet: SelectionSetNode }).selectionSet;
    } catch (error) {
      throw new RouterError(
        "SUPERGRAPH_INVALID",
        `Cannot parse sizedFields entry "${entry}" of @listSize on ${where}`,
        { cause: error },
      );
    }
    checkOneLeaf(set, entry, where);
    sets.push(set);
  }
  return mergeSized(sets);
}

function checkOneLeaf(set: SelectionSetNode, entry: string, where: string): void {
  let leaves = 0;
  for (const s of set.selections) {
    if (s.kind !== Kind.FIELD) continue;
    if (s.selectionSet === undefined) leaves++;
    else checkOneLeaf(s.selectionSet, entry, where);
  }
  if (leaves > 1) {
    throw new RouterError(
      "SUPERGRAPH_INVALID",
      `sizedFields entry "${entry}" of @listSize on ${where} names ${leaves} fields at one level; each path must end in a single list field`,
    );
  }
}

function mergeSized(sets: readonly SelectionSetNode[]): SizedFields {
  const leaves = new Set<string>();
  const nested = new Map<string, SelectionSetNode[]>();
  for (const set of sets) {
    for (const s of set.selections) {
      if (s.kind !== Kind.FIELD) continue;
      if (s.selectionSet === undefined) leaves.add(s.name.value);
      else {
        const list = nested.get(s.name.value) ?? [];
        list.push(s.selectionSet);
        nested.set(s.name.value, list);
      }
    }
  }
  for (const name of nested.keys()) leaves.delete(name);
  const descend = new Map<string, SizedFields>();
  for (const [name, list] of nested) descend.set(name, mergeSized(list));
  return { leaves, descend };
}

function listSizeOf(directive: ConstDirectiveNode, where: string): ListSizeModel {
  const a = argsOf(directive);
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : null;
  const sized = strings(a.sizedFields);
  return {
    assumedSize: typeof a.assumedSize === "number" ? a.assumedSize : null,
    slicingArguments: strings(a.slicingArguments),
    sizedFields: sized === null ? null : sizedFieldsOf(sized, where),
    requireOneSlicingArgument: a.requireOneSlicingArgument !== false,
  };
}

function requiresOf(
  directives: readonly ConstDirectiveNode[] | undefined,
  joinField: string | null,
): SelectionSetNode | null {
  if (joinField === null) return null;
  for (const d of directives ?? []) {
    if (d.name.value !== joinField) continue;
    const requires = argsOf(d).requires;
    if (typeof requires !== "string" || requires.trim() === "") continue;
    try {
      const doc = parse(`{${requires}}`, { noLocation: true });
      return (doc.definitions[0] as { selectionSet: SelectionSetNode }).selectionSet;
    } catch {
      return null; // the planner reports a broken field set; the estimate leaves it out
    }
  }
  return null;
}

/**
 * Reads demand control's view of a schema ({@linkcode CostSchema}) from a parsed supergraph, or
 * from any schema SDL (the directives by their own names then).
 *
 * @example Weights and list sizes of a composed supergraph
 * ```ts
 * import assert from "node:assert/strict";
 * import { parse } from "graphql";
 * import { buildCostSchema } from "./cost_directives.ts";
 * const schema = buildCostSchema(parse(`
 *   directive @cost(weight: Int!) on FIELD_DEFINITION | OBJECT
 *   directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
 *   type Query { items(first: Int = 10): [Item] @listSize(slicingArguments: ["first"]) }
 *   type Item @cost(weight: 3) { id: ID }
 * `));
 * const items = schema.types.get("Query")?.fields.get("items");
 * assert.equal(items?.weight, 3);
 * assert.deepEqual(items?.listSizes[0]?.slicingArguments, ["first"]);
 * assert.equal(schema.annotated, true);
 * ```
 * @param document The parsed schema (a supergraph, or plain SDL).
 * @returns The cost schema.
 * @throws {RouterError} `SUPERGRAPH_INVALID` when a `sizedFields` entry cannot be read.
 */
export function buildCostSchema(document: DocumentNode): CostSchema {
  const links = readLinks(document);
  const linked = links.features.has("cost");
  const costName = linked ? links.directive("cost", "cost")! : "cost";
  const listSizeName = linked ? links.directive("cost", "listSize")! : "listSize";
  const joinField = links.features.has("join") ? links.directive("join", "field") : null;
  const typeWeights = new Map<string, number>();
  let annotated = false;
  const rootTypes = {
    query: "Query",
    mutation: null as string | null,
    subscription: null as string | null,
  };
  let sawSchema = false;
  for (const def of document.definitions) {
    if (def.kind === Kind.SCHEMA_DEFINITION) {
      sawSchema = true;
      for (const op of def.operationTypes) rootTypes[op.operation] = op.type.name.value;
    }
    if (!(def.kind in TYPE_KIND_OF_NODE) || !("name" in def) || def.name === undefined) continue;
    const weight = weightOf(
      (def as { directives?: readonly ConstDirectiveNode[] }).directives,
      costName,
    );
    if (weight !== null) {
      typeWeights.set(def.name.value, weight);
      annotated = true;
    }
  }
  const inputOf = (node: {
    readonly name: { readonly value: string };
    readonly type: TypeNode;
    readonly directives?: readonly ConstDirectiveNode[] | undefined;
    readonly defaultValue?: ConstValueNode | undefined;
  }): CostInput => {
    const namedType = namedTypeOf(node.type);
    const own = weightOf(node.directives, costName);
    if (own !== null) annotated = true;
    return {
      name: node.name.value,
      namedType,
      weight: own ?? typeWeights.get(namedType) ?? null,
      defaultValue: node.defaultValue ?? null,
    };
  };
  const types = new Map<string, CostType>();
  for (const scalar of BUILT_IN_SCALARS) {
    types.set(scalar, { kind: "scalar", fields: new Map(), inputFields: new Map() });
  }
  for (const def of document.definitions) {
    const kind = TYPE_KIND_OF_NODE[def.kind];
    if (kind === undefined || !("name" in def) || def.name === undefined) continue;
    const typeName = def.name.value;
    const existing = types.get(typeName);
    const fields = new Map(existing?.fields ?? []);
    const inputFields = new Map(existing?.inputFields ?? []);
    if (
      def.kind === Kind.INPUT_OBJECT_TYPE_DEFINITION ||
      def.kind === Kind.INPUT_OBJECT_TYPE_EXTENSION
    ) {
      for (const f of def.fields ?? []) inputFields.set(f.name.value, inputOf(f));
    } else if (
      def.kind === Kind.OBJECT_TYPE_DEFINITION || def.kind === Kind.OBJECT_TYPE_EXTENSION ||
      def.kind === Kind.INTERFACE_TYPE_DEFINITION || def.kind === Kind.INTERFACE_TYPE_EXTENSION
    ) {
      for (const f of def.fields ?? []) {
        const namedType = namedTypeOf(f.type);
        const own = weightOf(f.directives, costName);
        const listSizes = (f.directives ?? [])
          .filter((d) => d.name.value === listSizeName)
          .map((d) => listSizeOf(d, `${typeName}.${f.name.value}`));
        if (own !== null || listSizes.length > 0) annotated = true;
        const args = new Map<string, CostInput>();
        for (const a of f.arguments ?? []) args.set(a.name.value, inputOf(a));
        fields.set(f.name.value, {
          name: f.name.value,
          namedType,
          isList: isListType(f.type),
          weight: own ?? typeWeights.get(namedType) ?? null,
          listSizes,
          arguments: args,
          requires: requiresOf(f.directives, joinField),
        });
      }
    }
    types.set(typeName, { kind, fields, inputFields });
  }
  if (!sawSchema) {
    if (types.has("Mutation")) rootTypes.mutation = "Mutation";
    if (types.has("Subscription")) rootTypes.subscription = "Subscription";
  }
  return { types, rootTypes, annotated };
}
