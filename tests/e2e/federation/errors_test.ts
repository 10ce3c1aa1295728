/**
 * Errors: subgraph errors re-pathed to the client's path, a down subgraph
 * gives partial data plus errors, non-null propagation as the GraphQL spec
 * says, and an entity that is null half-way through a chain gives null.
 *
 * @module
 */
import { GraphQLError } from "graphql";
import { type Area, fed2, registerArea } from "./_harness.ts";

const USERS = [{ id: "u1", name: "Ada" }, { id: "u2", name: "Bob" }, { id: "u3", name: "Cy" }];
const BEST: Record<string, string | null> = { u1: "post1", u2: "gone", u3: null };
const POSTS: Record<string, { id: string; title: string; editorId: string }> = {
  post1: { id: "post1", title: "Hello", editorId: "u2" },
};

/** The graph: users, posts, content (null entity), flaky (errors) and stats (down). */
export const area: Area = {
  name: "errors",
  title: "errors and null propagation",
  subgraphs: [
    {
      name: "users",
      typeDefs: fed2("@key") + `
        type Query {
          users: [User!]!
          user(id: ID!): User
          failing: String
        }
        type User @key(fields: "id") {
          id: ID!
          name: String!
        }
      `,
      resolvers: {
        Query: {
          users: () => USERS,
          user: (_: unknown, a: { id: string }) => USERS.find((u) => u.id === a.id) ?? null,
          failing: () => {
            throw new GraphQLError("failing is broken", { extensions: { code: "BROKEN" } });
          },
        },
        User: { __resolveReference: (r: { id: string }) => USERS.find((u) => u.id === r.id) },
      },
    },
    {
      name: "posts",
      typeDefs: fed2("@key") + `
        type User @key(fields: "id") {
          id: ID!
          bestPost: Post
        }
        type Post @key(fields: "id") {
          id: ID!
        }
      `,
      resolvers: {
        User: {
          __resolveReference: (r: { id: string }) => r,
          bestPost: (u: { id: string }) => {
            const id = BEST[u.id];
            return id === null || id === undefined ? null : { id };
          },
        },
      },
    },
    {
      name: "content",
      typeDefs: fed2("@key") + `
        type Post @key(fields: "id") {
          id: ID!
          title: String
          editor: User
        }
        type User @key(fields: "id") {
          id: ID!
        }
      `,
      resolvers: {
        Post: {
          __resolveReference: (r: { id: string }) => POSTS[r.id] ?? null,
          editor: (p: { editorId: string }) => ({ id: p.editorId }),
        },
      },
    },
    {
      name: "flaky",
      typeDefs: fed2("@key") + `
        type User @key(fields: "id") {
          id: ID!
          badge: String
          rank: Int!
        }
      `,
      resolvers: {
        User: {
          __resolveReference: (r: { id: string }) => r,
          badge: (u: { id: string }) => {
            if (u.id === "u2") throw new Error(`no badge for ${u.id}`);
            return `badge-${u.id}`;
          },
          rank: (u: { id: string }) => {
            if (u.id === "u2") throw new Error(`no rank for ${u.id}`);
            return Number(u.id.slice(1));
          },
        },
      },
    },
    {
      name: "moods",
      typeDefs: fed2("@key") + `
        type User @key(fields: "id") {
          id: ID!
          mood: String
        }
      `,
      resolvers: {
        User: {
          // async: one rejected reference nulls that entity only (_entities: [{…}, null, {…}])
          __resolveReference: async (r: { id: string }) => {
            await Promise.resolve();
            if (r.id === "u2") throw new Error(`cannot load ${r.id}`);
            return { id: r.id, mood: r.id === "u1" ? "happy" : "calm" };
          },
        },
      },
    },
    {
      name: "stats",
      down: true,
      typeDefs: fed2("@key") + `
        type Query {
          topScore: Int
        }
        type User @key(fields: "id") {
          id: ID!
          score: Int
        }
      `,
      resolvers: {},
    },
  ],
  cases: [
    {
      name: "entity null half-way through a chain gives null, not an error",
      query: `{ users { id bestPost { title editor { name } } } }`,
    },
    {
      name: "subgraph field error re-pathed to the client's path (entity in a list)",
      query: `{ users { id badge } }`,
    },
    {
      name: "subgraph error re-pathed through client aliases",
      query: `{ people: users { id b: badge } }`,
    },
    {
      name: "subgraph error at a root field keeps the other root fields",
      query: `{ failing users { id } }`,
    },
    {
      name: "non-null field error nulls the nearest nullable parent",
      query: `{ user(id: "u2") { id rank } other: user(id: "u1") { id rank } }`,
    },
    {
      name: "non-null field error inside a non-null list propagates to data: null",
      query: `{ users { id rank } }`,
    },
    {
      name: "down subgraph for an entity field: partial data plus errors",
      query: `{ users { id name score } }`,
      errors: "present",
    },
    {
      name: "down subgraph for a root field: that field null, other root fields answered",
      query: `{ topScore user(id: "u1") { name } }`,
      errors: "present",
    },
    {
      name: "errors in one entity fetch leave the sibling fetches' data intact",
      query: `{ users { name badge bestPost { title } } }`,
    },
    {
      name: "entity that fails to load (error at _entities index) re-pathed to the client's object",
      query: `{ users { id mood } }`,
    },
    {
      name: "nullable entity field error next to a null entity deep in a chain",
      query: `{ user(id: "u2") { badge bestPost { editor { name } } } }`,
    },
  ],
};

registerArea(area);
