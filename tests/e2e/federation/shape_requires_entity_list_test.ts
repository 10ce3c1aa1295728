/**
 * Audit shape "i will name you later": a requires chain through a list of
 * entities. `feed.writer` requires `writerId`, which `threads` computes by
 * requiring `replies { writerId }`: `replies` is `threads`' own list, but
 * each reply's `writerId` lives in `feed`. So: `feed` (posts) → `threads`
 * (reply ids) → `feed` (each reply's writer id) → `threads` (the post's
 * writer id) → `feed` (the writer). A post with no replies has no writer.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const COMMENTS: Record<string, { writerId: string }> = {
  c1: { writerId: "w1" },
  c2: { writerId: "w2" },
  c3: { writerId: "w3" },
  c4: { writerId: "w2" },
};
const POSTS: Record<string, string[]> = { p1: ["c1", "c2", "c3"], p2: ["c4"], p3: [] };
const WRITERS: Record<string, string> = { w1: "Ann", w2: "Bo", w3: "Cy" };
/** A post's writer is the writer of its last reply. */
const writerIdOf = (writerIds: readonly (string | null | undefined)[]) =>
  writerIds.length === 0 ? null : writerIds[writerIds.length - 1] ?? null;
const writerOf = (id: string | null) =>
  id === null || WRITERS[id] === undefined ? null : { id, name: WRITERS[id] };

/** The monolith's data. */
export const root = {
  posts: Object.entries(POSTS).map(([id, replies]) => {
    const writerId = writerIdOf(replies.map((c) => COMMENTS[c]!.writerId));
    return {
      id,
      writerId,
      writer: writerOf(writerId),
      replies: replies.map((c) => ({ id: c, writerId: COMMENTS[c]!.writerId })),
    };
  }),
};

/** The graph: `feed` (root, reply writer ids, writers), `threads` (replies, post writer ids). */
export const area: Area = {
  name: "shape_requires_entity_list",
  title: "audit i-will-name-you-later: a requires chain through a list of entities",
  subgraphs: [
    {
      name: "feed",
      typeDefs: fed2("@key", "@external", "@requires") + `
        type Query {
          posts: [Post]
        }
        type Post @key(fields: "id") {
          id: ID!
          writerId: ID @external
          writer: Writer @requires(fields: "writerId")
        }
        type Comment @key(fields: "id") {
          id: ID!
          writerId: ID
        }
        type Writer {
          id: ID!
          name: String
        }
      `,
      resolvers: {
        Query: { posts: () => Object.keys(POSTS).map((id) => ({ id })) },
        Post: {
          __resolveReference: (ref: { id: string; writerId?: string | null }) =>
            POSTS[ref.id] ? ref : null,
          writer: (p: { writerId?: string | null }) => {
            if (p.writerId === undefined) throw new Error("writerId was not provided");
            return writerOf(p.writerId);
          },
        },
        Comment: {
          __resolveReference: (ref: { id: string }) =>
            COMMENTS[ref.id] ? { id: ref.id, ...COMMENTS[ref.id] } : null,
        },
      },
    },
    {
      name: "threads",
      typeDefs: fed2("@key", "@external", "@requires") + `
        type Post @key(fields: "id") {
          id: ID!
          writerId: ID @requires(fields: "replies { writerId }")
          replies: [Comment]
        }
        type Comment @key(fields: "id") {
          id: ID!
          writerId: ID @external
        }
      `,
      resolvers: {
        Post: {
          __resolveReference: (ref: { id: string; replies?: { writerId?: string }[] }) =>
            POSTS[ref.id] ? ref : null,
          replies: (p: { id: string }) => POSTS[p.id]!.map((id) => ({ id })),
          writerId: (p: { replies?: { writerId?: string }[] }) => {
            if (p.replies === undefined) throw new Error("replies were not provided");
            if (p.replies.some((r) => r.writerId === undefined)) {
              throw new Error("replies' writerId were not provided");
            }
            return writerIdOf(p.replies.map((r) => r.writerId));
          },
        },
        Comment: {
          __resolveReference: (ref: { id: string }) => COMMENTS[ref.id] ? { id: ref.id } : null,
        },
      },
    },
  ],
  cases: [
    {
      name:
        "field requiring a field that requires a list of entities' fields from the first subgraph",
      query: `{ posts { writer { id } } }`,
    },
    {
      name: "the middle of the chain and the end",
      query: `{ posts { id writerId writer { name } } }`,
    },
    {
      name: "the required list selected by the client too",
      query: `{ posts { replies { id writerId } writer { id name } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
