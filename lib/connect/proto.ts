/**
 * The `.proto` generator: contract model + lock → `service.proto` text + the
 * next lock. Field and enum-value numbers come from the lock, so they survive
 * changes to the operations; numbers of removed (or retyped) fields are
 * reserved. Pure.
 *
 * @module
 */
import type { ContractModel, EnumModel, FieldModel, MessageModel } from "./model.ts";

/** Numbers of one message in the lock. */
export interface LockedMessage {
  /** Field name → its number and proto type (a retyped field gets a new number). */
  readonly fields: Readonly<Record<string, { readonly number: number; readonly type: string }>>;
  /** Numbers no longer used, never to be reused. */
  readonly reserved: readonly number[];
}

/** Numbers of one enum in the lock. */
export interface LockedEnum {
  /** Proto value name → number (`_UNSPECIFIED` is always 0 and not listed). */
  readonly values: Readonly<Record<string, number>>;
  readonly reserved: readonly number[];
}

/** The lock file beside the proto (`service.proto.lock.json`). */
export interface ProtoLock {
  readonly version: 1;
  /** Keyed by name relative to the package (`GetUserResponse.User`). */
  readonly messages: Readonly<Record<string, LockedMessage>>;
  readonly enums: Readonly<Record<string, LockedEnum>>;
}

/** Options for {@linkcode generateProto}. */
export interface GenerateProtoOptions {
  /** Proto package (`service.v1`). */
  readonly package: string;
  /** Service name (`GraphService`). */
  readonly service: string;
  /** The previous lock, or null on the first run. */
  readonly lock?: ProtoLock | null;
}

/** What {@linkcode generateProto} returns. */
export interface GeneratedProto {
  /** Path relative to the output folder (`service/v1/service.proto`). */
  readonly path: string;
  readonly text: string;
  /** The lock to write beside it. */
  readonly lock: ProtoLock;
}

/** File name of the lock, beside the proto. */
export const PROTO_LOCK_FILE = "service.proto.lock.json";

const WRAPPER: Readonly<Record<string, string>> = {
  string: "google.protobuf.StringValue",
  int32: "google.protobuf.Int32Value",
  double: "google.protobuf.DoubleValue",
  bool: "google.protobuf.BoolValue",
  int64: "google.protobuf.Int64Value",
};

/**
 * The proto type of a field with its label (`repeated string`,
 * `google.protobuf.StringValue`, `optional Category`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { protoFieldType } from "./proto.ts";
 * const base = { name: "n", jsonName: "n", graphqlName: "n", required: false, description: null };
 * assert.equal(
 *   protoFieldType({ ...base, type: { kind: "scalar", scalar: "string" }, repeated: false, nullable: true }),
 *   "google.protobuf.StringValue",
 * );
 * assert.equal(
 *   protoFieldType({ ...base, type: { kind: "scalar", scalar: "int32" }, repeated: true, nullable: false }),
 *   "repeated int32",
 * );
 * ```
 * @param field The field.
 * @returns The type as written in the proto.
 */
export function protoFieldType(field: FieldModel): string {
  let type: string;
  let optional = false;
  switch (field.type.kind) {
    case "scalar":
      if (field.type.scalar === "value") {
        type = "google.protobuf.Value";
      } else if (field.nullable && !field.repeated) {
        type = WRAPPER[field.type.scalar]!;
      } else {
        type = field.type.scalar;
      }
      break;
    case "enum":
      type = field.type.enum.name;
      optional = field.nullable;
      break;
    case "message":
      type = field.type.message.name;
      break;
  }
  if (field.repeated) return `repeated ${type}`;
  return optional ? `optional ${type}` : type;
}

function comment(text: string | null, indent: string): string[] {
  if (text === null || text.trim() === "") return [];
  return text.trim().split(/\r?\n/).map((line) =>
    `${indent}//${line.trim() === "" ? "" : ` ${line.trimEnd()}`}`
  );
}

interface LockBuilder {
  readonly messages: Record<string, LockedMessage>;
  readonly enums: Record<string, LockedEnum>;
}

