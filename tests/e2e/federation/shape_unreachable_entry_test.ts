/**
 * Issue 31: an `@interfaceObject` that cannot be entered. `audit` answers
 * `Account`s as an `@interfaceObject` (resolvable key), but `accounts`
 * declares no key on the interface: nothing can tell an audited account's
 * concrete type or resolve `accounts`' fields for it. From `audited`, only
 * `id` and `score` are reachable; `name`, `__typename` and member fragments
 * must be refused at planning (`QUERY_PLANNING_FAILED`, `data: null`, no
 * fetch). From `accounts`, `score` is reachable through audit's key.
 * Composition refuses such a graph, so the supergraph is
 * `shape_unreachable`'s with the interface's keys edited.
 *
 * @module
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import { type Area, type CaseRun, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";
import { ACCOUNTS_SUBGRAPH, PLANNING_FAILED, root, SCORES } from "./_unreachable_graph.ts";

export { root };

/**
 * `shape_unreachable`'s supergraph with the interface's keys changed: none in `accounts`, a
 * resolvable one in `audit` (composition refuses the unsatisfiable graph; a router may still be
 * given one).
 */
function entrySupergraph(): string {
  const sdl = Deno.readTextFileSync(
    new URL("./supergraphs/shape_unreachable.graphql", import.meta.url),
  );
  const keys = 'interface Account @join__type(graph: ACCOUNTS, key: "id") ' +
    '@join__type(graph: AUDIT, key: "id", resolvable: false, isInterfaceObject: true)';
  if (!sdl.includes(keys)) {
    throw new Error("shape_unreachable.graphql changed: edit entrySupergraph");
  }
  return sdl.replace(
    keys,
    'interface Account @join__type(graph: ACCOUNTS) @join__type(graph: AUDIT, key: "id", isInterfaceObject: true)',
  );
}

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
  supergraphSdl: entrySupergraph(),
  subgraphs: [
    ACCOUNTS_SUBGRAPH,
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
