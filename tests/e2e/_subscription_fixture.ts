/**
 * Fixture of the subscription e2e tests: a real router (`startRouter`) over three real
 * federation subgraphs. `reviews` owns `Subscription.reviewAdded` and streams it over
 * GraphQL over WebSocket (the `graphql-ws` server, `makeServer` on `Deno.upgradeWebSocket`)
 * and GraphQL over SSE (the `graphql-sse` server) beside plain HTTP; `products` owns the
 * product's name, price and `label(prefix)`; `users` owns the author (`email` needs scope
 * `read:email`, `note` the `@policy` `staff`, or both `auditor` and `internal`; `viewerNote`
 * depends on the subgraph request's `x-viewer` header) and
 * `Product.priceLabel` (`@requires(fields: "price")`). The test publishes events and sees
 * how many upstream streams the subgraph holds.
 *
 * @module
 */
import { buildSubgraphSchema } from "@apollo/subgraph";
import { execute, parse, validate } from "graphql";
import { makeServer } from "graphql-ws";
import { createHandler as createSseHandler } from "graphql-sse/lib/use/fetch";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import type { CpuSource } from "../../lib/state/mod.ts";
import type { Logger } from "../../lib/log/mod.ts";
import { type RunningSubgraph, serveSubgraph } from "../../demo/subgraph.ts";
import { type JwksStub, startJwksStub } from "./_jwks_stub.ts";
import { withProfile } from "./_production_profile.ts";
import { TEST_DEADLINE_MS, within } from "./_deadline.ts";

const LINK = (imports: string[]) =>
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: [${
    imports.map((i) => JSON.stringify(i)).join(", ")
  }])\n`;

const REVIEWS = LINK(["@key"]) + `
type Query { reviewCount: Int }
type Subscription { reviewAdded(minStars: Int): Review }
type Review { id: ID! body: String! stars: Int! product: Product! author: User! }
type Product @key(fields: "upc", resolvable: false) { upc: String! }
type User @key(fields: "id", resolvable: false) { id: ID! }
`;

const PRODUCTS = LINK(["@key"]) + `
type Query { product(upc: String!): Product }
type Product @key(fields: "upc") {
  upc: String!
  name: String!
  price: Int!
  "The name behind a prefix the client chooses (a variable only an entity fetch uses)."
  label(prefix: String!): String!
}
`;

const USERS = LINK(["@key", "@external", "@requires", "@requiresScopes", "@policy"])
  .replace("v2.5", "v2.6") + `
