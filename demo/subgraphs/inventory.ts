/**
 * The `inventory` demo subgraph: stock per product under the composite key
 * `upc sku`, the `StockStatus` enum, and `shippingEstimate` with
 * `@requires(fields: "price weight")`. SDL: `schema/inventory.graphql`.
 *
 * @module
 */
import { GraphQLError } from "graphql";
import { PRODUCTS, STOCK, type StockRecord, WAREHOUSES } from "../data.ts";
import type { SubgraphResolvers } from "../subgraph.ts";

/** The subgraph SDL, read from `schema/inventory.graphql`. */
export const typeDefs: string = Deno.readTextFileSync(
  new URL("../../schema/inventory.graphql", import.meta.url),
);

interface ProductRef {
  readonly upc: string;
  readonly sku: string;
  readonly price?: number;
  readonly weight?: number;
}

type StockStatus = "IN_STOCK" | "LOW_STOCK" | "OUT_OF_STOCK";

function stockStatus(quantity: number): StockStatus {
  return quantity === 0 ? "OUT_OF_STOCK" : quantity < 5 ? "LOW_STOCK" : "IN_STOCK";
}

function stockOf(product: ProductRef): StockRecord {
  return STOCK.find((s) => s.upc === product.upc) ??
    { upc: product.upc, quantity: 0, warehouseId: "w1" };
}

/**
 * Shipping cost in US dollars: free from 500, else 5 plus 0.5 per kilogram.
 * @param price Price in US dollars.
 * @param weight Weight in kilograms.
 * @returns The estimate, rounded to cents.
 */
export function shippingEstimate(price: number, weight: number): number {
  return price >= 500 ? 0 : Math.round((5 + weight * 0.5) * 100) / 100;
}

/**
 * Builds the resolvers (stateless: every call gives equivalent resolvers).
 * @returns Resolvers in the `@apollo/subgraph` shape.
 */
export function createResolvers(): SubgraphResolvers {
  return {
    Query: {
      productsByStock: (_: unknown, args: { status: StockStatus }) =>
        STOCK.filter((s) => stockStatus(s.quantity) === args.status).map((s) => {
          const product = PRODUCTS.find((p) => p.upc === s.upc);
          return { upc: s.upc, sku: product?.sku ?? "" };
        }),
      warehouses: () => WAREHOUSES,
    },
    Product: {
      __resolveReference: (ref: ProductRef) => ({ ...ref }),
      quantity: (product: ProductRef) => stockOf(product).quantity,
      inStock: (product: ProductRef) => stockOf(product).quantity > 0,
      stockStatus: (product: ProductRef) => stockStatus(stockOf(product).quantity),
      shippingEstimate: (product: ProductRef) => {
        if (typeof product.price !== "number" || typeof product.weight !== "number") {
          throw new GraphQLError(
            "shippingEstimate needs price and weight in the representation (@requires)",
          );
        }
        return shippingEstimate(product.price, product.weight);
      },
      warehouse: (product: ProductRef) =>
        WAREHOUSES.find((w) => w.id === stockOf(product).warehouseId),
    },
    Warehouse: {
      __resolveReference: (ref: { id: string }) => {
        const warehouse = WAREHOUSES.find((w) => w.id === ref.id);
        return warehouse === undefined ? null : { ...warehouse };
      },
    },
  };
}
