/**
 * Audit shape "non-resolvable interface object": `registry` owns the entity
 * interface `Asset` (`@key`), which has **no implementations**; `tags`
 * adds `Asset.tag` as an `@interfaceObject` whose key is `resolvable: false`.
 * From `registry`'s `asset` no path reaches `tag` (the only move into `tags`
 * is a non-resolvable key), so `{ asset { tag } }` must be refused at planning
 * (`QUERY_PLANNING_FAILED`, `data: null`, nothing fetched), not sent to
 * `registry` with `tag` dropped from the fetch. With no member to split the
 * selection by, the planner plans the interface's own fields on the
 * interface, where an unreachable one is refused.
 *
 * The reverse holds for `Part`: `tags` owns it (a member `Gear`), `registry`
 * knows it only as a non-resolvable `@interfaceObject`; `part` is answered
 * through `tags`' key.
 *
 * The monolith cannot answer an instance of an interface without members
 * (graphql-js refuses its type), which `tagged` returns as an
 * `@interfaceObject`: those cases are not checked against the monolith, and
 * the generator draws from `asset` and `part`.
 *
 * @module
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import { type Area, type CaseRun, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const GEAR = [{ __typename: "Gear", id: "g1", name: "Wrench" }];
const gear = (id: unknown) => GEAR.find((g) => g.id === id);

/** The monolith's data (`tagged` is not drawn: see the module doc). */
export const root = {
  asset: { __typename: "Asset", id: "a1", tag: "blue" },
  part: { ...GEAR[0] },
};

/** The override of a case refused at planning (Apollo Gateway answers otherwise). */
const PLANNING_FAILED = {
  note: "Apollo Gateway fetches asset without tag (asset: null); the federation audit and " +
    "issue 39 ask for data: null with a planning error (QUERY_PLANNING_FAILED)",
  response: { data: null, errors: [{ message: "planning failed" }] },
};

/** The refusal: planning fails, data null, nothing fetched. */
function refused(run: CaseRun): void {
  equal(run.requests.length, 0, "nothing is fetched when planning fails");
  deepStrictEqual(run.response.errors?.map((e) => e.extensions?.code), ["QUERY_PLANNING_FAILED"]);
  equal(run.response.data, null);
}

/** The graph: a memberless entity interface extended behind a non-resolvable key, and back. */
export const area: Area = {
  name: "shape_memberless_interface",
  title: "audit shape: a memberless entity interface behind a non-resolvable @interfaceObject",
  subgraphs: [
    {
      name: "registry",
      typeDefs: fed2("@key", "@interfaceObject") + `
        interface Asset @key(fields: "id") {
          id: ID!
        }
        type Part @key(fields: "id", resolvable: false) @interfaceObject {
          id: ID!
        }
        type Query {
          asset: Asset
          part: Part!
        }
      `,
      resolvers: {
        Query: {
          // an interface without members: no concrete type to give, so the subgraph errs
          asset: () => ({ __typename: "Asset", id: "a1" }),
          part: () => ({ __typename: "Part", id: "g1" }),
        },
        Asset: {
          __resolveReference: () => {
            throw new Error("registry cannot resolve an Asset reference");
          },
        },
      },
    },
    {
      name: "tags",
      typeDefs: fed2("@key", "@interfaceObject") + `
        type Asset @key(fields: "id", resolvable: false) @interfaceObject {
          id: ID!
          tag: String
        }
        interface Part @key(fields: "id") {
          id: ID!
        }
        type Gear implements Part @key(fields: "id") {
          id: ID!
          name: String!
        }
        type Query {
          tagged: Asset
        }
      `,
      resolvers: {
        Query: { tagged: () => ({ __typename: "Asset", id: "a1" }) },
        Asset: {
          __resolveReference: () => {
            throw new Error("tags cannot resolve an Asset reference");
          },
          tag: () => "blue",
        },
        Part: { __resolveReference: (ref: { id: string }) => gear(ref.id) },
        Gear: { __resolveReference: (ref: { id: string }) => gear(ref.id) },
      },
    },
  ],
  cases: [
    {
      name: "the interface object's own root field answers its fields",
      query: `{ tagged { id tag } }`,
      monolith: false,
    },
    {
      name:
        "a field only behind a resolvable: false @interfaceObject of a memberless interface: QUERY_PLANNING_FAILED, data null",
      query: `{ asset { tag } }`,
      errors: "path",
      monolith: false,
      override: PLANNING_FAILED,
      check: refused,
      checkReference: false,
    },
    {
      name: "the unreachable field beside a reachable one is refused as well",
      query: `{ asset { id tag } }`,
      errors: "path",
      monolith: false,
      override: PLANNING_FAILED,
      check: refused,
      checkReference: false,
    },
    {
      name: "the interface object's id alone",
      query: `{ tagged { id } }`,
      monolith: false,
    },
    {
      name: "a memberless interface's reachable field: fetched, the subgraph's error answered",
      query: `{ asset { id } }`,
      errors: "path",
    },
    {
      name: "an interface entered from its non-resolvable @interfaceObject: own field",
      query: `{ part { id } }`,
    },
    {
      name: "a member fragment under the @interfaceObject comes from the interface's owner",
      query: `{ part { __typename ... on Gear { id name } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({
  area,
  root,
  generator: { roots: ["asset", "part"] },
  unreachable: ["Asset.tag"],
});
