/**
 * The Connect contract model: each registered operation as an RPC method with
 * a request message (its variables) and a response message (its selection),
 * plus the enums and input-object messages they use. The `.proto`, the OpenAPI
 * document and the proto3 JSON codec are all derived from this one model, so
 * they cannot disagree. Pure: schema + operations in, plain data out.
 *
 * Mapping (DESIGN §3, issue 5): snake_case field names (JSON names are their
 * lowerCamelCase), nullable scalars as `google.protobuf` wrappers, lists as
 * `repeated`, enums with `<ENUM>_UNSPECIFIED = 0` and prefixed values, input
 * objects as top-level messages, object selections as nested messages named
 * after the response key. Custom scalars and lists of lists are
 * `google.protobuf.Value` (any JSON); the custom scalars `Long`, `BigInt` and
 * `Int64` are `int64` (JSON strings).
 *
 * @module
 */
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  getNamedType,
  getNullableType,
  type GraphQLCompositeType,
  GraphQLEnumType,
  type GraphQLField,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLOutputType,
  GraphQLScalarType,
  type GraphQLSchema,
  isAbstractType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  typeFromAST,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from "graphql";
import type { RegisteredOperation } from "../operations/mod.ts";
import { jsonName, pascalCase, snakeCase, upperSnakeCase } from "./naming.ts";

export { jsonName, pascalCase, snakeCase, upperSnakeCase } from "./naming.ts";

/** Proto scalar kinds used by the mapping. */
export type ScalarKind = "string" | "int32" | "double" | "bool" | "int64" | "value";

/** One enum, shared by all methods. */
export interface EnumModel {
  /** Proto and GraphQL name (`Category`). */
  readonly name: string;
  /** `CATEGORY`: prefix of every value. */
  readonly prefix: string;
  readonly description: string | null;
  readonly values: readonly EnumValueModel[];
}

/** One enum value. */
export interface EnumValueModel {
  /** GraphQL name (`FURNITURE`). */
  readonly graphql: string;
  /** Proto name (`CATEGORY_FURNITURE`). */
  readonly proto: string;
  readonly description: string | null;
}

/** The type of a field. */
export type FieldType =
  | { readonly kind: "scalar"; readonly scalar: ScalarKind }
  | { readonly kind: "enum"; readonly enum: EnumModel }
  | { readonly kind: "message"; readonly message: MessageModel };

/** One field of a message. */
export interface FieldModel {
  /** Proto field name, lower_snake_case (`max_price`). */
  readonly name: string;
  /** Proto3 JSON name, lowerCamelCase (`maxPrice`). */
  readonly jsonName: string;
  /** Variable name, input field name or response key on the GraphQL side. */
  readonly graphqlName: string;
  readonly type: FieldType;
  readonly repeated: boolean;
  /** The value may be null or absent (wrapper types for scalars, `optional` for enums). */
  readonly nullable: boolean;
  /** Request side: must be sent (non-null without a default). */
  readonly required: boolean;
  readonly description: string | null;
}

/** One message. */
export interface MessageModel {
  /** Simple proto name (`User`). */
  readonly name: string;
  /** Name relative to the package (`GetUserResponse.User`): the lock key. */
  readonly fullName: string;
  readonly description: string | null;
  readonly fields: readonly FieldModel[];
  /** Messages declared inside this one (response selections). */
  readonly nested: readonly MessageModel[];
  /** Fields by JSON name, proto name and GraphQL name (what requests may use). */
  readonly lookup: ReadonlyMap<string, FieldModel>;
}

/** One RPC method. */
export interface MethodModel {
  /** RPC name: the operation name in PascalCase (`GetUser`). */
  readonly name: string;
  readonly operation: ContractOperation;
  /** Queries have no side effects: GET allowed, `NO_SIDE_EFFECTS`. */
  readonly idempotent: boolean;
  /**
   * Subscriptions are server-streaming methods (`returns (stream …)`): one
   * response message per event, over `application/connect+json` (POST only).
   */
  readonly streaming: boolean;
  readonly request: MessageModel;
  readonly response: MessageModel;
}

/** The whole contract. */
export interface ContractModel {
  readonly methods: readonly MethodModel[];
  /** Methods by RPC name. */
  readonly byName: ReadonlyMap<string, MethodModel>;
  /** Enums used by any method, sorted by name. */
  readonly enums: readonly EnumModel[];
  /** Input-object messages used by any method, sorted by name. */
  readonly inputs: readonly MessageModel[];
  /** Operations left out, with why (name clashes, types the mapping cannot express). */
  readonly skipped: readonly { readonly name: string; readonly reason: string }[];
}

