/**
 * GraphQL over WebSocket on `graphql_path` (the `graphql-transport-ws` protocol): the
 * `graphql-ws` library's server (`makeServer`) on a `Deno.upgradeWebSocket` socket. The
 * protocol (init, ack, ping/pong, subscribe/next/complete, its close codes) is the
 * library's; this module supplies the identity, the engine and the limits:
 *
 * - identity at connect: the upgrade's headers, or an `Authorization` (any case) member of
 *   the `connection_init` payload; a bad token closes with 4403 Forbidden;
 * - `subscriptions.max_per_connection` operations at once per connection (subscriptions
 *   and queries in flight); one more is
 *   refused (`error` message, `SUBSCRIPTION_LIMIT_REACHED`);
 * - bytes sent and not yet taken by the client over `subscriptions.max_unsent_bytes` close
 *   the connection with 1008 (`SUBSCRIPTION_CLIENT_TOO_SLOW`);
 * - a message over `subscriptions.max_message_bytes` closes the connection with 1009
 *   ("message too big") before it is parsed;
 * - a protocol `ping` every `subscriptions.keep_alive_interval`.
 *
 * Queries and mutations sent over the socket are executed like GraphQL over HTTP ones.
 *
 * @module
 */
import { type ExecutionArgs, GraphQLError, type GraphQLFormattedError } from "graphql";
import { RouterError } from "../errors.ts";
import { makeServer, type Server, type ServerOptions, type SubscribePayload } from "graphql-ws";
import { authorizeOperation, resolveIdentity, type VerifiedToken } from "../auth/mod.ts";
import { operationStage, type PluginRequest, pluginRequestOf } from "../plugins/mod.ts";
import {
  type EventStream,
  execute,
  type ExecutionResult,
  prepare,
  type PreparedOperation,
  resultJson,
} from "../engine/mod.ts";
import {
  type ClientSubscription,
  formattedErrors,
  startClientSubscription,
  type SubscriptionDeps,
} from "./subscriptions.ts";
import { unrefTimer } from "../timers.ts";
import { utf8Length } from "../limited_body.ts";

/** The `graphql-transport-ws` subprotocol. */
export const GRAPHQL_TRANSPORT_WS = "graphql-transport-ws";

/** How long a retired connection waits for its subscriptions' last results, ms. */
const RETIRE_WAIT_MS = 1_000;

/** The error of a subscribe over `subscriptions.max_per_connection`. */
const LIMIT_REACHED = (max: number): GraphQLFormattedError => ({
  message: `This connection holds ${max} operations already (subscriptions.max_per_connection)`,
  extensions: { code: "SUBSCRIPTION_LIMIT_REACHED" },
});

/** The close code of a message over `subscriptions.max_message_bytes` (RFC 6455: too big). */
export const MESSAGE_TOO_BIG = 1009;

/**
 * Whether a WebSocket message is larger than `max` bytes (a text's UTF-8 bytes, counted only
 * when its length alone does not settle it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { messageOver } from "./subscriptions_ws.ts";
 * assert.equal(messageOver("abcd", 4), false);
 * assert.equal(messageOver("abcde", 4), true);
 * assert.equal(messageOver("éé", 3), true); // 4 bytes as UTF-8
 * assert.equal(messageOver(new ArrayBuffer(5), 4), true);
 * ```
 * @param data The message (`MessageEvent.data`).
 * @param max The bound, bytes.
 * @returns True when it is over the bound.
 */
export function messageOver(data: unknown, max: number): boolean {
  if (typeof data === "string") {
    // Every UTF-16 unit is at least one byte and at most three.
    if (data.length > max) return true;
    if (data.length * 3 <= max) return false;
    return utf8Length(data) > max;
  }
  if (data instanceof ArrayBuffer) return data.byteLength > max;
  if (data instanceof Blob) return data.size > max;
  if (ArrayBuffer.isView(data)) return data.byteLength > max;
  return false;
}

/**
 * A subscription's results written to the socket as `next` messages by the facet itself,
 * handed to the library as an iterator that yields nothing and ends with the subscription (the
 * library then sends `complete`; a client's `complete` or a closed socket calls `return`).
 * Each message is the subscription's `{"id":…,"type":"next","payload":` prefix and the
 * result's JSON, printed once for every subscriber that shares the event's result
 * (`resultJson`), not a message object stringified per subscriber.
 */
export class DirectNext implements AsyncIterableIterator<never> {
  readonly #stream: EventStream;
  readonly #prefix: string;
  readonly #send: (data: string) => void;

