/**
 * The federated graph of the `@defer` tests and benchmark: `products` (the root list),
 * `prices` (an entity field, optionally slow), `reviews` (a list per product and a
 * `@requires(fields: "price")` field).
 *
 * @module
 */
import { type Area, fed2 } from "../federation/_harness.ts";

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
        typeDefs: fed2("@key") + `
          type Product @key(fields: "id") { id: ID! price: Int! }
        `,
        resolvers: {
          Product: {
            __resolveReference: async (ref: { id: string }) => {
              if (delay > 0) await sleep(delay);
              return { id: ref.id, price: PRICES[ref.id] };
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
  } = {},
): Promise<DeferRouter> {
  const { startArea } = await import("../federation/_harness.ts");
  const { startRouter } = await import("../../../lib/cli/serve.ts");
  const { parseConfig } = await import("../../../lib/config/mod.ts");
  const { silentLogger } = await import("../../../lib/log/mod.ts");
  const started = await startArea(deferArea(options));
  const operationsDir = await Deno.makeTempDir();
  try {
    const router = await startRouter({
      config: parseConfig({
        listen_addr: options.listen ?? "127.0.0.1:0",
        operations_dir: operationsDir,
        mcp: { enabled: false },
        ...options.config,
      }),
      supergraphSdl: started.supergraphSdl,
      log: silentLogger,
    });
    return {
      url: `${router.url}/graphql`,
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

/** Reads a `multipart/mixed` body into its JSON parts (boundary from the content type). */
export async function readParts(response: Response): Promise<Record<string, unknown>[]> {
  const type = response.headers.get("content-type") ?? "";
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1];
  if (boundary === undefined) throw new Error(`not multipart: ${type}`);
  const text = await response.text();
  const out: Record<string, unknown>[] = [];
  for (const chunk of text.split(`\r\n--${boundary}`)) {
    const at = chunk.indexOf("\r\n\r\n");
    if (at < 0) continue;
    out.push(JSON.parse(chunk.slice(at + 4)));
  }
  return out;
}

/**
 * Merges incremental payloads into one result, as a client does: each entry's data at its
 * path, its errors after the others.
 * @param parts The initial payload, then the subsequent ones.
 * @returns `{data, errors?}`.
 */
export function mergeParts(parts: readonly Record<string, unknown>[]): {
  data: unknown;
  errors?: unknown[];
} {
  const first = parts[0] ?? {};
  const data = structuredClone(first.data ?? null) as Record<string, unknown> | null;
  const errors: unknown[] = [...((first.errors as unknown[] | undefined) ?? [])];
  for (const part of parts.slice(1)) {
    for (const e of (part.errors as unknown[] | undefined) ?? []) errors.push(e);
    const entries = (part.incremental ?? []) as {
      data: Record<string, unknown> | null;
      path: (string | number)[];
      errors?: unknown[];
    }[];
    for (const entry of entries) {
      errors.push(...(entry.errors ?? []));
      if (data === null || entry.data === null) continue;
      let target: unknown = data;
      for (const key of entry.path) target = (target as Record<string | number, unknown>)[key];
      merge(target as Record<string, unknown>, entry.data);
    }
  }
  return errors.length > 0 ? { data, errors } : { data };
}

function merge(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(source)) {
    const existing = target[key];
    if (isObject(existing) && isObject(value)) merge(existing, value);
    else if (Array.isArray(existing) && Array.isArray(value)) {
      value.forEach((v, i) => {
        if (isObject(existing[i]) && isObject(v)) merge(existing[i], v);
        else existing[i] = v;
      });
    } else target[key] = value;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
