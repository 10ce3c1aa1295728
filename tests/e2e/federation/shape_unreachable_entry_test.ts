/**
 * Issue 31: an `@interfaceObject` that cannot be entered. `audit` answers
 * `Account`s as an `@interfaceObject` (resolvable key), but `accounts`
 * declares no key on the interface: nothing can tell an audited account's
 * concrete type or resolve `accounts`' fields for it. From `audited`, only
 * `id` and `score` are reachable; `name`, `__typename` and member fragments
 * must be refused at planning (`QUERY_PLANNING_FAILED`, `data: null`, no
 * fetch). From `accounts`, `score` is reachable through audit's key.
 * Composition refuses such a graph, so the supergraph is hand-edited
 * (`supergraphs/`).
 *
 * @module
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import { type Area, type CaseRun, fed2, registerArea } from "./_harness.ts";
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

/** The refusal: planning fails, data null, nothing fetched. */
function refused(run: CaseRun): void {
  equal(run.requests.length, 0, "nothing is fetched when planning fails");
  deepStrictEqual(run.response.errors?.map((e) => e.extensions?.code), ["QUERY_PLANNING_FAILED"]);
  equal(run.response.data, null);
}

/** Fields of the members and of the interface that `accounts` alone resolves. */
const ACCOUNTS_ONLY = [
  "Account.name",
  "Account.__typename",
  ...["User", "Team"].flatMap((t) =>
    ["id", "name", "email", "size", "score", "__typename"].map((f) => `${t}.${f}`)
  ),
];

/** The graph: `accounts` owns the interface without a key, `audit` adds `score` as an interface object. */
export const area: Area = {
  name: "shape_unreachable_entry",
  title: "issue 31: an @interfaceObject that cannot be entered fails planning",
  supergraphSdl: Deno.readTextFileSync(
    new URL("./supergraphs/shape_unreachable_entry.graphql", import.meta.url),
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
        type Account @key(fields: "id") @interfaceObject {
          id: ID!
          score: Int!
        }
      `,
      resolvers: {
        Query: { audited: () => [{ id: "t1" }] },
        Account: {
          __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
          score: (a: { id: string }) => SCORES[a.id],
        },
      },
    },
  ],
  cases: [
    {
      name: "an accounts-only field of an audited account: QUERY_PLANNING_FAILED, data null",
      query: `{ audited { id name } }`,
      errors: "path",
      monolith: false,
      override: PLANNING_FAILED,
      check: refused,
      checkReference: false,
    },
    {
      name: "the concrete type of an audited account is unknown: refused at planning",
      query: `{ audited { score __typename } }`,
      errors: "path",
      monolith: false,
      override: PLANNING_FAILED,
      check: refused,
      checkReference: false,
    },
    {
      name: "a member fragment under an audited account is refused at planning",
      query: `{ audited { id ... on User { email } } }`,
      errors: "path",
      monolith: false,
      override: PLANNING_FAILED,
      check: refused,
      checkReference: false,
    },
    {
      name: "the interface object's own fields from its own root field",
      query: `{ audited { id score } }`,
    },
    {
      name: "the interface object entered by its key from accounts",
      query: `{ accounts { id name score } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root, generator: { roots: ["accounts"] } });
registerDifferential({
  area,
  root,
  label: "fields from audited, unreachable ones refused",
  generator: { roots: ["audited"] },
  unreachable: ACCOUNTS_ONLY,
});
