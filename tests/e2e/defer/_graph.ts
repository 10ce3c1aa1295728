/**
 * The federated graph of the `@defer` tests and benchmark: `products` (the root list),
 * `prices` (an entity field, optionally slow), `reviews` (a list per product and a
 * `@requires(fields: "price")` field).
 *
 * @module
 */
import { type Area, fed2 } from "../federation/_harness.ts";
export { mergeParts, readParts } from "../federation/_incremental.ts";

const PRODUCTS = [
  { id: "p1", name: "Table" },
  { id: "p2", name: "Chair" },
  { id: "p3", name: "Lamp" },
];
const PRICES: Record<string, number> = { p1: 120, p2: 45, p3: 30 };
const REVIEWS: Record<string, { body: string; stars: number }[]> = {
  p1: [{ body: "Solid", stars: 5 }, { body: "Heavy", stars: 3 }],
  p2: [{ body: "Comfy", stars: 4 }],
  p3: [],
};

/** The monolith's data (what the subgraphs serve together). */
export const root = {
  products: PRODUCTS.map((p) => ({
    __typename: "Product",
    ...p,
    price: PRICES[p.id]!,
    reviews: REVIEWS[p.id]!,
    deal: PRICES[p.id]! < 50,
  })),
};

/** Options of {@linkcode deferArea}. */
export interface DeferGraphOptions {
  /** Milliseconds `prices` waits before answering (default 0). */
  readonly pricesDelayMs?: number;
  /** `prices` is composed, then shut down (its fetches fail). */
  readonly pricesDown?: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The area (subgraphs and no cases: the tests run their own operations).
 * @param options The `prices` delay.
 * @returns The area.
 */
export function deferArea(options: DeferGraphOptions = {}): Area {
  const delay = options.pricesDelayMs ?? 0;
  return {
    name: "defer",
    title: "@defer",
    cases: [],
    subgraphs: [
      {
        name: "products",
        typeDefs: fed2("@key") + `
          type Query { products: [Product!]! product(id: ID!): Product }
          type Product @key(fields: "id") { id: ID! name: String! }
        `,
        resolvers: {
          Query: {
            products: () => PRODUCTS,
            product: (_: unknown, args: { id: string }) => PRODUCTS.find((p) => p.id === args.id),
          },
          Product: {
            __resolveReference: (ref: { id: string }) => PRODUCTS.find((p) => p.id === ref.id),
          },
        },
      },
      {
        name: "prices",
        ...(options.pricesDown ? { down: true } : {}),
        typeDefs: fed2("@key", "@authenticated").replace("v2.3", "v2.5") + `
          type Product @key(fields: "id") { id: ID! price: Int! cost: Int @authenticated }
        `,
        resolvers: {
          Product: {
            __resolveReference: async (ref: { id: string }) => {
              if (delay > 0) await sleep(delay);
              return { id: ref.id, price: PRICES[ref.id], cost: 1 };
            },
          },
        },
      },
      {
        name: "reviews",
        typeDefs: fed2("@key", "@external", "@requires") + `
          type Product @key(fields: "id") {
            id: ID!
            price: Int! @external
            reviews: [Review!]!
            deal: Boolean! @requires(fields: "price")
          }
          type Review { body: String! stars: Int! }
        `,
        resolvers: {
          Product: {
            __resolveReference: (ref: { id: string; price?: number }) => ({ ...ref }),
            reviews: (p: { id: string }) => REVIEWS[p.id],
            deal: (p: { price?: number }) => {
              if (p.price === undefined) throw new Error("price did not reach reviews");
              return p.price < 50;
            },
          },
        },
      },
    ],
  };
}

/** A router serving the `@defer` graph, and its subgraphs. */
export interface DeferRouter {
  /** `http://127.0.0.1:<port>/graphql`. */
  readonly url: string;
  /** The metrics listener's URL, when `telemetry.metrics.prometheus` is on. */
  readonly metricsUrl?: string;
  /** Subgraph requests so far (subgraph name and query). */
  readonly requests: readonly { readonly subgraph: string; readonly query: string }[];
  close(): Promise<void>;
}

/**
 * Starts the graph's subgraphs and a router over them (port 0).
 * @param options The `prices` delay, router config additions, a fixed port.
 * @returns The running router.
 */
export async function startDeferRouter(
  options: DeferGraphOptions & {
    readonly config?: Record<string, unknown>;
    readonly listen?: string;
    /** Files of the operations folder (`Name.graphql` → text), for Connect and MCP. */
    readonly operations?: Readonly<Record<string, string>>;
  } = {},
): Promise<DeferRouter> {
  const { startArea } = await import("../federation/_harness.ts");
  const { startRouter } = await import("../../../lib/cli/serve.ts");
  const { parseConfig } = await import("../../../lib/config/mod.ts");
  const { silentLogger } = await import("../../../lib/log/mod.ts");
  const { withProfile } = await import("../_production_profile.ts");
  const started = await startArea(deferArea(options));
  const operationsDir = await Deno.makeTempDir();
  for (const [file, text] of Object.entries(options.operations ?? {})) {
    await Deno.writeTextFile(`${operationsDir}/${file}`, text);
  }
  try {
    const router = await startRouter({
      // The production profile (issue 39): access logs, metrics and tracing on.
      config: parseConfig(withProfile({
        listen_addr: options.listen ?? "127.0.0.1:0",
        operations_dir: operationsDir,
        mcp: { enabled: false },
        ...options.config,
      })),
      supergraphSdl: started.supergraphSdl,
      log: silentLogger,
    });
    return {
      url: `${router.url}/graphql`,
      ...(router.metricsUrl ? { metricsUrl: router.metricsUrl } : {}),
      requests: started.requests,
      close: async () => {
        await router.shutdown();
        await started.close();
        await Deno.remove(operationsDir, { recursive: true });
      },
    };
  } catch (error) {
    await started.close();
    await Deno.remove(operationsDir, { recursive: true });
    throw error;
  }
}
