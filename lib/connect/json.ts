/**
 * Proto3 JSON mapping between Connect messages and GraphQL values, driven by
 * the contract model: request messages → GraphQL variables, GraphQL `data` →
 * response messages. Pure.
 *
 * Requests accept each field under its JSON name (`maxPrice`), its proto name
 * (`max_price`) or its GraphQL name; `null` means "not set"; enum values by
 * proto name (`CATEGORY_FURNITURE`, or the GraphQL name); 32-bit integers and
 * doubles as numbers or decimal strings, int64 as either. A required scalar or
 * list that is absent gets its proto3 default (`""`, `0`, `false`, `[]`), as
 * proto3 senders omit defaults. Responses use JSON names, enums as proto
 * names, int64 as strings, and `null` for GraphQL nulls.
 *
 * @module
 */
import type { EnumModel, FieldModel, FieldType, MessageModel } from "./model.ts";
import { clipForMessage } from "../errors.ts";

/** A request message that does not fit its message type. */
export class MessageDecodeError extends Error {
  /** Dotted path of the offending field (JSON names), or `""` for the whole message. */
  readonly path: string;

  /**
   * @param path The field path.
   * @param message What is wrong.
   */
  constructor(path: string, message: string) {
    super(message);
    this.name = "MessageDecodeError";
    this.path = path;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}

function decodeEnum(model: EnumModel, value: unknown, path: string): string | undefined {
  if (typeof value === "string") {
    if (value === `${model.prefix}_UNSPECIFIED`) return undefined;
    const found = model.values.find((entry) => entry.proto === value || entry.graphql === value);
    if (found !== undefined) return found.graphql;
  }
  if (value === 0) return undefined;
  throw new MessageDecodeError(
    path,
    `Field "${path}" expects a ${model.name} value (${
      model.values.map((entry) => entry.proto).join(", ")
    }), got ${describe(value)}`,
  );
}

function decodeNumber(value: unknown, path: string, kind: "int32" | "double" | "int64"): unknown {
  let number: number;
  if (typeof value === "number") {
    number = value;
  } else if (
    // As protobuf-es reads proto3 JSON: no surrounding whitespace (Number(" 12") is 12, and
    // a proxy or firewall checking the field as the spec reads it would see another value).
    typeof value === "string" && value !== "" && value.trim() === value &&
    !Number.isNaN(Number(value))
  ) {
    number = Number(value);
  } else if (
    kind === "double" && (value === "NaN" || value === "Infinity" || value === "-Infinity")
  ) {
    number = Number(value);
  } else {
    const expected = kind === "double" ? "a number" : "an integer";
    throw new MessageDecodeError(
      path,
      `Field "${path}" expects ${expected}, got ${describe(value)}`,
    );
  }
  if (kind === "double") return number;
  if (!Number.isInteger(number)) {
    throw new MessageDecodeError(
      path,
      `Field "${path}" expects an integer, got ${describe(value)}`,
    );
  }
  if (kind === "int32" && (number < -2147483648 || number > 2147483647)) {
    throw new MessageDecodeError(path, `Field "${path}" is out of the int32 range`);
  }
  if (kind === "int64" && !Number.isSafeInteger(number) && typeof value === "string") return value;
  return number;
}

function decodeSingle(type: FieldType, value: unknown, path: string): unknown {
  switch (type.kind) {
    case "enum":
      return decodeEnum(type.enum, value, path);
    case "message":
      if (!isObject(value)) {
        throw new MessageDecodeError(
          path,
          `Field "${path}" expects a ${type.message.name} object, got ${describe(value)}`,
        );
      }
      return decodeMessageAt(type.message, value, path);
    case "scalar":
      switch (type.scalar) {
        case "string":
          if (typeof value === "string") return value;
          throw new MessageDecodeError(
            path,
            `Field "${path}" expects a string, got ${describe(value)}`,
          );
        case "bool":
          if (typeof value === "boolean") return value;
          throw new MessageDecodeError(
            path,
            `Field "${path}" expects a boolean, got ${describe(value)}`,
          );
        case "value":
          return value;
        default:
          return decodeNumber(value, path, type.scalar);
      }
  }
}

function defaultOf(field: FieldModel): unknown {
  if (field.repeated) return [];
  if (field.type.kind !== "scalar") return undefined;
  switch (field.type.scalar) {
    case "string":
      return "";
    case "bool":
      return false;
    case "value":
      return undefined;
    default:
      return 0;
  }
}

function decodeMessageAt(
  message: MessageModel,
  json: Record<string, unknown>,
  prefix: string,
): Record<string, unknown> {
  const index = message.lookup;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) {
    const field = index.get(key);
    const path = prefix === "" ? key : `${prefix}.${key}`;
    if (field === undefined) {
      const shown = clipForMessage(path);
      throw new MessageDecodeError(shown, `Unknown field "${shown}" in message ${message.name}`);
    }
    if (field.graphqlName in out) {
      throw new MessageDecodeError(path, `Field "${path}" is set twice in message ${message.name}`);
    }
    if (
      value === null &&
      !(field.type.kind === "scalar" && field.type.scalar === "value" && !field.repeated)
    ) {
      continue; // proto3 JSON: null means "not set"
    }
    let decoded: unknown;
    if (field.repeated) {
      if (!Array.isArray(value)) {
        throw new MessageDecodeError(
          path,
          `Field "${path}" expects an array, got ${describe(value)}`,
        );
      }
      decoded = value.map((item, i) => decodeSingle(field.type, item, `${path}[${i}]`));
    } else {
      decoded = decodeSingle(field.type, value, path);
    }
    if (decoded !== undefined) out[field.graphqlName] = decoded;
  }
  for (const field of message.fields) {
    if (field.required && !(field.graphqlName in out)) {
      const fallback = defaultOf(field);
      if (fallback !== undefined) out[field.graphqlName] = fallback;
    }
  }
  return out;
}

