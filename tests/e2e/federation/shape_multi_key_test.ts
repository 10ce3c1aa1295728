/**
 * Audit shape "keys mashup": an entity with four keys (a scalar, a nested
 * composite, a scalar plus a nested composite), most of them
 * `resolvable: false`, and a different resolvable key in each subgraph.
 * `depot` lists parcels and computes `note` from `label`
 * (`@requires`), which only `registry` serves, by `code`. The planner must
 * enter `registry` by `code`, then come back into `depot` by the only key
 * `depot` resolves (`code ref { bin slot }`), whose fields it already
 * fetched from `depot` itself.
 *
 * @module
 */
import { type Area, fed2, type FedCase, registerArea, type SubgraphDef } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";
import { monolithCase } from "./_monolith.ts";

interface Parcel {
  code: string;
  tracking: string;
  ref: { zone: string; bin: string; slot: string };
  label: string;
}
const PARCELS: readonly Parcel[] = [
  { code: "k1", tracking: "T-1", ref: { zone: "N", bin: "4", slot: "a" }, label: "fragile" },
  { code: "k2", tracking: "T-2", ref: { zone: "S", bin: "9", slot: "c" }, label: "heavy" },
  { code: "k3", tracking: "T-3", ref: { zone: "N", bin: "1", slot: "b" }, label: "cold" },
];
const DEPOTS: Record<string, { id: string; parcels: string[] }> = {
  d1: { id: "d1", parcels: ["k2", "k1"] },
  d2: { id: "d2", parcels: ["k3"] },
};
const parcel = (code: string) => PARCELS.find((p) => p.code === code);
const noteOf = (label: string) => `handle: ${label}`;
/** What `depot` knows of a parcel (no label). */
const local = (p: Parcel) => ({ code: p.code, tracking: p.tracking, ref: { ...p.ref } });

/** The monolith's data. */
export const root = {
  depot: {
    id: "d1",
    parcels: DEPOTS.d1!.parcels.map((c) => {
      const p = parcel(c)!;
      return { ...local(p), label: p.label, note: noteOf(p.label) };
    }),
  },
};

const NAME = "shape_multi_key";

/** `registry` (labels, by `code`), `depot` (root, notes, by `code ref { bin slot }`). */
const SUBGRAPHS: readonly SubgraphDef[] = [
  {
    name: "registry",
    typeDefs: fed2("@key") + `
        type Parcel
          @key(fields: "code")
          @key(fields: "tracking", resolvable: false)
          @key(fields: "ref { zone bin }", resolvable: false)
          @key(fields: "code ref { bin slot }", resolvable: false) {
          code: ID!
          tracking: ID!
          ref: ParcelRef!
          label: String!
        }
        type ParcelRef {
          zone: ID!
          bin: ID!
          slot: ID!
        }
      `,
    resolvers: {
      Parcel: {
        __resolveReference: (ref: { code: string }) => parcel(ref.code) ?? null,
      },
    },
  },
  {
    name: "depot",
    typeDefs: fed2("@key", "@external", "@requires") + `
        type Query {
          depot: Depot
        }
        type Depot @key(fields: "id") {
          id: ID!
          parcels: [Parcel!]!
        }
        type Parcel
          @key(fields: "ref { zone bin }", resolvable: false)
          @key(fields: "code ref { bin slot }")
          @key(fields: "tracking", resolvable: false)
          @key(fields: "code", resolvable: false) {
          code: ID!
          tracking: ID!
          ref: ParcelRef!
          label: String! @external
          note: String! @requires(fields: "label")
        }
        type ParcelRef {
          zone: ID!
          bin: ID!
          slot: ID!
        }
      `,
    resolvers: {
      Query: { depot: () => DEPOTS.d1 },
      Depot: {
        __resolveReference: (ref: { id: string }) => DEPOTS[ref.id] ?? null,
        parcels: (d: { parcels: string[] }) => d.parcels.map((c) => local(parcel(c)!)),
      },
      Parcel: {
        __resolveReference: (ref: { code: string; ref: { bin: string }; label?: string }) => {
          const p = parcel(ref.code);
          if (p === undefined || p.ref.bin !== ref.ref.bin) return null;
          return { ...local(p), label: ref.label };
        },
        note: (p: { label?: string }) => {
          if (p.label === undefined) throw new Error("Parcel.label was not provided");
          return noteOf(p.label);
        },
      },
    },
  },
];

const APOLLO = "Apollo Gateway re-enters depot by its first listed key (ref { zone bin }), " +
  "which depot declares resolvable: false; depot cannot resolve the parcel and note is null";

/** A case whose expected answer is the monolith's (the reference gateway is wrong). */
function fromMonolith(name: string, query: string): FedCase {
  return monolithCase({ name: NAME, subgraphs: SUBGRAPHS }, { name, query, root, note: APOLLO });
}

/** The graph and its cases. */
export const area: Area = {
  name: NAME,
  title: "audit keys-mashup: many keys, a different resolvable one per subgraph, and @requires",
  subgraphs: SUBGRAPHS,
  cases: [
    fromMonolith(
      "required field served by the only subgraph resolving the other key",
      `{ depot { id parcels { code label note } } }`,
    ),
    fromMonolith(
      "requiring field alone: its requirement and key fields are not in the response",
      `{ depot { parcels { note } } }`,
    ),
    fromMonolith(
      "composite key fields under aliases beside the requiring field",
      `{ depot { parcels { n: note r: ref { s: slot b: bin } t: tracking } } }`,
    ),
    {
      name: "non-resolvable keys are not used to enter registry: label by code",
      query: `{ depot { parcels { tracking label } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
