/**
 * Complex `@key`s: a key made of a list of nested entities, whose fields
 * come from another subgraph (the key must be assembled from two subgraphs
 * before the entity fetch), and a composite key reached through a single-field one.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";

const BOOKS = [
  { isbn: "111", edition: 2, title: "Dune", price: 10 },
  { isbn: "222", edition: 1, title: "Emma", price: 25 },
];
type BookKey = { isbn: string; edition: number };
const bookOf = (k: BookKey) => BOOKS.find((b) => b.isbn === k.isbn && b.edition === k.edition);

/** The graph: catalog lists books by isbn; editions adds the edition; pricing keys on both. */
export const area: Area = {
  name: "key_lists",
  title: "@key with lists of entities",
  subgraphs: [
    {
      name: "catalog",
      typeDefs: fed2("@key") + `
        type Query {
          shelf: Shelf!
        }
        type Shelf @key(fields: "books { isbn }") {
          books: [Book!]!
          label: String!
        }
        type Book @key(fields: "isbn") {
          isbn: ID!
          title: String!
        }
      `,
      resolvers: {
        Query: {
          shelf: () => ({ books: BOOKS.map((b) => ({ isbn: b.isbn })), label: "classics" }),
        },
        Book: {
          __resolveReference: (r: { isbn: string }) => r,
          title: (b: { isbn: string }) => BOOKS.find((x) => x.isbn === b.isbn)?.title,
        },
      },
    },
    {
      name: "editions",
      typeDefs: fed2("@key") + `
        type Book @key(fields: "isbn") @key(fields: "isbn edition") {
          isbn: ID!
          edition: Int!
        }
      `,
      resolvers: {
        Book: {
          __resolveReference: (r: { isbn: string }) => BOOKS.find((b) => b.isbn === r.isbn),
        },
      },
    },
    {
      name: "pricing",
      typeDefs: fed2("@key") + `
        type Shelf @key(fields: "books { isbn edition }") {
          books: [Book!]!
          total: Float!
          cheapest: Book
        }
        type Book @key(fields: "isbn edition") {
          isbn: ID!
          edition: Int!
          price: Float!
        }
      `,
      resolvers: {
        Shelf: {
          __resolveReference: (r: { books: BookKey[] }) => {
            const books = r.books.map(bookOf).filter((b) => b !== undefined);
            const sorted = [...books].sort((a, b) => a.price - b.price);
            return {
              books,
              total: books.reduce((sum, b) => sum + b.price, 0),
              cheapest: sorted[0] ?? null,
            };
          },
        },
        Book: {
          __resolveReference: (r: BookKey) => bookOf(r) ?? null,
        },
      },
    },
  ],
  cases: [
    {
      name: "entity key of a list of nested entities assembled from two subgraphs",
      query: `{ shelf { label total } }`,
    },
    {
      name: "composite key reached through a single-field key, in a list",
      query: `{ shelf { books { title edition price } } }`,
    },
    {
      name: "entity returned by a list-keyed entity, joined back to the first subgraph",
      query: `{ shelf { total cheapest { isbn edition price title } } }`,
    },
  ],
};

registerArea(area);
