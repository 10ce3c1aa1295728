/**
 * Shared set-up of the observability e2e tests: a real subgraph (`shop`), a
 * subgraph that always answers 500 (`down`), operations for Connect and MCP,
 * and the real router on port 0 with the Prometheus listener on port 0.
 *
 * @module
 */
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import type { Logger } from "../../lib/log/mod.ts";
import { type RunningSubgraph, serveSubgraph } from "../../demo/subgraph.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';

const OPERATIONS: Record<string, string> = {
  "GetHello.graphql": "query GetHello($name: String) { hello(name: $name) }\n",
  "GetFlaky.graphql": "query GetFlaky { hello flaky }\n",
  "GetDown.graphql": "query GetDown { down }\n",
};

/** One log call, as the router made it. */
export interface LogEntry {
  readonly level: string;
  readonly msg: string;
  readonly fields: Record<string, unknown>;
}

/** A running fixture. */
export interface ObservabilityFixture {
  readonly router: RunningRouter;
  /** The Prometheus exposition URL (`http://127.0.0.1:<port>/metrics`). */
  readonly metricsUrl: string;
  /** Headers of each request the `shop` subgraph received. */
  readonly shopHeaders: Headers[];
  /** Every log call of the router (all levels). */
  readonly logs: LogEntry[];
  close(): Promise<void>;
}

/**
 * Starts the subgraphs and the router.
 * @param extra Config keys merged over the fixture's (e.g. `telemetry`, `log_level`).
 * @returns The fixture.
 */
export async function startObservabilityFixture(
  extra: Record<string, unknown> = {},
): Promise<ObservabilityFixture> {
  const shopHeaders: Headers[] = [];
  const shop: RunningSubgraph = serveSubgraph("shop", {
    typeDefs: `${LINK}
type Query {
  hello(name: String): String
  "Always fails"
  flaky: String
}`,
    resolvers: {
      Query: {
        hello: (_: unknown, args: { name?: string }) => `Hello ${args.name ?? "you"}!`,
        flaky: () => {
          throw new Error("Flaky failed");
        },
      },
    },
  }, { onRequest: (_body, headers) => shopHeaders.push(headers) });
  const down = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("down", { status: 500 }),
  );
  const composed = composeSupergraph([
    { name: "shop", url: shop.url, sdl: shop.sdl },
    {
      name: "down",
      url: `http://127.0.0.1:${down.addr.port}/graphql`,
      sdl: `${LINK}\ntype Query { down: String }`,
    },
  ]);
  const operationsDir = await Deno.makeTempDir({ prefix: "gw_obs_ops_" });
  for (const [name, text] of Object.entries(OPERATIONS)) {
    await Deno.writeTextFile(`${operationsDir}/${name}`, text);
  }
  const logs: LogEntry[] = [];
  const record = (level: string) => (msg: string, fields?: Record<string, unknown>) =>
    logs.push({ level, msg, fields: fields ?? {} });
  const log: Logger = {
    debug: record("debug"),
    info: record("info"),
    warn: record("warn"),
    error: record("error"),
  };
  const close = async () => {
    await Promise.all([shop.close(), down.shutdown()]);
    await Deno.remove(operationsDir, { recursive: true });
  };
  if (!composed.ok) {
    await close();
    throw new Error("Fixture does not compose");
  }
  const config = parseConfig({
    listen_addr: "127.0.0.1:0",
    supergraph_path: "unused.graphql",
    operations_dir: operationsDir,
    mcp: { enabled: true, session_secret: "observability-fixture-secret-0123456789" },
    telemetry: { metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:0" } } },
    ...extra,
  });
  let router: RunningRouter;
  try {
    router = await startRouter({ config, supergraphSdl: composed.supergraphSdl, log });
  } catch (error) {
    await close();
    throw error;
  }
  return {
    router,
    metricsUrl: router.metricsUrl ?? "",
    shopHeaders,
    logs,
    async close() {
      await router.shutdown();
      await close();
    },
  };
}

/** Sends a GraphQL POST; returns the status and the body. */
export async function graphql(
  fixture: ObservabilityFixture,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${fixture.router.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

/** Calls a Connect method with a JSON message. */
export async function connect(
  fixture: ObservabilityFixture,
  method: string,
  message: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${fixture.router.url}/service.v1.GraphService/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", "connect-protocol-version": "1", ...headers },
    body: JSON.stringify(message),
  });
  return { status: response.status, body: await response.json() };
}

/** Sends one JSON-RPC request to MCP (initialize first when `session` is null). */
export async function mcp(
  fixture: ObservabilityFixture,
  body: Record<string, unknown>,
  session: string | null,
  headers: Record<string, string> = {},
): Promise<{ status: number; session: string | null; body: unknown }> {
  const response = await fetch(`${fixture.router.url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...(session === null ? {} : { "mcp-session-id": session }),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", ...body }),
  });
  const text = await response.text();
  return {
    status: response.status,
    session: response.headers.get("mcp-session-id"),
    body: text === "" ? null : JSON.parse(text),
  };
}

/** Opens an MCP session (initialize + initialized); returns its id. */
export async function mcpSession(fixture: ObservabilityFixture): Promise<string> {
  const init = await mcp(fixture, {
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "observability-test", version: "1" },
    },
  }, null);
  if (init.session === null) throw new Error(`MCP initialize failed: ${init.status}`);
  await mcp(fixture, { method: "notifications/initialized" }, init.session);
  return init.session;
}
