/**
 * Seeded operation generator of the differential federation tests.
 *
 * Walks an API schema from the `Query` root and writes a valid operation:
 * nested selections up to a depth, aliases, arguments drawn from a small
 * value pool, `__typename`, inline fragments on abstract types and on the
 * parent type, named fragments and `@skip`/`@include` with literals or
 * Boolean variables (`$c1` …; {@linkcode drawConditions} gives their
 * values). The
 * same schema, options and seed always give the same operation (a
 * mulberry32 stream; no globals, no I/O). Generated operations are
 * validated with graphql-js; an invalid draft (e.g. two fragments selecting
 * a response key with conflicting types) is redrawn from the next sub-seed.
 *
 * @module
 */
import {
  getNamedType,
  type GraphQLArgument,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLSchema,
  isAbstractType,
  isCompositeType,
  isEnumType,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  parse,
  validate,
} from "graphql";

/** Options of {@linkcode generateOperation}. */
export interface OpGenOptions {
  /** The seed: one seed, one operation. */
  readonly seed: number;
  /** Deepest nesting of composite fields below the root (default 3). */
  readonly maxDepth?: number;
  /** Most fields drawn per selection set (default 3). */
  readonly maxFields?: number;
  /**
   * Argument values, by argument coordinate (`Type.field(arg:)`) or by
   * named input type (`ID`, `String`, an enum …), as GraphQL literals.
   * Enums and Booleans default to all their values; an argument of a type
   * with no pool is left out when optional, and its field is skipped when
   * required.
   */
  readonly values?: Readonly<Record<string, readonly string[]>>;
  /** `Query` fields the operation may start from (default: all). */
  readonly roots?: readonly string[];
  /** Fields (`Type.field`) the generator must not select. */
  readonly exclude?: readonly string[];
  /**
   * Probability of `@defer` (with a label, and now and then `if:` a variable) on each fragment
   * drawn, and of wrapping a selection's tail in a deferred inline fragment. Default 0: no
   * `@defer`, and the same operations as without the option.
   */
  readonly defer?: number;
}

/** Default argument pools by named type. */
const DEFAULT_VALUES: Readonly<Record<string, readonly string[]>> = {
  Int: ["0", "1", "2"],
  Float: ["0.5", "2"],
  String: ['"a"', '"b"'],
  Boolean: ["true", "false"],
};

/** A seeded pseudo-random stream (mulberry32). */
class Random {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  /** One element. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  /** Up to `n` distinct elements, in a random order. */
  sample<T>(items: readonly T[], n: number): T[] {
    const pool = [...items];
    const out: T[] = [];
    while (out.length < n && pool.length > 0) {
      out.push(pool.splice(Math.floor(this.next() * pool.length), 1)[0]!);
    }
    return out;
  }
}

/** State of one draft. */
interface Draft {
  readonly random: Random;
  readonly schema: GraphQLSchema;
  readonly maxDepth: number;
  readonly maxFields: number;
  readonly values: Readonly<Record<string, readonly string[]>>;
  readonly exclude: ReadonlySet<string>;
  readonly fragments: string[];
  aliases: number;
  /** Boolean variables drawn so far (`$c1` …), for `@skip`/`@include`. */
  conditions: number;
  /** Probability of `@defer` on a fragment (0: never drawn). */
  readonly defer: number;
  /** `@defer` labels drawn so far (`d1` …). */
  defers: number;
}

/** The literal pool of an argument, or undefined when it has none. */
function pool(
  draft: Draft,
  coordinate: string,
  arg: GraphQLArgument,
): readonly string[] | undefined {
  const own = draft.values[coordinate];
  if (own !== undefined) return own;
  let type = arg.type;
  if (isNonNullType(type)) type = type.ofType;
  if (isListType(type)) return undefined;
  const named = getNamedType(type);
  const byType = draft.values[named.name] ?? DEFAULT_VALUES[named.name];
  if (byType !== undefined) return byType;
  if (isEnumType(named)) return named.getValues().map((v) => v.name);
  if (isScalarType(named) && named.name === "ID") return ['"1"'];
  return undefined;
}

