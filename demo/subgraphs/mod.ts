/**
 * The four demo subgraphs (accounts, products, reviews, inventory) and a
 * helper that serves them in-process and composes their supergraph, for
 * `deno task demo` and for e2e tests.
 *
 * @example Start on free ports, query, stop
 * ```ts
 * import assert from "node:assert/strict";
 * import { startDemoSubgraphs } from "./mod.ts";
 * const demo = startDemoSubgraphs({ basePort: 0 });
 * try {
 *   const products = demo.subgraphs.find((s) => s.name === "products")!;
 *   const response = await fetch(products.url, {
 *     method: "POST",
 *     headers: { "content-type": "application/json" },
 *     body: JSON.stringify({ query: '{ product(upc: "1") { name } }' }),
 *   });
 *   assert.deepEqual(await response.json(), { data: { product: { name: "Oak Dining Table" } } });
 *   assert.match(demo.supergraphSdl, /@join__graph\(name: "inventory"/);
 * } finally {
 *   await demo.close();
 * }
 * ```
 *
 * @module
 */
import { composeSupergraph, formatCompositionError } from "../../lib/compose/mod.ts";
import {
  type RunningSubgraph,
  serveSubgraph,
  type ServeSubgraphOptions,
  type SubgraphResolvers,
  type SubgraphStreamEvent,
} from "../subgraph.ts";
import * as accounts from "./accounts.ts";
import * as inventory from "./inventory.ts";
import * as products from "./products.ts";
import * as reviews from "./reviews.ts";

/** One demo subgraph definition. */
export interface DemoSubgraph {
  readonly name: string;
  /** Port used by `deno task demo` (and `schema/supergraph.graphql`). */
  readonly port: number;
  /** Federation v2 SDL (the text of `schema/<name>.graphql`). */
  readonly typeDefs: string;
  /** Fresh resolvers (the reviews store is per call). */
  readonly createResolvers: () => SubgraphResolvers;
}

/** The demo subgraphs, in the order of `config.yaml` (ports 4001–4004). */
export const DEMO_SUBGRAPHS: readonly DemoSubgraph[] = Object.freeze([
  { name: "accounts", port: 4001, ...accounts },
  { name: "products", port: 4002, ...products },
  { name: "reviews", port: 4003, ...reviews },
  { name: "inventory", port: 4004, ...inventory },
].map((s) => Object.freeze({ ...s })));

/** Options for {@linkcode startDemoSubgraphs}. */
export interface StartDemoOptions {
  /**
   * The first subgraph's port, the others follow (`44011` → 44011–44014); 0
   * picks free ports (tests); omitted uses the fixed ports 4001–4004.
   */
  readonly basePort?: number;
  /** Host; default `127.0.0.1`. */
  readonly hostname?: string;
  /** Called with every request a subgraph receives. */
  readonly onRequest?: (
    subgraph: string,
    body: { query: string; variables?: unknown },
    headers: Headers,
  ) => void;
  /** Called when a subscription starts or ends at a subgraph (WebSocket or SSE). */
  readonly onStream?: (subgraph: string, event: SubgraphStreamEvent) => void;
}

/** The running demo subgraphs. */
export interface RunningDemo {
  readonly subgraphs: readonly RunningSubgraph[];
  /** Supergraph SDL composed for the URLs the subgraphs actually listen on. */
  readonly supergraphSdl: string;
  /** Stops every subgraph. */
  close(): Promise<void>;
}

function portOf(subgraph: DemoSubgraph, basePort: number | undefined): number {
  if (basePort === undefined) return subgraph.port;
  return basePort === 0 ? 0 : basePort + DEMO_SUBGRAPHS.indexOf(subgraph);
}

/**
 * Serves the four demo subgraphs and composes their supergraph.
 * @param options Ports, host, request hook.
 * @returns The running subgraphs and their supergraph SDL.
 * @throws {Error} When a fixed port is taken (the message names it), or the demo SDLs do
 *   not compose.
 */
export function startDemoSubgraphs(
  options: StartDemoOptions = {},
): RunningDemo {
  const running: RunningSubgraph[] = [];
  try {
    for (const subgraph of DEMO_SUBGRAPHS) {
      const { onRequest, onStream } = options;
      const serveOptions: ServeSubgraphOptions = {
        port: portOf(subgraph, options.basePort),
        ...(options.hostname === undefined ? {} : { hostname: options.hostname }),
        ...(onRequest === undefined ? {} : {
          onRequest: (body, headers) => onRequest(subgraph.name, body, headers),
        }),
        ...(onStream === undefined ? {} : { onStream: (event) => onStream(subgraph.name, event) }),
      };
      running.push(
        serveSubgraph(subgraph.name, {
          typeDefs: subgraph.typeDefs,
          resolvers: subgraph.createResolvers(),
        }, serveOptions),
      );
    }
  } catch (error) {
    void Promise.all(running.map((s) => s.close()));
    if (error instanceof Deno.errors.AddrInUse) {
      const next = DEMO_SUBGRAPHS[running.length]!;
      throw new Error(
        `Port ${
          portOf(next, options.basePort)
        } (demo subgraph "${next.name}") is in use: is another demo running? (move the demo's subgraphs with --subgraph-port-base N or DEMO_SUBGRAPH_PORT_BASE)`,
        { cause: error },
      );
    }
    throw error;
  }
  const close = async () => {
    await Promise.all(running.map((s) => s.close()));
  };
  const outcome = composeSupergraph(
    running.map((s) => ({ name: s.name, url: s.url, sdl: s.sdl })),
  );
  if (!outcome.ok) {
    void close();
    throw new Error(
      `Demo subgraphs do not compose:\n${outcome.errors.map(formatCompositionError).join("\n")}`,
    );
  }
  return { subgraphs: running, supergraphSdl: outcome.supergraphSdl, close };
}
