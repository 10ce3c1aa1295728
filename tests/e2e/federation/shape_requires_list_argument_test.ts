/**
 * Audit shape "requires with argument": a required list field with an
 * argument (`replies(limit: 3) { writerId }`) that the client also selects
 * with another argument (`replies(limit: 1)`, or a variable with a
 * default) — the representation must carry the required one, the response
 * the client's one; and a requirement reaching through another entity list
 * (`twins { replies(limit: 50) { id } }`), where `twins` and `replies`
 * live in the other subgraph.
 *
 * @module
 */
import { type Area, fed2, type FedCase, registerArea, type SubgraphDef } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";
import { monolithCase } from "./_monolith.ts";

const COMMENTS: Record<string, { post: string; body: string; writerId: string }> = {
  c1: { post: "p1", body: "hi", writerId: "w1" },
  c2: { post: "p1", body: "yo", writerId: "w2" },
  c3: { post: "p1", body: "ok", writerId: "w3" },
  c4: { post: "p1", body: "ok!", writerId: "w1" },
  c5: { post: "p2", body: "hi", writerId: "w2" },
  c6: { post: "p2", body: "yo", writerId: "w3" },
};
const POSTS = ["p1", "p2"];
const WRITERS: Record<string, string> = { w1: "Ann", w2: "Bo", w3: "Cy" };
const repliesOf = (post: string, limit: number) =>
  Object.keys(COMMENTS).filter((c) => COMMENTS[c]!.post === post).slice(0, Math.max(0, limit));
const twinsOf = (comment: string) => {
  const { body, post } = COMMENTS[comment]!;
  return POSTS.filter((p) =>
    p !== post && Object.values(COMMENTS).some((c) => c.post === p && c.body === body)
  );
};
/** A post's writer: the writer of the last of its first three replies. */
const writerOf = (writerIds: readonly string[]) => {
  const id = writerIds[writerIds.length - 1];
  return id === undefined ? null : { id, name: WRITERS[id] };
};

/** A comment of the monolith. */
function commentOf(id: string): Record<string, unknown> {
  const c = COMMENTS[id]!;
  return {
    id,
    body: c.body,
    writerId: c.writerId,
    twins: () => twinsOf(id).map(postOf),
    echoes: twinsOf(id).reduce((n, p) => n + repliesOf(p, 50).length, 0),
  };
}
/** A post of the monolith. */
function postOf(id: string): Record<string, unknown> {
  return {
    id,
    replies: ({ limit }: { limit: number }) => repliesOf(id, limit).map(commentOf),
    writer: writerOf(repliesOf(id, 3).map((c) => COMMENTS[c]!.writerId)),
  };
}

/** The monolith's data. */
export const root = { posts: POSTS.map(postOf) };

type Need = { id: string; replies?: { id?: string; writerId?: string }[] };

const NAME = "shape_requires_list_argument";

/** `feed` (root, comment bodies and writer ids, echoes), `threads` (replies, twins, writers). */
const SUBGRAPHS: readonly SubgraphDef[] = [
  {
    name: "feed",
    typeDefs: fed2("@key", "@external", "@requires") + `
        type Query {
          posts: [Post]
        }
        type Post @key(fields: "id") {
          id: ID!
          replies(limit: Int!): [Comment] @external
        }
        type Comment @key(fields: "id") {
          id: ID!
          writerId: ID
          body: String!
          twins: [Post] @external
          echoes: Int @requires(fields: "twins { replies(limit: 50) { id } }")
        }
      `,
    resolvers: {
      Query: { posts: () => POSTS.map((id) => ({ id })) },
      Post: { __resolveReference: (ref: { id: string }) => ref },
      Comment: {
        __resolveReference: (ref: { id: string; twins?: Need[] }) =>
          COMMENTS[ref.id] ? { ...ref, ...COMMENTS[ref.id] } : null,
        echoes: (c: { twins?: Need[] }) => {
          if (c.twins === undefined) throw new Error("twins were not provided");
          return c.twins.reduce((n, p) => {
            if (p.replies === undefined || p.replies.some((r) => r.id === undefined)) {
              throw new Error("twins' replies were not provided");
            }
            return n + p.replies.length;
          }, 0);
        },
      },
    },
  },
  {
    name: "threads",
    typeDefs: fed2("@key", "@external", "@requires") + `
        type Post @key(fields: "id") {
          id: ID!
          writer: Writer @requires(fields: "replies(limit: 3) { writerId }")
          replies(limit: Int!): [Comment]
        }
        type Comment @key(fields: "id") {
          id: ID!
          writerId: ID @external
          twins: [Post]
        }
        type Writer {
          id: ID!
          name: String
        }
      `,
    resolvers: {
      Post: {
        __resolveReference: (ref: Need) => POSTS.includes(ref.id) ? ref : null,
        replies: (p: { id: string }, { limit }: { limit: number }) =>
          repliesOf(p.id, limit).map((id) => ({ id })),
        writer: (p: Need) => {
          if (p.replies === undefined) throw new Error("replies were not provided");
          if (p.replies.length !== Math.min(3, repliesOf(p.id, 50).length)) {
            throw new Error(`expected the first 3 replies, got ${p.replies.length}`);
          }
          return writerOf(p.replies.map((r) => r.writerId ?? ""));
        },
      },
      Comment: {
        __resolveReference: (ref: { id: string }) => COMMENTS[ref.id] ? { id: ref.id } : null,
        twins: (c: { id: string }) => twinsOf(c.id).map((id) => ({ id })),
      },
    },
  },
];

const APOLLO = "Apollo Gateway asks feed for the required replies(limit: 3), which is @external " +
  "there (answered null), instead of threads: writer fails";

/** A case whose expected answer is the monolith's (the reference gateway is wrong). */
function fromMonolith(name: string, query: string): FedCase {
  return monolithCase({ name: NAME, subgraphs: SUBGRAPHS }, { name, query, root, note: APOLLO });
}

/** The graph and its cases. */
export const area: Area = {
  name: NAME,
  title:
    "audit requires-with-argument: a required list field with an argument the client also selects",
  subgraphs: SUBGRAPHS,
  cases: [
    fromMonolith("a requirement with a list argument", `{ posts { writer { id name } } }`),
    fromMonolith(
      "the required list field also selected by the client with another argument",
      `{ posts { writer { id } replies(limit: 1) { id } } }`,
    ),
    fromMonolith(
      "the client's argument from a variable with a default",
      `query ($limit: Int = 1) { posts { writer { id } replies(limit: $limit) { id body } } }`,
    ),
    fromMonolith(
      "the same argument through two named fragments",
      `query ($limit: Int = 2) { posts { writer { id } ...A ...B } }
        fragment A on Post { replies(limit: $limit) { id } }
        fragment B on Post { replies(limit: $limit) { id } }`,
    ),
    {
      name: "a requirement through another entity list with an argument",
      query: `{ posts { replies(limit: 3) { id echoes } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root, generator: { values: { Int: ["1", "3", "50"] } } });
