/**
 * Audit shape "partial union complex": the union `Step` is `Note | Shot`
 * in `west` and `Note | Call` in `east`, below a `@shareable` value type
 * (`Track.lane.steps`) of an entity both subgraphs resolve. Which members
 * may be asked depends on the subgraph the path is in: under `westTrack`
 * the shareable path stays in `west` (its `Shot`s), under `eastTrack` in
 * `east`, under the shared root only the common member is safe, and
 * `eastLane` (only in `east`) forces an entity hop whose members are
 * `east`'s. A subgraph asked for a track it does not own answers only
 * the members it knows, so a wrong choice loses data.
 *
 * @module
 */
import { type Area, fed2, type FedCase, registerArea, type SubgraphDef } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";
import { monolithCase } from "./_monolith.ts";

type Step =
  | { __typename: "Note"; text: string }
  | { __typename: "Shot"; frame: string }
  | { __typename: "Call"; number: string };
const NOTE: Step = { __typename: "Note", text: "hello" };
const TRACKS: Record<string, { lane: Step[]; eastLane: Step[] }> = {
  tw: {
    lane: [NOTE, { __typename: "Shot", frame: "f7" }],
    eastLane: [{ __typename: "Call", number: "555" }],
  },
  te: { lane: [NOTE, { __typename: "Call", number: "911" }], eastLane: [NOTE] },
  ts: { lane: [NOTE], eastLane: [] },
};
const track = (id: string) => ({
  id,
  lane: { steps: TRACKS[id]!.lane.map((s) => ({ ...s })) },
  eastLane: { steps: TRACKS[id]!.eastLane.map((s) => ({ ...s })) },
});

/** The monolith's data. */
export const root = { westTrack: track("tw"), eastTrack: track("te"), sharedTrack: track("ts") };

/** A subgraph's view of a lane: only the members it knows. */
const lane = (steps: readonly Step[], member: "Shot" | "Call") => ({
  steps: steps.filter((s) => s.__typename === "Note" || s.__typename === member),
});

const NAME = "shape_partial_union_path";

/** `west` (`Note | Shot`), `east` (`Note | Call`, and `eastLane`). */
const SUBGRAPHS: readonly SubgraphDef[] = [
  {
    name: "west",
    typeDefs: fed2("@key", "@shareable") + `
        type Query {
          westTrack: Track
          sharedTrack: Track @shareable
        }
        type Track @key(fields: "id") {
          id: ID!
          lane: Lane @shareable
        }
        type Lane @shareable {
          steps: [Step!]! @shareable
        }
        union Step = Note | Shot
        type Note @shareable {
          text: String
        }
        type Shot {
          frame: String
        }
      `,
    resolvers: {
      Query: { westTrack: () => ({ id: "tw" }), sharedTrack: () => ({ id: "ts" }) },
      Track: {
        __resolveReference: (ref: { id: string }) => TRACKS[ref.id] ? ref : null,
        lane: (t: { id: string }) => lane(TRACKS[t.id]!.lane, "Shot"),
      },
    },
  },
  {
    name: "east",
    typeDefs: fed2("@key", "@shareable") + `
        type Query {
          eastTrack: Track
          sharedTrack: Track @shareable
        }
        type Track @key(fields: "id") {
          id: ID!
          lane: Lane @shareable
          eastLane: Lane
        }
        type Lane @shareable {
          steps: [Step!]! @shareable
        }
        union Step = Note | Call
        type Note @shareable {
          text: String
        }
        type Call {
          number: String
        }
      `,
    resolvers: {
      Query: { eastTrack: () => ({ id: "te" }), sharedTrack: () => ({ id: "ts" }) },
      Track: {
        __resolveReference: (ref: { id: string }) => TRACKS[ref.id] ? ref : null,
        lane: (t: { id: string }) => lane(TRACKS[t.id]!.lane, "Call"),
        eastLane: (t: { id: string }) => lane(TRACKS[t.id]!.eastLane, "Call"),
      },
    },
  },
];

const APOLLO = "Apollo Gateway keeps only the members common to both subgraphs under the " +
  "shareable path, although it is fetched from the root's own subgraph: the member's field is null";

/** A case whose expected answer is the monolith's (the reference gateway is wrong). */
function fromMonolith(name: string, query: string): FedCase {
  return monolithCase({ name: NAME, subgraphs: SUBGRAPHS }, { name, query, root, note: APOLLO });
}

/** The graph and its cases. */
export const area: Area = {
  name: NAME,
  title: "audit partial-union-complex: union members by the subgraph a shared path is in",
  subgraphs: SUBGRAPHS,
  cases: [
    fromMonolith(
      "west's root: the shared path stays in west, its member answered",
      `{ westTrack { lane { steps { __typename ... on Note { text } ... on Shot { frame } ... on Call { number } } } } }`,
    ),
    fromMonolith(
      "east's root: the shared path stays in east",
      `{ eastTrack { lane { steps { __typename ... on Note { text } ... on Shot { frame } ... on Call { number } } } } }`,
    ),
    {
      name: "a condition on the other subgraph's member only: __typename still answered",
      query: `{ westTrack { lane { steps { __typename ... on Call { number } } } } }`,
    },
    {
      name: "shared root: the common member",
      query:
        `{ sharedTrack { lane { steps { __typename ... on Note { text } ... on Shot { frame } ... on Call { number } } } } }`,
    },
    {
      name: "a field only east has forces an entity hop: east's members",
      query:
        `{ westTrack { id eastLane { steps { __typename ... on Note { text } ... on Shot { frame } ... on Call { number } } } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
