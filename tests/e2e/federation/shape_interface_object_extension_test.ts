/**
 * Audit shape "interface object indirect extension": `shelf` knows the
 * entity interface `Work` only as an `@interfaceObject` (`pick`,
 * `picks`); `library` owns `Work` and its members; `credits` extends only
 * the member `Film` (`director`). A member fragment under an
 * `@interfaceObject` field needs the concrete `__typename` from the
 * interface's owner before `Film.director` can be fetched from the third
 * subgraph.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

type Work =
  | { __typename: "Film"; id: string; heading: string; minutes: number; director: string }
  | { __typename: "Essay"; id: string; heading: string; words: number };
const WORKS: readonly Work[] = [
  { __typename: "Film", id: "w1", heading: "Tide", minutes: 90, director: "Ida" },
  { __typename: "Essay", id: "w2", heading: "On Salt", words: 1800 },
  { __typename: "Film", id: "w3", heading: "Dust", minutes: 120, director: "Lev" },
];
const work = (id: unknown) => WORKS.find((w) => w.id === id);
const PICKS = ["w2", "w3", "w1"];

/** The monolith's data. */
export const root = {
  feature: { ...work("w1") },
  person: { id: "u1", name: "Noor" },
  list: {
    id: "r1",
    name: "Weekend",
    pick: { ...work("w3") },
    picks: PICKS.map((id) => ({ ...work(id) })),
  },
};

/** What `library` knows of a work (no director). */
const inLibrary = (w: Work) => {
  if (w.__typename === "Film") {
    const { director: _, ...rest } = w;
    return rest;
  }
  return { ...w };
};

/** The graph: `library` (owns `Work`), `credits` (extends `Film`), `shelf` (`Work` as an interface object). */
export const area: Area = {
  name: "shape_interface_object_extension",
  title:
    "audit interface-object-indirect-extension: member fields of a third subgraph under an @interfaceObject",
  subgraphs: [
    {
      name: "library",
      typeDefs: fed2("@key") + `
        type Query {
          feature: Work
        }
        interface Work @key(fields: "id") {
          id: ID!
          heading: String
        }
        type Film implements Work @key(fields: "id") {
          id: ID!
          heading: String
          minutes: Int
        }
        type Essay implements Work @key(fields: "id") {
          id: ID!
          heading: String
          words: Int
        }
      `,
      resolvers: {
        Query: { feature: () => inLibrary(work("w1")!) },
        Work: {
          __resolveReference: (ref: { id: string }) =>
            work(ref.id) ? inLibrary(work(ref.id)!) : null,
          __resolveType: (w: Work) => w.__typename,
        },
        Film: { __resolveReference: (ref: { id: string }) => inLibrary(work(ref.id)!) },
        Essay: { __resolveReference: (ref: { id: string }) => inLibrary(work(ref.id)!) },
      },
    },
    {
      name: "credits",
      typeDefs: fed2("@key") + `
        type Query {
          person: Person
        }
        type Person @key(fields: "id") {
          id: ID!
          name: String
        }
        type Film @key(fields: "id") {
          id: ID!
          director: String
        }
      `,
      resolvers: {
        Query: { person: () => root.person },
        Person: {
          __resolveReference: (ref: { id: string }) => ref.id === "u1" ? root.person : null,
        },
        Film: {
          __resolveReference: (ref: { id: string }) => {
            const w = work(ref.id);
            return w?.__typename === "Film" ? { id: w.id, director: w.director } : null;
          },
        },
      },
    },
    {
      name: "shelf",
      typeDefs: fed2("@key", "@interfaceObject") + `
        type Query {
          list: Reel
        }
        type Reel @key(fields: "id") {
          id: ID!
          name: String
          pick: Work
          picks: [Work]
        }
        type Work @key(fields: "id") @interfaceObject {
          id: ID!
        }
      `,
      resolvers: {
        Query: {
          list: () => ({
            id: "r1",
            name: "Weekend",
            pick: { id: "w3" },
            picks: PICKS.map((id) => ({ id })),
          }),
        },
        Reel: { __resolveReference: () => null },
        Work: { __resolveReference: (ref: { id: string }) => work(ref.id) ? { id: ref.id } : null },
      },
    },
  ],
  cases: [
    {
      name:
        "every root: the owner's interface, another entity, and the interface object's member fields",
      query: `{
        feature { id heading ... on Film { minutes director } ... on Essay { words } }
        person { id name }
        list { id name pick { id ... on Film { minutes } } }
      }`,
    },
    {
      name: "only a third subgraph's member field under an @interfaceObject field",
      query: `{ list { pick { ... on Film { director } } } }`,
    },
    {
      name: "a list of interface objects with __typename, interface and member fields",
      query:
        `{ list { picks { __typename heading ... on Film { director minutes } ... on Essay { words } } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
