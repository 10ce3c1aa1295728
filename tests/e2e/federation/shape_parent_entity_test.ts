/**
 * Issue 13, shape 4: going back through the parent entity. `Category` is a
 * value type nested under the entity `Product`; its `tagline` is served
 * only by `details`, reachable only by re-entering `Product` by its key in
 * `details` and selecting `category { tagline }` there. `Seller.rating`
 * (two levels down) is the same one level deeper. `Brand` is an entity of
 * `catalog` whose `slogan` lives in `details` behind a `resolvable: false`
 * key: having a key somewhere must not stop the planner from going back
 * through `Product`.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const PRODUCTS = [
  { id: "p1", name: "Lamp", category: { id: "c1", name: "Home", tagline: "Cosy" } },
  { id: "p2", name: "Saw", category: { id: "c2", name: "Tools", tagline: "Sharp" } },
];
const SELLERS: Record<string, { id: string; name: string; rating: number }> = {
  p1: { id: "s1", name: "Ann", rating: 4 },
  p2: { id: "s2", name: "Raj", rating: 5 },
};
const BRANDS: Record<string, { id: string; name: string; slogan: string }> = {
  p1: { id: "b1", name: "Lumo", slogan: "Light up" },
  p2: { id: "b2", name: "Cutt", slogan: "Clean cuts" },
};
const product = (id: string) => PRODUCTS.find((p) => p.id === id)!;

/** The monolith's data. */
export const root = {
  products: PRODUCTS.map((p) => ({
    id: p.id,
    name: p.name,
    category: { ...p.category, seller: { ...SELLERS[p.id]! } },
    brand: { ...BRANDS[p.id]! },
  })),
};

/** The graph: `catalog` (root, names), `details` (taglines and seller ratings). */
export const area: Area = {
  name: "shape_parent_entity",
  title: "issue 13 shape 4: a nested field reached by re-entering the parent entity",
  subgraphs: [
    {
      name: "catalog",
      typeDefs: fed2("@key", "@shareable") + `
        type Query {
          products: [Product!]!
        }
        type Product @key(fields: "id") {
          id: ID!
          name: String!
          category: Category! @shareable
          brand: Brand! @shareable
        }
        type Brand @key(fields: "id") {
          id: ID!
          name: String!
        }
        type Category @shareable {
          id: ID!
          name: String!
          seller: Seller!
        }
        type Seller @shareable {
          id: ID!
          name: String!
        }
      `,
      resolvers: {
        Query: {
          products: () =>
            PRODUCTS.map((p) => ({
              ...p,
              category: { ...p.category, seller: SELLERS[p.id] },
              brand: BRANDS[p.id],
            })),
        },
        Product: {
          __resolveReference: (ref: { id: string }) => {
            const p = product(ref.id);
            return {
              ...p,
              category: { ...p.category, seller: SELLERS[p.id] },
              brand: BRANDS[p.id],
            };
          },
        },
        Brand: {
          __resolveReference: (ref: { id: string }) =>
            Object.values(BRANDS).find((b) => b.id === ref.id),
        },
      },
    },
    {
      name: "details",
      typeDefs: fed2("@key", "@shareable") + `
        type Product @key(fields: "id") {
          id: ID!
          category: Category! @shareable
          brand: Brand! @shareable
        }
        type Brand @key(fields: "id", resolvable: false) {
          id: ID!
          slogan: String!
        }
        type Category @shareable {
          id: ID!
          tagline: String!
          seller: Seller!
        }
        type Seller @shareable {
          id: ID!
          rating: Int!
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (ref: { id: string }) => {
            const p = product(ref.id);
            return {
              id: p.id,
              category: { ...p.category, seller: SELLERS[p.id] },
              brand: BRANDS[p.id],
            };
          },
        },
      },
    },
  ],
  cases: [
    {
      name: "nested value-type field of another subgraph fetched by re-entering the parent by key",
      query: `{ products { name category { name tagline } } }`,
    },
    {
      name: "two levels below the parent entity",
      query: `{ products { category { seller { name rating } } } }`,
    },
    {
      name: "only the far subgraph's nested fields, under aliases",
      query: `{ products { c: category { t: tagline s: seller { r: rating } } } }`,
    },
    {
      name: "field behind a resolvable: false key reached through the parent entity",
      query: `{ products { brand { name slogan } } }`,
    },
    {
      name: "resolvable: false field only, with the parent's own field",
      query: `{ products { id name brand { slogan } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
