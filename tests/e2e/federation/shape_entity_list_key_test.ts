/**
 * Audit shape "complex entity call": an entity whose key is a list of
 * other entities, with a bigger key in each subgraph. `charts` keys
 * `Playlist` by `tracks { id }`, `lists` by `tracks { id isrc }` (`isrc`
 * comes from `ids`, entered by `id`), `royalties` by
 * `tracks { id isrc album { id code } } picked { id }` (`album` comes from
 * `charts`, `picked` from `lists`). Reaching `royalty` means assembling
 * that whole key from three subgraphs first.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const ALBUMS: Record<string, { id: string; code: string; lead: string }> = {
  a1: { id: "a1", code: "x1", lead: "t1" },
  a2: { id: "a2", code: "x2", lead: "t3" },
};
const TRACKS = [
  { id: "t1", isrc: "i1", album: "a1", amount: 1.5 },
  { id: "t2", isrc: "i2", album: "a2", amount: 2.5 },
  { id: "t3", isrc: "i3", album: "a2", amount: 0.5 },
];
const TOP = ["t2", "t1"];
const track = (id: unknown) => TRACKS.find((t) => t.id === id);
type Ref = { id: string; isrc?: string; album?: { id: string; code: string } };
/** Whether a representation names a track exactly (every key field given must match). */
const matches = (ref: Ref) => {
  const t = track(ref.id);
  if (t === undefined) return undefined;
  if (ref.isrc !== undefined && ref.isrc !== t.isrc) return undefined;
  const album = ALBUMS[t.album]!;
  if (ref.album !== undefined && (ref.album.id !== album.id || ref.album.code !== album.code)) {
    return undefined;
  }
  return t;
};
const picked = (tracks: readonly { id: string }[]) => tracks[1] ?? null;

/** A track of the monolith (album and lead track computed on demand). */
function trackOf(id: string): Record<string, unknown> {
  const t = track(id)!;
  const a = ALBUMS[t.album]!;
  return {
    id: t.id,
    isrc: t.isrc,
    royalty: { amount: t.amount },
    album: { id: a.id, code: a.code, leadTrack: () => trackOf(a.lead) },
  };
}

/** The monolith's data. */
export const root = {
  topTracks: {
    tracks: TOP.map(trackOf),
    first: trackOf(TOP[0]!),
    picked: trackOf(picked(TOP.map((id) => ({ id })))!.id),
  },
};

const albumOf = (t: { album: string }) => {
  const a = ALBUMS[t.album]!;
  return { id: a.id, code: a.code };
};

/** The graph: `charts` (root, albums), `ids` (isrc), `lists` (first, picked), `royalties`. */
export const area: Area = {
  name: "shape_entity_list_key",
  title: "audit complex-entity-call: a list-of-entities key growing in each subgraph",
  subgraphs: [
    {
      name: "charts",
      typeDefs: fed2("@key", "@shareable") + `
        type Query {
          topTracks: Playlist!
        }
        type Playlist @key(fields: "tracks { id }") {
          tracks: [Track!]!
        }
        type Track @key(fields: "id") {
          id: String!
          album: Album @shareable
        }
        type Album @key(fields: "id") {
          id: String!
          code: String @shareable
          leadTrack: Track! @shareable
        }
      `,
      resolvers: {
        Query: { topTracks: () => ({ tracks: TOP.map((id) => ({ id })) }) },
        Playlist: {
          __resolveReference: (ref: { tracks: { id: string }[] }) => ({ tracks: ref.tracks }),
        },
        Track: {
          __resolveReference: (ref: Ref) => matches(ref) ? { id: ref.id } : null,
          album: (t: { id: string }) => albumOf(track(t.id)!),
        },
        Album: {
          __resolveReference: (ref: { id: string }) => ALBUMS[ref.id] ?? null,
          leadTrack: (a: { id: string }) => ({ id: ALBUMS[a.id]!.lead }),
        },
      },
    },
    {
      name: "ids",
      typeDefs: fed2("@key") + `
        type Track @key(fields: "id") @key(fields: "id isrc") {
          id: String!
          isrc: String!
        }
      `,
      resolvers: {
        Track: {
          __resolveReference: (ref: Ref) => {
            const t = matches(ref);
            return t === undefined ? null : { id: t.id, isrc: t.isrc };
          },
        },
      },
    },
    {
      name: "lists",
      typeDefs: fed2("@key", "@shareable") + `
        type Playlist @key(fields: "tracks { id isrc }") {
          tracks: [Track!]!
          first: Track @shareable
          picked: Track @shareable
        }
        type Track @key(fields: "id isrc") {
          id: String!
          isrc: String
        }
      `,
      resolvers: {
        Playlist: {
          __resolveReference: (ref: { tracks: Ref[] }) => {
            const tracks = ref.tracks.map(matches).filter((t) => t !== undefined);
            if (tracks.length !== ref.tracks.length) throw new Error("unknown track in the key");
            const plain = tracks.map((t) => ({ id: t.id, isrc: t.isrc }));
            return { tracks: plain, first: plain[0] ?? null, picked: picked(plain) };
          },
        },
        Track: {
          __resolveReference: (ref: Ref) => {
            const t = matches(ref);
            return t === undefined ? null : { id: t.id, isrc: t.isrc };
          },
        },
      },
    },
    {
      name: "royalties",
      typeDefs: fed2("@key", "@shareable") + `
        type Playlist @key(fields: "tracks { id isrc album { id code } } picked { id }") {
          tracks: [Track!]!
          first: Track @shareable
          picked: Track @shareable
        }
        type Track @key(fields: "id isrc album { id code }") {
          id: String!
          isrc: String
          album: Album
          royalty: Royalty
        }
        type Album @key(fields: "id code") {
          id: String!
          code: String
        }
        type Royalty {
          amount: Float!
        }
      `,
      resolvers: {
        Playlist: {
          __resolveReference: (ref: { tracks: Ref[]; picked: { id: string } }) => {
            const tracks = ref.tracks.map(matches).filter((t) => t !== undefined);
            if (tracks.length !== ref.tracks.length) throw new Error("unknown track in the key");
            return { tracks, first: tracks[0] ?? null, picked: track(ref.picked.id) ?? null };
          },
        },
        Track: {
          __resolveReference: (ref: Ref) => matches(ref) ?? null,
          album: (t: { album: string }) => albumOf(t),
          royalty: (t: { amount: number }) => ({ amount: t.amount }),
        },
        Album: {
          __resolveReference: (ref: { id: string; code: string }) =>
            ALBUMS[ref.id]?.code === ref.code ? { id: ref.id, code: ref.code } : null,
        },
      },
    },
  ],
  cases: [
    {
      name: "field behind a key assembled from three subgraphs, with the key's parts selected",
      query: `{
        topTracks {
          tracks { id isrc royalty { amount } album { leadTrack { id } id code } }
          picked { id }
          first { id }
        }
      }`,
    },
    {
      name: "the far field alone",
      query: `{ topTracks { tracks { royalty { amount } } } }`,
    },
    {
      name: "an entity of the list-keyed entity, then a field behind the biggest key",
      query: `{ topTracks { picked { isrc royalty { amount } album { leadTrack { isrc } } } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
