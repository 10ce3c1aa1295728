/**
 * The OpenAPI 3.1 generator: the Connect methods as HTTP operations (POST for
 * every method, GET with `connect`, `encoding`, `message` for queries,
 * `application/connect+json` streams for subscriptions), their
 * request/response schemas in proto3 JSON form and the Connect error schema.
 * Pure: contract model in, document object out.
 *
 * @module
 */
import type { ConnectCode } from "./errors.ts";
import { CONNECT_HTTP_STATUS } from "./errors.ts";
import type { ContractModel, EnumModel, FieldModel, MessageModel, MethodModel } from "./model.ts";

/** Options for {@linkcode generateOpenApi}. */
export interface GenerateOpenApiOptions {
  /** Proto package (`service.v1`). */
  readonly package: string;
  /** Service name (`GraphService`). */
  readonly service: string;
  /** API version shown in `info.version`. */
  readonly version: string;
  /** Base URL of the router (`http://localhost:3002`). */
  readonly serverUrl: string;
  /** Whether bearer tokens are accepted (authentication configured). */
  readonly bearerAuth?: boolean;
}

/** A JSON object (an OpenAPI document or part of one). */
export type JsonObject = { [key: string]: unknown };

const REF = "#/components/schemas/";

function scalarSchema(scalar: string): JsonObject {
  switch (scalar) {
    case "string":
      return { type: "string" };
    case "int32":
      return { type: "integer", format: "int32" };
    case "double":
      return { type: "number", format: "double" };
    case "bool":
      return { type: "boolean" };
    case "int64":
      return { type: ["string", "integer"], format: "int64" };
    default:
      return { description: "Any JSON value." };
  }
}

function itemSchema(field: FieldModel): JsonObject {
  switch (field.type.kind) {
    case "scalar":
      return scalarSchema(field.type.scalar);
    case "enum":
      return { $ref: `${REF}${field.type.enum.name}` };
    case "message":
      return { $ref: `${REF}${field.type.message.fullName}` };
  }
}

function nullableOf(schema: JsonObject): JsonObject {
  if (typeof schema.$ref === "string") return { oneOf: [schema, { type: "null" }] };
  if (typeof schema.type === "string") return { ...schema, type: [schema.type, "null"] };
  if (Array.isArray(schema.type)) return { ...schema, type: [...schema.type, "null"] };
  return schema;
}

function fieldSchema(field: FieldModel): JsonObject {
  let schema = field.repeated ? { type: "array", items: itemSchema(field) } : itemSchema(field);
  if (field.nullable) schema = nullableOf(schema);
  if (field.description === null) return schema;
  return typeof schema.$ref === "string"
    ? { allOf: [schema], description: field.description }
    : { ...schema, description: field.description };
}

function messageSchemas(
  message: MessageModel,
  options: { readonly request: boolean },
  out: Record<string, JsonObject>,
): void {
  const properties: Record<string, JsonObject> = {};
  for (const field of message.fields) properties[field.jsonName] = fieldSchema(field);
  const required = options.request
    ? message.fields.filter((field) => field.required).map((field) => field.jsonName)
    : [];
  out[message.fullName] = {
    type: "object",
    ...(message.description === null ? {} : { description: message.description }),
    properties,
    ...(required.length > 0 ? { required } : {}),
    ...(options.request ? { additionalProperties: false } : {}),
  };
  for (const nested of message.nested) messageSchemas(nested, options, out);
}

function enumSchema(model: EnumModel): JsonObject {
  const lines = model.values.map((value) =>
    `- \`${value.proto}\`${value.description === null ? "" : `: ${value.description}`}`
  );
  return {
    type: "string",
    description: [model.description ?? `The GraphQL enum ${model.name}.`, "", ...lines].join("\n"),
    enum: [`${model.prefix}_UNSPECIFIED`, ...model.values.map((value) => value.proto)],
  };
}

const ERROR_RESPONSES: JsonObject = {
  "4XX": { $ref: "#/components/responses/ConnectError" },
  "5XX": { $ref: "#/components/responses/ConnectError" },
};

