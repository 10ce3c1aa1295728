/**
 * JSON Schema of an operation's variables, and a small validator for exactly
 * the subset this module emits (`type`, `enum`, `properties`, `required`,
 * `additionalProperties`, `items`). Pure: schema in, data out.
 *
 * @module
 */
import { clipForMessage } from "../errors.ts";
import {
  type GraphQLInputType,
  type GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type OperationDefinitionNode,
  typeFromAST,
} from "graphql";

/** A JSON Schema value (the subset emitted here). */
export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly enum?: readonly (string | null)[];
  readonly items?: JsonSchema;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean;
}

/** Input objects nested deeper than this become a plain `{ type: "object" }`. */
const MAX_DEPTH = 16;

function withNull(type: string | readonly string[] | undefined): string | readonly string[] {
  if (type === undefined) return ["null"];
  return typeof type === "string" ? [type, "null"] : [...type, "null"];
}

function nullable(schema: JsonSchema): JsonSchema {
  if (schema.type === undefined) return schema; // custom scalar: anything goes, null included
  const out: Record<string, unknown> = { ...schema, type: withNull(schema.type) };
  if (schema.enum) out.enum = [...schema.enum, null];
  return out as JsonSchema;
}

function scalarSchema(name: string, description: string | null | undefined): JsonSchema {
  const base: Record<string, unknown> = {};
  let builtIn = true;
  switch (name) {
    case "Int":
      base.type = "integer";
      break;
    case "Float":
      base.type = "number";
      break;
    case "String":
    case "ID":
      base.type = name === "ID" ? ["string", "integer"] : "string";
      break;
    case "Boolean":
      base.type = "boolean";
      break;
    default:
      builtIn = false;
  }
  if (description && !builtIn) base.description = description;
  return base as JsonSchema;
}

function typeSchema(type: GraphQLInputType, depth: number, seen: ReadonlySet<string>): JsonSchema {
  if (isNonNullType(type)) return innerSchema(type.ofType, depth, seen);
  return nullable(innerSchema(type, depth, seen));
}

function innerSchema(type: GraphQLInputType, depth: number, seen: ReadonlySet<string>): JsonSchema {
  if (isNonNullType(type)) return innerSchema(type.ofType, depth, seen);
  if (isListType(type)) return { type: "array", items: typeSchema(type.ofType, depth, seen) };
  if (isEnumType(type)) {
    const out: Record<string, unknown> = {
      type: "string",
      enum: type.getValues().map((value) => value.name),
    };
    if (type.description) out.description = type.description;
    return out as JsonSchema;
  }
  if (isScalarType(type)) return scalarSchema(type.name, type.description);
  if (isInputObjectType(type)) {
    if (depth >= MAX_DEPTH || seen.has(type.name)) return { type: "object" };
    const inner = new Set(seen).add(type.name);
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const field of Object.values(type.getFields())) {
      const schema = typeSchema(field.type, depth + 1, inner);
      properties[field.name] = field.description
        ? { ...schema, description: field.description }
        : schema;
      if (isNonNullType(field.type) && field.defaultValue === undefined) required.push(field.name);
    }
    const out: Record<string, unknown> = { type: "object", properties };
    if (required.length > 0) out.required = required;
    out.additionalProperties = false;
    if (type.description) out.description = type.description;
    return out as JsonSchema;
  }
  return {};
}

/**
 * Derives the JSON Schema of an operation's variables: nullable types become
 * `["t", "null"]`, enums list their values, input objects nest with
 * `additionalProperties: false`, and `required` lists the non-null variables
 * without a default. A variable whose type is unknown to the schema accepts anything.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse, type OperationDefinitionNode } from "graphql";
 * import { variablesJsonSchema } from "./json_schema.ts";
 * const schema = buildSchema("type Query { user(id: ID!, n: Int): String }");
 * const doc = parse("query GetUser($id: ID!, $n: Int) { user(id: $id, n: $n) }");
 * const op = doc.definitions[0] as OperationDefinitionNode;
 * assert.deepEqual(variablesJsonSchema(op, schema), {
 *   type: "object",
 *   properties: { id: { type: ["string", "integer"] }, n: { type: ["integer", "null"] } },
 *   required: ["id"],
 *   additionalProperties: false,
 * });
 * ```
 * @param operation The operation definition.
 * @param schema The API schema.
 * @returns An object schema over the variables.
 */
