/**
 * Variable coercion with bounded error messages: graphql-js `getVariableValues`
 * (16.x) quotes the whole invalid value in each error, and for an input object
 * with unknown keys that value is the object itself, once per key: a 1.5 MB
 * object of 100 000 keys cost 2.8 s of CPU and 54 MB of messages before the
 * error limit stopped it. Here the value, the path and the variable name are
 * quoted clipped, so each error costs a bounded amount whatever the input.
 *
 * @module
 */
import {
  coerceInputValue,
  GraphQLError,
  type GraphQLInputType,
  type GraphQLSchema,
  isInputType,
  isNonNullType,
  print,
  typeFromAST,
  valueFromAST,
  type VariableDefinitionNode,
} from "graphql";
import { clipForMessage } from "../../errors.ts";
import { exactInput } from "./json_numbers.ts";

/** Options of {@linkcode coerceVariables}. */
export interface CoerceVariablesOptions {
  /** Errors reported before coercion stops with a last "Too many errors" one. @default 50 */
  readonly maxErrors?: number;
  /** Omit "Did you mean" suggestions (introspection off). @default false */
  readonly hideSuggestions?: boolean;
}

/** The coerced variables, or the request errors. */
export type CoercedVariables =
  | { readonly coerced: Record<string, unknown>; readonly errors?: undefined }
  | { readonly errors: readonly GraphQLError[]; readonly coerced?: undefined };

/** Longest part of a message taken from graphql-js's own text (which may quote the value). */
const MAX_REASON_LENGTH = 500;
/** Items and keys of a list or object quoted (graphql-js quotes 10 list items too). */
const MAX_QUOTED_ENTRIES = 10;
/** Nesting quoted before a list or object is named only (graphql-js: 2). */
const MAX_QUOTED_DEPTH = 2;

/**
 * Coerces a request's variables against the operation's definitions, as
 * graphql-js `getVariableValues` does (same coerced values, same message
 * shapes), but every quoted value, path or name is clipped to 100 characters
 * and a graphql-js reason to 500, so an error's cost and size are bounded.
 *
 * @example A bad value is quoted clipped
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse, type OperationDefinitionNode } from "graphql";
 * import { coerceVariables } from "./coerce_variables.ts";
 * const schema = buildSchema("input F { a: Int } type Query { q(f: F, n: Int): Int }");
 * const operation = parse("query($f: F, $n: Int = 2) { q(f: $f, n: $n) }")
 *   .definitions[0] as OperationDefinitionNode;
 * const definitions = operation.variableDefinitions ?? [];
 * assert.deepEqual(coerceVariables(schema, definitions, { f: { a: 1 } }).coerced, { f: { a: 1 }, n: 2 });
 * const keys = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
 * const { errors } = coerceVariables(schema, definitions, { f: keys }, { maxErrors: 3 });
 * assert.equal(errors?.length, 4);
 * assert.ok(errors![0]!.message.startsWith('Variable "$f" got invalid value { k0: 0, k1: 1'));
 * assert.ok(errors!.every((e) => e.message.length < 300));
 * ```
 * @param schema The API schema.
 * @param definitions The operation's variable definitions.
 * @param inputs The request's variables.
 * @param options Error limit and suggestions.
 * @returns The coerced variables (defaults applied) or the errors.
 */
export function coerceVariables(
  schema: GraphQLSchema,
  definitions: readonly VariableDefinitionNode[],
  inputs: Readonly<Record<string, unknown>>,
  options: CoerceVariablesOptions = {},
): CoercedVariables {
  const maxErrors = options.maxErrors ?? 50;
  const errors: GraphQLError[] = [];
  const report = (error: GraphQLError) => {
    if (errors.length >= maxErrors) {
      throw new GraphQLError(
        "Too many errors processing variables, error limit reached. Execution aborted.",
      );
    }
    errors.push(error);
  };
  // Null prototype while filling: a variable may be named `__proto__`.
  const coerced: Record<string, unknown> = Object.create(null);
  // Errors about an object's keys all quote that object: it is quoted once
  // (listing the keys of a large object costs its size each time).
  const quoted = new Map<unknown, string>();
  try {
    for (const definition of definitions) {
      coerceOne(schema, definition, inputs, { coerced, report, options, quoted });
    }
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    errors.push(error);
  }
  return errors.length === 0 ? { coerced: { ...coerced } } : { errors };
}

