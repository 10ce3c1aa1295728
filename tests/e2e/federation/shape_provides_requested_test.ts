/**
 * Audit shape "provides only requested fields": `provider`'s roots
 * `@provides(fields: "name blurb")`. Only the provided fields the client
 * selects may be asked of `provider` (its `blurb` resolver fails: no case
 * selects it), the owner must never be asked for a provided field (its
 * `name` and `blurb` fail), and `provider` is never entered by key (its
 * reference resolver fails). `extra` is fetched from the owner. Aliases,
 * inline and named fragments, `@skip`/`@include` on fragments and
 * untyped sibling fragments must keep that.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const ENTITIES = [
  { id: "e1", name: "One", blurb: "first", extra: "x1" },
  { id: "e2", name: "Two", blurb: "second", extra: "x2" },
];
const entity = (id: unknown) => ENTITIES.find((e) => e.id === id);

/** The monolith's data (`blurb` is never generated: selecting it is what `provider` refuses). */
export const root = {
  ownerPing: true,
  entity: { ...ENTITIES[0]! },
  entities: ENTITIES.map((e) => ({ ...e })),
};

function fails(what: string): () => never {
  return () => {
    throw new Error(what);
  };
}

/** The graph: `owner` (every field, by key), `provider` (roots providing `name blurb`). */
export const area: Area = {
  name: "shape_provides_requested",
  title: "audit provides-only-requested-fields: only the selected provided fields are asked",
  subgraphs: [
    {
      name: "owner",
      typeDefs: fed2("@key", "@shareable") + `
        type Query {
          ownerPing: Boolean
        }
        type Entity @key(fields: "id") {
          id: ID!
          name: String! @shareable
          blurb: String! @shareable
          extra: String!
        }
      `,
      resolvers: {
        Query: { ownerPing: () => true },
        Entity: {
          __resolveReference: (ref: { id: string }) => entity(ref.id) ?? null,
          name: fails("the owner was asked for a provided field (name)"),
          blurb: fails("the owner was asked for a provided field (blurb)"),
        },
      },
    },
    {
      name: "provider",
      typeDefs: fed2("@key", "@external", "@provides") + `
        type Query {
          entity: Entity @provides(fields: "name blurb")
          entities: [Entity!]! @provides(fields: "name blurb")
        }
        type Entity @key(fields: "id") {
          id: ID!
          name: String! @external
          blurb: String! @external
        }
      `,
      resolvers: {
        Query: { entity: () => ENTITIES[0], entities: () => ENTITIES },
        Entity: {
          __resolveReference: fails("provider entered by key"),
          blurb: fails("over-fetch: provider asked for blurb, which no client selected"),
        },
      },
    },
  ],
  cases: [
    { name: "key field only", query: `{ entity { id } }` },
    { name: "one of the provided fields", query: `{ entity { id name } }` },
    { name: "a provided field under an alias", query: `{ entity { id shown: name } }` },
    {
      name: "a provided field in an inline fragment on the same type",
      query: `{ entity { id ... on Entity { name } } }`,
    },
    {
      name: "a provided field in a named fragment",
      query: `{ entity { id ...N } } fragment N on Entity { name }`,
    },
    {
      name: "a provided field and an owner's field",
      query: `{ entity { id name extra } }`,
    },
    { name: "list: a provided field", query: `{ entities { id name } }` },
    { name: "list: a provided field and an owner's field", query: `{ entities { name extra } }` },
    {
      name: "@skip(if: true) fragment around the unselected provided field",
      query: `{ entity { id ... on Entity @skip(if: true) { blurb } } }`,
    },
    {
      name: "@include(if: false) fragment around the unselected provided field",
      query: `{ entity { id ... @include(if: false) { blurb } } }`,
    },
    {
      name: "untyped sibling fragments, one provided and one owner's field",
      query: `{ entity { id ... { name } ... { extra } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root, generator: { exclude: ["Entity.blurb"] } });
