/**
 * The `products` demo subgraph: the catalog, a composite key (`upc sku`), the
 * `Category` enum, the `ProductFilter` input and the `SearchResult` union.
 * SDL: `schema/products.graphql`.
 *
 * @module
 */
import {
  type BrandRecord,
  BRANDS,
  type ProductRecord,
  PRODUCTS,
  TOP_PRODUCT_UPCS,
} from "../data.ts";
import type { SubgraphResolvers } from "../subgraph.ts";

/** The subgraph SDL, read from `schema/products.graphql`. */
export const typeDefs: string = Deno.readTextFileSync(
  new URL("../../schema/products.graphql", import.meta.url),
);

interface ProductFilter {
  readonly category?: string | null;
  readonly maxPrice?: number | null;
  readonly first?: number | null;
}

function productByUpc(upc: string): ProductRecord | null {
  return PRODUCTS.find((p) => p.upc === upc) ?? null;
}

function filterProducts(filter: ProductFilter | null | undefined): ProductRecord[] {
  const matches = PRODUCTS.filter((p) =>
    (filter?.category == null || p.category === filter.category) &&
    (filter?.maxPrice == null || p.price <= filter.maxPrice)
  );
  return matches.slice(0, Math.max(0, filter?.first ?? 10));
}

/**
 * Builds the resolvers (stateless: every call gives equivalent resolvers).
 * @returns Resolvers in the `@apollo/subgraph` shape.
 */
export function createResolvers(): SubgraphResolvers {
  return {
    Query: {
      product: (_: unknown, args: { upc: string }) => productByUpc(args.upc),
      products: (_: unknown, args: { filter?: ProductFilter | null }) =>
        filterProducts(args.filter),
      topProducts: (_: unknown, args: { first: number }) =>
        TOP_PRODUCT_UPCS.slice(0, Math.max(0, args.first)).map(productByUpc),
      search: (_: unknown, args: { text: string }) => {
        const text = args.text.toLowerCase();
        return [
          ...PRODUCTS.filter((p) => p.name.toLowerCase().includes(text)),
          ...BRANDS.filter((b) => b.name.toLowerCase().includes(text)),
        ];
      },
    },
    Product: {
      __resolveReference: (ref: { upc: string; sku?: string }) => {
        const product = productByUpc(ref.upc);
        return product !== null && (ref.sku === undefined || ref.sku === product.sku)
          ? { ...product }
          : null;
      },
      brand: (product: ProductRecord) => BRANDS.find((b) => b.id === product.brandId),
    },
    SearchResult: {
      __resolveType: (value: ProductRecord | BrandRecord) => "upc" in value ? "Product" : "Brand",
    },
  };
}
