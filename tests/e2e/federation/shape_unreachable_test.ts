/**
 * Issue 13, shape 6: a field that no path reaches. `Account.score` lives
 * only in `audit`, an `@interfaceObject` with a `resolvable: false` key:
 * from `accounts` (served by `accounts`) it cannot be reached, so planning
 * must fail with `QUERY_PLANNING_FAILED` and `data: null`, not answer a
 * silent partial `null`. From `audit`'s own root field it is reachable.
 * Composition refuses such a graph (satisfiability), so the supergraph is
 * hand-edited (`supergraphs/`): routers may still be given one.
 *
 * @module
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const ACCOUNTS = [
  { __typename: "User", id: "u1", name: "Ada", email: "ada@example.com" },
  { __typename: "Team", id: "t1", name: "Core", size: 4 },
];
const SCORES: Record<string, number> = { u1: 7, t1: 3 };
const account = (id: string) => ACCOUNTS.find((a) => a.id === id)!;

/** The monolith's data. */
export const root = {
  accounts: ACCOUNTS.map((a) => ({ ...a, score: SCORES[a.id] })),
  audited: [{ ...account("t1"), score: SCORES.t1 }],
};

const PLANNING_FAILED = {
  note: "Apollo Gateway answers INTERNAL_SERVER_ERROR without a data key; the issue asks for " +
    "QUERY_PLANNING_FAILED with data: null",
  response: { data: null, errors: [{ message: "planning failed" }] },
};

/** The graph: `accounts` owns the entity interface, `audit` adds `score` behind a non-resolvable key. */
export const area: Area = {
  name: "shape_unreachable",
  title: "issue 13 shape 6: an unreachable field fails planning",
  supergraphSdl: Deno.readTextFileSync(
    new URL("./supergraphs/shape_unreachable.graphql", import.meta.url),
  ),
  subgraphs: [
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
        type Team implements Account @key(fields: "id") {
          id: ID!
          name: String!
          size: Int!
        }
      `,
      resolvers: {
        Query: { accounts: () => ACCOUNTS },
        Account: {
          __resolveType: (a: { __typename: string }) => a.__typename,
          __resolveReference: (ref: { id: string }) => account(ref.id),
        },
        User: { __resolveReference: (ref: { id: string }) => account(ref.id) },
        Team: { __resolveReference: (ref: { id: string }) => account(ref.id) },
      },
    },
    {
      name: "audit",
      typeDefs: fed2("@key", "@interfaceObject") + `
        type Query {
          audited: [Account!]!
        }
        type Account @key(fields: "id", resolvable: false) @interfaceObject {
          id: ID!
          score: Int!
        }
      `,
      resolvers: {
        Query: { audited: () => [{ id: "t1" }] },
        Account: { score: (a: { id: string }) => SCORES[a.id] },
      },
    },
  ],
  cases: [
    {
      name:
        "field only behind a resolvable: false @interfaceObject: QUERY_PLANNING_FAILED, data null",
      query: `{ accounts { id name score } }`,
      errors: "path",
      monolith: false,
      override: PLANNING_FAILED,
      check: (run) => {
        equal(run.requests.length, 0, "nothing is fetched when planning fails");
        deepStrictEqual(
          run.response.errors?.map((e) => e.extensions?.code),
          ["QUERY_PLANNING_FAILED"],
        );
        equal(run.response.data, null);
      },
      checkReference: false,
    },
    {
      name: "unreachable field inside a member fragment also fails planning",
      query: `{ accounts { ... on User { email score } } }`,
      errors: "path",
      monolith: false,
      override: PLANNING_FAILED,
      check: (run) => {
        deepStrictEqual(
          run.response.errors?.map((e) => e.extensions?.code),
          ["QUERY_PLANNING_FAILED"],
        );
        equal(run.response.data, null);
      },
      checkReference: false,
    },
    {
      name: "the same field from the @interfaceObject subgraph's own root field",
      query: `{ audited { id score name __typename ... on Team { size } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root, generator: { roots: ["audited"] } });
registerDifferential({
  area,
  root,
  label: "reachable fields from accounts",
  generator: { roots: ["accounts"], exclude: ["Account.score", "User.score", "Team.score"] },
});
registerDifferential({
  area,
  root,
  label: "fields from accounts, unreachable ones refused",
  generator: { roots: ["accounts"] },
  unreachable: ["Account.score", "User.score", "Team.score"],
});