type Query { user(id: ID!): User }
type User @key(fields: "id") {
  id: ID!
  name: String!
  email: String @requiresScopes(scopes: [["read:email"]])
  note: String @policy(policies: [["staff"], ["auditor", "internal"]])
  "Private to the viewer the subgraph request names (its x-viewer header)."
  viewerNote: String
}
type Product @key(fields: "upc") {
  upc: String!
  price: Int! @external
  priceLabel: String! @requires(fields: "price")
}
`;

const PRODUCT_DATA = new Map([
  ["p1", { upc: "p1", name: "Table", price: 120 }],
  ["p2", { upc: "p2", name: "Chair", price: 45 }],
]);
const USER_DATA = new Map([
  ["u1", { id: "u1", name: "Ada", email: "ada@example.com", note: "Likes tea" }],
  ["u2", { id: "u2", name: "Grace", email: "grace@example.com", note: "Likes coffee" }],
]);

/** A review event as the reviews subgraph publishes it. */
export interface ReviewEvent {
  readonly id: string;
  readonly body: string;
  readonly stars: number;
  readonly product: { readonly upc: string };
  readonly author: { readonly id: string };
}

/** The reviews subgraph's stream side. */
export interface ReviewFeed {
  /** Sends an event to every open upstream subscription. */
  publish(event: ReviewEvent): void;
  /** Upstream subscriptions open now (the subgraph's own count). */
  readonly open: number;
  /** Upstream subscriptions opened in total. */
  readonly opened: number;
  /** Headers of each upstream connect (WebSocket upgrade or SSE request). */
  readonly connectHeaders: Headers[];
  /** Ends every open upstream subscription with an error. */
  fail(message: string): void;
}

function reviewFeed(): ReviewFeed & {
  iterate(minStars: number | null): AsyncGenerator<{ reviewAdded: ReviewEvent }>;
} {
  const listeners = new Set<(event: ReviewEvent | Error) => void>();
  let opened = 0;
  return {
    connectHeaders: [],
    get open() {
      return listeners.size;
    },
    get opened() {
      return opened;
    },
    publish(event) {
      for (const l of [...listeners]) l(event);
    },
    fail(message) {
      for (const l of [...listeners]) l(new Error(message));
    },
    iterate(minStars) {
      // An iterator object, not a generator: `return()` (the client left) takes effect at once,
      // where a generator waiting for the next event would run its `finally` only after it.
      const queue: (ReviewEvent | Error)[] = [];
      let wake: (() => void) | null = null;
      let closed = false;
      const listener = (event: ReviewEvent | Error) => {
        queue.push(event);
        wake?.();
      };
      listeners.add(listener);
      opened++;
      const close = () => {
        closed = true;
        listeners.delete(listener);
        wake?.();
      };
      const iterator: AsyncGenerator<{ reviewAdded: ReviewEvent }> = {
        async next() {
          while (!closed) {
            const next = queue.shift();
            if (next === undefined) {
              await new Promise<void>((resolve) => (wake = resolve));
              wake = null;
              continue;
            }
            if (next instanceof Error) {
              close();
              throw next;
            }
            if (minStars !== null && next.stars < minStars) continue;
            return { done: false, value: { reviewAdded: next } };
          }
          return { done: true, value: undefined };
        },
        return() {
          close();
          return Promise.resolve({ done: true, value: undefined });
        },
        throw(error: unknown) {
          close();
          return Promise.reject(error);
        },
        [Symbol.asyncIterator]() {
          return iterator;
        },
        [Symbol.asyncDispose]() {
          close();
          return Promise.resolve();
        },
      };
      return iterator;
    },
  };
}

/** The reviews subgraph: HTTP, graphql-ws and graphql-sse on one listener. */
function serveReviews(feed: ReturnType<typeof reviewFeed>): RunningSubgraph {
  const schema = buildSubgraphSchema([{
    typeDefs: parse(REVIEWS),
    resolvers: {
      Query: { reviewCount: () => 0 },
      Subscription: {
        reviewAdded: {
          subscribe: (_: unknown, args: { minStars?: number | null }) =>
            feed.iterate(args.minStars ?? null),
        },
      },
    },
  }]);
  const ws = makeServer({ schema });
  const sse = createSseHandler({ schema });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, (request) => {
    if (request.headers.get("upgrade")?.toLowerCase() === "websocket") {
      feed.connectHeaders.push(new Headers(request.headers));
      const { socket, response } = Deno.upgradeWebSocket(request, {
        protocol: "graphql-transport-ws",
      });
      socket.onopen = () => {
        const closed = ws.opened({
          protocol: "graphql-transport-ws",
          send: (data) => socket.send(data),
          close: (code, reason) => socket.close(code, reason),
          onMessage: (cb) => {
            socket.onmessage = (event) => void cb(String(event.data));
          },
        }, {});
        socket.onclose = (event) => void closed(event.code, event.reason);
      };
      return response;
    }
    if ((request.headers.get("accept") ?? "").includes("text/event-stream")) {
      feed.connectHeaders.push(new Headers(request.headers));
      return sse(request);
    }
    return (async () => {
      const body = await request.json();
      const result = await execute({
        schema,
        document: parse(body.query),
        variableValues: body.variables ?? {},
      });
      return Response.json(result);
    })();
  });
  void validate;
  return {
    name: "reviews",
    url: `http://127.0.0.1:${server.addr.port}/graphql`,
    sdl: REVIEWS,
    schema,
    close: () => server.shutdown(),
  };
}

