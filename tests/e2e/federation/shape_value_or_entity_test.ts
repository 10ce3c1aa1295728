/**
 * Audit shape "parent entity call complex": `Section` is a value type in
 * `extras` (with `notes`, computed per product) and an entity in `links`
 * and `names`. `item { section { id title notes } }` needs three different
 * ways in: `notes` by re-entering the parent `Product` in `extras` (where
 * `Product.id` is `@external`, yet the key still enters it), `id` by
 * re-entering `Product` in `links`, then `title` from `names` by the
 * section's key. Two products share one section entity, with different
 * value-type `notes`.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const SECTIONS: Record<string, string> = { z1: "Shoes", z2: "Hats" };
const PRODUCTS: Record<string, { label: string; section: string }> = {
  "1": { label: "Boot", section: "z1" },
  "2": { label: "Sandal", section: "z1" },
  "3": { label: "Cap", section: "z2" },
};
const notesOf = (id: string) => `Notes for product ${id}`;

/** The monolith's data. */
export const root = {
  item: ({ id }: { id: string }) => {
    const p = PRODUCTS[id];
    if (p === undefined) return null;
    return {
      id,
      label: p.label,
      section: { id: p.section, title: SECTIONS[p.section], notes: notesOf(id) },
    };
  },
  items: () => Object.keys(PRODUCTS).map((id) => root.item({ id })),
};

/** The graph: `base` (roots, labels), `extras` (value-type notes), `links` (section ids), `names`. */
export const area: Area = {
  name: "shape_value_or_entity",
  title: "audit parent-entity-call-complex: a value type in one subgraph, an entity in others",
  subgraphs: [
    {
      name: "extras",
      typeDefs: fed2("@key", "@external", "@shareable") + `
        type Product @key(fields: "id") {
          id: ID! @external
          section: Section @shareable
        }
        type Section {
          notes: String
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (ref: { id: string }) =>
            PRODUCTS[ref.id] ? { id: ref.id, section: { notes: notesOf(ref.id) } } : null,
        },
      },
    },
    {
      name: "links",
      typeDefs: fed2("@key", "@shareable") + `
        type Product @key(fields: "id") {
          id: ID!
          section: Section @shareable
        }
        type Section @key(fields: "id") {
          id: ID!
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (ref: { id: string }) =>
            PRODUCTS[ref.id] ? { id: ref.id, section: { id: PRODUCTS[ref.id]!.section } } : null,
        },
      },
    },
    {
      name: "names",
      typeDefs: fed2("@key") + `
        type Section @key(fields: "id") {
          id: ID!
          title: String
        }
      `,
      resolvers: {
        Section: {
          __resolveReference: (ref: { id: string }) =>
            SECTIONS[ref.id] ? { id: ref.id, title: SECTIONS[ref.id] } : null,
        },
      },
    },
    {
      name: "base",
      typeDefs: fed2("@key") + `
        type Query {
          item(id: ID!): Product
          items: [Product!]!
        }
        type Product @key(fields: "id") {
          id: ID!
          label: String
        }
      `,
      resolvers: {
        Query: {
          item: (_: unknown, { id }: { id: string }) =>
            PRODUCTS[id] ? { id, label: PRODUCTS[id]!.label } : null,
          items: () => Object.entries(PRODUCTS).map(([id, p]) => ({ id, label: p.label })),
        },
        Product: {
          __resolveReference: (ref: { id: string }) =>
            PRODUCTS[ref.id] ? { id: ref.id, label: PRODUCTS[ref.id]!.label } : null,
        },
      },
    },
  ],
  cases: [
    {
      name: "value-type field, entity key and entity field of one nested object, three ways in",
      query: `{ item(id: "1") { id label section { id title notes } } }`,
    },
    {
      name: "value-type field only, with an external key on the parent",
      query: `{ item(id: "2") { section { notes } } }`,
    },
    {
      name: "a shared section entity under two products keeps each product's notes",
      query: `{ items { label section { title notes } } }`,
    },
    {
      name: "missing item: null, no fetch beyond the root",
      query: `{ item(id: "9") { section { title notes } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({
  area,
  root,
  generator: { values: { "Query.item(id:)": ['"1"', '"3"', '"9"'] } },
});