  /**
   * @param stream The subscription's results.
   * @param options The subscription's id, the connection's send.
   */
  constructor(
    stream: EventStream,
    options: { readonly id: string; readonly send: (data: string) => void },
  ) {
    this.#stream = stream;
    this.#prefix = `{"id":${JSON.stringify(options.id)},"type":"next","payload":`;
    this.#send = options.send;
  }

  /**
   * Writes every result as it is ready (the stream pushes them: no promise per result); done
   * once the subscription ended. The socket's unsent bytes are bounded by `send`.
   */
  next(): Promise<IteratorResult<never>> {
    return new Promise((resolve) => {
      this.#stream.pushTo({
        next: (result) => this.#send(`${this.#prefix}${resultJson(result)}}`),
        done: () => resolve({ done: true, value: undefined as never }),
      });
    });
  }

  /** The client completed the subscription, or left. */
  async return(): Promise<IteratorResult<never>> {
    await this.#stream.return?.();
    return { done: true, value: undefined as never };
  }

  /** This iterator. */
  [Symbol.asyncIterator](): AsyncIterableIterator<never> {
    return this;
  }
}

/** Per connection state. */
interface Connection {
  identity: VerifiedToken | null;
  headers: Headers;
  readonly subscriptions: Map<string, ClientSubscription>;
  /** Queries and mutations in flight: they count towards `max_per_connection` too. */
  queries: number;
}

/**
 * True when a request asks for a WebSocket upgrade.
 * @param request The request.
 * @returns Whether it is an upgrade to `websocket`.
 */
export function isWebSocketUpgrade(request: Request): boolean {
  return request.headers.get("upgrade")?.toLowerCase() === "websocket";
}

function graphQLErrors(errors: readonly GraphQLFormattedError[]): GraphQLError[] {
  return errors.map((e) =>
    new GraphQLError(e.message, { extensions: { ...(e.extensions ?? {}) } })
  );
}

/**
 * A query or mutation sent over the socket: the one authorization door, then the plugins'
 * operation stage, as over HTTP; its execution, or the errors it was refused with.
 */
async function socketOperation(
  request: Request,
  deps: SubscriptionDeps,
  options: {
    readonly operation: PreparedOperation;
    readonly connection: Connection;
    readonly variables: Readonly<Record<string, unknown>> | null;
  },
): Promise<ExecutionResult | readonly GraphQLFormattedError[]> {
  const { operation, connection, variables } = options;
  const identity = connection.identity;
  const refused = authorizeOperation(operation, {
    identity,
    authorization: deps.supergraph === undefined ? undefined : deps.authorization,
    supergraph: deps.engine.model,
    subject: "The operation",
  });
  if (refused !== null) return [{ message: refused.message, extensions: { code: refused.code } }];
  const staged = operationStage(request, { operation, identity, variables });
  const outcome = staged === null ? null : await staged;
  if (outcome?.error) return formattedErrors(outcome.error);
  const stages = pluginRequestOf(request)?.stages;
  const policies = outcome?.policies;
  try {
    return await execute(deps.engine, operation, {
      variables,
      headers: connection.headers,
      identity,
      ...(stages ? { stages } : {}),
      ...(policies ? { policies } : {}),
    });
  } catch (error) {
    // A refusal of the plan stage, or the engine's own (RESPONSE_TOO_LARGE, …).
    if (error instanceof RouterError) return formattedErrors(error);
    throw error;
  }
}

/**
 * Upgrades a request on `graphql_path` to GraphQL over WebSocket.
 * @param request The upgrade request.
 * @param deps The GraphQL facet's dependencies (engine, authorization, config).
 * @returns The 101 response.
 */
export function handleWebSocket(request: Request, deps: SubscriptionDeps): Response {
  const protocols = (request.headers.get("sec-websocket-protocol") ?? "").split(",").map((p) =>
    p.trim()
  );
  if (!protocols.includes(GRAPHQL_TRANSPORT_WS)) {
    return Response.json({
      errors: [{
        message: `Only the ${GRAPHQL_TRANSPORT_WS} WebSocket subprotocol is served`,
        extensions: { code: "BAD_REQUEST" },
      }],
    }, { status: 400 });
  }
  // The request's headers are gone once the socket is open: kept now.
  // With plugins (issue 40), the copy their hooks change; the connection's stages are its run's.
  const plugin = pluginRequestOf(request);
  const headers = plugin?.headers ?? new Headers(request.headers);
  const { socket, response } = Deno.upgradeWebSocket(request, { protocol: GRAPHQL_TRANSPORT_WS });
  const link: SocketLink = {
    socket,
    deps,
    connection: { identity: null, headers, subscriptions: new Map(), queries: 0 },
    plugin,
    retiredBy: null,
    interval: null,
    onRetired: (error) => retire(link, error),
  };
  const server = makeServer(protocolHooks(request, link));
  deps.engine.subscriptions.connections.add(link.onRetired);
  socket.onopen = () => openSocket(link, server);
  socket.onerror = () => closeAll(link);
  return response;
}