function lockMessage(
  builder: LockBuilder,
  previous: ProtoLock | null,
  message: MessageModel,
): LockedMessage {
  const old = previous?.messages[message.fullName];
  const fields: Record<string, { number: number; type: string }> = {};
  const reserved = new Set(old?.reserved ?? []);
  let next = 1;
  for (const entry of Object.values(old?.fields ?? {})) next = Math.max(next, entry.number + 1);
  for (const number of reserved) next = Math.max(next, number + 1);
  const kept = new Set<number>();
  for (const field of message.fields) {
    const type = protoFieldType(field);
    const before = old?.fields[field.name];
    if (before !== undefined && before.type === type) {
      fields[field.name] = { number: before.number, type };
      kept.add(before.number);
    }
  }
  for (const field of message.fields) {
    if (fields[field.name] !== undefined) continue;
    if (next >= 19000 && next <= 19999) next = 20000; // reserved for the protobuf implementation
    fields[field.name] = { number: next, type: protoFieldType(field) };
    next++;
  }
  for (const entry of Object.values(old?.fields ?? {})) {
    if (!kept.has(entry.number)) reserved.add(entry.number);
  }
  const locked = { fields, reserved: [...reserved].sort((a, b) => a - b) };
  builder.messages[message.fullName] = locked;
  return locked;
}

function lockEnum(builder: LockBuilder, previous: ProtoLock | null, model: EnumModel): LockedEnum {
  const old = previous?.enums[model.name];
  const values: Record<string, number> = {};
  const reserved = new Set(old?.reserved ?? []);
  let next = 1;
  for (const number of Object.values(old?.values ?? {})) next = Math.max(next, number + 1);
  for (const number of reserved) next = Math.max(next, number + 1);
  for (const value of model.values) {
    const before = old?.values[value.proto];
    if (before !== undefined) values[value.proto] = before;
  }
  for (const value of model.values) {
    if (values[value.proto] === undefined) values[value.proto] = next++;
  }
  for (const [name, number] of Object.entries(old?.values ?? {})) {
    if (values[name] === undefined) reserved.add(number);
  }
  const locked = { values, reserved: [...reserved].sort((a, b) => a - b) };
  builder.enums[model.name] = locked;
  return locked;
}

function renderMessage(
  builder: LockBuilder,
  previous: ProtoLock | null,
  message: MessageModel,
  indent: string,
): string[] {
  const locked = lockMessage(builder, previous, message);
  const lines = [...comment(message.description, indent), `${indent}message ${message.name} {`];
  const inner = `${indent}  `;
  if (locked.reserved.length > 0) lines.push(`${inner}reserved ${locked.reserved.join(", ")};`);
  for (const nested of message.nested) {
    lines.push(...renderMessage(builder, previous, nested, inner));
  }
  for (const field of message.fields) {
    const number = locked.fields[field.name]!.number;
    lines.push(...comment(field.description, inner));
    lines.push(`${inner}${protoFieldType(field)} ${field.name} = ${number};`);
  }
  lines.push(`${indent}}`);
  return lines;
}

function renderEnum(builder: LockBuilder, previous: ProtoLock | null, model: EnumModel): string[] {
  const locked = lockEnum(builder, previous, model);
  const lines = [...comment(model.description, ""), `enum ${model.name} {`];
  if (locked.reserved.length > 0) lines.push(`  reserved ${locked.reserved.join(", ")};`);
  lines.push(`  ${model.prefix}_UNSPECIFIED = 0;`);
  for (const value of model.values) {
    lines.push(...comment(value.description, "  "));
    lines.push(`  ${value.proto} = ${locked.values[value.proto]};`);
  }
  lines.push("}");
  return lines;
}

function usesType(model: ContractModel, test: (type: string) => boolean): boolean {
  const visit = (message: MessageModel): boolean =>
    message.fields.some((field) => test(protoFieldType(field))) || message.nested.some(visit);
  return model.inputs.some(visit) ||
    model.methods.some((method) => visit(method.request) || visit(method.response));
}

