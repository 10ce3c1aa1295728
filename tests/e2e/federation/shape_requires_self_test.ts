/**
 * Issue 13, shape 1: `@requires` partly served by the requiring subgraph
 * itself. The required set selects a field the requiring subgraph owns
 * (`category { id rate }`, `rate` lives in `pricing`), a field with an
 * argument, and a chain where `pricing` requires from `catalog` what
 * `catalog` requires from `pricing`.
 *
 * @module
 */
import { type Area, fed2, type FedCase, registerArea, type SubgraphDef } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";
import { monolithCase } from "./_monolith.ts";

const CATEGORIES = {
  c1: { id: "c1", title: "Books", rate: 0.1 },
  c2: { id: "c2", title: "Tools", rate: 0.25 },
} as const;
type CategoryId = keyof typeof CATEGORIES;
const PRODUCTS: readonly {
  id: string;
  name: string;
  category: CategoryId;
  cm: number;
  base: number;
}[] = [
  { id: "p1", name: "Atlas", category: "c1", cm: 30, base: 40 },
  { id: "p2", name: "Hammer", category: "c2", cm: 25, base: 12 },
  { id: "p3", name: "Zine", category: "c1", cm: 20, base: 4 },
];

const sizeOf = (cm: number, unit: string) => unit === "IN" ? Math.round(cm / 2.54) : cm;
const taxedOf = (base: number, rate: number) => Math.round(base * (1 + rate) * 100) / 100;
const scoreOf = (base: number) => base * 2 + 1;
const labelOf = (score: number) => `score:${score}`;
const sizeLabelOf = (inches: number) => `${inches}in`;
const product = (id: string) => PRODUCTS.find((p) => p.id === id);

/** The monolith's data: every field of the API schema, computed once. */
export const root = {
  products: PRODUCTS.map((p) => ({
    id: p.id,
    name: p.name,
    category: { ...CATEGORIES[p.category] },
    size: ({ unit }: { unit: string }) => sizeOf(p.cm, unit),
    base: p.base,
    score: scoreOf(p.base),
    label: labelOf(scoreOf(p.base)),
    taxed: taxedOf(p.base, CATEGORIES[p.category].rate),
    sizeLabel: sizeLabelOf(sizeOf(p.cm, "IN")),
  })),
  categories: Object.values(CATEGORIES).map((c) => ({ ...c })),
};

type Rep = { id: string } & Record<string, unknown>;

const NAME = "shape_requires_self";

/** `catalog` owns products and categories, `pricing` adds rates and computed fields. */
const SUBGRAPHS: readonly SubgraphDef[] = [
  {
    name: "catalog",
    typeDefs: fed2("@key", "@external", "@requires") + `
        enum Unit { CM IN }
        type Query {
          products: [Product!]!
          categories: [Category!]!
        }
        type Product @key(fields: "id") {
          id: ID!
          name: String!
          category: Category!
          size(unit: Unit! = CM): Int!
          base: Int! @external
          score: Int! @requires(fields: "base")
        }
        type Category @key(fields: "id") {
          id: ID!
          title: String!
        }
      `,
    resolvers: {
      Query: {
        products: () => PRODUCTS.map((p) => ({ id: p.id })),
        categories: () => Object.values(CATEGORIES).map((c) => ({ id: c.id })),
      },
      Product: {
        __resolveReference: (ref: Rep) => ref,
        name: (p: Rep) => product(p.id)?.name,
        category: (p: Rep) => ({ id: product(p.id)?.category }),
        size: (p: Rep, { unit }: { unit: string }) => sizeOf(product(p.id)?.cm ?? 0, unit),
        score: (p: { base: number }) => scoreOf(p.base),
      },
      Category: {
        __resolveReference: (ref: Rep) => ref,
        title: (c: Rep) => CATEGORIES[c.id as CategoryId].title,
      },
    },
  },
  {
    name: "pricing",
    typeDefs: fed2("@key", "@external", "@requires") + `
        enum Unit { CM IN }
        type Product @key(fields: "id") {
          id: ID!
          base: Int!
          category: Category! @external
          size(unit: Unit! = CM): Int! @external
          score: Int! @external
          taxed: Float! @requires(fields: "category { id rate }")
          sizeLabel: String! @requires(fields: "size(unit: IN)")
          label: String! @requires(fields: "score")
        }
        type Category @key(fields: "id") {
          id: ID!
          rate: Float!
        }
      `,
    resolvers: {
      Product: {
        __resolveReference: (ref: Rep) => ref,
        base: (p: Rep) => product(p.id)?.base,
        taxed: (p: Rep & { category: { rate: number } }) =>
          taxedOf(product(p.id)?.base ?? 0, p.category.rate),
        sizeLabel: (p: { size: number }) => sizeLabelOf(p.size),
        label: (p: { score: number }) => labelOf(p.score),
      },
      Category: {
        __resolveReference: (ref: Rep) => ref,
        rate: (c: Rep) => CATEGORIES[c.id as CategoryId].rate,
      },
    },
  },
];

/** A case whose expected answer is the monolith's (the reference gateway is wrong). */
function fromMonolith(name: string, query: string, note: string): FedCase {
  return monolithCase({ name: NAME, subgraphs: SUBGRAPHS }, { name, query, root, note });
}

/** The graph and its cases. */
export const area: Area = {
  name: NAME,
  title: "issue 13 shape 1: @requires partly served by the requiring subgraph",
  subgraphs: SUBGRAPHS,
  cases: [
    {
      name: "required nested field owned by the requiring subgraph (category { id rate })",
      query: `{ products { id taxed } }`,
    },
    fromMonolith(
      "required field with an enum argument beside the client's field with its default",
      `{ products { id sizeLabel size } }`,
      "Apollo Gateway merges the required size(unit: IN) into the client's size (default CM) " +
        "and answers inches for both",
    ),
    fromMonolith(
      "requires chain pricing → catalog → pricing",
      `{ products { name label } }`,
      "Apollo Gateway asks catalog for base (external there) with score: null for a non-null field",
    ),
    fromMonolith(
      "every requiring field at once, with the required fields also selected",
      `{ products { id base score taxed label sizeLabel category { title rate } } }`,
      "Apollo Gateway asks catalog for base (external there) with score: null for a non-null field",
    ),
  ],
};

registerArea(area);
registerDifferential({ area, root, generator: { maxDepth: 3 } });
