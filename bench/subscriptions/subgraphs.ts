/**
 * The two subgraphs of the subscription benchmark, in one Deno process:
 *
 * - `feed` (`FEED_PORT`, default 47101): `Subscription.tick(topic)` over
 *   GraphQL over WebSocket (`graphql-transport-ws`); once started
 *   (`POST /start`; `POST /stop` pauses, `POST /emit` sends one event) it
 *   emits one event `{seq, emittedAt, product {upc}}` every `1000/RATE` ms
 *   to every subscription of the topic. `emittedAt` is the emit time (ms since the epoch, with
 *   sub-millisecond digits), so a client measures delivery latency.
 * - `products` (`PRODUCTS_PORT`, default 47102): GraphQL over HTTP, owns
 *   `Product.name` and `Product.price`, so each event needs one entity fetch.
 *
 * The feed is written to cost the gateway under test as little as possible:
 * it executes each distinct (document, variables) once per event with
 * graphql-js and sends the same JSON to every subscription that asked for it,
 * so 1 000 upstream subscriptions (a gateway that does not deduplicate) cost
 * one execution and 1 000 socket writes per event. `GET /stats` on the feed
 * port gives `{subscriptions, sockets, emitted}`; on the products port
 * `{entityFetches}`.
 *
 * Run: `deno run -A bench/subscriptions/subgraphs.ts` (env RATE, FEED_PORT,
 * PRODUCTS_PORT, TOPIC). Prints `READY` once both listen.
 *
 * @module
 */
import { buildSubgraphSchema } from "@apollo/subgraph";
import { type DocumentNode, execute, parse, validate } from "graphql";

const RATE = Number(Deno.env.get("RATE") ?? "100");
const FEED_PORT = Number(Deno.env.get("FEED_PORT") ?? "47101");
const PRODUCTS_PORT = Number(Deno.env.get("PRODUCTS_PORT") ?? "47102");
const HOST = "127.0.0.1";

/** SDL of the feed subgraph. */
export const FEED_SDL = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
type Tick {
  seq: Int!
  "Emit time at the subgraph, ms since the epoch."
  emittedAt: Float!
  product: Product!
}
type Product @key(fields: "upc", resolvable: false) { upc: ID! }
type Query { lastSeq: Int! }
type Subscription { tick(topic: String!): Tick! }
`;

/** SDL of the products subgraph. */
export const PRODUCTS_SDL = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
type Product @key(fields: "upc") { upc: ID! name: String! price: Float! }
type Query { product(upc: ID!): Product }
`;

/** The subscription the load generator sends (one entity fetch per event). */
export const SUBSCRIPTION =
  "subscription Tick($topic: String!) { tick(topic: $topic) { seq emittedAt product { upc name price } } }";

/** The same without the entity fields: what the `limit` target asks of the feed directly. */
export const FEED_ONLY_SUBSCRIPTION =
  "subscription Tick($topic: String!) { tick(topic: $topic) { seq emittedAt product { upc } } }";

interface Tick {
  readonly seq: number;
  readonly emittedAt: number;
  readonly product: { readonly upc: string };
}

if (import.meta.main) serve();

