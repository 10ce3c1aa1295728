/**
 * Normalization: a validated operation → a plain selection tree with fragments
 * inlined, fields merged by response key, `@skip`/`@include` applied, and
 * selections on abstract types split per possible concrete type (the
 * spec's CollectFields, run once per operation and variable condition set).
 * With `incremental`, each `@defer` fragment becomes a {@linkcode DeferredFragment} and every
 * field says which delivery it belongs to (`defer`): the planner splits fetches by it.
 *
 * @module
 */
import {
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  getNamedType,
  type GraphQLCompositeType,
  type GraphQLField,
  GraphQLInterfaceType,
  type GraphQLOutputType,
  type GraphQLSchema,
  GraphQLUnionType,
  isAbstractType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
  Kind,
  type OperationDefinitionNode,
  print,
  type SelectionSetNode,
  type ValueNode,
} from "graphql";

/** A compiled output type: how the shaper completes a value. */
export type TypeRef =
  | { readonly kind: "nonNull"; readonly of: TypeRef }
  | { readonly kind: "list"; readonly of: TypeRef }
  | {
    readonly kind: "scalar";
    /** The scalar's name: built-in scalars are coerced by the shaper, others pass through. */
    readonly name?: string;
  }
  | { readonly kind: "enum"; readonly name: string; readonly values: ReadonlySet<string> }
  | { readonly kind: "composite"; readonly name: string };

/** One field of a normalized selection. */
export interface NField {
  /** Response key (alias or name). */
  readonly key: string;
  readonly name: string;
  /** Printed arguments, `(first:$n)`, or `""`. */
  readonly args: string;
  /** Variables the arguments use. */
  readonly variables: readonly string[];
  /** The API schema type the field is selected on (concrete when sliced). */
  readonly parentType: string;
  /** Named type of the field. */
  readonly namedType: string;
  /** Compiled output type. */
  readonly type: TypeRef;
  /** Sub-selection, null for leaves. */
  readonly selection: NSelection | null;
  /** True for `__schema` / `__type` (answered by the router). */
  readonly introspection: boolean;
  /**
   * Incremental operations only: the delivery the field belongs to, `0` for the primary part,
   * else the id of its {@linkcode DeferredFragment} (the least deferred of its occurrences).
   * Absent: not a client field of an incremental operation (the planner's own fields).
   */
  readonly defer?: number;
}

/** One `@defer` fragment of an incremental operation (at one response path). */
export interface DeferredFragment {
  /** 1, 2, … in document order (a nested fragment after its parent). */
  readonly id: number;
  /** The `label` argument, when given. */
  readonly label?: string;
  /** Response keys from the root to the object the fragment is on. */
  readonly path: readonly string[];
  /** The delivery it is nested in: `0` (primary) or a fragment's id. */
  readonly parent: number;
}

/** A normalized selection set. */
export interface NSelection {
  /** Declared type of the position. */
  readonly typeName: string;
  /** True when `typeName` is an interface or union (then see `byType`). */
  readonly abstract: boolean;
  /** Fields of an object-typed position. */
  readonly fields: readonly NField[];
  /** Fields per possible concrete type, for an abstract position. */
  readonly byType: ReadonlyMap<string, readonly NField[]>;
  /**
   * Abstract positions: the fields selected on the abstract type itself (fragments on
   * members excluded), used when only the interface is known (`@interfaceObject` data).
   */
  readonly interfaceFields: readonly NField[];
}

/** A normalized operation. */
export interface NormalizedOperation {
  readonly kind: "query" | "mutation" | "subscription";
  readonly name: string | null;
  readonly rootType: string;
  readonly selection: NSelection;
  /** Printed variable types by name (`Int!`), for subgraph operations. */
  readonly variableTypes: ReadonlyMap<string, string>;
  /**
   * Printed default values by variable name (`1`), for subgraph operations: a nullable variable
   * with a default may stand where a non-null one is expected, so the default is declared too.
   */
  readonly variableDefaults: ReadonlyMap<string, string>;
  /** Incremental operations: the `@defer` fragments that apply (absent or empty: none). */
  readonly defers?: readonly DeferredFragment[];
}

/** Options for {@linkcode normalizeOperation}. */
export interface NormalizeOptions {
  /** Coerced variable values (used only to evaluate `@skip`/`@include` and `@defer(if:)`). */
  readonly variables?: Readonly<Record<string, unknown>>;
  /**
   * Honour `@defer` (the client takes incremental delivery): fragments and fields are tagged.
   * False: `@defer` is ignored and the whole answer is one part. @default false
   */
  readonly incremental?: boolean;
}