function summaryOf(description: string | null, fallback: string): string {
  const first = description?.trim().split(/\r?\n/)[0]?.trim();
  return first === undefined || first === "" ? fallback : first;
}

/**
 * Generates the OpenAPI 3.1 document of the Connect methods.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse, type OperationDefinitionNode } from "graphql";
 * import { buildContractModel } from "./model.ts";
 * import { generateOpenApi } from "./openapi.ts";
 * const schema = buildSchema("type Query { hello: String }");
 * const text = "query Hello { hello }";
 * const document = parse(text);
 * const operation = document.definitions[0] as OperationDefinitionNode;
 * const model = buildContractModel(schema, [{ name: "Hello", kind: "query", text, document, operation, description: null }]);
 * const doc = generateOpenApi(model, {
 *   package: "service.v1",
 *   service: "GraphService",
 *   version: "1.0.0",
 *   serverUrl: "http://localhost:3002",
 * });
 * const paths = doc.paths as Record<string, Record<string, unknown>>;
 * assert.deepEqual(Object.keys(paths["/service.v1.GraphService/Hello"]!), ["post", "get"]);
 * ```
 * @param model The contract model.
 * @param options Package, service, version, server URL.
 * @returns The document.
 */
export function generateOpenApi(model: ContractModel, options: GenerateOpenApiOptions): JsonObject {
  const schemas: Record<string, JsonObject> = {};
  const paths: Record<string, JsonObject> = {};
  const tag = options.service;
  const security = options.bearerAuth === true ? [{}, { bearerAuth: [] }] : [];
  for (const method of model.methods) {
    messageSchemas(method.request, { request: true }, schemas);
    messageSchemas(method.response, { request: false }, schemas);
    const operation = method.operation;
    const summary = summaryOf(
      operation.description,
      `The GraphQL ${operation.kind} ${operation.name}`,
    );
    const description = [
      operation.description ?? `The GraphQL ${operation.kind} \`${operation.name}\`.`,
      "",
      "```graphql",
      operation.text.trim(),
      "```",
    ].join("\n");
    const ok = {
      description: `The operation's data as a ${method.response.name} message.`,
      content: { "application/json": { schema: { $ref: `${REF}${method.response.fullName}` } } },
    };
    const post: JsonObject = {
      operationId: method.name,
      summary,
      description,
      tags: [tag],
      parameters: [
        { $ref: "#/components/parameters/ConnectProtocolVersion" },
        { $ref: "#/components/parameters/ConnectTimeoutMs" },
      ],
      requestBody: {
        required: true,
        content: { "application/json": { schema: { $ref: `${REF}${method.request.fullName}` } } },
      },
      responses: { "200": ok, ...ERROR_RESPONSES },
      security,
    };
    if (method.streaming) streamingPost(post, method);
    const item: JsonObject = { post };
    if (method.idempotent) {
      item.get = {
        operationId: `${method.name}Get`,
        summary,
        description:
          `${description}\n\nCacheable: the response carries \`ETag\` and \`Cache-Control\`.`,
        tags: [tag],
        parameters: [
          {
            name: "connect",
            in: "query",
            required: true,
            description: "The Connect protocol version.",
            schema: { type: "string", enum: ["v1"] },
          },
          {
            name: "encoding",
            in: "query",
            required: true,
            description: "The message encoding.",
            schema: { type: "string", enum: ["json"] },
          },
          {
            name: "message",
            in: "query",
            required: true,
            description:
              `The ${method.request.name} message as URL-encoded JSON (\`{}\` when empty).`,
            content: {
              "application/json": { schema: { $ref: `${REF}${method.request.fullName}` } },
            },
          },
          { $ref: "#/components/parameters/ConnectTimeoutMs" },
        ],
        responses: {
          "200": {
            ...ok,
            headers: {
              ETag: { description: "Validator of the response.", schema: { type: "string" } },
              "Cache-Control": { description: "Caching policy.", schema: { type: "string" } },
            },
          },
          "304": { description: "Not modified (the `If-None-Match` validator matched)." },
          ...ERROR_RESPONSES,
        },
        security,
      };
    }
    paths[`/${options.package}.${options.service}/${method.name}`] = item;
  }
  for (const input of model.inputs) messageSchemas(input, { request: true }, schemas);
  for (const model_ of model.enums) schemas[model_.name] = enumSchema(model_);
  schemas.ConnectError = connectErrorSchema();
  const components: JsonObject = {
    schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => (a < b ? -1 : 1))),
    parameters: {
      ConnectProtocolVersion: {
        name: "Connect-Protocol-Version",
        in: "header",
        required: true,
        description: "The Connect protocol version.",
        schema: { type: "string", enum: ["1"] },
      },
      ConnectTimeoutMs: {
        name: "Connect-Timeout-Ms",
        in: "header",
        required: false,
        description:
          "Deadline of the call in milliseconds; past it the call fails with `deadline_exceeded`.",
        schema: { type: "string", pattern: "^[0-9]{1,10}$" },
      },
    },
    responses: {
      ConnectError: {
        description: "A Connect error; the HTTP status follows the Connect protocol's table.",
        content: { "application/json": { schema: { $ref: `${REF}ConnectError` } } },
      },
    },
  };
  if (options.bearerAuth === true) {
    components.securitySchemes = {
      bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: `${options.service} (${options.package})`,
      version: options.version,
      description:
        "Connect RPC methods of the GraphQL operations of the contract. Request messages carry " +
        "the operation's variables, response messages its data, in the proto3 JSON mapping.",
    },
    servers: [{ url: options.serverUrl }],
    tags: [{ name: tag, description: `The ${options.service} methods.` }],
    paths,
    components,
  };
}