/**
 * Decodes a request message (parsed JSON) into GraphQL variables.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse, type OperationDefinitionNode } from "graphql";
 * import { buildContractModel } from "./model.ts";
 * import { decodeRequestMessage } from "./json.ts";
 * const schema = buildSchema("enum Color { DARK_RED }\ntype Query { paint(color: Color!, maxCoats: Int): Int }");
 * const text = "query Paint($color: Color!, $maxCoats: Int) { paint(color: $color, maxCoats: $maxCoats) }";
 * const document = parse(text);
 * const operation = document.definitions[0] as OperationDefinitionNode;
 * const model = buildContractModel(schema, [{ name: "Paint", kind: "query", text, document, operation, description: null }]);
 * const request = model.methods[0]!.request;
 * assert.deepEqual(decodeRequestMessage(request, { color: "COLOR_DARK_RED", max_coats: "2" }), {
 *   color: "DARK_RED",
 *   maxCoats: 2,
 * });
 * ```
 * @param message The request message model.
 * @param json The parsed JSON.
 * @returns The variables.
 * @throws {MessageDecodeError} When the JSON does not fit the message.
 */
export function decodeRequestMessage(
  message: MessageModel,
  json: unknown,
): Record<string, unknown> {
  if (!isObject(json)) {
    throw new MessageDecodeError(
      "",
      `The request message must be a JSON object, got ${describe(json)}`,
    );
  }
  return decodeMessageAt(message, json, "");
}

function encodeSingle(type: FieldType, value: unknown): unknown {
  switch (type.kind) {
    case "enum": {
      const found = type.enum.values.find((entry) => entry.graphql === value);
      return found === undefined ? `${type.enum.prefix}_UNSPECIFIED` : found.proto;
    }
    case "message":
      return typeof value === "object" && value !== null && !Array.isArray(value)
        ? encodeResponseMessage(type.message, value as Record<string, unknown>)
        : {};
    case "scalar":
      if (type.scalar === "int64" && (typeof value === "number" || typeof value === "bigint")) {
        return String(value);
      }
      return value;
  }
}

function zeroOf(type: FieldType): unknown {
  switch (type.kind) {
    case "enum":
      return `${type.enum.prefix}_UNSPECIFIED`;
    case "message":
      return {};
    case "scalar":
      switch (type.scalar) {
        case "string":
          return "";
        case "bool":
          return false;
        case "int64":
          return "0";
        case "value":
          return null;
        default:
          return 0;
      }
  }
}

/**
 * Encodes GraphQL `data` (or a nested object of it) as a response message:
 * JSON names, enum proto names, int64 strings; GraphQL nulls stay `null`, and
 * null items of lists become the item type's zero value (proto lists have no nulls).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse, type OperationDefinitionNode } from "graphql";
 * import { buildContractModel } from "./model.ts";
 * import { encodeResponseMessage } from "./json.ts";
 * const schema = buildSchema("enum Color { DARK_RED }\ntype Query { topColor: Color! }");
 * const text = "query Top { top_color: topColor }";
 * const document = parse(text);
 * const operation = document.definitions[0] as OperationDefinitionNode;
 * const model = buildContractModel(schema, [{ name: "Top", kind: "query", text, document, operation, description: null }]);
 * assert.deepEqual(encodeResponseMessage(model.methods[0]!.response, { top_color: "DARK_RED" }), {
 *   topColor: "COLOR_DARK_RED",
 * });
 * ```
 * @param message The response message model.
 * @param data The GraphQL object.
 * @returns The proto3 JSON object.
 */
export function encodeResponseMessage(
  message: MessageModel,
  data: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of message.fields) {
    if (!Object.hasOwn(data, field.graphqlName)) continue;
    const value = data[field.graphqlName];
    if (value === null || value === undefined) {
      out[field.jsonName] = null;
    } else if (field.repeated && Array.isArray(value)) {
      out[field.jsonName] = value.map((item) =>
        item === null || item === undefined ? zeroOf(field.type) : encodeSingle(field.type, item)
      );
    } else {
      out[field.jsonName] = encodeSingle(field.type, value);
    }
  }
  return out;
}
