/**
 * Issue 13, shape 3: a field whose type differs between a subgraph and the
 * supergraph. `Shelf.item` is `Book` in `paper` and the interface `Item` in
 * `stock` (the supergraph says `Item`, with `join__field(type: "Book")` for
 * `paper`); the union `Media` has fewer members in `paper`; `Book`
 * implements `Item` only in `stock` (`join__implements`). Every subgraph
 * query must be valid against that subgraph's own schema. The supergraph is
 * Apollo's composition of these subgraphs (`supergraphs/`): ours narrows
 * `Shelf.item` to `Book`.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const BOOKS = [
  { id: "b1", title: "Dune", pages: 412 },
  { id: "b2", title: "Emma", pages: 320 },
];
const MAGAZINES = [{ id: "m1", title: "Wired", issue: 7 }];
const book = (b: (typeof BOOKS)[number]) => ({ __typename: "Book", ...b });
const magazine = (m: (typeof MAGAZINES)[number]) => ({ __typename: "Magazine", ...m });

/** The monolith's data. */
export const root = {
  shelf: { id: "s1", label: "New", item: book(BOOKS[0]!), media: [book(BOOKS[1]!)] },
  media: BOOKS.map(book),
  items: [...BOOKS.map(book), ...MAGAZINES.map(magazine)],
};

/** The graph: `paper` (concrete types) and `stock` (interface, wider union). */
export const area: Area = {
  name: "shape_type_mismatch",
  title: "issue 13 shape 3: field types differing between subgraph and supergraph",
  supergraphSdl: Deno.readTextFileSync(
    new URL("./supergraphs/shape_type_mismatch.graphql", import.meta.url),
  ),
  subgraphs: [
    {
      name: "stock",
      typeDefs: fed2("@shareable", "@key") + `
        type Query {
          shelf: Shelf @shareable
          media: [Media!]! @shareable
          items: [Item!]!
        }
        type Shelf @shareable {
          id: ID!
          item: Item
          media: [Media!]!
        }
        interface Item {
          id: ID!
          title: String!
        }
        type Book implements Item @key(fields: "id") {
          id: ID!
          title: String! @shareable
        }
        type Magazine implements Item @shareable {
          id: ID!
          title: String!
          issue: Int!
        }
        union Media = Book | Magazine
      `,
      resolvers: {
        Query: { shelf: () => root.shelf, media: () => root.media, items: () => root.items },
        Item: { __resolveType: (o: { __typename: string }) => o.__typename },
        Media: { __resolveType: (o: { __typename: string }) => o.__typename },
        Book: { __resolveReference: (ref: { id: string }) => BOOKS.find((b) => b.id === ref.id) },
      },
    },
    {
      name: "paper",
      typeDefs: fed2("@shareable", "@key") + `
        type Query {
          shelf: Shelf @shareable
          media: [Media!]! @shareable
        }
        type Shelf @shareable {
          id: ID!
          label: String!
          item: Book
          media: [Media!]!
        }
        type Book @key(fields: "id") {
          id: ID!
          title: String! @shareable
          pages: Int!
        }
        union Media = Book
      `,
      resolvers: {
        Query: { shelf: () => root.shelf, media: () => root.media },
        Media: { __resolveType: () => "Book" },
        Book: { __resolveReference: (ref: { id: string }) => BOOKS.find((b) => b.id === ref.id) },
      },
    },
  ],
  cases: [
    {
      name: "field typed Book in one subgraph and Item in the supergraph: fragments it can serve",
      query: `{ shelf { item { id ... on Book { pages } ... on Magazine { issue } } } }`,
    },
    {
      name: "interface fields on a field the subgraph types as the concrete object",
      query: `{ shelf { id item { __typename title ... on Book { pages } } } }`,
    },
    {
      name:
        "value type entered in the concrete-typed subgraph (label): no fragment on a type it lacks",
      query: `{ shelf { label item { title ... on Magazine { issue } } } }`,
    },
    {
      name: "nested union with fewer members in the subgraph that must serve the parent",
      query: `{ shelf { label media { ... on Book { title } ... on Magazine { issue } } } }`,
    },
    {
      name: "union with fewer members in a subgraph: no fragment on the missing member is sent",
      query: `{ media { __typename ... on Book { pages } ... on Magazine { issue } } }`,
    },
    {
      name: "interface fragment inside a union selection reaching the concrete-only subgraph",
      query: `{ media { ... on Item { id } ... on Book { pages } } }`,
    },
    {
      name: "interface root field of the wider subgraph with member fields of the other",
      query: `{ items { id __typename ... on Magazine { issue } ... on Book { title } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
