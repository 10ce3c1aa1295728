/**
 * The `accounts` demo subgraph: users, orders, `@requiresScopes` and
 * `@authenticated` fields. SDL: `schema/accounts.graphql`.
 *
 * @module
 */
import { type OrderRecord, ORDERS, PRODUCTS, type UserRecord, USERS } from "../data.ts";
import type { SubgraphResolvers } from "../subgraph.ts";

/** The subgraph SDL, read from `schema/accounts.graphql`. */
export const typeDefs: string = Deno.readTextFileSync(
  new URL("../../schema/accounts.graphql", import.meta.url),
);

function userById(id: string): UserRecord | null {
  return USERS.find((u) => u.id === id) ?? null;
}

function copy<T extends object>(value: T | null): T | null {
  return value === null ? null : { ...value };
}

function orderTotal(order: OrderRecord): number {
  const cents = order.itemUpcs.reduce(
    (sum, upc) => sum + Math.round((PRODUCTS.find((p) => p.upc === upc)?.price ?? 0) * 100),
    0,
  );
  return cents / 100;
}

/**
 * Builds the resolvers (stateless: every call gives equivalent resolvers).
 * @returns Resolvers in the `@apollo/subgraph` shape.
 */
export function createResolvers(): SubgraphResolvers {
  return {
    Query: {
      me: () => userById("1"),
      user: (_: unknown, args: { id: string }) => userById(args.id),
      users: () => USERS,
    },
    User: {
      // Copies: @apollo/subgraph tags resolved references, and the records are frozen.
      __resolveReference: (ref: { id: string }) => copy(userById(ref.id)),
      orders: (user: UserRecord) => ORDERS.filter((o) => o.userId === user.id),
    },
    Order: {
      __resolveReference: (ref: { id: string }) =>
        copy(ORDERS.find((o) => o.id === ref.id) ?? null),
      total: orderTotal,
      items: (order: OrderRecord) => order.itemUpcs.map((upc) => ({ upc })),
    },
  };
}
