/**
 * `operations/` folder → registry of named operations: the contract for MCP
 * tools and Connect methods. The registry is built by a pure function from
 * file texts; reading the folder is the caller's I/O.
 *
 * @module
 */
import {
  type DocumentNode,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  parse,
  specifiedRules,
  TokenKind,
  validate,
} from "graphql";
import {
  checkOperationLimits,
  checkTextDepth,
  DEFAULT_OPERATION_LIMITS,
  type OperationLimits,
} from "../engine/mod.ts";
import type { OperationKind } from "../engine/mod.ts";
import { type JsonSchema, variablesJsonSchema } from "./json_schema.ts";

export { type JsonSchema, validateArguments, variablesJsonSchema } from "./json_schema.ts";

/** One operation file as read from disk. */
export interface OperationFile {
  /** Path relative to `operations_dir`, e.g. `GetUser.graphql`. */
  readonly path: string;
  readonly text: string;
}

/** One registered operation. */
export interface RegisteredOperation {
  /** The GraphQL operation name (`GetUser`). */
  readonly name: string;
  readonly kind: OperationKind;
  /** The file it came from. */
  readonly path: string;
  /** The whole file text (operation plus its fragments), as sent to the engine. */
  readonly text: string;
  readonly document: DocumentNode;
  readonly operation: OperationDefinitionNode;
  /** The operation's description (leading comment / description), or null. */
  readonly description: string | null;
  /** JSON Schema of the variables (see {@linkcode variablesJsonSchema}). */
  readonly inputSchema: JsonSchema;
}

/** The registry, in file-name order. */
export interface OperationRegistry {
  readonly operations: readonly RegisteredOperation[];
  readonly byName: ReadonlyMap<string, RegisteredOperation>;
  /** Files skipped, with why (logged at start-up). */
  readonly skipped: readonly { readonly path: string; readonly reason: string }[];
}

/** Parser token cap for operation files (hostile input guard). */
const MAX_TOKENS = 50_000;

/**
 * The `#` comment lines directly above an operation, joined by newlines.
 * graphql-js links comment tokens into the token list, so no re-lexing is needed.
 */
function leadingComment(operation: OperationDefinitionNode): string | null {
  const lines: string[] = [];
  let token = operation.loc?.startToken.prev ?? null;
  let line = operation.loc?.startToken.line ?? 0;
  while (token && token.kind === TokenKind.COMMENT && token.line === line - 1) {
    lines.unshift((token.value ?? "").trim());
    line = token.line;
    token = token.prev;
  }
  const text = lines.join("\n").trim();
  return text === "" ? null : text;
}

type Parsed =
  | { readonly ok: true; readonly operation: RegisteredOperation }
  | { readonly ok: false; readonly reason: string };

function parseFile(file: OperationFile, schema: GraphQLSchema, limits: OperationLimits): Parsed {
  const tooDeep = checkTextDepth(file.text, limits);
  if (tooDeep !== null) return { ok: false, reason: tooDeep.message };
  let document: DocumentNode;
  try {
    document = parse(file.text, { maxTokens: MAX_TOKENS });
  } catch (error) {
    return { ok: false, reason: `Syntax error: ${(error as Error).message}` };
  }
  const operations = document.definitions.filter(
    (definition): definition is OperationDefinitionNode =>
      definition.kind === Kind.OPERATION_DEFINITION,
  );
  const [operation] = operations;
  if (operation === undefined || operations.length !== 1) {
    return {
      ok: false,
      reason: `Expected exactly one operation per file, found ${operations.length}`,
    };
  }
  const overLimit = checkOperationLimits(document, limits);
  if (overLimit !== null) return { ok: false, reason: overLimit.message };
  if (!operation.name) return { ok: false, reason: "The operation has no name" };
  const errors = validate(schema, document, specifiedRules, { maxErrors: 10 });
  if (errors.length > 0) {
    return { ok: false, reason: `Invalid operation: ${errors.map((e) => e.message).join("; ")}` };
  }
  return {
    ok: true,
    operation: Object.freeze({
      name: operation.name.value,
      kind: operation.operation,
      path: file.path,
      text: file.text,
      document,
      operation,
      description: leadingComment(operation),
      inputSchema: variablesJsonSchema(operation, schema),
    }),
  };
}

/**
 * Builds the registry: files in path order, one named operation each
 * (fragments allowed); invalid operations and files with zero or several
 * operations are skipped with a reason; subscriptions are registered (Connect
 * serves them as server-streaming methods; MCP leaves them out, a tool call
 * answers once); of two operations with the same
 * name the first (by path) wins.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema } from "graphql";
 * import { buildOperationRegistry } from "./mod.ts";
 * const schema = buildSchema("type Query { hello: String }");
 * const registry = buildOperationRegistry([
 *   { path: "b.graphql", text: "# Says hello\nquery Hello { hello }" },
 *   { path: "a.graphql", text: "query Broken { nope }" },
 * ], schema);
 * assert.deepEqual(registry.operations.map((o) => o.name), ["Hello"]);
 * assert.equal(registry.byName.get("Hello")?.description, "Says hello");
 * assert.equal(registry.skipped[0]?.path, "a.graphql");
 * ```
 * @param files Operation files, any order (sorted by path here).
 * @param schema The API schema the operations are validated against.
 * @param options The operation limits (`security`): a file over them is skipped.
 * @returns The registry.
 */
export function buildOperationRegistry(
  files: readonly OperationFile[],
  schema: GraphQLSchema,
  options: { readonly limits?: OperationLimits } = {},
): OperationRegistry {
  const limits = options.limits ?? DEFAULT_OPERATION_LIMITS;
  const operations: RegisteredOperation[] = [];
  const byName = new Map<string, RegisteredOperation>();
  const skipped: { path: string; reason: string }[] = [];
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const file of sorted) {
    const parsed = parseFile(file, schema, limits);
    if (!parsed.ok) {
      skipped.push({ path: file.path, reason: parsed.reason });
      continue;
    }
    const first = byName.get(parsed.operation.name);
    if (first) {
      skipped.push({
        path: file.path,
        reason: `Duplicate operation name "${parsed.operation.name}" (first in ${first.path})`,
      });
      continue;
    }
    operations.push(parsed.operation);
    byName.set(parsed.operation.name, parsed.operation);
  }
  return Object.freeze({
    operations: Object.freeze(operations),
    byName,
    skipped: Object.freeze(skipped),
  });
}