/** What the model needs of a registered operation. */
export type ContractOperation = Pick<
  RegisteredOperation,
  "name" | "kind" | "text" | "document" | "operation" | "description"
>;

const INT64_SCALARS: ReadonlySet<string> = new Set(["Long", "BigInt", "Int64"]);

function scalarKind(type: GraphQLScalarType): ScalarKind {
  switch (type.name) {
    case "String":
    case "ID":
      return "string";
    case "Int":
      return "int32";
    case "Float":
      return "double";
    case "Boolean":
      return "bool";
    default:
      return INT64_SCALARS.has(type.name) ? "int64" : "value";
  }
}

interface Builder {
  readonly schema: GraphQLSchema;
  readonly enums: Map<string, EnumModel>;
  readonly inputs: Map<string, MessageModel>;
}

function indexFields(fields: readonly FieldModel[], lookup: Map<string, FieldModel>): void {
  for (const field of fields) {
    for (const key of [field.graphqlName, field.name, field.jsonName]) lookup.set(key, field);
  }
}

function messageOf(
  spec: Omit<MessageModel, "lookup">,
): MessageModel {
  const lookup = new Map<string, FieldModel>();
  indexFields(spec.fields, lookup);
  return { ...spec, lookup };
}

function enumModel(builder: Builder, type: GraphQLEnumType): EnumModel {
  const known = builder.enums.get(type.name);
  if (known !== undefined) return known;
  const prefix = upperSnakeCase(type.name);
  const zero = `${prefix}_UNSPECIFIED`;
  const values = type.getValues().map((value) => {
    let proto = `${prefix}_${upperSnakeCase(value.name)}`;
    if (proto === zero) proto = `${proto}_VALUE`;
    return { graphql: value.name, proto, description: value.description ?? null };
  });
  const model = { name: type.name, prefix, description: type.description ?? null, values };
  builder.enums.set(type.name, model);
  return model;
}

/** Unwraps `[T!]!`-like types: outer nullability, list, item. */
interface Shape<T> {
  readonly nullable: boolean;
  readonly repeated: boolean;
  /** A list of lists: mapped to `google.protobuf.Value`. */
  readonly deep: boolean;
  readonly named: T;
}

function shapeOf<T>(type: GraphQLInputType | GraphQLOutputType, named: T): Shape<T> {
  const nullable = !isNonNullType(type);
  const inner = getNullableType(type);
  if (!isListType(inner)) return { nullable, repeated: false, deep: false, named };
  const item = getNullableType(inner.ofType);
  return { nullable, repeated: true, deep: isListType(item), named };
}

function inputFieldType(builder: Builder, type: GraphQLInputType): FieldType {
  const named = getNamedType(type);
  if (isEnumType(named)) return { kind: "enum", enum: enumModel(builder, named) };
  if (isInputObjectType(named)) return { kind: "message", message: inputMessage(builder, named) };
  return { kind: "scalar", scalar: scalarKind(named as GraphQLScalarType) };
}

function inputMessage(builder: Builder, type: GraphQLInputObjectType): MessageModel {
  const known = builder.inputs.get(type.name);
  if (known !== undefined) return known;
  const fields: FieldModel[] = [];
  const lookup = new Map<string, FieldModel>();
  const model: MessageModel = {
    name: type.name,
    fullName: type.name,
    description: type.description ?? null,
    fields,
    nested: [],
    lookup,
  };
  builder.inputs.set(type.name, model); // before the fields: input types may recurse
  for (const field of Object.values(type.getFields())) {
    fields.push(inputField(builder, field.name, field.type, {
      hasDefault: field.defaultValue !== undefined,
      description: field.description ?? null,
    }));
  }
  indexFields(fields, lookup);
  return model;
}

function inputField(
  builder: Builder,
  graphqlName: string,
  type: GraphQLInputType,
  options: { readonly hasDefault: boolean; readonly description: string | null },
): FieldModel {
  const shape = shapeOf(type, null);
  const name = snakeCase(graphqlName);
  const fieldType: FieldType = shape.deep
    ? { kind: "scalar", scalar: "value" }
    : inputFieldType(builder, type);
  return {
    name,
    jsonName: jsonName(name),
    graphqlName,
    type: fieldType,
    repeated: shape.repeated && !shape.deep,
    // A default makes the field optional on the wire: absent means "use the default".
    nullable: shape.nullable || options.hasDefault,
    required: !shape.nullable && !options.hasDefault,
    description: options.description,
  };
}

/** One response key's merged selections. */
interface KeyGroup {
  readonly key: string;
  readonly field: GraphQLField<unknown, unknown> | null;
  /** Under a narrower type condition, or `@skip`/`@include`: may be absent. */
  conditional: boolean;
  readonly selections: SelectionSetNode[];
}

