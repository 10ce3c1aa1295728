/**
 * Parse + validate + operation selection (graphql-js), as values: a failing
 * stage returns its errors, never throws.
 *
 * @module
 */
import {
  type DocumentNode,
  GraphQLError,
  type GraphQLFormattedError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  parse,
  specifiedRules,
  validate,
  type ValidationRule,
} from "graphql";
import type { PrepareResult } from "../types.ts";
import { clipForMessage } from "../../errors.ts";
import { conditionVariables } from "./normalize.ts";
import { ReservedTypenameAliasRule } from "./reserved_alias.ts";
import { findIntrospectionField, introspectionDisabled, OfTypeDepthRule } from "./introspection.ts";
import {
  checkOperationLimits,
  checkTextDepth,
  checkVariableValues,
  countInputValues,
  DEFAULT_OPERATION_LIMITS,
  type OperationLimits,
} from "./limits.ts";

const RULES: readonly ValidationRule[] = [
  ...specifiedRules,
  OfTypeDepthRule,
  ReservedTypenameAliasRule,
];

/**
 * graphql-js's message when its overlapping-fields rule runs out of its work
 * budget (many fields sharing a response name must be compared pairwise).
 */
const VALIDATION_ABORTED = "Validation aborted.";

function validationTooComplex(): GraphQLFormattedError {
  return {
    message:
      "Validation stopped: too many fields share a response name to compare them all (send each field once per selection)",
    extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
  };
}

/** Options for {@linkcode prepareOperation}. */
export interface PrepareOptions {
  /** Parser token limit. @default 15000 */
  readonly maxTokens?: number;
  /** Validation error limit. @default 50 */
  readonly maxErrors?: number;
  /** Operation limits, checked before validation. @default DEFAULT_OPERATION_LIMITS */
  readonly limits?: OperationLimits;
  /**
   * Whether `__schema` / `__type` may be queried; when false they are refused
   * and validation hides its "Did you mean" suggestions. @default true
   */
  readonly introspection?: boolean;
  /** Monotonic clock and stage hook (tracing). */
  readonly stage?: (name: "parse" | "validate", startNs: number, endNs: number) => void;
  readonly now?: () => number;
}

/**
 * A graphql-js error as a response error with a stable `extensions.code`.
 * @param error The error.
 * @param code The code to put in its extensions.
 * @returns The formatted error.
 */
export function formatted(error: GraphQLError, code: string): GraphQLFormattedError {
  const json = error.toJSON();
  return { ...json, extensions: { ...json.extensions, code } };
}

/**
 * Parses, validates and selects the operation.
 *
 * @example Parse error as a value
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema } from "graphql";
 * import { prepareOperation } from "./prepare.ts";
 * const schema = buildSchema("type Query { a: Int }");
 * const result = prepareOperation(schema, { query: "{ a" });
 * assert.equal(result.ok, false);
 * assert.equal(result.ok ? "" : result.stage, "parse");
 * assert.equal(prepareOperation(schema, { query: "{ a }" }).ok, true);
 * ```
 * @param schema The API schema.
 * @param request Query text and operation name.
 * @param options Limits and stage hook.
 * @returns The operation or request errors.
 */
export function prepareOperation(
  schema: GraphQLSchema,
  request: { readonly query: string; readonly operationName?: string | null | undefined },
  options: PrepareOptions = {},
): PrepareResult {
  const now = options.now;
  let t0 = now?.() ?? 0;
  const limits = options.limits ?? DEFAULT_OPERATION_LIMITS;
  // graphql-js's parser recurses once per nesting level: bound the depth first.
  const tooDeep = checkTextDepth(request.query, limits);
  if (tooDeep !== null) return { ok: false, stage: "limits", errors: [tooDeep] };
  let document: DocumentNode;
  try {
    // No locations: they double the AST's size, and the AST is cached. A
    // failing validation parses again with them (below), for the errors' `locations`.
    document = parse(request.query, { maxTokens: options.maxTokens ?? 15000, noLocation: true });
  } catch (error) {
    const e = error instanceof GraphQLError ? error : new GraphQLError(String(error));
    return { ok: false, stage: "parse", errors: [formatted(e, "GRAPHQL_PARSE_FAILED")] };
  }
  if (now && options.stage) {
    const t1 = now();
    options.stage("parse", t0, t1);
    t0 = t1;
  }
  const overLimit = checkOperationLimits(document, limits);
  if (overLimit !== null) return { ok: false, stage: "limits", errors: [overLimit] };
  const inputValues = countInputValues(document);
  // The literals alone (the variables are counted with them before coercion).
  const tooMany = checkVariableValues({}, limits, { counted: inputValues });
  if (tooMany !== null) return { ok: false, stage: "limits", errors: [tooMany] };
  const introspection = options.introspection ?? true;
  if (!introspection && findIntrospectionField(document) !== null) {
    return { ok: false, stage: "limits", errors: [introspectionDisabled()] };
  }
  const validateOptions = { maxErrors: options.maxErrors ?? 50, hideSuggestions: !introspection };
  let errors = validate(schema, document, RULES, validateOptions);
  if (now && options.stage) options.stage("validate", t0, now());
  if (errors.length > 0) {
    if (errors.some((e) => e.message === VALIDATION_ABORTED)) {
      // Not run again for locations: that would spend graphql-js's budget twice.
      return { ok: false, stage: "validate", errors: [validationTooComplex()] };
    }
    const located = parse(request.query, { maxTokens: options.maxTokens ?? 15000 });
    errors = validate(schema, located, RULES, validateOptions);
    return {
      ok: false,
      stage: "validate",
      errors: errors.map((e) => formatted(e, "GRAPHQL_VALIDATION_FAILED")),
    };
  }
  const operations = document.definitions.filter((d): d is OperationDefinitionNode =>
    d.kind === Kind.OPERATION_DEFINITION
  );
  const name = request.operationName ?? null;
  let operation: OperationDefinitionNode | undefined;
  if (name !== null && name !== "") {
    operation = operations.find((o) => o.name?.value === name);
    if (!operation) {
      return {
        ok: false,
        stage: "select",
        errors: [{
          // The name is the client's: quoted, but never echoed at any length.
          message: `Unknown operation named "${clipForMessage(name)}".`,
          extensions: { code: "BAD_REQUEST" },
        }],
      };
    }
  } else if (operations.length === 1) {
    operation = operations[0];
  } else {
    return {
      ok: false,
      stage: "select",
      errors: [{
        message: "Must provide operation name if query contains multiple operations.",
        extensions: { code: "BAD_REQUEST" },
      }],
    };
  }
  if (!operation) {
    return {
      ok: false,
      stage: "select",
      errors: [{ message: "Must provide an operation.", extensions: { code: "BAD_REQUEST" } }],
    };
  }
  return {
    ok: true,
    operation: {
      kind: operation.operation,
      name: operation.name?.value ?? null,
      document,
      operation,
      key: `${request.query}\u0000${operation.name?.value ?? ""}`,
      conditionVariables: conditionVariables(document),
      hasDefer: /@\s*defer\b/.test(request.query),
      inputValues,
    },
  };
}
