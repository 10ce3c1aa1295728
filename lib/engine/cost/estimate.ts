/**
 * The static cost estimate of one operation against a {@linkcode CostSchema}, by the rules of
 * the IBM GraphQL Cost Directives specification as Apollo Router implements them
 * (`static_cost.rs`): an object, interface or union costs 1, a scalar or enum 0, unless `@cost`
 * says otherwise; a mutation adds 10; a list field multiplies its type's cost by its size —
 * from `sizedFields` of its parent's `@listSize`, else its own `@listSize` (the largest slicing
 * argument, variables and defaults included, else `assumedSize`), else the configured
 * `list_size`; arguments and input objects add their weights (an input object 1); every
 * fragment's selections are counted where they are spread (an abstract type's fragments all
 * count); `@skip`/`@include` with a literal `true`/`false` (or a variable's value) drop a field.
 *
 * Recursion follows the document's selections: its depth is bounded by the parser and operation
 * limits checked before (`prepare/limits.ts`).
 *
 * @module
 */
import {
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from "graphql";
import type { CostField, CostSchema, ListSizeModel, SizedFields } from "../../supergraph/mod.ts";
import { argumentCost } from "./_arguments.ts";
import { CostError } from "./cost_error.ts";

export { CostError };

/** Options of {@linkcode estimateOperation}. */
export interface EstimateOptions {
  /** Size of a list nothing else sizes (`static_estimated.list_size`). */
  readonly listSize: number;
  /** Add the cost of a field's `@requires` selection (supergraph estimates; a plan fetches it). @default false */
  readonly estimateRequires?: boolean;
  /** Told the name of every variable the estimate read (the estimate's cache key). */
  readonly touched?: Set<string>;
  /**
   * The document is a subgraph operation of a plan: a field or argument the supergraph does not
   * show (a `@fromContext` argument, a subgraph's own field) costs 0 instead of failing, as the
   * subgraph's schema (which Apollo Router scores against) would have it. @default false
   */
  readonly subgraphOperation?: boolean;
}

/** What one walk reads. */
interface Ctx {
  readonly schema: CostSchema;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly listSize: number;
  readonly requires: boolean;
  readonly touched: Set<string> | undefined;
  readonly lenient: boolean;
}

/** A `@listSize` as it applies to one field of one request. */
interface AppliedListSize {
  readonly expected: number | null;
  readonly sized: SizedFields | null;
}

const OBJECT_LIKE = new Set(["object", "interface", "union"]);

/** `_entities(representations:)` of a subgraph fetch: a list of the `_Entity` union. */
const ENTITIES: CostField = {
  name: "_entities",
  namedType: "_Entity",
  isList: true,
  weight: 1,
  listSizes: [],
  arguments: new Map(),
  requires: null,
};

function readVariable(ctx: Ctx, name: string): unknown {
  ctx.touched?.add(name);
  return ctx.variables[name];
}

/** A slicing argument's number as a list size: a negative one (`first: -1000`) gives none, 0. */
function toSize(value: unknown): number | null {
  if (Array.isArray(value)) return value.length;
  return typeof value === "number" && Number.isInteger(value) ? Math.max(0, value) : null;
}

function sizeOfValue(ctx: Ctx, value: ValueNode | undefined): number | null {
  if (value === undefined) return null;
  if (value.kind === Kind.INT) return toSize(Number.parseInt(value.value, 10));
  if (value.kind === Kind.LIST) return value.values.length;
  if (value.kind === Kind.VARIABLE) return toSize(readVariable(ctx, value.name.value));
  return null;
}

/** The size a slicing argument path (`first`, `input.pagination.first`) gives, or null. */
function slicingSize(ctx: Ctx, value: ValueNode, path: readonly string[]): number | null {
  if (path.length === 0) return sizeOfValue(ctx, value);
  if (value.kind === Kind.VARIABLE) {
    let json: unknown = readVariable(ctx, value.name.value);
    for (const segment of path) {
      json = json !== null && typeof json === "object" && !Array.isArray(json)
        ? (json as Record<string, unknown>)[segment]
        : undefined;
    }
    return toSize(json);
  }
  let node: ValueNode | undefined = value;
  for (const segment of path) {
    node = node?.kind === Kind.OBJECT
      ? node.fields.find((f) => f.name.value === segment)?.value
      : undefined;
  }
  return sizeOfValue(ctx, node);
}

function applyListSize(
  ctx: Ctx,
  directive: ListSizeModel,
  field: FieldNode,
  definition: CostField,
): AppliedListSize {
  const slicing = directive.slicingArguments;
  if (slicing === null) return { expected: directive.assumedSize, sized: directive.sizedFields };
  const args = new Map<string, ValueNode>();
  for (const [name, arg] of definition.arguments) {
    if (arg.defaultValue !== null) args.set(name, arg.defaultValue);
  }
  for (const arg of field.arguments ?? []) args.set(arg.name.value, arg.value);
  let found = 0;
  let largest: number | null = null;
  for (const path of slicing) {
    const [name, ...rest] = path.split(".");
    const value = args.get(name!);
    const size = value === undefined ? null : slicingSize(ctx, value, rest);
    if (size === null) continue;
    found++;
    largest = largest === null ? size : Math.max(largest, size);
  }
  if (directive.requireOneSlicingArgument && found !== 1) {
    throw new CostError(
      `field ${definition.name} takes exactly one of its slicing arguments (${
        slicing.join(", ")
      }) when requireOneSlicingArgument is on; the operation gives ${found}`,
    );
  }
  return { expected: largest ?? directive.assumedSize, sized: directive.sizedFields };
}

function conditionValue(ctx: Ctx, directive: DirectiveNode): boolean | null {
  const value = directive.arguments?.find((a) => a.name.value === "if")?.value;
  if (value?.kind === Kind.BOOLEAN) return value.value;
  if (value?.kind === Kind.VARIABLE) {
    const v = readVariable(ctx, value.name.value);
    return typeof v === "boolean" ? v : null;
  }
  return null;
}

function skipped(ctx: Ctx, field: FieldNode): boolean {
  for (const directive of field.directives ?? []) {
    const name = directive.name.value;
    if (name !== "skip" && name !== "include") continue;
    const value = conditionValue(ctx, directive);
    if (name === "skip" ? value === true : value === false) return true;
  }
  return false;
}

function fieldDefinition(ctx: Ctx, parentType: string, name: string): CostField | null {
  const definition = ctx.schema.types.get(parentType)?.fields.get(name);
  if (definition !== undefined) return definition;
  if (name === "_entities" && parentType === ctx.schema.rootTypes.query) return ENTITIES;
  if (ctx.lenient) return null;
  throw new CostError(
    `${parentType}.${name} is not a field of the schema`,
  );
}

function scoreField(
  ctx: Ctx,
  field: FieldNode,
  parentType: string,
  sizes: { readonly upstream: number | null; readonly inherited: readonly AppliedListSize[] },
): number {
  const name = field.name.value;
  if (name === "__typename" || skipped(ctx, field)) return 0;
  const definition = fieldDefinition(ctx, parentType, name);
  if (definition === null) return 0;
  const own = definition.listSizes.map((d) => applyListSize(ctx, d, field, definition));
  let instances = 1;
  if (definition.isList) {
    let expected: number | null = null;
    for (const d of own) {
      if (d.expected !== null) expected = Math.max(expected ?? d.expected, d.expected);
    }
    for (const d of sizes.inherited) {
      if (d.expected !== null) expected = Math.max(expected ?? d.expected, d.expected);
    }
    instances = sizes.upstream ?? expected ?? ctx.listSize;
  }
  const kind = ctx.schema.types.get(definition.namedType)?.kind ??
    (definition === ENTITIES ? "union" : "scalar");
  let typeCost = definition.weight ?? (OBJECT_LIKE.has(kind) ? 1 : 0);
  if (field.selectionSet) {
    typeCost += scoreSelectionSet(ctx, field.selectionSet, definition.namedType, {
      own,
      inherited: sizes.inherited,
    });
  }
  let argumentsCost = 0;
  for (const arg of field.arguments ?? []) {
    const argDefinition = definition.arguments.get(arg.name.value);
    if (argDefinition === undefined) {
      if (definition === ENTITIES || ctx.lenient) continue;
      throw new CostError(
        `${parentType}.${name} has no argument ${arg.name.value}`,
      );
    }
    argumentsCost += argumentCost(ctx.schema, arg.value, {
      definition: argDefinition,
      variables: ctx.variables,
      ...(ctx.touched ? { touched: ctx.touched } : {}),
    });
  }
  let requiresCost = 0;
  if (ctx.requires && definition.requires !== null) {
    requiresCost = scoreSelectionSet(ctx, definition.requires, parentType, {
      own,
      inherited: [],
    });
  }
  // A list sized 0 costs nothing however deep it nests (0 × Infinity would be NaN, which no `max` refuses).
  return (instances === 0 ? 0 : instances * typeCost) + argumentsCost + requiresCost;
}

function largestSize(
  directives: readonly AppliedListSize[],
  name: string,
): number | null {
  let size: number | null = null;
  for (const d of directives) {
    if (d.expected !== null && d.sized?.leaves.has(name)) {
      size = Math.max(size ?? d.expected, d.expected);
    }
  }
  return size;
}

function scoreSelectionSet(
  ctx: Ctx,
  set: SelectionSetNode,
  parentType: string,
  sizes: {
    readonly own: readonly AppliedListSize[];
    readonly inherited: readonly AppliedListSize[];
  },
): number {
  let cost = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      const upstream = largestSize(sizes.own, name) ?? largestSize(sizes.inherited, name);
      const descended: AppliedListSize[] = [];
      for (const d of [...sizes.own, ...sizes.inherited]) {
        const nested = d.sized?.descend.get(name);
        if (nested !== undefined) descended.push({ expected: d.expected, sized: nested });
      }
      cost += scoreField(ctx, selection, parentType, { upstream, inherited: descended });
    } else if (selection.kind === Kind.FRAGMENT_SPREAD) {
      const fragment = ctx.fragments.get(selection.name.value);
      if (fragment === undefined) {
        throw new CostError(
          `fragment ${selection.name.value} is spread but not defined in the document`,
        );
      }
      cost += scoreSelectionSet(
        ctx,
        fragment.selectionSet,
        fragment.typeCondition.name.value,
        sizes,
      );
    } else {
      const type = selection.typeCondition?.name.value ?? parentType;
      cost += scoreSelectionSet(ctx, selection.selectionSet, type, sizes);
    }
  }
  return cost;
}

