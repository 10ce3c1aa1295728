/**
 * Audit shape "interface object with requires": the `@interfaceObject`
 * subgraph (`handles`) computes `handle` from the interface's `name`
 * (`@external`, `@requires`), and has its own root field returning
 * interface objects. `handle` under a concrete type's root field, and a
 * member fragment (`... on Member { age handle }`) under the interface
 * objects' root, need the owner (`members`) for the requirement and for
 * the concrete type, in either order. The supergraph is our composition's
 * output with the `join__field`s of `Named.name` added (`supergraphs/`):
 * ours leaves them out, claiming `handles` resolves the `@external` name.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const MEMBERS = [
  { id: "m1", name: "Ana", age: 31 },
  { id: "m2", name: "Ben", age: 27 },
];
const member = (id: unknown) => MEMBERS.find((m) => m.id === id);
const handleOf = (name: string) => `@${name.toLowerCase()}`;
const full = (id: string) => {
  const m = member(id)!;
  return { __typename: "Member", ...m, handle: handleOf(m.name) };
};

/** The monolith's data. */
export const root = {
  members: MEMBERS.map((m) => full(m.id)),
  namedOnes: ["m2", "m1"].map(full),
};

/** The graph: `members` (owns `Named` and `Member`), `handles` (`Named` as an interface object). */
export const area: Area = {
  name: "shape_interface_object_requires",
  title: "audit interface-object-with-requires: @requires in the @interfaceObject subgraph",
  supergraphSdl: Deno.readTextFileSync(
    new URL("./supergraphs/shape_interface_object_requires.graphql", import.meta.url),
  ),
  subgraphs: [
    {
      name: "members",
      typeDefs: fed2("@key") + `
        type Query {
          members: [Member]
        }
        interface Named @key(fields: "id") {
          id: ID!
          name: String
        }
        type Member implements Named @key(fields: "id") {
          id: ID!
          name: String
          age: Int
        }
      `,
      resolvers: {
        Query: { members: () => MEMBERS },
        Named: {
          __resolveReference: (ref: { id: string }) =>
            member(ref.id) ? { __typename: "Member", ...member(ref.id) } : null,
          __resolveType: () => "Member",
        },
        Member: { __resolveReference: (ref: { id: string }) => member(ref.id) ?? null },
      },
    },
    {
      name: "handles",
      typeDefs: fed2("@key", "@interfaceObject", "@external", "@requires") + `
        type Query {
          namedOnes: [Named]
        }
        type Named @key(fields: "id") @interfaceObject {
          id: ID!
          name: String @external
          handle: String @requires(fields: "name")
        }
      `,
      resolvers: {
        Query: { namedOnes: () => [{ id: "m2" }, { id: "m1" }] },
        Named: {
          __resolveReference: (ref: { id: string; name?: string }) => ref,
          handle: (n: { name?: string }) => {
            if (n.name === undefined) throw new Error("name was not provided");
            return handleOf(n.name);
          },
        },
      },
    },
  ],
  cases: [
    {
      name: "requiring field on the interface objects' own root",
      query: `{ namedOnes { handle } }`,
    },
    {
      name: "requiring field of the interface object under a concrete type's root",
      query: `{ members { id handle } }`,
    },
    {
      name: "member fragment with a member field and the requiring field",
      query: `{ namedOnes { ... on Member { age handle } } }`,
    },
    {
      name: "everything at once, __typename included",
      query: `{
        namedOnes { id name handle __typename ... on Member { age } }
        members { name handle }
      }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
