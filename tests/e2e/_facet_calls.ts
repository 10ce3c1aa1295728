/**
 * One operation called on each facet of a running router (the subscription
 * fixture): GraphQL over HTTP, an SSE subscription, Connect, an MCP tool; and
 * a router serving a set of trusted operations on all of them. Shared by the
 * extension tests (plugins, coprocessor, `@policy`).
 */
import { type SubscriptionFixture, withFixture } from "./_subscription_fixture.ts";

const JSON_HEADERS = { "content-type": "application/json" };

/** What {@linkcode withOperationsRouter} serves. */
export interface OperationsRouterOptions {
  /** Operation files by name (`UserName.graphql`), written to `operations_dir`. */
  readonly operations: Readonly<Record<string, string>>;
  /** More config (plugins, coprocessor…): Connect (`test.v1.UserService`) is on. */
  readonly config?: Record<string, unknown>;
  /** The temporary directory's prefix. */
  readonly prefix?: string;
}

/**
 * Runs `run` against a subscription fixture whose router serves `operations`
 * on every facet; removes the operations directory afterwards.
 * @param options The operations and the rest of the config.
 * @param run The test.
 */
export async function withOperationsRouter(
  options: OperationsRouterOptions,
  run: (fixture: SubscriptionFixture) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: options.prefix ?? "gw_ops_" });
  try {
    for (const [name, text] of Object.entries(options.operations)) {
      await Deno.writeTextFile(`${dir}/${name}`, text);
    }
    await withFixture({
      config: {
        ...options.config,
        operations_dir: dir,
        connect_rpc: { enabled: true, package: "test.v1", service: "UserService" },
      },
    }, run);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** POSTs `query` as GraphQL over HTTP (JSON). */
export function graphqlCall(
  fixture: SubscriptionFixture,
  query: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(fixture.httpUrl, {
    method: "POST",
    headers: { ...JSON_HEADERS, ...headers },
    body: JSON.stringify({ query }),
  });
}

/** POSTs `query` asking for an SSE stream (`text/event-stream`). */
export function sseCall(
  fixture: SubscriptionFixture,
  query: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return graphqlCall(fixture, query, { accept: "text/event-stream", ...headers });
}

/** Calls `test.v1.UserService/<method>` with an empty message (Connect, JSON). */
export function connectCall(
  fixture: SubscriptionFixture,
  method: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${fixture.router.url}/test.v1.UserService/${method}`, {
    method: "POST",
    headers: { ...JSON_HEADERS, "connect-protocol-version": "1", ...headers },
    body: "{}",
  });
}

/** Calls the MCP tool `tool` without arguments (stateless, protocol 2026-07-28). */
export function mcpCall(
  fixture: SubscriptionFixture,
  tool: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${fixture.router.url}/mcp`, {
    method: "POST",
    headers: { ...JSON_HEADERS, accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: tool,
        arguments: {},
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
}
