/**
 * Operation limits, counted before anything expensive runs:
 *
 * - {@linkcode approximateDepth}: a character scan of the query text that
 *   stops at the limit, run before graphql-js parses it (its parser recurses
 *   once per nesting level, so this bounds every later recursive walk too).
 * - {@linkcode measureDocument}: depth, fields (after fragment expansion),
 *   root fields and root aliases of every operation, with each fragment
 *   measured once (memoised) and never inlined; iterative, cycles ignored.
 * - {@linkcode checkOperationLimits}: both, against the configured limits,
 *   as a response error with a stable code naming the limit.
 *
 * Pure: no I/O. Just over 600 lines: the three counts share the scanners and
 * the limit table; split, each would import the others'.
 *
 * @module
 */
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLFormattedError,
  Kind,
  type SelectionSetNode,
} from "graphql";
import type { SecurityConfig } from "../../config/mod.ts";
import { summarizeFragments } from "./_fragments.ts";

/** One optional limit (`security.complexity_limits.*`). */
export interface ComplexityLimit {
  /** Whether the limit is checked. */
  readonly enabled: boolean;
  /** The largest accepted value. */
  readonly limit: number;
}

/** The limits `prepare` checks (config `security`). */
export interface OperationLimits {
  /** `security.parser_limits.approximate_depth_limit`: nesting of `{`, `(` and `[`. */
  readonly approximateDepth: number;
  /** `security.parser_limits.total_fields_limit`: fields after fragment expansion. */
  readonly totalFields: number;
  /** `security.complexity_limits.depth`. */
  readonly depth?: ComplexityLimit;
  /** `security.complexity_limits.total_fields`. */
  readonly complexityTotalFields?: ComplexityLimit;
  /** `security.complexity_limits.root_fields`. */
  readonly rootFields?: ComplexityLimit;
  /** `security.complexity_limits.root_field_aliases`. */
  readonly rootFieldAliases?: ComplexityLimit;
  /** `security.complexity_limits.ignore_introspection`: introspection-only operations skip them. */
  readonly ignoreIntrospection?: boolean;
  /**
   * `security.parser_limits.max_input_values`: values in the variables and
   * argument literals of one request, counted before coercion. Absent: not counted.
   */
  readonly maxInputValues?: number;
}

/**
 * The deepest nesting of subgraph data the executor walks (merging, copying
 * for traces): deeper than any selection the parser limits admit
 * (`security.parser_limits.approximate_depth_limit` is at most 1 000), so
 * below it the data is never shaped: an answer replaces what was there, a
 * trace names it without copying it. Without it two subgraphs answering the
 * same extra field nested 100 000 deep overflowed the stack (a 500); 4 096
 * levels of merging overflowed it too. A custom scalar's value nested deeper
 * is not answered (the shaper nulls it with an error): printing it overflowed
 * `JSON.stringify` in large responses.
 */
export const MAX_DATA_DEPTH = 1024;

/**
 * Objects and lists one trace snapshot of merged data copies (a fetch's raw
 * input in `extensions.trace`): the copy of shared data as a tree is bounded
 * here, not by the data's size.
 */
export const MAX_TRACE_VALUES = 100_000;

/** Cosmo's defaults: depth 200, 3 500 fields, complexity limits off. */
export const DEFAULT_OPERATION_LIMITS: OperationLimits = Object.freeze({
  approximateDepth: 200,
  totalFields: 3500,
  maxInputValues: 100_000,
});

/**
 * The limits of the `security` configuration section.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "../../config/mod.ts";
 * import { operationLimitsOf } from "./limits.ts";
 * const limits = operationLimitsOf(parseConfig({}).security);
 * assert.equal(limits.approximateDepth, 200);
 * assert.equal(limits.rootFields?.enabled, false);
 * ```
 * @param security The `security` section.
 * @returns The limits.
 */
export function operationLimitsOf(security: SecurityConfig): OperationLimits {
  const complexity = security.complexity_limits;
  return Object.freeze({
    approximateDepth: security.parser_limits.approximate_depth_limit,
    totalFields: security.parser_limits.total_fields_limit,
    maxInputValues: security.parser_limits.max_input_values,
    depth: complexity.depth,
    complexityTotalFields: complexity.total_fields,
    rootFields: complexity.root_fields,
    rootFieldAliases: complexity.root_field_aliases,
    ignoreIntrospection: complexity.ignore_introspection,
  });
}

