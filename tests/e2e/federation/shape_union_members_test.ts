/**
 * Issue 13, shape 7: union members that exist only in some subgraphs under
 * a shared path. `Query.media` and `Shelf.media` are shared by `audio` and
 * `video`; `Media` is `Book | Song` in `audio` and `Book | Movie` in
 * `video`. Each subgraph may only be sent fragments on its own members;
 * `Song` and `Movie` fields come from their own subgraphs' root fields.
 * `Shelf.pick` (a `Song`) is only in `audio`, so a selection of the value
 * type `Shelf` with `pick` must go there whole, without `Movie` fragments.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const BOOKS = [
  { __typename: "Book", id: "b1", title: "Dune", pages: 412 },
  { __typename: "Book", id: "b2", title: "Emma", pages: 320 },
];
const SONGS = [{ __typename: "Song", id: "s1", title: "Hey", artist: "Jo" }];
const MOVIES = [{ __typename: "Movie", id: "m1", title: "Alien", minutes: 117 }];

/** The monolith's data. */
export const root = {
  media: BOOKS.map((b) => ({ ...b })),
  shelf: { id: "sh1", media: [{ ...BOOKS[1]! }], pick: { ...SONGS[0]! } },
  songs: SONGS.map((s) => ({ ...s, media: BOOKS.slice(0, 1).map((b) => ({ ...b })) })),
  movies: MOVIES.map((m) => ({ ...m })),
};
const typeOf = (o: { __typename: string }) => o.__typename;

/** The graph: `audio` (books and songs), `video` (books and movies). */
export const area: Area = {
  name: "shape_union_members",
  title: "issue 13 shape 7: union members only in some subgraphs under a shared path",
  subgraphs: [
    {
      name: "audio",
      typeDefs: fed2("@shareable") + `
        type Query {
          media: [Media!]! @shareable
          shelf: Shelf! @shareable
          songs: [Song!]!
        }
        type Shelf @shareable {
          id: ID!
          media: [Media!]!
          pick: Media
        }
        union Media = Book | Song
        type Book @shareable {
          id: ID!
          title: String!
          pages: Int!
        }
        type Song {
          id: ID!
          title: String!
          artist: String!
          media: [Media!]!
        }
      `,
      resolvers: {
        Query: { media: () => root.media, shelf: () => root.shelf, songs: () => root.songs },
        Media: { __resolveType: typeOf },
      },
    },
    {
      name: "video",
      typeDefs: fed2("@shareable") + `
        type Query {
          media: [Media!]! @shareable
          shelf: Shelf! @shareable
          movies: [Movie!]!
        }
        type Shelf @shareable {
          id: ID!
          media: [Media!]!
        }
        union Media = Book | Movie
        type Book @shareable {
          id: ID!
          title: String!
          pages: Int!
        }
        type Movie {
          id: ID!
          title: String!
          minutes: Int!
        }
      `,
      resolvers: {
        Query: { media: () => root.media, shelf: () => root.shelf, movies: () => root.movies },
        Media: { __resolveType: typeOf },
      },
    },
  ],
  cases: [
    {
      name: "fragments on members of either subgraph under a shared root field",
      query:
        `{ media { __typename ... on Book { title } ... on Song { artist } ... on Movie { minutes } } }`,
    },
    {
      name: "the same under a shared nested path",
      query:
        `{ shelf { id media { ... on Song { title } ... on Movie { title } ... on Book { pages } } } }`,
    },
    {
      name: "a field only one subgraph has under the shared value type: its members only",
      query:
        `{ shelf { pick { ... on Song { title } ... on Movie { title } } media { ... on Movie { minutes } ... on Book { title } } } }`,
    },
    {
      name: "member-only fields from each subgraph's own root fields in one query",
      query:
        `{ songs { artist media { ... on Movie { minutes } ... on Book { id } } } movies { title } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