/** Options of {@linkcode startSubscriptionFixture}. */
export interface SubscriptionFixtureOptions {
  /** `subscriptions` config of the router. */
  readonly subscriptions?: Record<string, unknown>;
  /** `headers` config of the router. */
  readonly headers?: Record<string, unknown>;
  /** Verify bearer tokens (a JWKS stub). */
  readonly authentication?: boolean;
  /** Other config keys (`telemetry`, …). */
  readonly config?: Record<string, unknown>;
  /** The products subgraph's root `product` answers once this settles (queries held in flight). */
  readonly productGate?: Promise<void>;
  /** The router's logger (access lines included); silent when absent. */
  readonly log?: Logger;
  /** The serving thread's CPU clock (admission); default: the real one. */
  readonly cpu?: CpuSource;
}

/** A running fixture. */
export interface SubscriptionFixture {
  readonly router: RunningRouter;
  /** `http://127.0.0.1:<port>/graphql`. */
  readonly httpUrl: string;
  /** `ws://127.0.0.1:<port>/graphql`. */
  readonly wsUrl: string;
  readonly feed: ReviewFeed;
  /** Requests the products and users subgraphs received (entity fetches). */
  readonly entityQueries: string[];
  /** The headers of each of those requests, in the same order. */
  readonly entityHeaders: Headers[];
  /** A signed token with these scopes, expiring in `expiresIn` seconds (default 300). */
  token(scope: string, expiresIn?: number): Promise<string>;
  close(): Promise<void>;
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Starts the subgraphs and the router.
 * @param options Router config.
 * @returns The fixture.
 */
export async function startSubscriptionFixture(
  options: SubscriptionFixtureOptions = {},
): Promise<SubscriptionFixture> {
  const feed = reviewFeed();
  const entityQueries: string[] = [];
  const entityHeaders: Headers[] = [];
  const onRequest = (body: { query: string }, headers: Headers) => {
    entityQueries.push(body.query);
    entityHeaders.push(new Headers(headers));
  };
  const reviews = serveReviews(feed);
  const products = serveSubgraph("products", {
    typeDefs: PRODUCTS,
    resolvers: {
      Query: {
        product: async (_: unknown, { upc }: { upc: string }) => {
          await options.productGate;
          return PRODUCT_DATA.get(upc);
        },
      },
      Product: {
        __resolveReference: (ref: { upc: string }) => PRODUCT_DATA.get(ref.upc),
        label: (p: { name: string }, { prefix }: { prefix: string }) => `${prefix} ${p.name}`,
      },
    },
  }, { onRequest });
  const users = serveSubgraph("users", {
    typeDefs: USERS,
    resolvers: {
      Query: { user: (_: unknown, { id }: { id: string }) => USER_DATA.get(id) },
      User: {
        __resolveReference: (ref: { id: string }) => USER_DATA.get(ref.id),
        viewerNote: (u: { name: string }, _: unknown, context: { headers: Headers }) => {
          const viewer = context.headers.get("x-viewer");
          return viewer === null ? null : `${u.name}, as ${viewer} sees them`;
        },
      },
      Product: {
        __resolveReference: (ref: { upc: string; price?: number }) => ref,
        priceLabel: (p: { price: number }) => `$${p.price}`,
      },
    },
  }, { onRequest });
  const subgraphs = [reviews, products, users];
  let jwks: JwksStub | null = null;
  let privateKey: CryptoKey | null = null;
  try {
    const outcome = composeSupergraph(
      subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.sdl })),
    );
    if (!outcome.ok) throw new Error("The subscription fixture does not compose");
    if (options.authentication) {
      const pair = await generateKeyPair("ES256", { extractable: true });
      privateKey = pair.privateKey;
      jwks = startJwksStub([{
        ...(await exportJWK(pair.publicKey)),
        kid: "k1",
        alg: "ES256",
        use: "sig",
      }]);
    }
    const operationsDir = await Deno.makeTempDir({ prefix: "gw_subs_ops_" });
    // The production profile (issue 39): access logs, metrics and tracing on.
    const config = parseConfig(withProfile({
      listen_addr: "127.0.0.1:0",
      supergraph_path: "unused.graphql",
      operations_dir: operationsDir,
      ...(options.subscriptions ? { subscriptions: options.subscriptions } : {}),
      ...(options.headers ? { headers: options.headers } : {}),
      ...options.config,
      ...(jwks !== null
        ? { authentication: { jwt: { jwks: [{ url: jwks.url, algorithms: ["ES256"] }] } } }
        : {}),
    }));
    const router = await startRouter({
      config,
      supergraphSdl: outcome.supergraphSdl,
      log: options.log ?? silent,
      ...(options.cpu ? { cpu: options.cpu } : {}),
    });
    if (jwks !== null) await waitReady(router.url);
    return {
      router,
      httpUrl: `${router.url}/graphql`,
      wsUrl: `${router.url.replace(/^http/, "ws")}/graphql`,
      feed,
      entityQueries,
      entityHeaders,
      async token(scope, expiresIn = 300) {
        if (privateKey === null) throw new Error("The fixture has no authentication");
        return await new SignJWT({ scope })
          .setProtectedHeader({ alg: "ES256", kid: "k1" })
          .setSubject("user-1")
          .setIssuedAt()
          .setExpirationTime(Math.floor(Date.now() / 1000) + expiresIn)
          .sign(privateKey);
      },
      async close() {
        await router.shutdown();
        await Promise.all([...subgraphs.map((s) => s.close()), jwks?.close()]);
      },
    };
  } catch (error) {
    await Promise.allSettled([...subgraphs.map((s) => s.close()), jwks?.close()]);
    throw error;
  }
}

