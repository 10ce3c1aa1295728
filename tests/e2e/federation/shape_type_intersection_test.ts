/**
 * Audit shapes "enum intersection" and "input object intersection": an
 * input object whose field `skip` exists in one subgraph only is not in the
 * supergraph (inputs merge by intersection), so sending it is a request
 * error, as literal and as variable; an input-only enum value one subgraph
 * lacks (`RANDOM`) likewise. An output-only enum merges by union: a value
 * only `ranks` has (`GOLD`) is answered from `ranks`' field, and a
 * value one subgraph marks `@inaccessible` (`HIDDEN`) answered at runtime is
 * an error at its path with the field nulled.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const PLAYERS = [
  { id: "u1", level: "BASIC", rank: "GOLD" },
  { id: "u2", level: "PLUS", rank: "SILVER" },
  { id: "u3", level: "HIDDEN", rank: "SILVER" },
];
const player = (id: unknown) => PLAYERS.find((p) => p.id === id);
const page = (list: readonly { id: string }[], filter: { take: number; skip?: number }) => {
  if (filter.skip !== undefined) throw new Error("skip reached the subgraph");
  return list.slice(0, filter.take);
};
const ordered = (order: string) =>
  order === "DESC" ? [...PLAYERS].reverse() : order === "ASC" ? PLAYERS : [];

/** The monolith's data (`level` is not generated: one value is inaccessible). */
export const root = {
  players: ({ filter, order }: { filter: { take: number }; order?: string }) =>
    ordered(order ?? "ASC").slice(0, filter.take).map((p) => ({ ...p })),
  ranked: ({ filter }: { filter: { take: number } }) =>
    PLAYERS.slice(0, filter.take).map((p) => ({ ...p })),
};

/** The graph: `profiles` (levels, `players`), `ranks` (ranks, `ranked`). */
export const area: Area = {
  name: "shape_type_intersection",
  title: "audit enum-intersection and input-object-intersection",
  subgraphs: [
    {
      name: "profiles",
      typeDefs: fed2("@key", "@shareable", "@inaccessible") + `
        type Query {
          players(filter: Page!, order: Order = ASC): [Player!]!
        }
        input Page {
          take: Int!
          skip: Int
        }
        enum Order {
          ASC
          DESC
          RANDOM
        }
        enum Level {
          BASIC
          PLUS
          HIDDEN @inaccessible
        }
        enum Rank {
          SILVER
        }
        type Player @key(fields: "id") {
          id: ID!
          level: Level
        }
      `,
      resolvers: {
        Query: {
          players: (_: unknown, a: { filter: { take: number; skip?: number }; order: string }) =>
            page(ordered(a.order), a.filter),
        },
        Player: { __resolveReference: (ref: { id: string }) => player(ref.id) ?? null },
      },
    },
    {
      name: "ranks",
      typeDefs: fed2("@key", "@shareable", "@inaccessible") + `
        type Query {
          ranked(filter: Page!): [Player!]!
        }
        input Page {
          take: Int!
        }
        enum Order {
          ASC
          DESC
        }
        enum Level {
          BASIC
          PLUS
          HIDDEN @inaccessible
        }
        enum Rank {
          GOLD
          SILVER
        }
        type Player @key(fields: "id") {
          id: ID!
          rank: Rank
          levelSeen: Level @shareable
        }
      `,
      resolvers: {
        Query: {
          ranked: (_: unknown, a: { filter: { take: number; skip?: number } }) =>
            page(PLAYERS, a.filter),
        },
        Player: { __resolveReference: (ref: { id: string }) => player(ref.id) ?? null },
      },
    },
  ],
  cases: [
    {
      name: "input field both subgraphs have",
      query: `{ players(filter: { take: 2 }) { id rank } }`,
    },
    {
      name: "input field only one subgraph has: request error",
      query: `{ players(filter: { take: 1, skip: 2 }) { id } }`,
      errors: "path",
      monolith: false,
    },
    {
      name: "input field only one subgraph has, in a variable: request error",
      query: `query ($p: Page!) { ranked(filter: $p) { id } }`,
      variables: { p: { take: 1, skip: 2 } },
      errors: "path",
    },
    {
      name: "input enum value both have",
      query: `{ players(filter: { take: 3 }, order: DESC) { id } }`,
    },
    {
      name: "input enum value only one subgraph has: request error",
      query: `{ players(filter: { take: 3 }, order: RANDOM) { id } }`,
      errors: "path",
      monolith: false,
    },
    {
      name: "output enum value only one subgraph has, from its field",
      query: `{ ranked(filter: { take: 3 }) { id rank } }`,
    },
    {
      name: "inaccessible output enum value answered: error at its path, field null",
      query: `{ players(filter: { take: 3 }) { id level } }`,
      errors: "path",
      monolith: false,
      override: {
        note: "Apollo Gateway silently returns null for an inaccessible enum value; as in the " +
          "inaccessible area, the feature requires an error at the field's path",
        response: {
          data: {
            players: [
              { id: "u1", level: "BASIC" },
              { id: "u2", level: "PLUS" },
              { id: "u3", level: null },
            ],
          },
          errors: [{ message: "any", path: ["players", 2, "level"] }],
        },
      },
    },
  ],
};

registerArea(area);
registerDifferential({
  area,
  root,
  generator: {
    exclude: ["Player.level", "Player.levelSeen"],
    values: { "Query.players(filter:)": ["{ take: 2 }"], "Query.ranked(filter:)": ["{ take: 3 }"] },
  },
});
