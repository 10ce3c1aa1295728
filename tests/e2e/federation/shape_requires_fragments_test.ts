/**
 * Audit shape "requires with fragments": a `@requires` whose selection
 * nests type conditions on the field's interface and its members
 * (`payload { ... on Shape { tag ... on Ball { mass radius } } ... on Cube
 * { mass edge } }`), where members implement a second interface (`Solid`)
 * and one member (`Cube`) is `@inaccessible` in the requiring subgraph, and a second requirement spelled as a fragment on the
 * field's own interface (`... on Shape { tag }`). Both subgraphs have root
 * fields (`Query @shareable`); a holder whose payload is null must still be
 * computed. The representation must carry exactly the members' fields, or
 * `summary` is computed from missing data. (The audit's condition on the
 * intermediate interface, `... on Solid { mass }`, does not compose with
 * our composition library: SATISFIABILITY_ERROR.)
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

type Payload =
  | { __typename: "Ball"; tag: string; mass: number; radius: number }
  | { __typename: "Disc"; tag: string; width: number }
  | null;
const HOLDERS: Record<string, Payload> = {
  h1: null,
  h2: { __typename: "Ball", tag: "ball", mass: 3, radius: 7 },
  h3: { __typename: "Disc", tag: "disc", width: 5 },
};
type Given = { tag?: string; mass?: number; radius?: number; edge?: number } | null | undefined;
/** Fails (instead of answering) when a required field is missing from the representation. */
function summaryOf(p: Given, typename: string | undefined): string {
  if (p === undefined) throw new Error("payload was not provided");
  if (p === null) return "none";
  if (p.tag === undefined) throw new Error("payload.tag was not provided");
  if (typename === "Ball" && (p.mass === undefined || p.radius === undefined)) {
    throw new Error("Ball fields were not provided");
  }
  return `${p.tag}|${p.mass ?? "-"}|${p.radius ?? p.edge ?? "-"}`;
}
function shortOf(p: Given): string {
  if (p === undefined) throw new Error("payload was not provided");
  if (p !== null && p.tag === undefined) throw new Error("payload.tag was not provided");
  return `short:${p?.tag ?? "none"}`;
}
const typenameOf = (id: string) => HOLDERS[id]?.__typename;

/** The monolith's data. */
const holder = (id: string) => ({
  id,
  payload: HOLDERS[id] === null ? null : { ...HOLDERS[id] },
  summary: summaryOf(HOLDERS[id], typenameOf(id)),
  short: shortOf(HOLDERS[id]),
});
/** The monolith's data. */
export const root = { first: holder("h2"), second: holder("h1"), third: holder("h3") };

/** The graph: `store` (root `first`, payloads), `calc` (roots `second`, `third`, requiring fields). */
export const area: Area = {
  name: "shape_requires_fragments",
  title: "audit requires-with-fragments: nested interface conditions in a requirement",
  subgraphs: [
    {
      name: "store",
      typeDefs: fed2("@key", "@shareable") + `
        type Query @shareable {
          first: Holder
        }
        type Holder @key(fields: "id") {
          id: ID!
          payload: Shape
        }
        interface Shape {
          tag: String!
        }
        interface Solid implements Shape {
          tag: String!
          mass: Int!
        }
        type Cube implements Shape & Solid @shareable {
          tag: String!
          mass: Int!
          edge: Int!
        }
        type Ball implements Shape & Solid @shareable {
          tag: String!
          mass: Int!
          radius: Int!
        }
        type Disc implements Shape @shareable {
          tag: String!
          width: Int!
        }
      `,
      resolvers: {
        Query: { first: () => ({ id: "h2" }) },
        Holder: {
          __resolveReference: (ref: { id: string }) => ref.id in HOLDERS ? { id: ref.id } : null,
          payload: (h: { id: string }) => HOLDERS[h.id] ?? null,
        },
      },
    },
    {
      name: "calc",
      typeDefs: fed2("@key", "@shareable", "@inaccessible", "@external", "@requires") + `
        type Query @shareable {
          second: Holder
          third: Holder
        }
        type Holder @key(fields: "id") {
          id: ID!
          payload: Shape @external
          summary: String!
            @requires(
              fields: "payload { ... on Shape { tag ... on Ball { mass radius } } ... on Cube { mass edge } }"
            )
          short: String! @requires(fields: "payload { ... on Shape { tag } }")
        }
        interface Shape {
          tag: String!
        }
        interface Solid implements Shape {
          tag: String!
          mass: Int!
        }
        type Cube implements Shape & Solid @shareable @inaccessible {
          tag: String!
          mass: Int!
          edge: Int!
        }
        type Ball implements Shape & Solid @shareable {
          tag: String!
          mass: Int!
          radius: Int!
        }
        type Disc implements Shape @shareable {
          tag: String!
          width: Int!
        }
      `,
      resolvers: {
        Query: { second: () => ({ id: "h1" }), third: () => ({ id: "h3" }) },
        Holder: {
          __resolveReference: (ref: { id: string; payload?: Given }) => ref,
          summary: (h: { id: string; payload?: Given }) => summaryOf(h.payload, typenameOf(h.id)),
          short: (h: { payload?: Given }) => shortOf(h.payload),
        },
      },
    },
  ],
  cases: [
    {
      name: "payload's __typename under the requiring subgraph's roots (one null, one member)",
      query: `{ second { id payload { __typename } } third { id payload { __typename } } }`,
    },
    {
      name: "requirement with nested interface conditions, from the other subgraph's root",
      query: `{ first { summary } }`,
    },
    {
      name: "the requirement's object also selected by the client",
      query: `{ first { payload { __typename } summary } }`,
    },
    {
      name: "null payload: the requiring field is still computed",
      query: `{ second { payload { __typename } summary } }`,
    },
    {
      name: "requirement spelled as a fragment on the field's own interface",
      query: `{ third { payload { __typename } short } first { short } }`,
    },
    {
      name: "both requiring fields beside client fragments on the members",
      query: `{
        first { summary short payload { ... on Solid { mass } ... on Ball { radius } } }
        third { summary payload { ... on Disc { width } } }
      }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
