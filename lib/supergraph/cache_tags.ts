/**
 * `@cacheTag(format:)` (Apollo Federation's directive, issue 42,
 * docs/caching.md#cache-tags) read from a supergraph: tags the entity cache
 * gives its entries, so that one invalidation `{ kind: "cache_tag" }` removes
 * every entry carrying the tag.
 *
 * On an object type (an entity) a format interpolates the entity's key fields,
 * `{$key.id}`, `{$key.organization.id}`; on a root field of `Query` the
 * field's arguments, `{$args.id}`. The composition library keeps the directive
 * when the subgraphs declare it under `@composeDirective` (docs/caching.md);
 * the names `cacheTag` and `federation__cacheTag` are read.
 *
 * @module
 */
import {
  type ConstDirectiveNode,
  type DocumentNode,
  Kind,
  type ObjectTypeDefinitionNode,
  type ObjectTypeExtensionNode,
} from "graphql";
import { RouterError } from "../errors.ts";

/** One piece of a format: text as it is, or a path into `$key` / `$args`. */
export type CacheTagPart = string | {
  readonly from: "key" | "args";
  readonly path: readonly string[];
};

/** A parsed format (`user-{$key.id}` → `["user-", { from: "key", path: ["id"] }]`). */
export type CacheTagFormat = readonly CacheTagPart[];

/** The supergraph's cache tags. */
export interface CacheTagSchema {
  /** Formats of each object type's entities, by type name. */
  readonly types: ReadonlyMap<string, readonly CacheTagFormat[]>;
  /** Formats of each root field of `Query`, by field name. */
  readonly rootFields: ReadonlyMap<string, readonly CacheTagFormat[]>;
}

const NAMES = new Set(["cacheTag", "federation__cacheTag"]);
const PATH = /^\$(key|args)((?:\.[_A-Za-z][_0-9A-Za-z]*)+)$/;
/** Longest format read. */
const MAX_FORMAT_LENGTH = 256;

/**
 * Parses a format, or says what is wrong with it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseCacheTagFormat } from "./cache_tags.ts";
 * assert.deepEqual(parseCacheTagFormat("user-{$key.id}"), ["user-", { from: "key", path: ["id"] }]);
 * assert.equal(typeof parseCacheTagFormat("user-{id}"), "string");
 * ```
 * @param format The directive's `format`.
 * @returns Its parts, or an error message.
 */
export function parseCacheTagFormat(format: string): CacheTagFormat | string {
  if (format === "" || format.length > MAX_FORMAT_LENGTH) {
    return `expected a format of 1 to ${MAX_FORMAT_LENGTH} characters`;
  }
  const parts: CacheTagPart[] = [];
  let at = 0;
  while (at < format.length) {
    const open = format.indexOf("{", at);
    const close = format.indexOf("}", at);
    if (close >= 0 && (open < 0 || close < open)) return `unmatched "}" at ${close}`;
    if (open < 0) {
      parts.push(format.slice(at));
      break;
    }
    if (open > at) parts.push(format.slice(at, open));
    const end = format.indexOf("}", open);
    if (end < 0) return `unmatched "{" at ${open}`;
    const match = PATH.exec(format.slice(open + 1, end));
    if (match === null) {
      return `"${format.slice(open, end + 1)}" is not {$key.<field>} or {$args.<argument>}`;
    }
    parts.push({ from: match[1] as "key" | "args", path: match[2]!.slice(1).split(".") });
    at = end + 1;
  }
  return parts;
}

/**
 * A tag from its format and the values it reads; null when a value is
 * missing or not a scalar (the entry gets no such tag).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseCacheTagFormat, renderCacheTag } from "./cache_tags.ts";
 * const format = parseCacheTagFormat("user-{$key.id}");
 * assert.ok(typeof format !== "string");
 * assert.equal(renderCacheTag(format, { key: { id: 7 } }), "user-7");
 * assert.equal(renderCacheTag(format, { key: { id: { x: 1 } } }), null);
 * ```
 * @param format The parsed format.
 * @param values The entity's key fields (`key`) or the field's arguments (`args`).
 * @returns The tag.
 */
