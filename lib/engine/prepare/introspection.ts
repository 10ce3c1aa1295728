/**
 * Introspection at the edge: finding `__schema` / `__type` in any position
 * (refused when `introspection.enabled` is off), an `ofType` depth cap as a
 * validation rule, and the document graphql-js answers introspection from
 * (root introspection fields found through fragments too).
 *
 * The `ofType` rule reads each fragment's summary once (`_fragments.ts`), so
 * it runs before validation refuses fragment cycles at a cost linear in the
 * text; the other walks run after the operation limits (`limits.ts`).
 *
 * @module
 */
import {
  type ASTVisitor,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLFormattedError,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from "graphql";
import { summarizeFragments } from "./_fragments.ts";

/** Longest chain of nested `ofType` fields accepted (graphql-js's introspection query uses 9). */
export const MAX_OF_TYPE_DEPTH = 10;

const INTROSPECTION_FIELDS = new Set(["__schema", "__type"]);

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION && !fragments.has(d.name.value)) {
      fragments.set(d.name.value, d);
    }
  }
  return fragments;
}

/**
 * The first `__schema` or `__type` field anywhere in a document (operations
 * and fragment definitions, aliased or not, at any depth). Iterative.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parse } from "graphql";
 * import { findIntrospectionField } from "./introspection.ts";
 * const doc = parse("{ ...F } fragment F on Query { ... on Query { t: __type(name: \"A\") { name } } }");
 * assert.equal(findIntrospectionField(doc)?.name.value, "__type");
 * assert.equal(findIntrospectionField(parse("{ __typename }")), null);
 * ```
 * @param document The parsed document.
 * @returns The field, or null.
 */
export function findIntrospectionField(document: DocumentNode): FieldNode | null {
  const stack: SelectionSetNode[] = [];
  for (const d of document.definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION || d.kind === Kind.FRAGMENT_DEFINITION) {
      stack.push(d.selectionSet);
    }
  }
  while (stack.length > 0) {
    for (const s of stack.pop()!.selections) {
      if (s.kind === Kind.FIELD && INTROSPECTION_FIELDS.has(s.name.value)) return s;
      if (s.kind !== Kind.FRAGMENT_SPREAD && s.selectionSet) stack.push(s.selectionSet);
    }
  }
  return null;
}

/**
 * The request error for introspection while `introspection.enabled` is off.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { introspectionDisabled } from "./introspection.ts";
 * assert.equal(introspectionDisabled().extensions?.code, "INTROSPECTION_DISABLED");
 * ```
 * @returns The formatted error.
 */
export function introspectionDisabled(): GraphQLFormattedError {
  return {
    message: "Introspection is disabled (introspection.enabled)",
    extensions: { code: "INTROSPECTION_DISABLED" },
  };
}

/**
 * The `ofType` chains of a selection set: `open` is the longest run of nested
 * `ofType` fields from its top (it continues the chain of the field the set
 * belongs to), `closed` the longest chain that starts inside it.
 */
interface OfTypeChains {
  readonly open: number;
  readonly closed: number;
}

const NO_CHAINS: OfTypeChains = Object.freeze({ open: 0, closed: 0 });

/**
 * The chains of one selection set, reading each spread fragment's summary
 * (a spread closing a cycle counts as empty: validation refuses the cycle).
 * Iterative; each frame knows whether its chain is still open (continuing the
 * set's caller) and how many `ofType` fields it counts so far.
 */
function ofTypeChains(
  set: SelectionSetNode,
  fragments: ReadonlyMap<string, OfTypeChains>,
): OfTypeChains {
  let open = 0;
  let closed = 0;
  const stack: { set: SelectionSetNode; anchored: boolean; chain: number }[] = [
    { set, anchored: false, chain: 0 },
  ];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    for (const s of frame.set.selections) {
      let chain = frame.chain;
      let anchored = frame.anchored;
      if (s.kind === Kind.FIELD) {
        if (s.name.value === "ofType") chain++;
        else [chain, anchored] = [0, true];
        if (s.selectionSet) stack.push({ set: s.selectionSet, anchored, chain });
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        stack.push({ set: s.selectionSet, anchored, chain });
        continue;
      } else {
        const fragment = fragments.get(s.name.value) ?? NO_CHAINS;
        if (fragment.closed > closed) closed = fragment.closed;
        chain += fragment.open;
      }
      if (anchored) closed = Math.max(closed, chain);
      else open = Math.max(open, chain);
    }
  }
  return { open, closed };
}