export function variablesJsonSchema(
  operation: OperationDefinitionNode,
  schema: GraphQLSchema,
): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    properties[name] = type === undefined ? {} : typeSchema(type, 0, new Set());
    if (definition.type.kind === "NonNullType" && definition.defaultValue === undefined) {
      required.push(name);
    }
  }
  const out: Record<string, unknown> = { type: "object", properties };
  if (required.length > 0) out.required = required;
  out.additionalProperties = false;
  return out as JsonSchema;
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function matchesType(value: unknown, type: string | readonly string[]): boolean {
  const actual = typeOf(value);
  const types = typeof type === "string" ? [type] : type;
  return types.includes(actual) || (actual === "integer" && types.includes("number"));
}

function describeType(type: string | readonly string[]): string {
  return typeof type === "string" ? type : type.join(" or ");
}

function validateAt(value: unknown, schema: JsonSchema, path: string): string | null {
  const where = path === "" ? "arguments" : `argument "${path}"`;
  if (schema.type !== undefined && !matchesType(value, schema.type)) {
    return `Invalid ${where}: expected ${describeType(schema.type)}, got ${typeOf(value)}`;
  }
  if (schema.enum !== undefined && !schema.enum.includes(value as string | null)) {
    return `Invalid ${where}: expected one of ${
      schema.enum.map((v) => JSON.stringify(v)).join(", ")
    }`;
  }
  if (Array.isArray(value) && schema.items) {
    for (let i = 0; i < value.length; i++) {
      const error = validateAt(value[i], schema.items, `${path}[${i}]`);
      if (error) return error;
    }
  }
  if (typeOf(value) === "object" && (schema.properties || schema.required)) {
    const record = value as Record<string, unknown>;
    const prefix = path === "" ? "" : `${path}.`;
    // Own members only: `record.toString` or `properties.constructor` would find
    // Object.prototype's, so an unknown argument of that name passed and a missing one was present.
    for (const name of schema.required ?? []) {
      if (!Object.hasOwn(record, name) || record[name] === undefined) {
        return `Missing required argument "${prefix}${name}"`;
      }
    }
    for (const [name, field] of Object.entries(record)) {
      const properties = schema.properties;
      const fieldSchema = properties !== undefined && Object.hasOwn(properties, name)
        ? properties[name]
        : undefined;
      if (fieldSchema === undefined) {
        if (schema.additionalProperties === false) {
          return `Unknown argument "${clipForMessage(prefix + name)}"`;
        }
        continue;
      }
      if (field === undefined) continue;
      const error = validateAt(field, fieldSchema, `${prefix}${name}`);
      if (error) return error;
    }
  }
  return null;
}

/**
 * Validates tool arguments against a schema from {@linkcode variablesJsonSchema}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateArguments } from "./json_schema.ts";
 * const schema = { type: "object", properties: { id: { type: "string" } }, required: ["id"] };
 * assert.equal(validateArguments({ id: "1" }, schema), null);
 * assert.equal(validateArguments({ id: 1 }, schema), 'Invalid argument "id": expected string, got integer');
 * assert.equal(validateArguments({}, schema), 'Missing required argument "id"');
 * ```
 * @param value The arguments object.
 * @param schema The schema.
 * @returns Null when valid, else a message naming the field.
 */
export function validateArguments(value: unknown, schema: JsonSchema): string | null {
  return validateAt(value, schema, "");
}