/** Arguments of a field as source text, or null when a required one has no value. */
function argumentsOf(
  draft: Draft,
  parent: string,
  field: GraphQLField<unknown, unknown>,
): string | null {
  const parts: string[] = [];
  for (const arg of field.args) {
    const values = pool(draft, `${parent}.${field.name}(${arg.name}:)`, arg);
    const required = isNonNullType(arg.type) && arg.defaultValue === undefined;
    if (values === undefined || values.length === 0) {
      if (required) return null;
      continue;
    }
    if (!required && draft.random.chance(0.4)) continue;
    parts.push(`${arg.name}: ${draft.random.pick(values)}`);
  }
  return parts.length === 0 ? "" : `(${parts.join(", ")})`;
}

/** Now and then a `@skip`/`@include` with a literal or a Boolean variable (leading space). */
function condition(draft: Draft): string {
  const { random } = draft;
  const roll = random.next();
  if (roll >= 0.06) return "";
  const name = random.pick(["skip", "include"]);
  const value = roll < 0.03 ? random.pick(["true", "false"]) : `$c${++draft.conditions}`;
  return ` @${name}(if: ${value})`;
}

/** Now and then a `@defer` (leading space); draws nothing when the option is off. */
function deferDirective(draft: Draft): string {
  if (draft.defer <= 0 || !draft.random.chance(draft.defer)) return "";
  const label = `label: "d${++draft.defers}"`;
  if (!draft.random.chance(0.2)) return ` @defer(${label})`;
  return ` @defer(${label}, if: $c${++draft.conditions})`;
}

/** One field selection, or null when it cannot be selected at this depth. */
function fieldSelection(
  draft: Draft,
  parent: GraphQLCompositeType,
  field: GraphQLField<unknown, unknown>,
  depth: number,
): string | null {
  if (draft.exclude.has(`${parent.name}.${field.name}`)) return null;
  const named = getNamedType(field.type);
  if (isCompositeType(named) && depth >= draft.maxDepth) return null;
  const args = argumentsOf(draft, parent.name, field);
  if (args === null) return null;
  const alias = draft.random.chance(0.2) ? `a${++draft.aliases}: ` : "";
  let text = `${alias}${field.name}${args}${condition(draft)}`;
  if (isCompositeType(named)) {
    const inner = selectionSet(draft, named, depth + 1);
    if (inner === null) return null;
    text += ` ${inner}`;
  }
  return text;
}

/** The selections of an object or interface's own fields (no braces); may be empty. */
function ownFields(
  draft: Draft,
  type: GraphQLObjectType | GraphQLInterfaceType,
  depth: number,
): string[] {
  const fields = Object.values(type.getFields());
  const leaves = fields.filter((f) => isLeafType(getNamedType(f.type)));
  const chosen = draft.random.sample(fields, draft.random.int(1, draft.maxFields));
  // at least one leaf when nesting is no longer possible
  if (depth >= draft.maxDepth && leaves.length > 0 && chosen.every((f) => !leaves.includes(f))) {
    chosen.push(draft.random.pick(leaves));
  }
  const out: string[] = [];
  for (const field of chosen) {
    const text = fieldSelection(draft, type, field, depth);
    if (text !== null) out.push(text);
  }
  return out;
}

/** A selection set `{ … }` for a composite type, or null when nothing can be selected. */
function selectionSet(draft: Draft, type: GraphQLCompositeType, depth: number): string | null {
  const { random } = draft;
  const parts: string[] = [];
  if (!isAbstractType(type) || isInterfaceType(type)) parts.push(...ownFields(draft, type, depth));
  if (isAbstractType(type)) {
    for (const member of draft.schema.getPossibleTypes(type)) {
      if (!random.chance(0.5)) continue;
      const inner = selectionSet(draft, member, depth);
      if (inner !== null) parts.push(`... on ${member.name}${deferDirective(draft)} ${inner}`);
    }
    if (isInterfaceType(type) && random.chance(0.15)) {
      const inner = selectionSet(draft, type, depth);
      if (inner !== null) parts.push(`... on ${type.name}${deferDirective(draft)} ${inner}`);
    }
  } else if (isObjectType(type)) {
    for (const iface of type.getInterfaces()) {
      if (!random.chance(0.15)) continue;
      const inner = selectionSet(draft, iface, depth);
      if (inner !== null) parts.push(`... on ${iface.name}${deferDirective(draft)} ${inner}`);
    }
  }
  if (random.chance(0.15) || parts.length === 0) {
    parts.push(random.chance(0.3) ? `t${++draft.aliases}: __typename` : "__typename");
  }
  if (random.chance(0.12)) {
    const name = `F${draft.fragments.length + 1}`;
    draft.fragments.push(""); // reserve the name before nested fragments are written
    const index = draft.fragments.length - 1;
    draft.fragments[index] = `fragment ${name} on ${type.name} { ${parts.join(" ")} }`;
    return `{ ...${name}${deferDirective(draft)} }`;
  }
  if (parts.length > 1 && random.chance(0.1)) {
    const split = random.int(1, parts.length - 1);
    const rest = parts.slice(split).join(" ");
    return `{ ${parts.slice(0, split).join(" ")} ...${condition(draft)} { ${rest} } }`;
  }
  if (draft.defer > 0 && parts.length > 1 && random.chance(draft.defer)) {
    const split = random.int(1, parts.length - 1);
    const rest = parts.slice(split).join(" ");
    const directive = deferDirective(draft) || ` @defer(label: "d${++draft.defers}")`;
    return `{ ${parts.slice(0, split).join(" ")} ...${directive} { ${rest} } }`;
  }
  return `{ ${parts.join(" ")} }`;
}

