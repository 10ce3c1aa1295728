/**
 * Pure federation composition: subgraph SDLs in, supergraph SDL or located
 * errors out, through `@theguild/federation-composition`.
 *
 * @module
 */
import { composeServices } from "@theguild/federation-composition";
import {
  type ASTNode,
  type DocumentNode,
  GraphQLError,
  Kind,
  parse,
  type SourceLocation,
  visit,
} from "graphql";

/** One subgraph to compose. */
export interface SubgraphSdl {
  /** Subgraph name (`accounts`); becomes the `join__Graph` value. */
  readonly name: string;
  /** Routing URL written into `@join__graph(url:)`. */
  readonly url: string;
  /** The subgraph's schema (federation v1 or v2 SDL). */
  readonly sdl: string;
}

/** Where in a subgraph SDL a composition error points. */
export interface CompositionLocation {
  readonly subgraph: string;
  /** 1-based line in that subgraph's SDL. */
  readonly line: number;
  /** 1-based column. */
  readonly column: number;
}

/** One composition error. */
export interface CompositionError {
  /** Composition error code (`FIELD_TYPE_MISMATCH`, `INVALID_GRAPHQL`, …). */
  readonly code: string;
  readonly message: string;
  /** Subgraphs the error is about, in input order (empty when unknown). */
  readonly subgraphs: readonly string[];
  /** Positions in the subgraph SDLs (empty when none could be found). */
  readonly locations: readonly CompositionLocation[];
}

/** Result of {@linkcode composeSupergraph}. */
export type CompositionOutcome =
  | { readonly ok: true; readonly supergraphSdl: string }
  | { readonly ok: false; readonly errors: readonly CompositionError[] };

/**
 * Composes subgraph SDLs into an Apollo Federation v2 supergraph SDL (join
 * v0.3). Never throws on bad input: syntax errors and composition errors come
 * back as values, each naming its subgraph(s) and, when it can be found, the
 * position of the type or field it is about.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { composeSupergraph } from "./compose.ts";
 * const link = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';
 * const ok = composeSupergraph([
 *   { name: "a", url: "http://a/graphql", sdl: `${link}\ntype Query { hello: String }` },
 * ]);
 * assert.equal(ok.ok, true);
 * const bad = composeSupergraph([
 *   { name: "a", url: "http://a/graphql", sdl: `${link}\ntype Query { hello: String }` },
 *   { name: "b", url: "http://b/graphql", sdl: `${link}\ntype Query {\n  hello: Int\n}` },
 * ]);
 * assert.equal(bad.ok, false);
 * if (!bad.ok) {
 *   assert.ok(bad.errors.some((e) => e.code === "FIELD_TYPE_MISMATCH"));
 *   assert.deepEqual(bad.errors[0]?.subgraphs, ["a", "b"]);
 * }
 * ```
 * @param subgraphs Subgraphs with name, routing URL and SDL.
 * @returns The supergraph SDL, or the errors.
 */
export function composeSupergraph(subgraphs: readonly SubgraphSdl[]): CompositionOutcome {
  const errors: CompositionError[] = [];
  const documents = new Map<string, DocumentNode>();
  const seen = new Set<string>();
  for (const subgraph of subgraphs) {
    if (seen.has(subgraph.name)) {
      errors.push({
        code: "DUPLICATE_SUBGRAPH_NAME",
        message: `Subgraph name "${subgraph.name}" is used more than once`,
        subgraphs: [subgraph.name],
        locations: [],
      });
      continue;
    }
    seen.add(subgraph.name);
    try {
      documents.set(subgraph.name, parse(subgraph.sdl));
    } catch (error) {
      if (!(error instanceof GraphQLError)) throw error;
      errors.push({
        code: "INVALID_GRAPHQL",
        message: `[${subgraph.name}] ${error.message}`,
        subgraphs: [subgraph.name],
        locations: locationsOf(subgraph.name, error.locations),
      });
    }
  }
  if (subgraphs.length === 0) {
    errors.push({
      code: "NO_SUBGRAPHS",
      message: "No subgraph to compose",
      subgraphs: [],
      locations: [],
    });
  }
  if (errors.length > 0) return { ok: false, errors };
  const result = composeServices(
    subgraphs.map((s) => ({ name: s.name, url: s.url, typeDefs: documents.get(s.name)! })),
  );
  if (result.errors === undefined) return { ok: true, supergraphSdl: result.supergraphSdl };
  return {
    ok: false,
    errors: result.errors.map((error) => describeError(error, subgraphs, documents)),
  };
}