function conditionValue(value: ValueNode, variables: Readonly<Record<string, unknown>>): boolean {
  if (value.kind === Kind.BOOLEAN) return value.value;
  if (value.kind === Kind.VARIABLE) return variables[value.name.value] === true;
  return false;
}

/**
 * Evaluates `@skip`/`@include` of a node.
 * @param directives The node's directives.
 * @param variables Coerced variables.
 * @returns True when the node is included.
 */
export function isIncluded(
  directives: readonly DirectiveNode[] | undefined,
  variables: Readonly<Record<string, unknown>>,
): boolean {
  if (!directives) return true;
  for (const d of directives) {
    const ifArg = d.arguments?.find((a) => a.name.value === "if");
    if (!ifArg) continue;
    if (d.name.value === "skip" && conditionValue(ifArg.value, variables)) return false;
    if (d.name.value === "include" && !conditionValue(ifArg.value, variables)) return false;
  }
  return true;
}

/**
 * The variables that decide `@skip`/`@include`/`@defer(if:)` in a document (part of the plan
 * cache key).
 * @param document The document.
 * @returns Sorted variable names.
 */
export function conditionVariables(document: DocumentNode): string[] {
  const names = new Set<string>();
  const scan = (set: SelectionSetNode | undefined) => {
    for (const s of set?.selections ?? []) {
      for (const d of s.directives ?? []) {
        const name = d.name.value;
        if (name !== "skip" && name !== "include" && name !== "defer") continue;
        for (const a of d.arguments ?? []) {
          if (a.value.kind === Kind.VARIABLE) names.add(a.value.name.value);
        }
      }
      if (s.kind !== Kind.FRAGMENT_SPREAD) scan(s.selectionSet);
    }
  };
  for (const def of document.definitions) {
    if (def.kind === Kind.OPERATION_DEFINITION || def.kind === Kind.FRAGMENT_DEFINITION) {
      scan(def.selectionSet);
    }
  }
  return [...names].sort();
}

function compileType(type: GraphQLOutputType): TypeRef {
  if (isNonNullType(type)) return { kind: "nonNull", of: compileType(type.ofType) };
  if (isListType(type)) return { kind: "list", of: compileType(type.ofType) };
  if (isEnumType(type)) {
    return { kind: "enum", name: type.name, values: new Set(type.getValues().map((v) => v.value)) };
  }
  const named = getNamedType(type);
  if (isObjectType(named) || isAbstractType(named)) return { kind: "composite", name: named.name };
  return { kind: "scalar", name: named.name };
}

function collectVariables(node: FieldNode, out: Set<string>): void {
  for (const arg of node.arguments ?? []) collectValueVariables(arg.value, out);
}

function collectValueVariables(value: ValueNode, out: Set<string>): void {
  if (value.kind === Kind.VARIABLE) out.add(value.name.value);
  else if (value.kind === Kind.LIST) {
    for (const v of value.values) {
      collectValueVariables(v, out);
    }
  } else if (value.kind === Kind.OBJECT) {
    for (const f of value.fields) collectValueVariables(f.value, out);
  }
}

const TYPENAME_TYPE: TypeRef = { kind: "nonNull", of: { kind: "scalar", name: "String" } };

/** A selection set and the delivery its selections belong to (incremental operations). */
interface Sets {
  readonly set: SelectionSetNode;
  readonly defer: number;
}

/** A field occurrence and the delivery it belongs to. */
interface Occurrence {
  readonly node: FieldNode;
  readonly defer: number;
}

/** The `@defer` of a fragment that applies (`if` not false), or undefined. */
function deferOf(
  directives: readonly DirectiveNode[] | undefined,
  variables: Readonly<Record<string, unknown>>,
): DirectiveNode | undefined {
  const d = directives?.find((x) => x.name.value === "defer");
  if (!d) return undefined;
  const ifArg = d.arguments?.find((a) => a.name.value === "if");
  if (ifArg && !conditionValue(ifArg.value, variables)) return undefined;
  return d;
}

class Normalizer {
  readonly #schema: GraphQLSchema;
  readonly #fragments: Map<string, FragmentDefinitionNode>;
  readonly #variables: Readonly<Record<string, unknown>>;
  readonly #typeCache = new Map<GraphQLOutputType, TypeRef>();
  /** Incremental operations: the `@defer` fragments found, by fragment node and path. */
  readonly defers: DeferredFragment[] | null;
  readonly #deferIds = new Map<object, Map<string, number>>();
  /** Response keys from the root to the selection being collected. */
  readonly #path: string[] = [];

  constructor(
    schema: GraphQLSchema,
    fragments: Map<string, FragmentDefinitionNode>,
    options: { variables: Readonly<Record<string, unknown>>; incremental: boolean },
  ) {
    this.#schema = schema;
    this.#fragments = fragments;
    this.#variables = options.variables;
    this.defers = options.incremental ? [] : null;
  }