/**
 * Generates one valid operation over an API schema.
 * @param schema The API schema (the one clients see).
 * @param options Seed, depth, value pools, roots, excluded fields.
 * @returns The operation's source text.
 * @throws {Error} When no valid operation is found in 50 drafts (a schema the generator cannot walk).
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * import { buildSchema } from "graphql";
 * const schema = buildSchema(`type Query { a: Int b(x: Int!): Int }`);
 * equal(generateOperation(schema, { seed: 7 }), generateOperation(schema, { seed: 7 }));
 * ```
 */
export function generateOperation(schema: GraphQLSchema, options: OpGenOptions): string {
  const query = schema.getQueryType();
  if (query === null || query === undefined) throw new Error("The schema has no Query type");
  const rootFields = Object.values(query.getFields()).filter((f) =>
    options.roots === undefined || options.roots.includes(f.name)
  );
  for (let attempt = 0; attempt < 50; attempt++) {
    const draft: Draft = {
      random: new Random((options.seed * 7919 + attempt * 104729) >>> 0),
      schema,
      maxDepth: options.maxDepth ?? 3,
      maxFields: options.maxFields ?? 3,
      values: options.values ?? {},
      exclude: new Set(options.exclude ?? []),
      fragments: [],
      aliases: 0,
      conditions: 0,
      defer: options.defer ?? 0,
      defers: 0,
    };
    const parts: string[] = [];
    for (const field of draft.random.sample(rootFields, draft.random.int(1, 2))) {
      const text = fieldSelection(draft, query, field, 0);
      if (text !== null) parts.push(text);
    }
    if (parts.length === 0) continue;
    const variables = Array.from({ length: draft.conditions }, (_, i) => `$c${i + 1}: Boolean!`);
    const head = variables.length === 0 ? "" : `query (${variables.join(", ")}) `;
    const source = [`${head}{ ${parts.join(" ")} }`, ...draft.fragments].join("\n");
    if (validate(schema, parse(source)).length === 0) return source;
  }
  throw new Error(`No valid operation for seed ${options.seed}`);
}

/**
 * Values for an operation's `@skip`/`@include` variables (`$c1` …): one
 * seeded draw and its complement, so each condition is run both ways; a
 * single empty assignment when the operation has none.
 * @param source The operation (from {@linkcode generateOperation}).
 * @param seed The operation's seed.
 * @returns The variable assignments to run it with.
 * @example
 * ```ts
 * import { deepStrictEqual } from "node:assert/strict";
 * deepStrictEqual(drawConditions("{ a }", 1), [{}]);
 * const [one, other] = drawConditions("query ($c1: Boolean!) { a @skip(if: $c1) }", 1);
 * deepStrictEqual(other, { c1: !one!.c1 });
 * ```
 */
export function drawConditions(source: string, seed: number): Record<string, boolean>[] {
  const names = [...source.matchAll(/\$(c\d+): Boolean!/g)].map((m) => m[1]!);
  if (names.length === 0) return [{}];
  const random = new Random((seed * 2654435761) >>> 0);
  const one = Object.fromEntries(names.map((n) => [n, random.chance(0.5)]));
  return [one, Object.fromEntries(names.map((n) => [n, !one[n]]))];
}