/** One socket's connection and its lifecycle's state. */
interface SocketLink {
  readonly socket: WebSocket;
  readonly deps: SubscriptionDeps;
  readonly connection: Connection;
  /** The upgrade's plugin run (issue 40), whose stages the connection's subscriptions use. */
  readonly plugin: PluginRequest | undefined;
  /**
   * Set once the engine's subscriptions ended for good (a reload, a shutdown):
   * the close reason the connection gets after its subscriptions' last results.
   */
  retiredBy: string | null;
  /** The keep-alive pings' interval, once open. */
  interval: ReturnType<typeof setInterval> | null;
  /** Told by the engine when its subscriptions end for good. */
  readonly onRetired: (error: GraphQLFormattedError) => void;
}

/**
 * The `graphql-ws` server's hooks: identity at connect, then each subscribe
 * prepared and answered by the engine (the library's graphql-js execution is
 * never used).
 */
function protocolHooks(
  request: Request,
  link: SocketLink,
): ServerOptions<Record<string, unknown> | undefined, Connection> {
  const connection = link.connection;
  return {
    onConnect: (ctx) => connectIdentity(request, link, ctx.connectionParams),
    onSubscribe: (_ctx, id, payload) => subscribeOnSocket(request, link, { id, payload }),
    // The engine answers: the library's graphql-js execution is never used.
    execute: (args) => args.contextValue as Promise<never>,
    subscribe: (args) => args.contextValue as AsyncGenerator<never>,
    // Results are plain JSON already (the library would call `toJSON` on errors).
    onNext: (_ctx, _id, _payload, _args, result) => result as unknown as never,
    onError: (_ctx, _id, _payload, errors) => errors.map((e) => e.toJSON()),
    onComplete(_ctx, id) {
      connection.subscriptions.get(id)?.close();
      connection.subscriptions.delete(id);
      // After the library sent `complete` (it calls this hook first).
      if (link.retiredBy !== null) setTimeout(() => closeIfRetired(link), 0);
    },
  };
}

/**
 * The connection's identity at `connection_init`: the upgrade's headers, or an
 * `Authorization` (any case) member of its payload. False refuses it (4403).
 */
async function connectIdentity(
  request: Request,
  link: SocketLink,
  connectionParams: Readonly<Record<string, unknown>> | undefined,
): Promise<boolean> {
  const { deps, connection } = link;
  const authorization = deps.supergraph === undefined ? undefined : deps.authorization;
  if (authorization === undefined) return true;
  const given = connectionParams ?? {};
  const key = Object.keys(given).find((k) => k.toLowerCase() === "authorization");
  if (key !== undefined && typeof given[key] === "string") {
    try {
      connection.headers.set("authorization", given[key] as string);
    } catch {
      return false; // not a header value (CR, LF, NUL): refused as a bad token is (4403)
    }
  }
  const resolved = await resolveIdentity(
    new Request(request.url, { headers: connection.headers }),
    {
      authorization,
    },
  );
  if (!resolved.ok) return false;
  connection.identity = resolved.token;
  return true;
}

/**
 * A `subscribe` message: a query or mutation run as over HTTP, or a
 * subscription started, within `subscriptions.max_per_connection` operations in flight; the
 * execution arguments the library hands back to the engine, or the errors.
 */
async function subscribeOnSocket(
  request: Request,
  link: SocketLink,
  message: { readonly id: string; readonly payload: SubscribePayload },
): Promise<ExecutionArgs | readonly GraphQLError[]> {
  const { deps, connection } = link;
  const { id, payload } = message;
  const max = deps.config.subscriptions.max_per_connection;
  const prepared = prepare(deps.engine, {
    query: payload.query,
    operationName: payload.operationName ?? null,
    variables: payload.variables ?? null,
    extensions: payload.extensions ?? null,
  });
  if (!prepared.ok) return graphQLErrors(prepared.errors);
  const operation = prepared.operation;
  // Queries in flight hold a slot as subscriptions do: a socket cannot run unbounded work.
  if (connection.subscriptions.size + connection.queries >= max) {
    deps.engine.subscriptions.limits.refusedPerConnection++;
    return graphQLErrors([LIMIT_REACHED(max)]);
  }
  if (operation.kind !== "subscription") {
    connection.queries++;
    const result = await socketOperation(request, deps, {
      operation,
      connection,
      variables: payload.variables ?? null,
    }).finally(() => connection.queries--);
    if (Array.isArray(result)) return graphQLErrors(result);
    return {
      schema: deps.engine.model.apiSchema,
      document: operation.document,
      contextValue: result,
    };
  }
  const starting = startClientSubscription(deps, {
    operation,
    variables: payload.variables,
    headers: connection.headers,
    identity: connection.identity,
    requestId: null,
    plugin: link.plugin,
  });
  // A plugin's operation stage awaited: another subscribe may have taken the last slot.
  const started = starting instanceof Promise ? await starting : starting;
  const held = connection.subscriptions.size + connection.queries;
  if (started.ok && held >= max) {
    started.subscription.close();
    deps.engine.subscriptions.limits.refusedPerConnection++;
    return graphQLErrors([LIMIT_REACHED(max)]);
  }
  if (!started.ok) return graphQLErrors(started.errors);
  connection.subscriptions.set(id, started.subscription);
  return {
    schema: deps.engine.model.apiSchema,
    document: operation.document,
    contextValue: new DirectNext(started.subscription.stream, {
      id,
      send: (data) => sendOn(link, data),
    }),
  };
}