function collectFields(
  context: {
    readonly schema: GraphQLSchema;
    readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  },
  parent: GraphQLCompositeType,
  selectionSet: SelectionSetNode,
  groups: Map<string, KeyGroup>,
  conditional: boolean,
): void {
  for (const selection of selectionSet.selections) {
    const directed = conditional ||
      (selection.directives ?? []).some((directive) =>
        directive.name.value === "skip" || directive.name.value === "include"
      );
    if (selection.kind === Kind.FIELD) {
      addField(parent, selection, groups, directed);
      continue;
    }
    const fragment = selection.kind === Kind.INLINE_FRAGMENT
      ? selection
      : context.fragments.get(selection.name.value);
    if (fragment === undefined) continue;
    const condition = fragment.typeCondition === undefined
      ? parent
      : context.schema.getType(fragment.typeCondition.name.value);
    if (condition === undefined || condition === null || !isCompositeType(condition)) continue;
    // A fragment applies always when its condition is the parent type or an abstract type
    // the (object) parent belongs to; else only for some runtime types.
    const always = condition === parent ||
      (isObjectType(parent) && isAbstractType(condition) &&
        context.schema.isSubType(condition, parent));
    collectFields(context, condition, fragment.selectionSet, groups, directed || !always);
  }
}

function addField(
  parent: GraphQLCompositeType,
  node: FieldNode,
  groups: Map<string, KeyGroup>,
  conditional: boolean,
): void {
  const key = node.alias?.value ?? node.name.value;
  const field = node.name.value === "__typename" || isUnionType(parent)
    ? null
    : parent.getFields()[node.name.value] ?? null;
  let group = groups.get(key);
  if (group === undefined) {
    group = { key, field, conditional, selections: [] };
    groups.set(key, group);
  } else if (!conditional) {
    group.conditional = false;
  }
  if (node.selectionSet !== undefined) group.selections.push(node.selectionSet);
}

function responseMessage(
  context: {
    readonly builder: Builder;
    readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  },
  spec: {
    readonly name: string;
    readonly fullName: string;
    readonly description: string | null;
    readonly parent: GraphQLCompositeType;
    readonly selections: readonly SelectionSetNode[];
  },
): MessageModel {
  const { builder } = context;
  const groups = new Map<string, KeyGroup>();
  const collectContext = { schema: builder.schema, fragments: context.fragments };
  for (const selectionSet of spec.selections) {
    collectFields(collectContext, spec.parent, selectionSet, groups, false);
  }
  const fields: FieldModel[] = [];
  const nested: MessageModel[] = [];
  const nestedNames = new Set<string>();
  for (const group of groups.values()) {
    const name = snakeCase(group.key);
    const base = {
      name,
      jsonName: jsonName(name),
      graphqlName: group.key,
      required: false,
    };
    if (group.field === null) { // __typename
      fields.push({
        ...base,
        type: { kind: "scalar", scalar: "string" },
        repeated: false,
        nullable: group.conditional,
        description: "The GraphQL type name of the object.",
      });
      continue;
    }
    const shape = shapeOf(group.field.type, null);
    const named = getNamedType(group.field.type);
    const description = group.field.description ?? null;
    const nullable = shape.nullable || group.conditional;
    if (shape.deep) {
      fields.push({
        ...base,
        type: { kind: "scalar", scalar: "value" },
        repeated: false,
        nullable,
        description,
      });
    } else if (isEnumType(named)) {
      fields.push({
        ...base,
        type: { kind: "enum", enum: enumModel(builder, named) },
        repeated: shape.repeated,
        nullable,
        description,
      });
    } else if (isScalarType(named)) {
      fields.push({
        ...base,
        type: { kind: "scalar", scalar: scalarKind(named) },
        repeated: shape.repeated,
        nullable,
        description,
      });
    } else {
      let messageName = pascalCase(group.key);
      while (
        builder.enums.has(messageName) ||
        builder.schema.getType(messageName) instanceof GraphQLEnumType ||
        nestedNames.has(messageName)
      ) {
        messageName = `${messageName}Result`;
      }
      nestedNames.add(messageName);
      const message = responseMessage(context, {
        name: messageName,
        fullName: `${spec.fullName}.${messageName}`,
        description: named.description ?? null,
        parent: named as GraphQLCompositeType,
        selections: group.selections,
      });
      nested.push(message);
      fields.push({
        ...base,
        type: { kind: "message", message },
        repeated: shape.repeated,
        nullable,
        description,
      });
    }
  }
  return messageOf({
    name: spec.name,
    fullName: spec.fullName,
    description: spec.description,
    fields,
    nested,
  });
}