  /** The id of a `@defer` fragment at the current path (one id whatever the runtime type). */
  #deferId(node: object, directive: DirectiveNode, parent: number): number {
    let byPath = this.#deferIds.get(node);
    if (!byPath) this.#deferIds.set(node, byPath = new Map());
    const pathKey = this.#path.join("\u0000");
    const known = byPath.get(pathKey);
    if (known !== undefined) return known;
    const id = this.defers!.length + 1;
    const label = directive.arguments?.find((a) => a.name.value === "label")?.value;
    this.defers!.push({
      id,
      ...(label?.kind === Kind.STRING ? { label: label.value } : {}),
      path: [...this.#path],
      parent,
    });
    byPath.set(pathKey, id);
    return id;
  }

  /** The delivery of a fragment's selections: a new one when it is deferred. */
  #fragmentDefer(node: object, directives: readonly DirectiveNode[] | undefined, defer: number) {
    if (this.defers === null) return defer;
    const directive = deferOf(directives, this.#variables);
    return directive ? this.#deferId(node, directive, defer) : defer;
  }

  typeRef(type: GraphQLOutputType): TypeRef {
    let ref = this.#typeCache.get(type);
    if (!ref) {
      ref = compileType(type);
      this.#typeCache.set(type, ref);
    }
    return ref;
  }

