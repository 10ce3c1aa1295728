/**
 * Serves a real Apollo Federation subgraph in-process (`@apollo/subgraph` +
 * graphql-js), on loopback. Used by `deno task demo` and by the e2e tests.
 *
 * One URL serves every transport: `POST` is GraphQL over HTTP; a WebSocket
 * upgrade speaks `graphql-transport-ws` (the `graphql-ws` library's server);
 * a request that accepts `text/event-stream` (and the reservation `PUT`s /
 * `DELETE`s) is GraphQL over SSE (the `graphql-sse` library's server, both of
 * its modes). So a subscription's URL is the routing URL itself (`ws://` for
 * WebSocket).
 *
 * @module
 */
import { buildSubgraphSchema } from "@apollo/subgraph";
import { execute, type GraphQLSchema, parse, validate } from "graphql";
import type { DocumentNode } from "graphql";
import { CloseCode, GRAPHQL_TRANSPORT_WS_PROTOCOL, makeServer } from "graphql-ws";
import { createHandler as createSseHandler } from "graphql-sse/lib/use/fetch";

/** Resolver map in the `@apollo/subgraph` shape (`__resolveReference` allowed). */
// deno-lint-ignore no-explicit-any
export type SubgraphResolvers = Record<string, any>;

/** Options for {@linkcode serveSubgraph}. */
export interface ServeSubgraphOptions {
  /** Port; 0 (default) picks a free one. */
  readonly port?: number;
  /** Host; default `127.0.0.1`. */
  readonly hostname?: string;
  /** Called with each request body (tests count and inspect subgraph calls). */
  readonly onRequest?: (body: { query: string; variables?: unknown }, headers: Headers) => void;
  /**
   * Called when a subscription starts (`subscribe`) and when it ends
   * (`complete`: the client completed or left, or the stream ended), on either
   * transport (tests check that a router closes what its clients left).
   */
  readonly onStream?: (event: SubgraphStreamEvent) => void;
  /** The `Cache-Control` of each answer (tests of the entity cache); none: not sent. */
  readonly cacheControl?: (body: { query: string; variables?: unknown }) => string | null;
  /** Serve HTTPS (and `wss:`) with this PEM certificate and key; the URL is then `https://localhost:…`. */
  readonly tls?: { readonly cert: string; readonly key: string };
}

/** A subscription starting or ending at a subgraph. */
export interface SubgraphStreamEvent {
  readonly kind: "subscribe" | "complete";
  readonly transport: "graphql-ws" | "graphql-sse";
  /** The subscription's document. */
  readonly query: string;
  /** The request headers of the WebSocket upgrade or of the SSE request. */
  readonly headers: Headers;
}

/** A running subgraph. */
export interface RunningSubgraph {
  readonly name: string;
  readonly url: string;
  readonly sdl: string;
  readonly schema: GraphQLSchema;
  close(): Promise<void>;
}

/**
 * Starts a federation subgraph server answering `POST /graphql`.
 * @param name Subgraph name.
 * @param definition SDL (a federation v2 subgraph schema) and resolvers.
 * @param options Port, host, request hook.
 * @returns The running subgraph.
 */
export function serveSubgraph(
  name: string,
  definition: { typeDefs: string | DocumentNode; resolvers?: SubgraphResolvers },
  options: ServeSubgraphOptions = {},
): RunningSubgraph {
  const typeDefs = typeof definition.typeDefs === "string"
    ? parse(definition.typeDefs)
    : definition.typeDefs;
  const schema = buildSubgraphSchema([{ typeDefs, resolvers: definition.resolvers ?? {} }]);
  const streams = streamHandlers(schema, options.onStream);
  const server = Deno.serve({
    port: options.port ?? 0,
    hostname: options.hostname ?? "127.0.0.1",
    onListen: () => {},
    ...(options.tls ? { cert: options.tls.cert, key: options.tls.key } : {}),
  }, async (request) => {
    if (request.headers.get("upgrade")?.toLowerCase() === "websocket") {
      return streams.webSocket(request);
    }
    if (isSseRequest(request)) return await streams.sse(request);
    if (request.method !== "POST") {
      return new Response("POST, a WebSocket upgrade or an event stream only", { status: 405 });
    }
    let body: { query: string; variables?: Record<string, unknown>; operationName?: string };
    try {
      body = await request.json();
      options.onRequest?.(body, request.headers);
    } catch {
      return Response.json({ errors: [{ message: "Invalid JSON body" }] }, { status: 400 });
    }
    let document: DocumentNode;
    try {
      document = parse(body.query);
    } catch (error) {
      return Response.json({ errors: [{ message: String(error) }] }, { status: 400 });
    }
    const errors = validate(schema, document);
    if (errors.length > 0) {
      return Response.json({ errors: errors.map((e) => e.toJSON()) }, { status: 400 });
    }
    const result = await execute({
      schema,
      document,
      variableValues: body.variables ?? {},
      operationName: body.operationName ?? null,
      contextValue: { headers: request.headers },
    });
    const cacheControl = options.cacheControl?.(body) ?? null;
    return Response.json(
      result,
      cacheControl === null ? {} : { headers: { "cache-control": cacheControl } },
    );
  });
  const sdl = typeof definition.typeDefs === "string" ? definition.typeDefs : "";
  return {
    name,
    url: options.tls
      ? `https://localhost:${server.addr.port}/graphql`
      : `http://127.0.0.1:${server.addr.port}/graphql`,
    sdl,
    schema,
    close: () => server.shutdown(),
  };
}

