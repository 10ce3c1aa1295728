/**
 * The graph shared by the unreachable-field scenarios (`shape_unreachable`,
 * `shape_unreachable_entry`): `accounts` owns the `Account` interface and its members, `audit`
 * adds `score` as an `@interfaceObject`; the scenarios differ in the keys their supergraphs give.
 *
 * @module
 */
import type { SubgraphDef } from "./_harness.ts";
import { fed2 } from "./_harness.ts";

const ACCOUNTS = [
  { __typename: "User", id: "u1", name: "Ada", email: "ada@example.com" },
  { __typename: "Team", id: "t1", name: "Core", size: 4 },
];

/** Each account's `score` (served by `audit`). */
export const SCORES: Record<string, number> = { u1: 7, t1: 3 };
const account = (id: string) => ACCOUNTS.find((a) => a.id === id)!;

/** The monolith's data. */
export const root = {
  accounts: ACCOUNTS.map((a) => ({ ...a, score: SCORES[a.id] })),
  audited: [{ ...account("t1"), score: SCORES.t1 }],
};

/** The override of a case refused at planning (Apollo Gateway answers otherwise). */
export const PLANNING_FAILED = {
  note: "Apollo Gateway answers INTERNAL_SERVER_ERROR without a data key; the issue asks for " +
    "QUERY_PLANNING_FAILED with data: null",
  response: { data: null, errors: [{ message: "planning failed" }] },
};

/** The `accounts` subgraph: the entity interface and its members. */
export const ACCOUNTS_SUBGRAPH: SubgraphDef = {
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
};