/** Closes a retired connection (1012, service restart) once it holds no subscription. */
function closeIfRetired(link: SocketLink): void {
  if (link.retiredBy === null || link.connection.subscriptions.size > 0) return;
  if (link.socket.readyState === WebSocket.OPEN) link.socket.close(1012, link.retiredBy);
}

/**
 * The engine's subscriptions ended for good (a reload, a shutdown): once this
 * connection's subscriptions have sent their last result, it closes with 1012
 * (service restart) so the client reconnects to the new state.
 */
function retire(link: SocketLink, error: GraphQLFormattedError): void {
  link.retiredBy = `${String(error.extensions?.code ?? "SUBSCRIPTION_SCHEMA_RELOAD")}: reconnect`;
  closeIfRetired(link);
  // A subscription that never sends its last result does not hold the connection.
  const deadline = setTimeout(() => {
    link.connection.subscriptions.clear();
    closeIfRetired(link);
  }, RETIRE_WAIT_MS);
  unrefTimer(deadline);
}

/** Ends the connection's subscriptions and pings, and leaves the engine's retire list. */
function closeAll(link: SocketLink): void {
  link.deps.engine.subscriptions.connections.delete(link.onRetired);
  if (link.interval !== null) clearInterval(link.interval);
  link.interval = null;
  for (const s of link.connection.subscriptions.values()) s.close();
  link.connection.subscriptions.clear();
}

/**
 * Every message to the client goes through here, the library's and
 * {@linkcode DirectNext}'s: unsent bytes over `subscriptions.max_unsent_bytes`
 * close the connection (1008).
 */
function sendOn(link: SocketLink, data: string): void {
  const { socket } = link;
  if (socket.readyState !== WebSocket.OPEN) return;
  if (socket.bufferedAmount > link.deps.config.subscriptions.max_unsent_bytes) {
    closeAll(link);
    socket.close(
      1008,
      "SUBSCRIPTION_CLIENT_TOO_SLOW: unsent bytes over subscriptions.max_unsent_bytes",
    );
    return;
  }
  socket.send(data);
}

/**
 * The socket open: the protocol served on it, each message bounded by
 * `subscriptions.max_message_bytes`, the unsent bytes by
 * `subscriptions.max_unsent_bytes`, a ping every keep-alive interval.
 */
function openSocket(
  link: SocketLink,
  server: Server<Connection>,
): void {
  const { socket, deps } = link;
  const config = deps.config.subscriptions;
  const send = (data: string) => sendOn(link, data);
  const closed = server.opened({
    // The negotiated subprotocol (a server socket's `protocol` may read empty).
    protocol: GRAPHQL_TRANSPORT_WS,
    send,
    close: (code, reason) => socket.close(code, reason),
    onMessage: (cb) => {
      socket.onmessage = async (event) => {
        if (messageOver(event.data, config.max_message_bytes)) {
          // Before parsing: a message's size costs nothing more than its receipt.
          closeAll(link);
          socket.close(
            MESSAGE_TOO_BIG,
            `message too big: over subscriptions.max_message_bytes (${config.max_message_bytes} bytes)`,
          );
          return;
        }
        try {
          await cb(String(event.data));
        } catch (error) {
          deps.log.error("GraphQL over WebSocket: a message failed", {
            error: error instanceof Error ? error.message : String(error),
          });
          socket.close(1011, "Internal server error");
        }
      };
    },
  }, link.connection);
  const ping = setInterval(() => send('{"type":"ping"}'), config.keep_alive_interval_ms);
  unrefTimer(ping);
  link.interval = ping;
  socket.onclose = (event) => {
    closeAll(link);
    void closed(event.code, event.reason);
  };
}