function sortedRecord<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  return Object.fromEntries(
    Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

/**
 * Generates `service.proto` for the contract: proto3, the package, one service
 * with an rpc per method (queries marked `NO_SIDE_EFFECTS`, subscriptions
 * server-streaming: `returns (stream …Response)`), request/response
 * messages, input messages and enums, GraphQL descriptions as comments. Clean
 * under `buf lint` (STANDARD) when the package ends in a version (`v1`) and
 * the service name ends in `Service`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse, type OperationDefinitionNode } from "graphql";
 * import { buildContractModel } from "./model.ts";
 * import { generateProto } from "./proto.ts";
 * const schema = buildSchema("type Query { hello: String }");
 * const text = "query Hello { hello }";
 * const document = parse(text);
 * const operation = document.definitions[0] as OperationDefinitionNode;
 * const model = buildContractModel(schema, [{ name: "Hello", kind: "query", text, document, operation, description: null }]);
 * const proto = generateProto(model, { package: "service.v1", service: "GraphService" });
 * assert.equal(proto.path, "service/v1/service.proto");
 * assert.match(proto.text, /google\.protobuf\.StringValue hello = 1;/);
 * assert.deepEqual(proto.lock.messages["HelloResponse"]?.fields, { hello: { number: 1, type: "google.protobuf.StringValue" } });
 * ```
 * @param model The contract model.
 * @param options Package, service and the previous lock.
 * @returns The proto text, its relative path and the next lock.
 */
export function generateProto(model: ContractModel, options: GenerateProtoOptions): GeneratedProto {
  const previous = options.lock ?? null;
  const builder: LockBuilder = { messages: {}, enums: {} };
  const lines: string[] = [
    "// Code generated by `gw-router generate proto`. DO NOT EDIT.",
    "// Field numbers are kept in service.proto.lock.json: commit it with this file.",
    "",
    'syntax = "proto3";',
    "",
    `package ${options.package};`,
    "",
  ];
  const imports: string[] = [];
  if (
    usesType(model, (type) => /google\.protobuf\.\w+Value$/.test(type) && !type.endsWith(".Value"))
  ) {
    imports.push('import "google/protobuf/wrappers.proto";');
  }
  if (usesType(model, (type) => type.endsWith("google.protobuf.Value"))) {
    imports.push('import "google/protobuf/struct.proto";');
  }
  if (imports.length > 0) lines.push(...imports.sort(), "");
  lines.push(
    `// ${options.service} exposes the GraphQL operations of the contract as RPC methods.`,
    "// Request messages carry the operation's variables; response messages carry its data.",
    `service ${options.service} {`,
  );
  for (const method of model.methods) {
    const description = method.operation.description ??
      `The GraphQL ${method.operation.kind} ${method.operation.name}.`;
    lines.push(...comment(description, "  "));
    const returns = method.streaming ? `stream ${method.response.name}` : method.response.name;
    const signature = `  rpc ${method.name}(${method.request.name}) returns (${returns})`;
    if (method.idempotent) {
      lines.push(`${signature} {`, "    option idempotency_level = NO_SIDE_EFFECTS;", "  }");
    } else {
      lines.push(`${signature} {}`);
    }
  }
  lines.push("}");
  for (const method of model.methods) {
    lines.push("", ...renderMessage(builder, previous, method.request, ""));
    lines.push("", ...renderMessage(builder, previous, method.response, ""));
  }
  for (const input of model.inputs) lines.push("", ...renderMessage(builder, previous, input, ""));
  for (const model_ of model.enums) lines.push("", ...renderEnum(builder, previous, model_));
  // Entries of messages and enums that are gone stay: re-adding them keeps their numbers.
  const lock: ProtoLock = {
    version: 1,
    messages: sortedRecord({ ...(previous?.messages ?? {}), ...builder.messages }),
    enums: sortedRecord({ ...(previous?.enums ?? {}), ...builder.enums }),
  };
  return {
    path: `${options.package.split(".").join("/")}/service.proto`,
    text: `${lines.join("\n")}\n`,
    lock,
  };
}

/**
 * Reads a lock file's JSON, checking its shape.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseProtoLock } from "./proto.ts";
 * const lock = parseProtoLock('{"version":1,"messages":{},"enums":{}}');
 * assert.equal(lock.version, 1);
 * assert.throws(() => parseProtoLock('{"version":2}'), /lock/);
 * ```
 * @param text The file's text.
 * @returns The lock.
 * @throws {TypeError} When the text is not a version 1 lock.
 */
export function parseProtoLock(text: string): ProtoLock {
  const value: unknown = JSON.parse(text);
  if (
    typeof value !== "object" || value === null || (value as { version?: unknown }).version !== 1 ||
    typeof (value as { messages?: unknown }).messages !== "object" ||
    typeof (value as { enums?: unknown }).enums !== "object"
  ) {
    throw new TypeError("Not a version 1 proto lock (expected {version: 1, messages, enums})");
  }
  return value as ProtoLock;
}