/** What {@linkcode measureDocument} counts for one operation. */
export interface OperationMeasure {
  /** Deepest field nesting (`{ a { b } }` is 2). */
  readonly depth: number;
  /** Fields after fragment expansion (each spread counts its fragment's fields again). */
  readonly totalFields: number;
  /** Fields at the root, fragments expanded. */
  readonly rootFields: number;
  /** Aliased fields at the root, fragments expanded. */
  readonly rootFieldAliases: number;
  /** True when every root field is `__schema`, `__type` or `__typename`. */
  readonly introspectionOnly: boolean;
}

interface Summary {
  depth: number;
  fields: number;
  rootFields: number;
  rootAliases: number;
  rootOther: number;
}

const ZERO: Summary = Object.freeze({
  depth: 0,
  fields: 0,
  rootFields: 0,
  rootAliases: 0,
  rootOther: 0,
});

const INTROSPECTION_ROOTS = new Set(["__schema", "__type", "__typename"]);

/**
 * The nesting depth of `{`, `(` and `[` in GraphQL text, skipping strings,
 * block strings and comments; the scan stops as soon as the depth passes
 * `limit` (then `limit + 1` is returned). One pass, no recursion.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { approximateDepth } from "./limits.ts";
 * assert.equal(approximateDepth('{ a(s: "{{{") { b } }', 10), 2);
 * assert.equal(approximateDepth("{".repeat(50), 10), 11);
 * ```
 * @param text The query text.
 * @param limit The largest depth of interest.
 * @returns The depth, at most `limit + 1`.
 */
export function approximateDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x28 || c === 0x5b) { // { ( [
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 0x7d || c === 0x29 || c === 0x5d) { // } ) ]
      if (depth > 0) depth--;
    } else if (c === 0x23) { // # comment to end of line
      while (i < length && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d) i++;
    } else if (c === 0x22) { // "
      if (text.startsWith('"""', i)) {
        i += 3;
        while (i < length && !text.startsWith('"""', i)) i += text.startsWith('\\"""', i) ? 4 : 1;
        i += 2;
      } else {
        i++;
        while (i < length) {
          const s = text.charCodeAt(i);
          if (s === 0x5c) i += 2;
          else if (s === 0x22 || s === 0x0a || s === 0x0d) break;
          else i++;
        }
      }
    }
  }
  return max;
}

/** Measures one selection set, given the summaries of the fragments it spreads. */
function summarize(set: SelectionSetNode, fragments: ReadonlyMap<string, Summary>): Summary {
  const out: Summary = { depth: 0, fields: 0, rootFields: 0, rootAliases: 0, rootOther: 0 };
  const sets: SelectionSetNode[] = [set];
  const depths: number[] = [0];
  while (sets.length > 0) {
    const current = sets.pop()!;
    const base = depths.pop()!;
    for (const s of current.selections) {
      if (s.kind === Kind.FIELD) {
        out.fields++;
        if (base + 1 > out.depth) out.depth = base + 1;
        if (base === 0) {
          out.rootFields++;
          if (s.alias) out.rootAliases++;
          if (!INTROSPECTION_ROOTS.has(s.name.value)) out.rootOther++;
        }
        if (s.selectionSet) {
          sets.push(s.selectionSet);
          depths.push(base + 1);
        }
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        sets.push(s.selectionSet);
        depths.push(base);
      } else {
        const f = fragments.get(s.name.value) ?? ZERO;
        out.fields += f.fields;
        if (base + f.depth > out.depth) out.depth = base + f.depth;
        if (base === 0) {
          out.rootFields += f.rootFields;
          out.rootAliases += f.rootAliases;
          out.rootOther += f.rootOther;
        }
      }
    }
  }
  return out;
}

/**
 * Measures every operation of a document. Fragments are measured once each
 * (a fragment spread twice counts its fields twice, without walking it
 * again), so a "fragment bomb" is measured in time linear in its text.
 *
 * @example Fields after fragment expansion, counted without expanding
 * ```ts
 * import assert from "node:assert/strict";
 * import { parse } from "graphql";
 * import { measureDocument } from "./limits.ts";
 * let text = "query Q { ...F20 } fragment F0 on Query { a }";
 * for (let i = 1; i <= 20; i++) text += ` fragment F${i} on Query { ...F${i - 1} ...F${i - 1} }`;
 * const [measure] = measureDocument(parse(text));
 * assert.equal(measure?.totalFields, 2 ** 20);
 * assert.equal(measure?.depth, 1);
 * ```
 * @param document The parsed (not yet validated) document.
 * @returns One measure per operation, in document order.
 */