/** Whether a request is GraphQL over SSE: it accepts an event stream, or reserves/ends one. */
function isSseRequest(request: Request): boolean {
  if (request.method === "PUT" || request.method === "DELETE") return true;
  if (request.headers.has("x-graphql-event-stream-token")) return true;
  return (request.headers.get("accept") ?? "").includes("text/event-stream");
}

/** The `graphql-ws` and `graphql-sse` servers over one schema. */
function streamHandlers(
  schema: GraphQLSchema,
  onStream: ServeSubgraphOptions["onStream"],
): {
  webSocket(request: Request): Response;
  sse(request: Request): Promise<Response>;
} {
  const ws = makeServer<Record<string, unknown> | undefined, { readonly headers: Headers }>({
    schema,
    connectionInitWaitTimeout: 10_000,
    context: (ctx) => ({ headers: ctx.extra.headers }),
    onSubscribe: (ctx, _id, payload) => {
      onStream?.({
        kind: "subscribe",
        transport: "graphql-ws",
        query: payload.query,
        headers: ctx.extra.headers,
      });
    },
    onComplete: (ctx, _id, payload) => {
      onStream?.({
        kind: "complete",
        transport: "graphql-ws",
        query: payload.query,
        headers: ctx.extra.headers,
      });
    },
  });
  const sse = createSseHandler<{ headers: Headers; query: string }>({
    schema,
    context: (req, params) => ({ headers: req.raw.headers, query: params.query as string }),
    onOperation: (ctx) => {
      onStream?.({
        kind: "subscribe",
        transport: "graphql-sse",
        query: ctx.query,
        headers: ctx.headers,
      });
    },
    onComplete: (ctx) => {
      onStream?.({
        kind: "complete",
        transport: "graphql-sse",
        query: ctx.query,
        headers: ctx.headers,
      });
    },
  });
  return {
    webSocket(request) {
      const offered = (request.headers.get("sec-websocket-protocol") ?? "").split(",")
        .map((p) => p.trim());
      if (!offered.includes(GRAPHQL_TRANSPORT_WS_PROTOCOL)) {
        return new Response(`WebSocket subprotocol ${GRAPHQL_TRANSPORT_WS_PROTOCOL} required`, {
          status: 400,
        });
      }
      const { socket, response } = Deno.upgradeWebSocket(request, {
        protocol: GRAPHQL_TRANSPORT_WS_PROTOCOL,
        idleTimeout: 30,
      });
      const headers = request.headers;
      // graphql-ws's own Deno adapter, with the upgrade's headers as `extra`.
      socket.onopen = () => {
        const closed = ws.opened({
          protocol: GRAPHQL_TRANSPORT_WS_PROTOCOL, // negotiated above (Deno leaves socket.protocol empty)
          send: (message) => {
            if (socket.readyState === WebSocket.OPEN) socket.send(message);
          },
          close: (code, reason) => socket.close(code, reason),
          onMessage: (receive) => {
            socket.onmessage = async (event) => {
              try {
                await receive(String(event.data));
              } catch {
                socket.close(CloseCode.InternalServerError, "Internal server error");
              }
            };
          },
        }, { headers });
        socket.onclose = (event) => void closed(event.code, event.reason);
      };
      socket.onerror = () => {};
      return response;
    },
    sse: (request) => sse(request),
  };
}