/**
 * Turns a method's POST into its server-streaming form: `application/connect+json`
 * both ways, the envelope framing and the end-of-stream message described, and
 * `x-connect-streaming: server` for tools that read it.
 */
function streamingPost(post: JsonObject, method: MethodModel): void {
  post.description = `${post.description}\n\n${STREAMING_NOTE}`;
  post["x-connect-streaming"] = "server";
  post.requestBody = {
    required: true,
    description: `One enveloped ${method.request.name} message (5-byte header, then the JSON).`,
    content: {
      "application/connect+json": { schema: { $ref: `${REF}${method.request.fullName}` } },
    },
  };
  post.responses = {
    "200": {
      description:
        `A stream of enveloped ${method.response.name} messages, one per event, then the ` +
        "end-of-stream message `{error?, metadata?}` (an error ends the stream there, " +
        "not with an HTTP status).",
      content: {
        "application/connect+json": { schema: { $ref: `${REF}${method.response.fullName}` } },
      },
    },
    ...ERROR_RESPONSES,
  };
}

const STREAMING_NOTE = "**Server streaming** (a GraphQL subscription): call it with " +
  "`Content-Type: application/connect+json`. The request body is one enveloped message; the " +
  "response is a Connect stream: each message is enveloped as 1 flag byte, a 4-byte " +
  "big-endian length and the JSON, and the last one (flag `0x02`) is the end-of-stream " +
  "message `{error?, metadata?}`.";

function connectErrorSchema(): JsonObject {
  const codes = Object.keys(CONNECT_HTTP_STATUS) as ConnectCode[];
  return {
    type: "object",
    description: "A Connect error. GraphQL errors behind it are under `graphql_errors`.",
    required: ["code", "message"],
    properties: {
      code: { type: "string", enum: codes },
      message: { type: "string" },
      details: {
        type: "array",
        items: {
          type: "object",
          properties: {
            type: { type: "string" },
            value: { type: "string", contentEncoding: "base64" },
            debug: {},
          },
        },
      },
      graphql_errors: {
        type: "array",
        items: {
          type: "object",
          required: ["message"],
          properties: {
            message: { type: "string" },
            path: { type: "array", items: { type: ["string", "integer"] } },
            locations: {
              type: "array",
              items: {
                type: "object",
                properties: { line: { type: "integer" }, column: { type: "integer" } },
              },
            },
            extensions: { type: "object" },
          },
        },
      },
    },
  };
}
