/**
 * The tool list: one tool per registered operation plus the built-ins, with
 * names, descriptions, input schemas, annotations and per-tool scope
 * requirements computed once per state (spec §2.3, §5.3 rule 3; DESIGN §3–4).
 *
 * @module
 */
import { type GraphQLSchema, Kind, type OperationDefinitionNode } from "graphql";
import { operationAccess, type ScopeRequirement } from "../auth/mod.ts";
import type { McpConfig } from "../config/mod.ts";
import type { JsonSchema, OperationRegistry, RegisteredOperation } from "../operations/mod.ts";
import type { AccessRequirement } from "../supergraph/mod.ts";
import { type JsonSchema as OutputJsonSchema, outputSchema } from "./output_schema.ts";

/** What a tool does. */
export type ToolKind = "operation" | "execute_graphql" | "get_operation_info" | "get_schema";

/** MCP tool annotations (hints). */
export interface ToolAnnotations {
  readonly readOnlyHint: boolean;
  readonly idempotentHint: boolean;
}

/** One tool. */
export interface McpTool {
  readonly name: string;
  readonly kind: ToolKind;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /** JSON Schema of the result's `structuredContent` (operation tools: the operation's `data`), or null. */
  readonly outputSchema: OutputJsonSchema | null;
  readonly annotations: ToolAnnotations;
  /** The operation, for `operation` tools. */
  readonly operation: RegisteredOperation | null;
  /** Per-tool `@requiresScopes` requirement (registered operations; empty otherwise). */
  readonly requirement: ScopeRequirement;
}

/** The built-in tool names. */
export const BUILT_IN_TOOLS = ["execute_graphql", "get_operation_info", "get_schema"] as const;

/**
 * `OperationName` → `operation_name` (acronyms kept together: `getHTTPCode` → `get_http_code`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { snakeCase } from "./tools.ts";
 * assert.equal(snakeCase("GetUser"), "get_user");
 * assert.equal(snakeCase("getHTTPCode2"), "get_http_code2");
 * assert.equal(snakeCase("top_products"), "top_products");
 * ```
 * @param name A GraphQL name.
 * @returns Its snake_case form.
 */
export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .replace(/_+/g, "_")
    .toLowerCase();
}

function rootFieldDescriptions(
  operation: OperationDefinitionNode,
  schema: GraphQLSchema,
): string | null {
  const root = schema.getRootType(operation.operation);
  if (!root) return null;
  const fields = root.getFields();
  const out: string[] = [];
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) continue;
    const description = fields[selection.name.value]?.description;
    if (description && !out.includes(description)) out.push(description);
  }
  return out.length > 0 ? out.join("\n") : null;
}

const QUERY_HINTS: ToolAnnotations = Object.freeze({ readOnlyHint: true, idempotentHint: true });
const MUTATION_HINTS: ToolAnnotations = Object.freeze({
  readOnlyHint: false,
  idempotentHint: false,
});

/** Inputs of {@linkcode buildTools}. */
export interface BuildToolsInput {
  readonly config: McpConfig;
  readonly registry: OperationRegistry;
  readonly schema: GraphQLSchema;
  readonly access: ReadonlyMap<string, AccessRequirement>;
}

/** Result of {@linkcode buildTools}. */
export interface BuiltTools {
  readonly tools: readonly McpTool[];
  /** Operations not exposed, with why (logged at start-up and reload). */
  readonly skipped: readonly { readonly operation: string; readonly reason: string }[];
}

/**
 * Builds the tools: registered operations in registry order (mutations left
 * out with `exclude_mutations`; a name colliding with a built-in or an earlier
 * tool, or a requirement over `max_scope_combinations`, is skipped), then the
 * enabled built-ins.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema } from "graphql";
 * import { buildOperationRegistry } from "../operations/mod.ts";
 * import { buildTools } from "./tools.ts";
 * import type { McpConfig } from "../config/types.ts";
 * const schema = buildSchema('type Query { "The user" user: String }');
 * const registry = buildOperationRegistry([{ path: "a.graphql", text: "query GetUser { user }" }], schema);
 * const config = { exclude_mutations: false, omit_tool_name_prefix: false, enable_arbitrary_operations: false,
 *   expose_schema: false, oauth: { max_scope_combinations: 2048 } } as unknown as McpConfig;
 * const { tools } = buildTools({ config, registry, schema, access: new Map() });
 * assert.deepEqual(tools.map((t) => t.name), ["execute_operation_get_user", "get_operation_info"]);
 * assert.equal(tools[0]?.description, "The user");
 * ```
 * @param input Config, registry, API schema and access map.
 * @returns Tools and skipped operations.
 */