/**
 * The longest chain of directly nested `ofType` fields, fragments expanded:
 * each fragment is summarized once ({@linkcode summarizeFragments}), so a
 * document spreading fragments in a web or a cycle costs its text's size,
 * not one walk per path.
 */
function longestOfTypeChain(document: DocumentNode): number {
  const fragments = summarizeFragments(fragmentsOf(document), ofTypeChains);
  let longest = 0;
  for (const d of document.definitions) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue;
    const chains = ofTypeChains(d.selectionSet, fragments);
    longest = Math.max(longest, chains.open, chains.closed);
  }
  return longest;
}

/**
 * Validation rule: at most {@linkcode MAX_OF_TYPE_DEPTH} nested `ofType`
 * fields (graphql-js's `MaxIntrospectionDepthRule`, part of its specified
 * rules, caps nested lists of types; this caps the wrapping chain).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse, validate } from "graphql";
 * import { OfTypeDepthRule } from "./introspection.ts";
 * const schema = buildSchema("type Query { a: Int }");
 * const deep = `{ __type(name: "Query") { ${"ofType { ".repeat(11)}name${" }".repeat(11)} } }`;
 * assert.equal(validate(schema, parse(deep), [OfTypeDepthRule]).length, 1);
 * ```
 * @param context The validation context.
 * @returns The visitor.
 */
export function OfTypeDepthRule(context: ValidationContext): ASTVisitor {
  return {
    Document(node) {
      const chain = longestOfTypeChain(node);
      if (chain > MAX_OF_TYPE_DEPTH) {
        context.reportError(
          new GraphQLError(
            `Introspection "ofType" is nested ${chain} levels deep; at most ${MAX_OF_TYPE_DEPTH} are allowed`,
          ),
        );
      }
      return false;
    },
  };
}

/**
 * The document graphql-js runs to answer an operation's introspection: its
 * root `__schema` / `__type` fields, also when they sit in inline fragments
 * or fragment spreads on the root type, plus the document's fragments.
 *
 * @example A fragment-wrapped `__type` is found
 * ```ts
 * import assert from "node:assert/strict";
 * import { Kind, parse } from "graphql";
 * import { introspectionDocument } from "./introspection.ts";
 * const doc = parse('{ a ... on Query { __type(name: "A") { name } } }');
 * const op = doc.definitions[0]!;
 * assert.ok(op.kind === Kind.OPERATION_DEFINITION);
 * const out = introspectionDocument(doc, op);
 * const root = out?.definitions[0];
 * assert.ok(root?.kind === Kind.OPERATION_DEFINITION);
 * assert.equal(root.selectionSet.selections.length, 1);
 * ```
 * @param document The validated document.
 * @param operation The selected operation.
 * @returns The introspection document, or null when there is no introspection.
 */
export function introspectionDocument(
  document: DocumentNode,
  operation: OperationDefinitionNode,
): DocumentNode | null {
  const fragments = fragmentsOf(document);
  const selections: FieldNode[] = [];
  const seen = new Set<string>();
  const stack: SelectionSetNode[] = [operation.selectionSet];
  while (stack.length > 0) {
    for (const s of stack.pop()!.selections) {
      if (s.kind === Kind.FIELD) {
        if (INTROSPECTION_FIELDS.has(s.name.value)) selections.push(s);
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        stack.push(s.selectionSet);
      } else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const fragment = fragments.get(s.name.value);
        if (fragment) stack.push(fragment.selectionSet);
      }
    }
  }
  if (selections.length === 0) return null;
  return {
    kind: Kind.DOCUMENT,
    // Fragments stay: introspection queries (GraphiQL's) spread them.
    definitions: [
      { ...operation, selectionSet: { kind: Kind.SELECTION_SET, selections } },
      ...fragments.values(),
    ],
  };
}