async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const response = await fetch(`${url}/health/ready`);
    await response.body?.cancel();
    if (response.ok) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("The router did not become ready");
}

/**
 * Waits until a condition holds (polling, bounded).
 * @param condition The condition.
 * @param what What is waited for (the error names it).
 */
export async function until(condition: () => boolean, what: string): Promise<void> {
  // Up to 10 s: generous for a loaded CI machine; a condition that holds returns at once.
  for (let i = 0; i < 1000; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`Timed out waiting for ${what}`);
}

/** A review event. */
export function review(id: string, options: Partial<ReviewEvent> = {}): ReviewEvent {
  return {
    id,
    body: `Review ${id}`,
    stars: 5,
    product: { upc: "p1" },
    author: { id: "u1" },
    ...options,
  };
}

/**
 * Runs `run` with a started fixture, closed after.
 * @param options Router config.
 * @param run The test.
 */
export async function withFixture(
  options: SubscriptionFixtureOptions,
  run: (fixture: SubscriptionFixture) => Promise<void>,
): Promise<void> {
  const fixture = await startSubscriptionFixture(options);
  try {
    // A wait the test did not bound fails it (then the router closes), never hangs the suite.
    await within(run(fixture), "the test to finish", TEST_DEADLINE_MS);
  } finally {
    await fixture.close();
  }
}

/**
 * Reads a streamed response's text until it contains `needle` (or ends), then cancels it.
 * @param response The response.
 * @param needle What to wait for.
 * @returns The text read.
 */
export async function readUntil(response: Response, needle: string | RegExp): Promise<string> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const found = () => typeof needle === "string" ? text.includes(needle) : needle.test(text);
  const read = async () => {
    while (!found()) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
  };
  // A stream that never delivers it fails the test (issue 39), never hangs it.
  await within(read(), `the stream's ${String(needle)}`).finally(() => reader.cancel());
  return text;
}

/**
 * A WebSocket class for the `graphql-ws` client that sends these headers with the upgrade
 * (Deno's WebSocket takes headers).
 * @param headers The headers.
 * @returns The class.
 */
export function socketWithHeaders(headers: Record<string, string>): unknown {
  return class extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, {
        protocols: typeof protocols === "string" ? [protocols] : protocols ?? [],
        headers,
      } as unknown as string[]);
    }
  };
}
