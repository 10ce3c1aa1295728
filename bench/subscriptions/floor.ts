/**
 * The fan-out floor (issue 45): a hand-written server for exactly the benchmark's subscription,
 * the least a gateway must do for it, so the gateway is compared with what the runtime allows
 * on the same machine in the same run (`TARGETS="floor gw" bench/subscriptions/run.sh`).
 *
 * Per event it does one thing of each: one upstream subscription to the feed (shared by all
 * its subscribers, opened with the first one), one entity fetch to products for the event's
 * product, one `JSON.stringify` of the merged result, and one `WebSocket.send` per subscriber
 * of the same payload behind that subscriber's precomputed `{"id":…,"type":"next","payload":`
 * prefix. No parsing of client documents (every subscriber is taken to ask the benchmark's
 * query), no planning, no limits, no relay: `Deno.serve` on TCP and direct socket writes.
 *
 * It speaks `graphql-transport-ws` (connection_init/ack, ping/pong, subscribe, complete) and
 * answers `POST /graphql` with `{"data":{"__typename":"Query"}}` for the bench's readiness
 * check.
 *
 * Run: `deno run -A bench/subscriptions/floor.ts` (env FLOOR_PORT, default 47113; FEED_PORT,
 * PRODUCTS_PORT as the subgraphs').
 *
 * @module
 */
import { createClient } from "graphql-ws";

const FLOOR_PORT = Number(Deno.env.get("FLOOR_PORT") ?? "47113");
const FEED_PORT = Number(Deno.env.get("FEED_PORT") ?? "47101");
const PRODUCTS_PORT = Number(Deno.env.get("PRODUCTS_PORT") ?? "47102");
const HOST = "127.0.0.1";

/** What the floor asks of the feed: the event without the entity fields. */
const UPSTREAM =
  "subscription Tick($topic: String!) { tick(topic: $topic) { seq emittedAt product { upc } } }";
/** The entity fetch of one event. */
const ENTITIES =
  "query($r: [_Any!]!) { _entities(representations: $r) { ... on Product { name price } } }";

interface Tick {
  readonly seq: number;
  readonly emittedAt: number;
  readonly product: { readonly upc: string };
}

/** One subscriber: its socket and its frame's prefix. */
interface Subscriber {
  readonly socket: WebSocket;
  readonly prefix: string;
}

const subscribers = new Set<Subscriber>();
let upstream: (() => void) | null = null;
const feed = createClient({
  url: `ws://${HOST}:${FEED_PORT}/graphql`,
  lazy: true,
  retryAttempts: 0,
});

/** Opens the one upstream subscription (on the first subscriber's topic). */
function openUpstream(topic: string): void {
  upstream = feed.subscribe<{ tick: Tick }>(
    { query: UPSTREAM, variables: { topic } },
    {
      next: (event) => void deliver(event.data!.tick),
      error: (error) => console.error("floor: upstream failed", error),
      complete: () => (upstream = null),
    },
  );
}

/** One event: one entity fetch, one serialization, one write per subscriber. */
async function deliver(tick: Tick): Promise<void> {
  const response = await fetch(`http://${HOST}:${PRODUCTS_PORT}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      query: ENTITIES,
      variables: { r: [{ __typename: "Product", upc: tick.product.upc }] },
    }),
  });
  const entity = (await response.json()).data._entities[0] as { name: string; price: number };
  const payload = JSON.stringify({
    data: {
      tick: {
        seq: tick.seq,
        emittedAt: tick.emittedAt,
        product: { upc: tick.product.upc, name: entity.name, price: entity.price },
      },
    },
  }) + "}";
  for (const subscriber of subscribers) {
    if (subscriber.socket.readyState === WebSocket.OPEN) {
      subscriber.socket.send(subscriber.prefix + payload);
    }
  }
}

function onSocket(socket: WebSocket): void {
  const mine = new Map<string, Subscriber>();
  socket.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as {
      type: string;
      id?: string;
      payload?: { variables?: { topic?: string } };
    };
    switch (message.type) {
      case "connection_init":
        return socket.send('{"type":"connection_ack"}');
      case "ping":
        return socket.send('{"type":"pong"}');
      case "subscribe": {
        const id = String(message.id);
        const subscriber = {
          socket,
          prefix: `{"id":${JSON.stringify(id)},"type":"next","payload":`,
        };
        mine.set(id, subscriber);
        subscribers.add(subscriber);
        if (upstream === null) openUpstream(String(message.payload?.variables?.topic ?? "bench"));
        return;
      }
      case "complete": {
        const subscriber = mine.get(String(message.id));
        if (subscriber !== undefined) subscribers.delete(subscriber);
        mine.delete(String(message.id));
        return;
      }
    }
  };
  socket.onclose = () => {
    for (const subscriber of mine.values()) subscribers.delete(subscriber);
    mine.clear();
  };
  socket.onerror = () => {};
}

Deno.serve({ port: FLOOR_PORT, hostname: HOST, onListen: () => {} }, (request) => {
  if (request.headers.get("upgrade")?.toLowerCase() === "websocket") {
    const { socket, response } = Deno.upgradeWebSocket(request, {
      protocol: "graphql-transport-ws",
      idleTimeout: 0,
    });
    onSocket(socket);
    return response;
  }
  return Response.json({ data: { __typename: "Query" } });
});
console.log("READY");