export function measureDocument(document: DocumentNode): OperationMeasure[] {
  const definitions = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION && !definitions.has(d.name.value)) {
      definitions.set(d.name.value, d);
    }
  }
  const fragments = summarizeFragments(definitions, summarize);
  const measures: OperationMeasure[] = [];
  for (const d of document.definitions) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue;
    const s = summarize(d.selectionSet, fragments);
    measures.push({
      depth: s.depth,
      totalFields: s.fields,
      rootFields: s.rootFields,
      rootFieldAliases: s.rootAliases,
      introspectionOnly: s.rootOther === 0,
    });
  }
  return measures;
}

function refusal(
  code: string,
  what: string,
  options: { readonly value: number | null; readonly limit: number; readonly key: string },
): GraphQLFormattedError {
  const found = options.value === null ? "" : ` (${options.value})`;
  return {
    message:
      `The operation's ${what}${found} exceeds the limit of ${options.limit} (${options.key})`,
    extensions: { code, limit: options.limit },
  };
}

/**
 * Checks the text's nesting before parsing (graphql-js's parser recurses per
 * level, so this must come first).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkTextDepth } from "./limits.ts";
 * const error = checkTextDepth("{ a { b } }", { approximateDepth: 1, totalFields: 10 });
 * assert.equal(error?.extensions?.code, "MAX_DEPTH_EXCEEDED");
 * ```
 * @param text The query text.
 * @param limits The limits.
 * @returns The error, or null when within the limit.
 */
export function checkTextDepth(
  text: string,
  limits: OperationLimits,
): GraphQLFormattedError | null {
  if (approximateDepth(text, limits.approximateDepth) <= limits.approximateDepth) return null;
  return refusal("MAX_DEPTH_EXCEEDED", "nesting depth", {
    value: null,
    limit: limits.approximateDepth,
    key: "security.parser_limits.approximate_depth_limit",
  });
}

/**
 * Checks every operation of a parsed document against the limits, before
 * validation and normalization: parser limits always (the field depth after
 * fragment expansion against the approximate depth limit too, so every later
 * recursive walk is bounded by it), complexity limits
 * when enabled (skipped for introspection-only operations with
 * `ignoreIntrospection`).
 *
 * @example A fragment bomb is refused without being expanded
 * ```ts
 * import assert from "node:assert/strict";
 * import { parse } from "graphql";
 * import { checkOperationLimits, DEFAULT_OPERATION_LIMITS } from "./limits.ts";
 * let text = "{ ...F30 } fragment F0 on Query { a }";
 * for (let i = 1; i <= 30; i++) text += ` fragment F${i} on Query { ...F${i - 1} ...F${i - 1} }`;
 * const error = checkOperationLimits(parse(text), DEFAULT_OPERATION_LIMITS);
 * assert.equal(error?.extensions?.code, "MAX_FIELDS_EXCEEDED");
 * ```
 * @param document The parsed document.
 * @param limits The limits.
 * @returns The first error, or null when every operation is within the limits.
 */
export function checkOperationLimits(
  document: DocumentNode,
  limits: OperationLimits,
): GraphQLFormattedError | null {
  for (const m of measureDocument(document)) {
    // Fragments can nest fields deeper than the text does: the same limit bounds both.
    if (m.depth > limits.approximateDepth) {
      return refusal("MAX_DEPTH_EXCEEDED", "depth", {
        value: m.depth,
        limit: limits.approximateDepth,
        key: "security.parser_limits.approximate_depth_limit",
      });
    }
    if (m.totalFields > limits.totalFields) {
      return refusal("MAX_FIELDS_EXCEEDED", "number of fields", {
        value: m.totalFields,
        limit: limits.totalFields,
        key: "security.parser_limits.total_fields_limit",
      });
    }
    if (limits.ignoreIntrospection === true && m.introspectionOnly) continue;
    const checks: [ComplexityLimit | undefined, number, string, string, string][] = [
      [limits.depth, m.depth, "MAX_DEPTH_EXCEEDED", "depth", "depth"],
      [
        limits.complexityTotalFields,
        m.totalFields,
        "MAX_FIELDS_EXCEEDED",
        "number of fields",
        "total_fields",
      ],
      [limits.rootFields, m.rootFields, "MAX_ROOT_FIELDS_EXCEEDED", "root fields", "root_fields"],
      [
        limits.rootFieldAliases,
        m.rootFieldAliases,
        "MAX_ROOT_FIELD_ALIASES_EXCEEDED",
        "root field aliases",
        "root_field_aliases",
      ],
    ];
    for (const [limit, value, code, what, key] of checks) {
      if (limit?.enabled === true && value > limit.limit) {
        return refusal(code, what, {
          value,
          limit: limit.limit,
          key: `security.complexity_limits.${key}.limit`,
        });
      }
    }
  }
  return null;
}