/**
 * Descriptions of the arguments (and input fields) each variable is passed to,
 * first use wins: a variable without its own description borrows them.
 */
function variableDescriptions(schema: GraphQLSchema, document: DocumentNode): Map<string, string> {
  const found = new Map<string, string>();
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Argument(node) {
        const description = typeInfo.getArgument()?.description;
        if (node.value.kind === Kind.VARIABLE && description) {
          if (!found.has(node.value.name.value)) found.set(node.value.name.value, description);
        }
      },
      ObjectField(node) {
        const parent = typeInfo.getParentInputType();
        if (node.value.kind !== Kind.VARIABLE || !isInputObjectType(parent)) return;
        const description = parent.getFields()[node.name.value]?.description;
        if (description && !found.has(node.value.name.value)) {
          found.set(node.value.name.value, description);
        }
      },
    }),
  );
  return found;
}

function methodModel(builder: Builder, operation: ContractOperation, name: string): MethodModel {
  const definition: OperationDefinitionNode = operation.operation;
  const borrowed = variableDescriptions(builder.schema, operation.document);
  const requestFields: FieldModel[] = [];
  for (const variable of definition.variableDefinitions ?? []) {
    const type = typeFromAST(builder.schema, variable.type) as GraphQLInputType | undefined;
    if (type === undefined) {
      throw new TypeError(`Unknown type of variable "$${variable.variable.name.value}"`);
    }
    requestFields.push(inputField(builder, variable.variable.name.value, type, {
      hasDefault: variable.defaultValue !== undefined,
      description: variable.description?.value ?? borrowed.get(variable.variable.name.value) ??
        null,
    }));
  }
  const root = definition.operation === "mutation"
    ? builder.schema.getMutationType()
    : definition.operation === "subscription"
    ? builder.schema.getSubscriptionType()
    : builder.schema.getQueryType();
  if (root === null || root === undefined) {
    throw new TypeError(`The schema has no ${definition.operation} type`);
  }
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const node of operation.document.definitions) {
    if (node.kind === Kind.FRAGMENT_DEFINITION) fragments.set(node.name.value, node);
  }
  const responseName = `${name}Response`;
  return {
    name,
    operation,
    idempotent: operation.kind === "query",
    streaming: operation.kind === "subscription",
    request: messageOf({
      name: `${name}Request`,
      fullName: `${name}Request`,
      description: null,
      fields: requestFields,
      nested: [],
    }),
    response: responseMessage({ builder, fragments }, {
      name: responseName,
      fullName: responseName,
      description: null,
      parent: root,
      selections: [definition.selectionSet],
    }),
  };
}

/**
 * Builds the contract model of the operations against the API schema.
 * Queries and mutations are unary methods, subscriptions server-streaming
 * ones; operations whose RPC name clashes with an earlier one are skipped,
 * with a reason.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse } from "graphql";
 * import { buildContractModel } from "./model.ts";
 * const schema = buildSchema("type Query { hello(name: String): String }");
 * const text = "query Hello($name: String) { hello(name: $name) }";
 * const document = parse(text);
 * const operation = document.definitions[0] as import("graphql").OperationDefinitionNode;
 * const model = buildContractModel(schema, [
 *   { name: "Hello", kind: "query", text, document, operation, description: null },
 * ]);
 * assert.equal(model.methods[0]?.request.fields[0]?.jsonName, "name");
 * assert.equal(model.methods[0]?.response.fields[0]?.nullable, true);
 * ```
 * @param schema The API schema.
 * @param operations The registered operations, in registry order.
 * @returns The model.
 */
export function buildContractModel(
  schema: GraphQLSchema,
  operations: readonly ContractOperation[],
): ContractModel {
  const builder: Builder = { schema, enums: new Map(), inputs: new Map() };
  const methods: MethodModel[] = [];
  const byName = new Map<string, MethodModel>();
  const skipped: { name: string; reason: string }[] = [];
  for (const operation of operations) {
    const name = pascalCase(operation.name);
    if (byName.has(name)) {
      skipped.push({ name: operation.name, reason: `RPC name "${name}" is already taken` });
      continue;
    }
    try {
      const method = methodModel(builder, operation, name);
      methods.push(method);
      byName.set(name, method);
    } catch (error) {
      skipped.push({ name: operation.name, reason: (error as Error).message });
    }
  }
  const byNameOrder = (a: { name: string }, b: { name: string }) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  return {
    methods,
    byName,
    enums: [...builder.enums.values()].sort(byNameOrder),
    inputs: [...builder.inputs.values()].sort(byNameOrder),
    skipped,
  };
}
