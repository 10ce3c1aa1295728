/**
 * Abstract types: interfaces and unions whose members differ per subgraph,
 * fragments matching nothing (`{}`), entity interfaces and
 * `@interfaceObject` (also behind a `resolvable: false` key), and a concrete
 * `__typename` everywhere.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";

const ACCOUNTS = [
  { __typename: "User", id: "u1", name: "Ada", email: "ada@example.com" },
  { __typename: "Org", id: "o1", name: "Acme", members: 12 },
];
const RATINGS: Record<string, number> = { u1: 5, o1: 3 };
const MEDIA = [
  { __typename: "Book", id: "b1", title: "Dune", pages: 412 },
  { __typename: "Movie", id: "m1", title: "Alien", minutes: 117 },
];
const typeOf = (o: { __typename: string }) => o.__typename;

/** The graph: catalog and extras share Media/SearchResult; accounts owns the Account entity interface. */
export const area: Area = {
  name: "abstract_types",
  title: "interfaces, unions and @interfaceObject",
  subgraphs: [
    {
      name: "catalog",
      typeDefs: fed2("@key") + `
        type Query {
          media: [Media!]!
          search: [SearchResult!]!
        }
        interface Media {
          id: ID!
        }
        type Book implements Media @key(fields: "id") {
          id: ID!
          title: String!
          pages: Int!
        }
        type Movie implements Media @key(fields: "id") {
          id: ID!
          title: String!
          minutes: Int!
        }
        union SearchResult = Book | Movie
      `,
      resolvers: {
        Query: { media: () => MEDIA, search: () => [MEDIA[1], MEDIA[0]] },
        Media: { __resolveType: typeOf },
        SearchResult: { __resolveType: typeOf },
        Book: { __resolveReference: (r: { id: string }) => MEDIA.find((m) => m.id === r.id) },
        Movie: { __resolveReference: (r: { id: string }) => MEDIA.find((m) => m.id === r.id) },
      },
    },
    {
      name: "extras",
      typeDefs: fed2("@key", "@interfaceObject") + `
        type Query {
          podcasts: [Podcast!]!
          topRated: Account
        }
        interface Media {
          id: ID!
        }
        type Book implements Media @key(fields: "id") {
          id: ID!
          rating: Int!
        }
        type Podcast implements Media @key(fields: "id") {
          id: ID!
          host: String!
        }
        union SearchResult = Book | Podcast
        type Account @key(fields: "id") @interfaceObject {
          id: ID!
          rating: Int!
        }
      `,
      resolvers: {
        Query: { podcasts: () => [{ id: "p1", host: "Kim" }], topRated: () => ({ id: "o1" }) },
        Media: { __resolveType: () => "Podcast" },
        SearchResult: { __resolveType: () => "Podcast" },
        Book: {
          __resolveReference: (r: { id: string }) => r,
          rating: (b: { id: string }) => b.id.length + 2,
        },
        Podcast: { __resolveReference: (r: { id: string }) => ({ id: r.id, host: "Kim" }) },
        Account: {
          __resolveReference: (r: { id: string }) => r,
          rating: (a: { id: string }) => RATINGS[a.id] ?? 0,
        },
      },
    },
    {
      name: "accounts",
      typeDefs: fed2("@key") + `
        type Query {
          accounts: [Account!]!
        }
        interface Account @key(fields: "id") {
          id: ID!
          name: String!
        }
        type User implements Account @key(fields: "id") {
          id: ID!
          name: String!
          email: String!
        }
        type Org implements Account @key(fields: "id") {
          id: ID!
          name: String!
          members: Int!
        }
      `,
      resolvers: {
        Query: { accounts: () => ACCOUNTS },
        Account: {
          __resolveType: typeOf,
          __resolveReference: (r: { id: string }) => ACCOUNTS.find((a) => a.id === r.id),
        },
        User: { __resolveReference: (r: { id: string }) => ACCOUNTS.find((a) => a.id === r.id) },
        Org: { __resolveReference: (r: { id: string }) => ACCOUNTS.find((a) => a.id === r.id) },
      },
    },
    {
      name: "audit",
      typeDefs: fed2("@key", "@interfaceObject") + `
        type Query {
          lastActor: Account
        }
        type Account @key(fields: "id", resolvable: false) @interfaceObject {
          id: ID!
        }
      `,
      resolvers: {
        Query: { lastActor: () => ({ id: "u1" }) },
      },
    },
  ],
  cases: [
    {
      name: "interface field: fragments on members from another subgraph",
      query: `{ media { id ... on Podcast { host } ... on Book { title rating } } }`,
    },
    {
      name: "fragment matching no returned object gives {}",
      query: `{ media { ... on Podcast { host } } }`,
    },
    {
      name: "union members differing per subgraph",
      query:
        `{ search { __typename ... on Book { title rating } ... on Movie { minutes } ... on Podcast { host } } }`,
    },
    {
      name: "interface root field of the other subgraph gives the concrete __typename",
      query: `{ podcasts { __typename id host } }`,
    },
    {
      name: "entity interface: field contributed by an @interfaceObject subgraph",
      query: `{ accounts { id name rating } }`,
    },
    {
      name: "__typename through an @interfaceObject is the concrete type",
      query: `{ accounts { __typename rating ... on Org { members } ... on User { email } } }`,
    },
    {
      name:
        "@interfaceObject with a resolvable: false key: concrete type resolved by the interface owner",
      query: `{ lastActor { __typename id name ... on User { email } } }`,
    },
    {
      name: "@interfaceObject field reached from another @interfaceObject subgraph",
      query: `{ lastActor { id rating } }`,
    },
    {
      name: "@interfaceObject field inside a concrete-type fragment",
      query: `{ accounts { id ... on User { rating } } }`,
    },
    {
      name:
        "@interfaceObject root field: __typename and member fields resolved by the interface owner",
      query:
        `{ topRated { __typename id rating name ... on Org { members } ... on User { email } } }`,
    },
    {
      name: "fragments on the interface and on members merge",
      query:
        `{ accounts { ... on Account { id } ... on User { name } ...A } } fragment A on Account { rating }`,
    },
    {
      name: "union fragment spread inside an interface selection",
      query:
        `{ media { id ... on SearchResult { ... on Book { title } ... on Movie { minutes } } } }`,
    },
    {
      name: "aliased __typename on interface and union members",
      query: `{ media { t: __typename } search { kind: __typename ... on Book { id } } }`,
    },
    {
      name: "interface fragment inside a union selection applies to the members implementing it",
      query: `{ search { ... on Media { id } ... on Book { title } } }`,
    },
    {
      name: "interface fragment nested in a member fragment reaching an @interfaceObject field",
      query: `{ accounts { ... on User { ... on Account { rating } } } }`,
    },
    {
      name:
        "member fragment not matching the object behind a resolvable: false @interfaceObject gives {}",
      query: `{ lastActor { ... on Org { members } } }`,
    },
  ],
};

registerArea(area);
