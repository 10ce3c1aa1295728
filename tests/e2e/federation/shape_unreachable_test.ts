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
import { ACCOUNTS_SUBGRAPH, PLANNING_FAILED, root, SCORES } from "./_unreachable_graph.ts";

export { root };

/** The graph: `accounts` owns the entity interface, `audit` adds `score` behind a non-resolvable key. */
export const area: Area = {
  name: "shape_unreachable",
  title: "issue 13 shape 6: an unreachable field fails planning",
  supergraphSdl: Deno.readTextFileSync(
    new URL("./supergraphs/shape_unreachable.graphql", import.meta.url),
  ),
  subgraphs: [
    ACCOUNTS_SUBGRAPH,
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