/**
 * Checks a request's variable values before graphql-js coerces them: their
 * nesting (objects and lists) against
 * `security.parser_limits.approximate_depth_limit`, since coercion recurses
 * per level and a deeply nested value for a recursive input type (or a custom
 * scalar) would overflow the stack or be forwarded to a subgraph; and their
 * number (every object, list and scalar, with the argument literals already
 * counted) against `security.parser_limits.max_input_values`, since coercion
 * costs about a microsecond a value, and a 5 MB body holds 600 000 (issue
 * 34). Literals in the query text are held to the same limits. The walk is
 * iterative and stops at the first value past a limit.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkVariableValues, DEFAULT_OPERATION_LIMITS } from "./limits.ts";
 * assert.equal(checkVariableValues({ f: { and: [{ x: 1 }] } }, DEFAULT_OPERATION_LIMITS), null);
 * let deep: unknown = 1;
 * for (let i = 0; i < 500; i++) deep = [deep];
 * const error = checkVariableValues({ v: deep }, DEFAULT_OPERATION_LIMITS);
 * assert.equal(error?.extensions?.code, "MAX_DEPTH_EXCEEDED");
 * const many = checkVariableValues({ v: [1, 2, 3] }, { ...DEFAULT_OPERATION_LIMITS, maxInputValues: 3 });
 * assert.equal(many?.extensions?.code, "MAX_INPUT_VALUES_EXCEEDED");
 * ```
 * @param variables The request's variables (parsed JSON).
 * @param limits The limits.
 * @param options Input values counted already (the operation's argument literals).
 * @returns The error, or null when within the limits.
 */
export function checkVariableValues(
  variables: Readonly<Record<string, unknown>>,
  limits: OperationLimits,
  options: { readonly counted?: number } = {},
): GraphQLFormattedError | null {
  const maxValues = limits.maxInputValues ?? Infinity;
  let count = options.counted ?? 0;
  if (count > maxValues) return tooManyValues(maxValues);
  const limit = limits.approximateDepth;
  // Pairs of (value, its depth): the variables object itself is depth 1.
  const values: unknown[] = [variables];
  const depths: number[] = [1];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (depth > limit) {
      return refusal("MAX_DEPTH_EXCEEDED", "nesting depth of variable values", {
        value: null,
        limit,
        key: "security.parser_limits.approximate_depth_limit",
      });
    }
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (++count > maxValues) return tooManyValues(maxValues);
      if (child !== null && typeof child === "object") {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return null;
}

function tooManyValues(limit: number): GraphQLFormattedError {
  return refusal("MAX_INPUT_VALUES_EXCEEDED", "number of input values (variables and arguments)", {
    value: null,
    limit,
    key: "security.parser_limits.max_input_values",
  });
}

/** The value kinds of a document: each node of one is one input value. */
const VALUE_KINDS: ReadonlySet<string> = new Set([
  Kind.INT,
  Kind.FLOAT,
  Kind.STRING,
  Kind.BOOLEAN,
  Kind.NULL,
  Kind.ENUM,
  Kind.LIST,
  Kind.OBJECT,
]);

/**
 * The input values written in a document (argument literals, variable
 * defaults, directive arguments): every literal, list and object, counted as
 * {@linkcode checkVariableValues} counts variables. A variable reference
 * counts nothing (its value is counted with the variables). Iterative (the
 * parser's token limit bounds the document).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parse } from "graphql";
 * import { countInputValues } from "./limits.ts";
 * assert.equal(countInputValues(parse('{ a(x: [1, 2], y: { z: "s" }, v: $v) @include(if: true) }')), 6);
 * ```
 * @param document The parsed document.
 * @returns The count.
 */
export function countInputValues(document: DocumentNode): number {
  let count = 0;
  const stack: unknown[] = [document];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== "object") continue;
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
      continue;
    }
    const kind = (node as { kind?: unknown }).kind;
    if (typeof kind === "string" && VALUE_KINDS.has(kind)) count++;
    for (const key in node) {
      if (key === "loc") continue;
      const child = (node as Record<string, unknown>)[key];
      if (child !== null && typeof child === "object") stack.push(child);
    }
  }
  return count;
}