/**
 * Formats one composition error as `subgraph:line:column: CODE message`
 * lines (one per location; the bare message when there is none).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatCompositionError } from "./compose.ts";
 * const text = formatCompositionError({
 *   code: "INVALID_GRAPHQL",
 *   message: "[a] Syntax Error: Expected Name, found <EOF>.",
 *   subgraphs: ["a"],
 *   locations: [{ subgraph: "a", line: 2, column: 13 }],
 * });
 * assert.equal(text, "a:2:13: INVALID_GRAPHQL [a] Syntax Error: Expected Name, found <EOF>.");
 * ```
 * @param error The error.
 * @returns Printable text.
 */
export function formatCompositionError(error: CompositionError): string {
  if (error.locations.length === 0) {
    const where = error.subgraphs.length > 0 ? `${error.subgraphs.join(", ")}: ` : "";
    return `${where}${error.code} ${error.message}`;
  }
  return error.locations
    .map((l) => `${l.subgraph}:${l.line}:${l.column}: ${error.code} ${error.message}`)
    .join("\n");
}

function locationsOf(
  subgraph: string,
  locations: readonly SourceLocation[] | undefined,
): CompositionLocation[] {
  return (locations ?? []).map((l) => ({ subgraph, line: l.line, column: l.column }));
}

const COORDINATE = /"([_A-Za-z][_0-9A-Za-z]*)(?:\.([_A-Za-z][_0-9A-Za-z]*))?"/g;

function describeError(
  error: GraphQLError,
  subgraphs: readonly SubgraphSdl[],
  documents: ReadonlyMap<string, DocumentNode>,
): CompositionError {
  const code = typeof error.extensions.code === "string"
    ? error.extensions.code
    : "COMPOSITION_ERROR";
  const named = error.extensions.subgraphName;
  const involved = typeof named === "string"
    ? [named]
    : subgraphs.map((s) => s.name).filter((name) => mentions(error.message, name));
  if (typeof named === "string" && error.locations !== undefined) {
    return {
      code,
      message: error.message,
      subgraphs: involved,
      locations: locationsOf(named, error.locations),
    };
  }
  // The first quoted schema coordinate ("Type" or "Type.field") that names a
  // definition in the involved subgraphs gives the positions.
  const locations: CompositionLocation[] = [];
  for (const match of error.message.matchAll(COORDINATE)) {
    for (const name of involved) {
      const document = documents.get(name);
      const node = document && findDefinition(document, match[1]!, match[2]);
      const start = node?.loc?.startToken;
      if (start !== undefined) {
        locations.push({ subgraph: name, line: start.line, column: start.column });
      }
    }
    if (locations.length > 0) break;
  }
  return { code, message: error.message, subgraphs: involved, locations };
}

function mentions(message: string, subgraph: string): boolean {
  return message.includes(`"${subgraph}"`) || message.startsWith(`[${subgraph}]`);
}

function findDefinition(
  document: DocumentNode,
  typeName: string,
  fieldName: string | undefined,
): ASTNode | undefined {
  let found: ASTNode | undefined;
  visit(document, {
    enter(node) {
      if (found !== undefined) return false;
      if (!("name" in node) || node.name === undefined || !("kind" in node)) return undefined;
      const isType = node.kind === Kind.OBJECT_TYPE_DEFINITION ||
        node.kind === Kind.OBJECT_TYPE_EXTENSION || node.kind === Kind.INTERFACE_TYPE_DEFINITION ||
        node.kind === Kind.INTERFACE_TYPE_EXTENSION ||
        node.kind === Kind.INPUT_OBJECT_TYPE_DEFINITION ||
        node.kind === Kind.ENUM_TYPE_DEFINITION || node.kind === Kind.UNION_TYPE_DEFINITION ||
        node.kind === Kind.SCALAR_TYPE_DEFINITION;
      if (!isType) return undefined;
      if (node.name.value !== typeName) return false;
      if (fieldName === undefined) {
        found = node;
        return false;
      }
      const fields = "fields" in node
        ? node.fields ?? []
        : "values" in node
        ? node.values ?? []
        : [];
      found = fields.find((f) => f.name.value === fieldName);
      return false;
    },
  });
  return found;
}