/**
 * The fragments of a document by name.
 * @param document A parsed document.
 * @returns Its fragment definitions by name.
 */
export function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  }
  return fragments;
}

/**
 * Estimates the cost of one operation of a document (Apollo Router's `estimated`).
 *
 * @example An object costs 1, a list of them its size times that; a mutation adds 10
 * ```ts
 * import assert from "node:assert/strict";
 * import { parse } from "graphql";
 * import { buildCostSchema } from "../../supergraph/mod.ts";
 * import { estimateOperation } from "./estimate.ts";
 * const schema = buildCostSchema(parse("type Query { one: T many: [T] } type T { id: ID } type Mutation { go: Int }"));
 * const cost = (text: string) => {
 *   const document = parse(text);
 *   return estimateOperation(schema, document, { variables: {}, listSize: 100 });
 * };
 * assert.equal(cost("{ one { id } }"), 1);
 * assert.equal(cost("{ many { id } }"), 100);
 * assert.equal(cost("mutation { go }"), 10);
 * ```
 * @param schema The cost schema.
 * @param document The parsed document (every operation in it is scored, as Apollo does).
 * @param options Variables, the default list size, whether `@requires` selections count.
 * @returns The estimated cost.
 * @throws {CostError} When a field, argument or fragment is unknown, or a `@listSize` with
 * `requireOneSlicingArgument` gets no or several slicing arguments.
 */
export function estimateOperation(
  schema: CostSchema,
  document: DocumentNode,
  options: EstimateOptions & {
    readonly variables: Readonly<Record<string, unknown>>;
    /** Only this operation (the one a request runs); default: all of them. */
    readonly operation?: OperationDefinitionNode;
    /** The document's fragments, when the caller has them already. */
    readonly fragments?: ReadonlyMap<string, FragmentDefinitionNode>;
  },
): number {
  const ctx: Ctx = {
    schema,
    fragments: options.fragments ?? fragmentsOf(document),
    variables: options.variables,
    listSize: options.listSize,
    requires: options.estimateRequires === true,
    touched: options.touched,
    lenient: options.subgraphOperation === true,
  };
  let cost = 0;
  for (const def of document.definitions) {
    if (def.kind !== Kind.OPERATION_DEFINITION) continue;
    if (options.operation !== undefined && def !== options.operation) continue;
    const root = schema.rootTypes[def.operation];
    if (root === null) {
      throw new CostError(
        `the schema has no ${def.operation} root type, so the ${def.operation} has no cost`,
      );
    }
    if (def.operation === "mutation") cost += 10;
    cost += scoreSelectionSet(ctx, def.selectionSet, root, { own: [], inherited: [] });
  }
  return cost;
}