  #applies(condition: string | undefined, runtime: GraphQLCompositeType): boolean {
    if (condition === undefined || condition === runtime.name) return true;
    if (!isObjectType(runtime)) return false;
    const type = this.#schema.getType(condition);
    if (type instanceof GraphQLInterfaceType || type instanceof GraphQLUnionType) {
      return this.#schema.isSubType(type, runtime);
    }
    return false;
  }

  #collect(
    sets: readonly Sets[],
    runtime: GraphQLCompositeType,
    out: Map<string, Occurrence[]>,
    visited: Set<string>,
  ): void {
    for (const { set, defer } of sets) {
      for (const s of set.selections) {
        if (!isIncluded(s.directives, this.#variables)) continue;
        if (s.kind === Kind.FIELD) {
          const key = s.alias?.value ?? s.name.value;
          const list = out.get(key);
          if (list) list.push({ node: s, defer });
          else out.set(key, [{ node: s, defer }]);
        } else if (s.kind === Kind.INLINE_FRAGMENT) {
          if (this.#applies(s.typeCondition?.name.value, runtime)) {
            const inner = this.#fragmentDefer(s, s.directives, defer);
            this.#collect([{ set: s.selectionSet, defer: inner }], runtime, out, visited);
          }
        } else {
          const name = s.name.value;
          if (visited.has(name)) continue;
          const fragment = this.#fragments.get(name);
          if (!fragment || !this.#applies(fragment.typeCondition.name.value, runtime)) continue;
          visited.add(name);
          const inner = this.#fragmentDefer(s, s.directives, defer);
          this.#collect([{ set: fragment.selectionSet, defer: inner }], runtime, out, visited);
          visited.delete(name);
        }
      }
    }
  }

  fields(sets: readonly Sets[], runtime: GraphQLCompositeType, outer = 0): NField[] {
    const grouped = new Map<string, Occurrence[]>();
    this.#collect(sets, runtime, grouped, new Set());
    const fields: NField[] = [];
    const defs: Record<string, GraphQLField<unknown, unknown>> = isUnionType(runtime)
      ? {}
      : runtime.getFields();
    const tagged = this.defers !== null;
    for (const [key, occurrences] of grouped) {
      const first = occurrences[0]!.node;
      const name = first.name.value;
      // The least deferred occurrence decides: the parent's delivery, else the first deferral.
      const defer = occurrences.some((o) => o.defer === outer)
        ? outer
        : Math.min(...occurrences.map((o) => o.defer));
      const tag = tagged ? { defer } : {};
      if (name === "__typename") {
        fields.push({
          key,
          name,
          args: "",
          variables: [],
          parentType: runtime.name,
          namedType: "String",
          type: TYPENAME_TYPE,
          selection: null,
          introspection: false,
          ...tag,
        });
        continue;
      }
      const introspection = name === "__schema" || name === "__type";
      if (introspection) {
        fields.push({
          key,
          name,
          args: "",
          variables: [],
          parentType: runtime.name,
          namedType: name === "__schema" ? "__Schema" : "__Type",
          type: { kind: "scalar" },
          selection: null,
          introspection: true,
          ...tag,
        });
        continue;
      }
      const def: GraphQLField<unknown, unknown> | undefined = defs[name];
      if (!def) continue;
      const variables = new Set<string>();
      collectVariables(first, variables);
      const args = first.arguments && first.arguments.length > 0
        ? `(${first.arguments.map((a) => `${a.name.value}:${print(a.value)}`).join(",")})`
        : "";
      const named = getNamedType(def.type);
      let selection: NSelection | null = null;
      if (isObjectType(named) || isAbstractType(named)) {
        const subSets: Sets[] = [];
        for (const o of occurrences) {
          if (o.node.selectionSet) subSets.push({ set: o.node.selectionSet, defer: o.defer });
        }
        this.#path.push(key);
        selection = this.selection(subSets, named, defer);
        this.#path.pop();
      }
      fields.push({
        key,
        name,
        args,
        variables: [...variables].sort(),
        parentType: runtime.name,
        namedType: named.name,
        type: this.typeRef(def.type),
        selection,
        introspection: false,
        ...tag,
      });
    }
    return fields;
  }

  /**
   * Incremental operations: an interface-level field takes the least deferred delivery of the
   * same field in any member's selection. The planner may plan a member's field through the
   * interface's (interface objects, interface-level selections): the fetch then serves both.
   */
  #leastDeferred(
    fields: NField[],
    byType: ReadonlyMap<string, readonly NField[]>,
    outer: number,
  ): NField[] {
    if (this.defers === null || this.defers.length === 0) return fields;
    return fields.map((f) => {
      const tags = new Set([f.defer!]);
      for (const list of byType.values()) {
        for (const m of list) {
          if (m.key === f.key && m.name === f.name && m.args === f.args) tags.add(m.defer!);
        }
      }
      const defer = tags.has(outer) ? outer : Math.min(...tags);
      return defer === f.defer ? f : { ...f, defer };
    });
  }

  selection(sets: readonly Sets[], type: GraphQLCompositeType, outer = 0): NSelection {
    if (isObjectType(type)) {
      return {
        typeName: type.name,
        abstract: false,
        fields: this.fields(sets, type, outer),
        byType: new Map(),
        interfaceFields: [],
      };
    }
    const byType = new Map<string, readonly NField[]>();
    for (const possible of this.#schema.getPossibleTypes(type)) {
      byType.set(possible.name, this.fields(sets, possible, outer));
    }
    return {
      typeName: type.name,
      abstract: true,
      fields: [],
      byType,
      interfaceFields: this.#leastDeferred(this.fields(sets, type, outer), byType, outer),
    };
  }
}

/**
 * Normalizes a validated operation against the API schema.
 *
 * @example Fragments inlined, `@skip` applied
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse } from "graphql";
 * import { normalizeOperation } from "./normalize.ts";
 * const schema = buildSchema("type Query { a: Int b: Int }");
 * const document = parse("query Q($s: Boolean!) { ...F b @skip(if: $s) } fragment F on Query { a }");
 * const op = normalizeOperation(schema, document, { variables: { s: true } });
 * assert.deepEqual(op.selection.fields.map((f) => f.key), ["a"]);
 * ```
 * Recursive over the document's nesting: callers bound it first (`prepare`
 * checks `security.parser_limits` before anything reaches this function).
 *
 * @param schema The API schema.
 * @param document The validated document.
 * @param options Variables for `@skip`/`@include`, and the operation to pick.
 * @returns The normalized operation.
 */
export function normalizeOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  options: NormalizeOptions & { readonly operation?: OperationDefinitionNode } = {},
): NormalizedOperation {
  const fragments = new Map<string, FragmentDefinitionNode>();
  let operation = options.operation;
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    else if (def.kind === Kind.OPERATION_DEFINITION && !operation) operation = def;
  }
  if (!operation) throw new TypeError("The document has no operation");
  const root = operation.operation === "mutation"
    ? schema.getMutationType()
    : operation.operation === "subscription"
    ? schema.getSubscriptionType()
    : schema.getQueryType();
  if (!root) throw new TypeError(`The schema has no ${operation.operation} type`);
  const normalizer = new Normalizer(schema, fragments, {
    variables: options.variables ?? {},
    incremental: options.incremental === true,
  });
  const variableTypes = new Map<string, string>();
  const variableDefaults = new Map<string, string>();
  for (const v of operation.variableDefinitions ?? []) {
    variableTypes.set(v.variable.name.value, print(v.type));
    if (v.defaultValue) variableDefaults.set(v.variable.name.value, print(v.defaultValue));
  }
  return {
    kind: operation.operation,
    name: operation.name?.value ?? null,
    rootType: root.name,
    selection: normalizer.selection([{ set: operation.selectionSet, defer: 0 }], root),
    variableTypes,
    variableDefaults,
    ...(normalizer.defers !== null && normalizer.defers.length > 0
      ? { defers: normalizer.defers }
      : {}),
  };
}
