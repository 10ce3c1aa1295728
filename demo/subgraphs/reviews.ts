/**
 * The `reviews` demo subgraph: reviews, `@provides(fields: "username")` on
 * `Review.author`, the `addReview` mutation with its input object, and the
 * live field `reviewAdded`: every review `addReview` adds, as it is added
 * (its product and author are entities the other subgraphs resolve).
 * SDL: `schema/reviews.graphql`.
 *
 * @module
 */
import { GraphQLError } from "graphql";
import { PRODUCTS, type ReviewRecord, REVIEWS, USERS } from "../data.ts";
import { createFeed } from "../feed.ts";
import type { SubgraphResolvers } from "../subgraph.ts";

/** The subgraph SDL, read from `schema/reviews.graphql`. */
export const typeDefs: string = Deno.readTextFileSync(
  new URL("../../schema/reviews.graphql", import.meta.url),
);

interface AddReviewInput {
  readonly productUpc: string;
  readonly authorId: string;
  readonly body: string;
  readonly rating: number;
}

function badInput(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: "BAD_USER_INPUT" } });
}

/**
 * Builds the resolvers over a fresh copy of the seed reviews, so reviews added
 * by `addReview` stay within one server.
 * @returns Resolvers in the `@apollo/subgraph` shape.
 */
export function createResolvers(): SubgraphResolvers {
  const reviews: ReviewRecord[] = [...REVIEWS];
  const added = createFeed<ReviewRecord>({ maxQueued: 1000 });
  return {
    Query: {
      review: (_: unknown, args: { id: string }) => reviews.find((r) => r.id === args.id) ?? null,
      latestReviews: (_: unknown, args: { first: number }) =>
        reviews.slice().reverse().slice(0, Math.max(0, args.first)),
    },
    Mutation: {
      addReview: (_: unknown, args: { input: AddReviewInput }) => {
        const { input } = args;
        if (!Number.isInteger(input.rating) || input.rating < 1 || input.rating > 5) {
          throw badInput(`Rating must be between 1 and 5, got ${input.rating}`);
        }
        if (!PRODUCTS.some((p) => p.upc === input.productUpc)) {
          throw badInput(`No product with UPC "${input.productUpc}"`);
        }
        if (!USERS.some((u) => u.id === input.authorId)) {
          throw badInput(`No user with id "${input.authorId}"`);
        }
        const review: ReviewRecord = {
          id: `r${reviews.length + 1}`,
          productUpc: input.productUpc,
          authorId: input.authorId,
          body: input.body,
          rating: input.rating,
        };
        reviews.push(review);
        added.publish(review);
        return review;
      },
    },
    Subscription: {
      reviewAdded: {
        subscribe: (_: unknown, args: { productUpc?: string | null }) =>
          added.listen((review) =>
            args.productUpc == null || review.productUpc === args.productUpc
          ),
        resolve: (review: ReviewRecord) => review,
      },
    },
    Review: {
      __resolveReference: (ref: { id: string }) => {
        const review = reviews.find((r) => r.id === ref.id);
        return review === undefined ? null : { ...review };
      },
      // @provides(fields: "username"): this subgraph answers the author's username itself.
      author: (review: ReviewRecord) => {
        const user = USERS.find((u) => u.id === review.authorId);
        return { id: review.authorId, username: user?.username ?? "" };
      },
      product: (review: ReviewRecord) => ({ upc: review.productUpc }),
    },
    User: {
      __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
      reviews: (user: { id: string }) => reviews.filter((r) => r.authorId === user.id),
    },
    Product: {
      __resolveReference: (ref: { upc: string }) => ({ upc: ref.upc }),
      reviews: (product: { upc: string }) => reviews.filter((r) => r.productUpc === product.upc),
      averageRating: (product: { upc: string }) => {
        const ratings = reviews.filter((r) => r.productUpc === product.upc).map((r) => r.rating);
        if (ratings.length === 0) return null;
        return Math.round((ratings.reduce((a, b) => a + b, 0) / ratings.length) * 100) / 100;
      },
    },
  };
}