/**
 * The nesting depth of `{` and `[` in JSON text, skipping strings; the scan
 * stops as soon as the depth passes `limit` (then `limit + 1` is returned).
 * One pass, no recursion.
 */
function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) { // { [
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 0x7d || c === 0x5d) { // } ]
      if (depth > 0) depth--;
    } else if (c === 0x22) { // a string: to its closing quote, over escapes
      for (i = text.indexOf('"', i + 1); i > 0; i = text.indexOf('"', i + 1)) {
        let backslashes = 0;
        while (text.charCodeAt(i - 1 - backslashes) === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      if (i < 0) return max;
    }
  }
  return max;
}

/**
 * Checks the nesting of a request's JSON text (a `/graphql` body, a GET
 * `variables` or `extensions` parameter) before it is parsed, as
 * {@linkcode checkTextDepth} does for the query: parsing a body of 2.4 million
 * `[` took half a second of CPU before {@linkcode checkVariablesDepth} could
 * refuse it. Values are held to the limit the variables are, counted from the
 * variables object (`outer` levels of the text around it: 1 for a body).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkJsonTextDepth, DEFAULT_OPERATION_LIMITS } from "./limits.ts";
 * const body = (depth: number) => `{"query":"{a}","variables":{"v":${"[".repeat(depth)}${"]".repeat(depth)}}}`;
 * assert.equal(checkJsonTextDepth(body(199), DEFAULT_OPERATION_LIMITS, { outer: 1 }), null);
 * const error = checkJsonTextDepth(body(500), DEFAULT_OPERATION_LIMITS, { outer: 1 });
 * assert.equal(error?.extensions?.code, "MAX_DEPTH_EXCEEDED");
 * assert.equal(checkJsonTextDepth('{"s":"[[[[\\"[["}', { ...DEFAULT_OPERATION_LIMITS, approximateDepth: 1 }, { outer: 0 }), null);
 * ```
 * @param text The JSON text.
 * @param limits The limits.
 * @param options Levels of the text around the variables object; what the message calls the nesting.
 * @returns The error, or null when within the limit.
 */
export function checkJsonTextDepth(
  text: string,
  limits: OperationLimits,
  options: { readonly outer: number; readonly what?: string },
): GraphQLFormattedError | null {
  const limit = limits.approximateDepth + options.outer;
  if (jsonDepth(text, limit) <= limit) return null;
  const what = options.what ?? "nesting depth of JSON values (variables, extensions)";
  return refusal("MAX_DEPTH_EXCEEDED", what, {
    value: null,
    limit: limits.approximateDepth,
    key: "security.parser_limits.approximate_depth_limit",
  });
}

/** The codes of the refusals above (every one a 400 on `/graphql`, whatever the media type). */
const LIMIT_CODES: ReadonlySet<string> = new Set([
  "MAX_DEPTH_EXCEEDED",
  "MAX_INPUT_VALUES_EXCEEDED",
  "MAX_FIELDS_EXCEEDED",
  "MAX_ROOT_FIELDS_EXCEEDED",
  "MAX_ROOT_FIELD_ALIASES_EXCEEDED",
]);

/**
 * Whether a response's errors are a limit refusal (of the document or of the variables).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isLimitRefusal } from "./limits.ts";
 * assert.equal(isLimitRefusal([{ message: "…", extensions: { code: "MAX_DEPTH_EXCEEDED" } }]), true);
 * assert.equal(isLimitRefusal([{ message: "…", extensions: { code: "BAD_USER_INPUT" } }]), false);
 * ```
 * @param errors The response's errors.
 * @returns True when the first error carries a limit code.
 */
export function isLimitRefusal(errors: readonly GraphQLFormattedError[] | undefined): boolean {
  const code = errors?.[0]?.extensions?.code;
  return typeof code === "string" && LIMIT_CODES.has(code);
}