/** Starts both subgraphs and the emitter. */
function serve(): void {
  let emitted = 0;
  let control: (action: "emit" | "start" | "stop") => void = () => {};
  let entityFetches = 0;
  const feedSchema = buildSubgraphSchema([{
    typeDefs: parse(FEED_SDL),
    resolvers: { Query: { lastSeq: () => emitted } },
  }]);
  const productsSchema = buildSubgraphSchema([{
    typeDefs: parse(PRODUCTS_SDL),
    resolvers: {
      Query: {
        product: (_: unknown, { upc }: { upc: string }) => product(upc),
      },
      Product: {
        __resolveReference: (ref: { upc: string }) => {
          entityFetches++;
          return product(ref.upc);
        },
      },
    },
  }]);
  const product = (upc: string) => ({
    upc,
    name: `Product ${upc}`,
    price: Number(upc) + 0.5,
  });

  /** Parsed documents, by text (a gateway sends a handful of distinct ones). */
  const documents = new Map<string, DocumentNode>();
  function documentOf(query: string): DocumentNode {
    let document = documents.get(query);
    if (document === undefined) {
      document = parse(query);
      const errors = validate(feedSchema, document);
      if (errors.length > 0) {
        throw new Error(errors.map((e) => e.message).join("; "));
      }
      if (documents.size < 100) documents.set(query, document);
    }
    return document;
  }

  /** One subscription on one socket. */
  interface Sub {
    readonly socket: WebSocket;
    readonly id: string;
    readonly key: string;
    readonly query: string;
    readonly variables: Record<string, unknown>;
  }
  const subs = new Set<Sub>();
  let sockets = 0;

  function onSocket(socket: WebSocket): void {
    const mine = new Map<string, Sub>();
    let acked = false;
    sockets++;
    socket.onmessage = (event) => {
      let message: {
        type?: string;
        id?: string;
        payload?: Record<string, unknown>;
      };
      try {
        message = JSON.parse(String(event.data));
      } catch {
        return socket.close(4400, "Invalid message");
      }
      switch (message.type) {
        case "connection_init":
          acked = true;
          return socket.send('{"type":"connection_ack"}');
        case "ping":
          return socket.send('{"type":"pong"}');
        case "subscribe": {
          if (!acked) return socket.close(4401, "Unauthorized");
          const id = String(message.id);
          const query = String(message.payload?.query ?? "");
          const variables = (message.payload?.variables ?? {}) as Record<
            string,
            unknown
          >;
          try {
            documentOf(query);
          } catch (error) {
            const errors = [{ message: String(error) }];
            return socket.send(
              JSON.stringify({ id, type: "error", payload: errors }),
            );
          }
          const sub: Sub = {
            socket,
            id,
            query,
            variables,
            key: query + JSON.stringify(variables),
          };
          mine.set(id, sub);
          subs.add(sub);
          return;
        }
        case "complete": {
          const sub = mine.get(String(message.id));
          if (sub) subs.delete(sub);
          mine.delete(String(message.id));
          return;
        }
      }
    };
    socket.onclose = () => {
      sockets--;
      for (const sub of mine.values()) subs.delete(sub);
      mine.clear();
    };
    socket.onerror = () => {};
  }

  async function emit(): Promise<void> {
    emitted++;
    const tick: Tick = {
      seq: emitted,
      emittedAt: performance.timeOrigin + performance.now(),
      product: { upc: String(1 + (emitted % 10)) },
    };
    const payloads = new Map<string, string>();
    for (const sub of subs) {
      let payload = payloads.get(sub.key);
      if (payload === undefined) {
        const result = await execute({
          schema: feedSchema,
          document: documentOf(sub.query),
          rootValue: { tick: sub.variables.topic === undefined ? null : tick },
          variableValues: sub.variables,
        });
        payload = JSON.stringify(result);
        payloads.set(sub.key, payload);
      }
      if (sub.socket.readyState === WebSocket.OPEN) {
        sub.socket.send(
          `{"id":${JSON.stringify(sub.id)},"type":"next","payload":${payload}}`,
        );
      }
    }
  }

  Deno.serve(
    { port: FEED_PORT, hostname: HOST, onListen: () => {} },
    async (request) => {
      const url = new URL(request.url);
      if (url.pathname === "/stats") {
        return Response.json({ subscriptions: subs.size, sockets, emitted });
      }
      // The load generator's switches: one event now, start or stop the schedule.
      if (
        request.method === "POST" &&
        ["/emit", "/start", "/stop"].includes(url.pathname)
      ) {
        control(url.pathname.slice(1) as "emit" | "start" | "stop");
        return new Response(null, { status: 204 });
      }
      if (request.headers.get("upgrade")?.toLowerCase() === "websocket") {
        const { socket, response } = Deno.upgradeWebSocket(request, {
          protocol: "graphql-transport-ws",
          idleTimeout: 0,
        });
        onSocket(socket);
        return response;
      }
      return await answer(request, feedSchema);
    },
  );

  Deno.serve(
    { port: PRODUCTS_PORT, hostname: HOST, onListen: () => {} },
    async (request) => {
      if (new URL(request.url).pathname === "/stats") {
        return Response.json({ entityFetches });
      }
      return await answer(request, productsSchema);
    },
  );

  /** GraphQL over HTTP: POST a JSON body. */
  async function answer(
    request: Request,
    schema: typeof feedSchema,
  ): Promise<Response> {
    if (request.method !== "POST") {
      return new Response("POST only", { status: 405 });
    }
    const body = await request.json();
    const document = parse(body.query);
    const result = await execute({
      schema,
      document,
      variableValues: body.variables ?? {},
      operationName: body.operationName ?? null,
    });
    return Response.json(result);
  }

  // Emit on a fixed schedule (no drift) while started: event n leaves at start + n * period.
  const period = 1000 / RATE;
  let run = 0;
  async function emitting(mine: number): Promise<void> {
    const start = performance.now();
    let n = 0;
    while (run === mine) {
      await emit();
      n++;
      const next = start + n * period;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
    }
  }
  control = (action) => {
    if (action === "start") void emitting(++run);
    else if (action === "stop") run++;
    else void emit();
  };
  console.log("READY");
}