export function buildTools(input: BuildToolsInput): BuiltTools {
  const { config, registry, schema, access } = input;
  const tools: McpTool[] = [];
  const skipped: { operation: string; reason: string }[] = [];
  const taken = new Set<string>(BUILT_IN_TOOLS);
  for (const operation of registry.operations) {
    if (operation.kind === "subscription") continue;
    if (operation.kind === "mutation" && config.exclude_mutations) continue;
    const name = config.omit_tool_name_prefix
      ? snakeCase(operation.name)
      : `execute_operation_${snakeCase(operation.name)}`;
    if (taken.has(name)) {
      skipped.push({
        operation: operation.name,
        reason: `Tool name "${name}" collides with ${
          (BUILT_IN_TOOLS as readonly string[]).includes(name) ? "a built-in tool" : "another tool"
        }`,
      });
      continue;
    }
    const result = operationAccess(operation.document, schema, access, {
      operationName: operation.name,
      maxCombinations: config.oauth.max_scope_combinations,
    });
    if (!result.ok) {
      skipped.push({
        operation: operation.name,
        reason: `${result.reason} (mcp.oauth.max_scope_combinations)`,
      });
      continue;
    }
    taken.add(name);
    tools.push(Object.freeze({
      name,
      kind: "operation",
      description: operation.description ??
        rootFieldDescriptions(operation.operation, schema) ??
        `Executes the GraphQL ${operation.kind} ${operation.name}.`,
      inputSchema: operation.inputSchema,
      outputSchema: outputSchema(operation.operation, { schema, document: operation.document }),
      annotations: operation.kind === "query" ? QUERY_HINTS : MUTATION_HINTS,
      operation,
      requirement: result.requirement.scopes,
    }));
  }
  const names = tools.map((tool) => tool.operation!.name);
  tools.push(Object.freeze({
    name: "get_operation_info",
    kind: "get_operation_info",
    description:
      "Describes a registered operation: its type, description, input schema, required scopes, " +
      "GraphQL text and how to call it over HTTP.",
    inputSchema: {
      type: "object",
      properties: {
        operationName: {
          type: "string",
          description: "The GraphQL operation name, e.g. GetUser",
          ...(names.length > 0 ? { enum: names } : {}),
        },
      },
      required: ["operationName"],
      additionalProperties: false,
    },
    outputSchema: null,
    annotations: QUERY_HINTS,
    operation: null,
    requirement: [],
  }));
  if (config.enable_arbitrary_operations) {
    tools.push(Object.freeze({
      name: "execute_graphql",
      kind: "execute_graphql",
      description: config.exclude_mutations
        ? "Executes an arbitrary GraphQL query against the graph (mutations are refused)."
        : "Executes an arbitrary GraphQL query or mutation against the graph.",
      inputSchema: {
        type: "object",
        properties: {
          query: { type: "string", description: "The GraphQL document" },
          variables: { type: ["object", "null"], description: "Variables of the operation" },
        },
        required: ["query"],
        additionalProperties: false,
      },
      outputSchema: null,
      annotations: config.exclude_mutations ? QUERY_HINTS : MUTATION_HINTS,
      operation: null,
      requirement: [],
    }));
  }
  if (config.expose_schema) {
    tools.push(Object.freeze({
      name: "get_schema",
      kind: "get_schema",
      description: "Returns the GraphQL schema (SDL) of the graph.",
      inputSchema: { type: "object", properties: {}, additionalProperties: false },
      outputSchema: null,
      annotations: QUERY_HINTS,
      operation: null,
      requirement: [],
    }));
  }
  return { tools, skipped };
}

/**
 * The `get_operation_info` text (spec §2.6): name, type, description, input
 * schema, then — when the operation carries scopes — `Required Scopes
 * (OR-of-AND):` with one `- a AND b` line per group and `OR` lines between,
 * then the GraphQL text and how to call it over HTTP.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatOperationInfo, type McpTool } from "./tools.ts";
 * const tool = { name: "t", kind: "operation", description: "d", inputSchema: { type: "object" },
 *   annotations: { readOnlyHint: true, idempotentHint: true }, requirement: [["a", "b"], ["c"]],
 *   operation: { name: "GetUser", kind: "query", text: "query GetUser { user }" } } as unknown as McpTool;
 * const text = formatOperationInfo(tool, { graphqlUrl: "http://localhost:3002/graphql" });
 * assert.ok(text.includes("Required Scopes (OR-of-AND):\n- a AND b\nOR\n- c\n"));
 * ```
 * @param tool An `operation` tool.
 * @param options The GraphQL endpoint URL.
 * @returns The text.
 */
export function formatOperationInfo(
  tool: McpTool,
  options: { readonly graphqlUrl: string },
): string {
  const operation = tool.operation!;
  const lines = [
    `Operation: ${operation.name}`,
    `Type: ${operation.kind}`,
    `Tool: ${tool.name}`,
    `Description: ${tool.description}`,
    "",
    "Input Schema:",
    JSON.stringify(tool.inputSchema, null, 2),
    "",
  ];
  if (tool.requirement.length > 0) {
    lines.push("Required Scopes (OR-of-AND):");
    tool.requirement.forEach((group, i) => {
      if (i > 0) lines.push("OR");
      lines.push(`- ${group.join(" AND ")}`);
    });
    lines.push("");
  }
  lines.push(
    "GraphQL:",
    operation.text.trim(),
    "",
    "Call over HTTP:",
    `POST ${options.graphqlUrl}`,
    "Content-Type: application/json",
    JSON.stringify({ query: operation.text.trim(), operationName: operation.name, variables: {} }),
  );
  return lines.join("\n");
}
