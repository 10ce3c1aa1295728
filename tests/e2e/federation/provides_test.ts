/**
 * `@provides`: provided fields (also nested, and on interface and union
 * members) are taken from the providing subgraph and never fetched again.
 *
 * @module
 */
import { equal, ok } from "node:assert/strict";
import {
  type Area,
  describeRequests,
  fed2,
  fetched,
  registerArea,
  requestsTo,
} from "./_harness.ts";

const USERS = [
  {
    id: "u1",
    username: "ada",
    email: "ada@example.com",
    profile: { nickname: "Countess", age: 36 },
  },
  { id: "u2", username: "bob", email: "bob@example.com", profile: { nickname: "Bobby", age: 41 } },
];
const MEDIA = [
  { __typename: "Book", id: "b1", title: "Dune", year: 1965 },
  { __typename: "Movie", id: "m1", title: "Alien", director: "Scott" },
];
const user = (id: string) => {
  const u = USERS.find((x) => x.id === id)!;
  return { id: u.id, username: u.username, profile: { nickname: u.profile.nickname } };
};
const media = (id: string) => {
  const m = MEDIA.find((x) => x.id === id)!;
  return { __typename: m.__typename, id: m.id, title: m.title };
};

/** The graph: reviews provides fields of accounts' User and catalog's Book/Movie. */
export const area: Area = {
  name: "provides",
  title: "@provides",
  subgraphs: [
    {
      name: "reviews",
      typeDefs: fed2("@key", "@shareable", "@external", "@provides") + `
        type Query {
          reviews: [Review!]!
          topAuthor: User!
          featuredAuthor: User @provides(fields: "username")
        }
        type Review {
          id: ID!
          body: String!
          author: User! @provides(fields: "username profile { nickname }")
          item: Media @provides(fields: "... on Book { title } ... on Movie { title }")
          featured: Thing @provides(fields: "... on Book { title } ... on Movie { title }")
        }
        type User @key(fields: "id") {
          id: ID!
          username: String! @external
          profile: Profile @external
          written: [Review!]!
        }
        type Profile @shareable {
          nickname: String!
        }
        union Media = Book | Movie
        interface Thing {
          id: ID!
        }
        type Book implements Thing @key(fields: "id") {
          id: ID!
          title: String! @external
        }
        type Movie implements Thing @key(fields: "id") {
          id: ID!
          title: String! @external
        }
      `,
      resolvers: {
        Query: {
          reviews: () => [
            {
              id: "r1",
              body: "Loved it",
              author: user("u1"),
              item: media("b1"),
              featured: media("m1"),
            },
            { id: "r2", body: "Meh", author: user("u2"), item: media("m1"), featured: media("b1") },
          ],
          topAuthor: () => ({ id: "u1" }),
          featuredAuthor: () => user("u2"),
        },
        User: {
          written: (u: { id: string }) =>
            u.id === "u1"
              ? [{
                id: "r1",
                body: "Loved it",
                author: user("u1"),
                item: media("b1"),
                featured: null,
              }]
              : [],
        },
        Media: { __resolveType: (m: { __typename: string }) => m.__typename },
        Thing: { __resolveType: (m: { __typename: string }) => m.__typename },
      },
    },
    {
      name: "accounts",
      typeDefs: fed2("@key", "@shareable") + `
        type Query {
          users: [User!]!
        }
        type User @key(fields: "id") {
          id: ID!
          username: String!
          email: String!
          profile: Profile
        }
        type Profile @shareable {
          nickname: String!
          age: Int!
        }
      `,
      resolvers: {
        Query: { users: () => USERS },
        User: {
          __resolveReference: (ref: { id: string }) => USERS.find((u) => u.id === ref.id) ?? null,
        },
      },
    },
    {
      name: "catalog",
      typeDefs: fed2("@key") + `
        type Book @key(fields: "id") {
          id: ID!
          title: String!
          year: Int!
        }
        type Movie @key(fields: "id") {
          id: ID!
          title: String!
          director: String!
        }
      `,
      resolvers: {
        Book: { __resolveReference: (ref: { id: string }) => MEDIA.find((m) => m.id === ref.id) },
        Movie: { __resolveReference: (ref: { id: string }) => MEDIA.find((m) => m.id === ref.id) },
      },
    },
  ],
  cases: [
    {
      name: "provided field is taken from the providing subgraph, owner not asked",
      query: `{ reviews { body author { username } } }`,
      check: (run) => equal(requestsTo(run, "accounts").length, 0, describeRequests(run)),
    },
    {
      name: "nested provides (profile { nickname }) not fetched again",
      query: `{ reviews { author { id username profile { nickname } } } }`,
      check: (run) => equal(requestsTo(run, "accounts").length, 0, describeRequests(run)),
    },
    {
      name: "a field beyond the provides is fetched from the owner, provided ones are not",
      query: `{ reviews { author { username email profile { nickname age } } } }`,
      check: (run) => {
        ok(fetched(run, "accounts", "email"), describeRequests(run));
        ok(!fetched(run, "accounts", "username"), describeRequests(run));
        ok(!fetched(run, "accounts", "nickname"), describeRequests(run));
      },
    },
    {
      name: "provides on union members",
      query: `{ reviews { item { __typename ... on Book { title } ... on Movie { title } } } }`,
      check: (run) => equal(requestsTo(run, "catalog").length, 0, describeRequests(run)),
    },
    {
      name: "provides on interface members",
      query: `{ reviews { featured { id ... on Book { title } ... on Movie { t: title } } } }`,
      check: (run) => equal(requestsTo(run, "catalog").length, 0, describeRequests(run)),
    },
    {
      name: "union member field beyond the provides fetched, provided title not",
      query: `{ reviews { item { ... on Book { title year } ... on Movie { director } } } }`,
      check: (run) => {
        ok(fetched(run, "catalog", "year"), describeRequests(run));
        ok(!fetched(run, "catalog", "title"), describeRequests(run));
      },
    },
    {
      name: "the same entity outside the provides path is fetched from its owner",
      query: `{ topAuthor { username } reviews { author { username } } }`,
      check: (run) => ok(fetched(run, "accounts", "username"), describeRequests(run)),
    },
    {
      name: "provided fields under client aliases, swapped",
      query: `{ reviews { author { username: id id: username } } }`,
      check: (run) => equal(requestsTo(run, "accounts").length, 0, describeRequests(run)),
    },
    {
      name: "provides on a root field",
      query: `{ featuredAuthor { id username } }`,
      check: (run) => equal(requestsTo(run, "accounts").length, 0, describeRequests(run)),
    },
    {
      name: "provides inside an entity fetch (accounts → reviews → provided author)",
      query: `{ users { email written { body author { username } } } }`,
      check: (run) => equal(requestsTo(run, "accounts").length, 1, describeRequests(run)),
    },
  ],
};

registerArea(area);