function coerceOne(
  schema: GraphQLSchema,
  definition: VariableDefinitionNode,
  inputs: Readonly<Record<string, unknown>>,
  into: {
    readonly coerced: Record<string, unknown>;
    readonly report: (error: GraphQLError) => void;
    readonly options: CoerceVariablesOptions;
    readonly quoted: Map<unknown, string>;
  },
): void {
  const name = definition.variable.name.value;
  const quotedName = clipForMessage(name);
  const type = typeFromAST(schema, definition.type);
  if (type === undefined || !isInputType(type)) {
    // Validation refuses this first; checked again as graphql-js does.
    into.report(
      new GraphQLError(
        `Variable "$${quotedName}" expected value of type "${
          clipForMessage(print(definition.type))
        }" which cannot be used as an input type.`,
        { nodes: definition.type },
      ),
    );
    return;
  }
  if (!Object.hasOwn(inputs, name)) {
    if (definition.defaultValue) {
      into.coerced[name] = valueFromAST(definition.defaultValue, type);
    } else if (isNonNullType(type)) {
      into.report(
        new GraphQLError(
          `Variable "$${quotedName}" of required type "${type}" was not provided.`,
          { nodes: definition },
        ),
      );
    }
    return;
  }
  const value = inputs[name];
  if (value === null && isNonNullType(type)) {
    into.report(
      new GraphQLError(`Variable "$${quotedName}" of non-null type "${type}" must not be null.`, {
        nodes: definition,
      }),
    );
    return;
  }
  into.coerced[name] = coerceInputValue(
    // Integers beyond 2^53 read exactly (`parseJsonExact`) fitted to their type first.
    exactInput(value, type as GraphQLInputType),
    type as GraphQLInputType,
    (path, invalid, error) => {
      const at = path.length > 0 ? ` at "${clipForMessage(name + printPath(path))}"` : "";
      into.report(
        new GraphQLError(
          `Variable "$${quotedName}" got invalid value ${quoteValue(invalid, into.quoted)}${at}; ${
            clipReason(error.message)
          }`,
          { nodes: definition, originalError: error },
        ),
      );
    },
    into.options.hideSuggestions ?? false,
  );
}

function clipReason(text: string): string {
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH)}…` : text;
}

/** graphql-js `printPathArray`: `.key` and `[index]`, stopping once past the quoted length. */
function printPath(path: readonly (string | number)[]): string {
  let text = "";
  for (const key of path) {
    text += typeof key === "number" ? `[${key}]` : `.${clipForMessage(key)}`;
    if (text.length > 100) break;
  }
  return text;
}

/**
 * Quotes a value as graphql-js `inspect` does (`{ a: 1 }`, `[1, 2]`, strings
 * as JSON), reading at most 10 entries per level and 2 levels, clipped to 100
 * characters: its cost is bounded whatever the value's size.
 * @param value A JSON value.
 * @param quoted Objects quoted before, with their text.
 * @returns The quoted text.
 */
function quoteValue(value: unknown, quoted: Map<unknown, string>): string {
  if (typeof value !== "object" || value === null) return clipForMessage(quote(value, 0));
  let text = quoted.get(value);
  if (text === undefined) {
    text = clipForMessage(quote(value, 0));
    quoted.set(value, text);
  }
  return text;
}

function quote(value: unknown, depth: number): string {
  if (typeof value === "string") {
    // At most one character past the clip, then JSON-quoted.
    return JSON.stringify(value.length > 101 ? value.slice(0, 101) : value);
  }
  if (typeof value !== "object" || value === null) return String(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    if (depth >= MAX_QUOTED_DEPTH) return "[Array]";
    const items = value.slice(0, MAX_QUOTED_ENTRIES).map((item) => quote(item, depth + 1));
    const rest = value.length - items.length;
    if (rest > 0) items.push(rest === 1 ? "... 1 more item" : `... ${rest} more items`);
    return `[${items.join(", ")}]`;
  }
  const entries: string[] = [];
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (entries.length === MAX_QUOTED_ENTRIES) {
      entries.push("...");
      break;
    }
    if (depth >= MAX_QUOTED_DEPTH) return "[Object]";
    const item = (value as Record<string, unknown>)[key];
    entries.push(`${clipForMessage(key)}: ${quote(item, depth + 1)}`);
  }
  return entries.length === 0 ? "{}" : `{ ${entries.join(", ")} }`;
}
