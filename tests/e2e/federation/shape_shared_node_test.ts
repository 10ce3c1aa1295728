/**
 * Audit shape "corrupted supergraph node id": a `@shareable` interface
 * root field (`lookup(id:)`) served by two subgraphs, each of which has the
 * *other* one's implementing type only with an `@external` `id` (and
 * answers a bogus value for it). Which subgraph serves `lookup` must be
 * chosen per alias from the type conditions selected; `id` on the
 * interface itself cannot be served by either subgraph for every member,
 * so it fails planning (data null, an error) instead of returning the
 * bogus id.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const PEOPLE = [{ id: "p1", handle: "@ann" }, { id: "p2", handle: "@bo" }];
const NOTES = [
  { id: "n1", body: "hello", author: "p1" },
  { id: "n2", body: "bye", author: "p1" },
];
const person = (id: unknown) => PEOPLE.find((p) => p.id === id);
const note = (id: unknown) => NOTES.find((n) => n.id === id);
/** What a subgraph answers for an id it only has as `@external`. */
const BOGUS = "never";

/** A person of the monolith (notes on demand). */
function personOf(id: string): Record<string, unknown> {
  const p = person(id)!;
  return {
    __typename: "Person",
    ...p,
    notes: () => NOTES.filter((n) => n.author === id).map((n) => noteOf(n.id)),
  };
}
/** A note of the monolith. */
function noteOf(id: string): Record<string, unknown> {
  const n = note(id)!;
  return { __typename: "Note", id: n.id, body: n.body, author: () => personOf(n.author) };
}

/** The monolith's data (`lookup` is not generated: `id` on `Entry` cannot be planned). */
export const root = {
  lookup: ({ id }: { id: string }) => person(id) ? personOf(id) : note(id) ? noteOf(id) : null,
  person: ({ id }: { id: string }) => person(id) ? personOf(id) : null,
  note: ({ id }: { id: string }) => note(id) ? noteOf(id) : null,
};

const PLANNING_FAILED = {
  note: "neither subgraph serves Entry.id for every member (each has the other's id @external)",
  response: { data: null, errors: [{ message: "planning failed" }] },
};

/** The graph: `people` (persons, a note's author), `notes` (notes, a person's notes). */
export const area: Area = {
  name: "shape_shared_node",
  title: "audit corrupted-supergraph-node-id: a shared interface root with external ids",
  subgraphs: [
    {
      name: "people",
      typeDefs: fed2("@key", "@shareable", "@external") + `
        type Query {
          lookup(id: ID!): Entry @shareable
          person(id: String!): Person
        }
        interface Entry {
          id: ID!
        }
        type Person implements Entry @key(fields: "id") {
          id: ID!
          handle: String!
        }
        type Note implements Entry @key(fields: "id") {
          id: ID! @external
          author: Person!
        }
      `,
      resolvers: {
        Query: {
          lookup: (_: unknown, { id }: { id: string }) => {
            if (person(id)) return { __typename: "Person", ...person(id) };
            const n = note(id);
            return n ? { __typename: "Note", id: BOGUS, author: n.author } : null;
          },
          person: (_: unknown, { id }: { id: string }) => person(id) ?? null,
        },
        Person: { __resolveReference: (ref: { id: string }) => person(ref.id) ?? null },
        Note: {
          __resolveReference: (ref: { id: string }) => note(ref.id) ?? null,
          author: (n: { author: string }) => person(n.author),
        },
      },
    },
    {
      name: "notes",
      typeDefs: fed2("@key", "@shareable", "@external") + `
        type Query {
          lookup(id: ID!): Entry @shareable
          note(id: String!): Note
        }
        interface Entry {
          id: ID!
        }
        type Person implements Entry @key(fields: "id") {
          id: ID! @external
          notes: [Note!]!
        }
        type Note implements Entry @key(fields: "id") {
          id: ID!
          body: String!
        }
      `,
      resolvers: {
        Query: {
          lookup: (_: unknown, { id }: { id: string }) => {
            if (note(id)) return { __typename: "Note", ...note(id) };
            return person(id) ? { __typename: "Person", id: BOGUS, owner: id } : null;
          },
          note: (_: unknown, { id }: { id: string }) => note(id) ?? null,
        },
        Person: {
          __resolveReference: (ref: { id: string }) =>
            person(ref.id) ? { id: ref.id, owner: ref.id } : null,
          notes: (p: { owner: string }) => NOTES.filter((n) => n.author === p.owner),
        },
        Note: { __resolveReference: (ref: { id: string }) => note(ref.id) ?? null },
      },
    },
  ],
  cases: [
    {
      name: "id on the shared interface root cannot be planned: data null and an error",
      query: `{ lookup(id: "p1") { id } }`,
      override: PLANNING_FAILED,
      errors: "path",
      monolith: false,
    },
    {
      name: "only __typename under two aliases of the shared root",
      query: `{ a: lookup(id: "p1") { __typename } b: lookup(id: "n1") { __typename } }`,
    },
    {
      name: "each alias served by the subgraph owning its type condition's fields",
      query: `{
        a: lookup(id: "p1") { ... on Person { id handle } }
        b: lookup(id: "n1") { ... on Note { id body } }
      }`,
    },
    {
      name: "type conditions not matching the returned type give {}, never the bogus id",
      query: `{
        a: lookup(id: "p1") { ... on Note { id } }
        b: lookup(id: "n1") { __typename ... on Person { id } }
      }`,
    },
    {
      name: "id beside a member condition is still unplannable",
      query: `{ a: lookup(id: "p1") { id ... on Note { id } } }`,
      override: PLANNING_FAILED,
      errors: "path",
      monolith: false,
    },
    {
      name: "entity jumps both ways from the non-shared roots",
      query: `{
        note(id: "n1") { id body author { id handle notes { id body } } }
        person(id: "p2") { handle notes { id } }
      }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root, generator: { roots: ["person", "note"] } });
