/**
 * Audit shape "union interface distributed": which interfaces a type
 * implements differs per subgraph. `Stove` is a member of the union `Good`
 * in `shop`, where it implements nothing; in `care` it implements `Entry`
 * and `Covered`. `Kettle` implements `Entry` in `shop` and has `guarantee`
 * there without implementing `Covered`. A condition on an interface under
 * the union (`goods { ... on Entry { id } }`, `... on Covered { guarantee }`)
 * must be sent to each subgraph in terms its schema accepts (the members
 * that implement it *in the supergraph*), and `Stove.guarantee` comes from
 * `care` by key. `shop` answering a `Stove` for its `Entry` root field is
 * a subgraph error (not a possible type there).
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const GOODS = [
  { __typename: "Stove", id: "s1", guarantee: 1 },
  { __typename: "Kettle", id: "k1", guarantee: 3 },
  { __typename: "Stove", id: "s2", guarantee: 2 },
  { __typename: "Kettle", id: "k2", guarantee: 4 },
] as const;
const good = (id: unknown) => GOODS.find((g) => g.id === id);
const kettles = () => GOODS.filter((g) => g.__typename === "Kettle");

/** The monolith's data (`entry` is only generated with kettle ids: see the last cases). */
export const root = {
  goods: GOODS.map((g) => ({ ...g })),
  entries: kettles().map((g) => ({ ...g })),
  kettles: kettles().map((g) => ({ ...g })),
  entry: ({ id }: { id: string }) => good(id) ? { ...good(id) } : null,
};

/** `shop` answers a stove without its guarantee (that is `care`'s). */
const inShop = (g: (typeof GOODS)[number]) =>
  g.__typename === "Stove" ? { __typename: "Stove", id: g.id } : { ...g };

/** The graph: `shop` (roots, union, kettles), `care` (stoves' interfaces and guarantee). */
export const area: Area = {
  name: "shape_distributed_implements",
  title: "audit union-interface-distributed: interfaces implemented in one subgraph only",
  subgraphs: [
    {
      name: "shop",
      typeDefs: fed2("@key") + `
        type Query {
          goods: [Good]
          entry(id: ID!): Entry
          entries: [Entry]
          kettles: [Kettle]
        }
        union Good = Stove | Kettle
        interface Entry {
          id: ID!
        }
        type Stove @key(fields: "id") {
          id: ID!
        }
        type Kettle implements Entry @key(fields: "id") {
          id: ID!
          guarantee: Int
        }
      `,
      resolvers: {
        Query: {
          goods: () => GOODS.map(inShop),
          entry: (_: unknown, { id }: { id: string }) => good(id) ? inShop(good(id)!) : null,
          entries: () => kettles().map(inShop),
          kettles: () => kettles().map(inShop),
        },
        Stove: {
          __resolveReference: (ref: { id: string }) =>
            good(ref.id)?.__typename === "Stove" ? inShop(good(ref.id)!) : null,
        },
        Kettle: {
          __resolveReference: (ref: { id: string }) =>
            good(ref.id)?.__typename === "Kettle" ? inShop(good(ref.id)!) : null,
        },
      },
    },
    {
      name: "care",
      typeDefs: fed2("@key") + `
        interface Entry {
          id: ID!
        }
        interface Covered {
          guarantee: Int
        }
        type Stove implements Entry & Covered @key(fields: "id") {
          id: ID!
          guarantee: Int
        }
      `,
      resolvers: {
        Stove: {
          __resolveReference: (ref: { id: string }) =>
            good(ref.id)?.__typename === "Stove" ? { ...good(ref.id) } : null,
        },
      },
    },
  ],
  cases: [
    {
      name: "interface condition under a union whose member implements it only elsewhere",
      query: `{ goods { ... on Entry { id } } }`,
    },
    {
      name: "field under an interface only another subgraph knows, fetched by key",
      query: `{ goods { __typename ... on Covered { guarantee } } }`,
    },
    {
      name: "both interface conditions and a member condition together",
      query:
        `{ goods { ... on Covered { guarantee } ... on Entry { id } ... on Kettle { g: guarantee } } }`,
    },
    {
      name: "member conditions under an interface list",
      query: `{ entries { ... on Kettle { guarantee } ... on Stove { id } } }`,
    },
    {
      name: "named fragments on a member and on its interface",
      query:
        `{ kettles { ...K ...E } } fragment K on Kettle { id } fragment E on Entry { id __typename }`,
    },
    {
      name: "interface root answered with a type the subgraph does not list as possible: error",
      query: `{ entry(id: "s1") { ... on Stove { guarantee } } }`,
      errors: "path",
      monolith: false,
    },
    {
      name: "interface root answered with a member of the subgraph",
      query: `{ entry(id: "k1") { ... on Kettle { guarantee } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({
  area,
  root,
  generator: { values: { "Query.entry(id:)": ['"k1"', '"k2"', '"zz"'] } },
});