export function renderCacheTag(
  format: CacheTagFormat,
  values: { readonly key?: unknown; readonly args?: unknown },
): string | null {
  let out = "";
  for (const part of format) {
    if (typeof part === "string") {
      out += part;
      continue;
    }
    let value: unknown = values[part.from];
    for (const name of part.path) {
      value = value !== null && typeof value === "object" && !Array.isArray(value)
        ? (value as Record<string, unknown>)[name]
        : undefined;
    }
    if (typeof value === "string") out += value;
    else if (typeof value === "number" || typeof value === "boolean") out += String(value);
    else return null;
  }
  return out;
}

function formatsOf(
  directives: readonly ConstDirectiveNode[] | undefined,
  where: string,
  allowed: "key" | "args",
  argumentNames: ReadonlySet<string> | null,
): CacheTagFormat[] {
  const out: CacheTagFormat[] = [];
  for (const directive of directives ?? []) {
    if (!NAMES.has(directive.name.value)) continue;
    const arg = directive.arguments?.find((a) => a.name.value === "format");
    const value = arg?.value.kind === Kind.STRING ? arg.value.value : null;
    const parsed = value === null ? "expected a String format" : parseCacheTagFormat(value);
    let error = typeof parsed === "string" ? parsed : null;
    for (const part of typeof parsed === "string" ? [] : parsed) {
      if (typeof part === "string" || error !== null) continue;
      if (part.from !== allowed) {
        error = `{$${part.from}.…} is not available on ${
          allowed === "key" ? "a type (use {$key.<field>})" : "a field (use {$args.<argument>})"
        }`;
      } else if (argumentNames !== null && !argumentNames.has(part.path[0]!)) {
        error = `the field has no argument "${part.path[0]}"`;
      }
    }
    if (error !== null) {
      throw new RouterError("SUPERGRAPH_INVALID", `Invalid @cacheTag on ${where}: ${error}`, {
        details: { path: where },
      });
    }
    out.push(parsed as CacheTagFormat);
  }
  return out;
}

/**
 * Reads every `@cacheTag` of a supergraph: on object types, and on the fields
 * of the query root type (elsewhere it is refused, as Apollo's composition does).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parse } from "graphql";
 * import { readCacheTags } from "./cache_tags.ts";
 * const tags = readCacheTags(parse(`
 *   type Query { user(id: ID!): User @cacheTag(format: "user-{$args.id}") }
 *   type User @cacheTag(format: "user-{$key.id}") { id: ID! }
 * `), "Query");
 * assert.equal(tags.types.get("User")?.length, 1);
 * assert.deepEqual(tags.rootFields.get("user"), [["user-", { from: "args", path: ["id"] }]]);
 * ```
 * @param document The supergraph.
 * @param queryType The name of the query root type.
 * @returns The formats by type and root field.
 * @throws {RouterError} `SUPERGRAPH_INVALID` for a malformed format, or one on another type's field.
 */
export function readCacheTags(document: DocumentNode, queryType: string): CacheTagSchema {
  const types = new Map<string, CacheTagFormat[]>();
  const rootFields = new Map<string, CacheTagFormat[]>();
  for (const def of document.definitions) {
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION && def.kind !== Kind.OBJECT_TYPE_EXTENSION) {
      continue;
    }
    const type = def as ObjectTypeDefinitionNode | ObjectTypeExtensionNode;
    const name = type.name.value;
    const own = formatsOf(type.directives, name, "key", null);
    if (own.length > 0) types.set(name, [...(types.get(name) ?? []), ...own]);
    for (const field of type.fields ?? []) {
      const where = `${name}.${field.name.value}`;
      if (!field.directives?.some((d) => NAMES.has(d.name.value))) continue;
      if (name !== queryType) {
        throw new RouterError(
          "SUPERGRAPH_INVALID",
          `Invalid @cacheTag on ${where}: only root fields of ${queryType} and object types take one`,
          { details: { path: where } },
        );
      }
      const argumentNames = new Set((field.arguments ?? []).map((a) => a.name.value));
      const formats = formatsOf(field.directives, where, "args", argumentNames);
      rootFields.set(field.name.value, [...(rootFields.get(field.name.value) ?? []), ...formats]);
    }
  }
  return { types, rootFields };
}
