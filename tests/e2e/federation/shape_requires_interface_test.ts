/**
 * Issue 13, shape 5: requirements selected through interface type
 * conditions. `ownerTag` requires `owner { ... on Owner { name } ... on
 * Person { age } ... on Company { staff } }` and `ownerName` only `owner {
 * ... on Owner { name } }`: the representation must carry the fields
 * selected under the interface condition, or `derived` computes from
 * missing data (wrong data, no error). (`@requires(fields: "... on I { x }")`
 * on the entity itself does not compose: `I.x` would have to be external.)
 *
 * @module
 */
import { type Area, fed2, registerArea, type SubgraphDef } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

type Owner =
  | { __typename: "Person"; name: string; age: number }
  | { __typename: "Company"; name: string; staff: number };
const ITEMS: readonly { id: string; weight: number; owner: Owner }[] = [
  { id: "i1", weight: 9, owner: { __typename: "Person", name: "Ada", age: 36 } },
  { id: "i2", weight: 2, owner: { __typename: "Company", name: "Acme", staff: 40 } },
  { id: "i3", weight: 6, owner: { __typename: "Person", name: "Bo", age: 7 } },
];
const item = (id: string) => ITEMS.find((i) => i.id === id)!;
// the representation need not carry __typename (the requirement does not select it)
const tagOf = (o: { name?: string; age?: number; staff?: number }) =>
  `${o.name}/${o.age ?? o.staff}`;
const nameOf = (o: { name?: string }) => `owner:${o.name}`;

/** The monolith's data. */
export const root = {
  items: ITEMS.map((i) => ({
    __typename: "Item",
    id: i.id,
    weight: i.weight,
    owner: { ...i.owner },
    ownerTag: tagOf(i.owner),
    ownerName: nameOf(i.owner),
  })),
};

const OWNERS = `
  interface Owner {
    name: String!
  }
  type Person implements Owner @shareable {
    name: String!
    age: Int!
  }
  type Company implements Owner @shareable {
    name: String!
    staff: Int!
  }
`;
const ownerType = { __resolveType: (o: Owner) => o.__typename };

const NAME = "shape_requires_interface";

/** `core` (items, owners), `derived` (fields computed from them). */
const SUBGRAPHS: readonly SubgraphDef[] = [
  {
    name: "core",
    typeDefs: fed2("@key", "@shareable") + OWNERS + `
        type Query {
          items: [Item!]!
        }
        type Item @key(fields: "id") {
          id: ID!
          weight: Int!
          owner: Owner!
        }
      `,
    resolvers: {
      Query: { items: () => ITEMS },
      Owner: ownerType,
      Item: { __resolveReference: (ref: { id: string }) => item(ref.id) },
    },
  },
  {
    name: "derived",
    typeDefs: fed2("@key", "@shareable", "@external", "@requires") + OWNERS + `
        type Item @key(fields: "id") {
          id: ID!
          owner: Owner! @external
          ownerTag: String!
            @requires(fields: "owner { ... on Owner { name } ... on Person { age } ... on Company { staff } }")
          ownerName: String! @requires(fields: "owner { ... on Owner { name } }")
        }
      `,
    resolvers: {
      Owner: ownerType,
      Item: {
        __resolveReference: (ref: Record<string, unknown>) => ref,
        ownerTag: (i: { owner: Owner }) => tagOf(i.owner),
        ownerName: (i: { owner: { name?: string } }) => nameOf(i.owner),
      },
    },
  },
];

/** The graph and its cases. */
export const area: Area = {
  name: NAME,
  title: "issue 13 shape 5: @requires through interface type conditions",
  subgraphs: SUBGRAPHS,
  cases: [
    {
      name: "requirement selected through interface fragments on a nested field",
      query: `{ items { id ownerTag } }`,
    },
    {
      name: "requirement selected only through a fragment on the interface",
      query: `{ items { id ownerName } }`,
    },
    {
      name: "both requirements, with the required fields also selected by the client",
      query: `{ items { weight ownerName ownerTag owner { name ... on Person { age } } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
