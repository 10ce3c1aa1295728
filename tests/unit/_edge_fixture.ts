/**
 * Shared set-up of the issue 14 edge tests: the repository's supergraph, a
 * router state built with a config, a fake subgraph fetch (no sockets), and
 * request builders for `/graphql`, MCP (`execute_graphql`, modern protocol)
 * and Connect.
 *
 * @module
 */
import { parseConfig } from "../../lib/config/mod.ts";
import { createHandler } from "../../lib/http/mod.ts";
import { silentLogger } from "../../lib/log/mod.ts";
import { MODERN_PROTOCOL_VERSION } from "../../lib/mcp/mod.ts";
import type { OperationFile } from "../../lib/operations/mod.ts";
import { buildState, type RouterState } from "../../lib/state/mod.ts";

/** The repository's supergraph SDL. */
export const SUPERGRAPH = Deno.readTextFileSync(
  new URL("../../schema/supergraph.graphql", import.meta.url),
);

const SUBGRAPH_BY_PORT: Record<string, string> = {
  "4001": "accounts",
  "4002": "products",
  "4003": "reviews",
  "4004": "inventory",
};

/** The base URL of requests built here. */
export const BASE = "http://router.test";

/** Answers a subgraph request (maybe later): gets the subgraph name and the parsed body. */
export type FakeSubgraph = (
  subgraph: string,
  body: { query: string; variables?: Record<string, unknown> },
) => unknown;

/** Options of {@linkcode edgeState}. */
export interface EdgeStateOptions {
  /** The fake subgraph's answer (default: `{ data: {} }`). */
  readonly answer?: FakeSubgraph;
  /** Operation files (`operations_dir`). */
  readonly operations?: readonly OperationFile[];
  /** Subgraph requests seen, in order. */
  readonly seen?: string[];
  /** The signal of each subgraph request, in order (did the router cancel it?). */
  readonly signals?: AbortSignal[];
}

/**
 * Builds a router state over the repository's supergraph.
 * @param raw Raw config.
 * @param options Fake subgraph and operation files.
 * @returns The state.
 */
export async function edgeState(
  raw: Record<string, unknown> = {},
  options: EdgeStateOptions = {},
): Promise<RouterState> {
  const answer = options.answer ?? (() => ({ data: {} }));
  return await buildState({
    config: parseConfig({ mcp: { enable_arbitrary_operations: true }, ...raw }),
    log: silentLogger,
    supergraphSdl: SUPERGRAPH,
    operationFiles: options.operations ?? [],
    traceKeyPem: null,
    fetch: async (request) => {
      options.signals?.push(request.signal);
      const body = await request.json();
      const subgraph = SUBGRAPH_BY_PORT[new URL(request.url).port] ?? "";
      options.seen?.push(body.query);
      const value = await answer(subgraph, body);
      return value instanceof Response ? value : Response.json(value);
    },
  });
}

/**
 * The handler over a state.
 * @param state The state.
 * @returns The `Deno.serve` handler.
 */
export function handlerOf(state: RouterState): (request: Request) => Promise<Response> {
  return createHandler(() => state);
}

/**
 * A GraphQL POST with a JSON body.
 * @param body The body (JSON-encoded unless a string or bytes).
 * @param headers Extra headers.
 * @returns The request.
 */
export function graphqlPost(
  body: unknown,
  headers: Record<string, string> = {},
): Request {
  const raw = typeof body === "string" || body instanceof Uint8Array
    ? body as string | Uint8Array<ArrayBuffer>
    : JSON.stringify(body);
  return new Request(`${BASE}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: raw,
  });
}

/**
 * An MCP `tools/call` of `execute_graphql` (modern protocol: no session).
 * @param query The GraphQL text.
 * @param headers Extra headers.
 * @returns The request.
 */
export function mcpExecute(query: string, headers: Record<string, string> = {}): Request {
  return mcpPost(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "execute_graphql", arguments: { query } },
    }),
    headers,
  );
}

/**
 * An MCP POST with a raw body (modern protocol headers).
 * @param body The body.
 * @param headers Extra headers.
 * @returns The request.
 */
export function mcpPost(
  body: string | Uint8Array<ArrayBuffer>,
  headers: Record<string, string> = {},
): Request {
  return new Request(`${BASE}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN_PROTOCOL_VERSION,
      ...headers,
    },
    body,
  });
}

/** The text of an MCP tool result (the GraphQL response as JSON text). */
export async function mcpToolText(response: Response): Promise<string> {
  const body = await response.json();
  return String(body.result?.content?.[0]?.text ?? JSON.stringify(body));
}

/** A `fragment bomb`: F0…F`n`, each spreading the previous twice. */
export function fragmentBomb(n: number): string {
  let text = `query Bomb { ...F${n} }\nfragment F0 on Query { __typename }\n`;
  for (let i = 1; i <= n; i++) {
    text += `fragment F${i} on Query { ...F${i - 1} ...F${i - 1} }\n`;
  }
  return text;
}

/** `users { reviews { author { reviews { … } } } }`, `levels` fields deep. */
export function deepChain(levels: number): string {
  let open = "";
  let close = "";
  for (let i = 0; i < levels; i++) {
    open += i % 2 === 0 ? "reviews { " : "author { ";
    close += " }";
  }
  return `{ users { ${open}id${close} } }`;
}
