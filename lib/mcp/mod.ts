/**
 * MCP tool server facet. STUB: the MCP owner implements it.
 *
 * @module
 */
import type { Config } from "../config/types.ts";
import type { Engine } from "../engine/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { OperationRegistry } from "../operations/mod.ts";

/** Everything MCP needs, compiled once per state (tools, scope policy, keys). */
export interface McpState {
  readonly enabled: boolean;
}

/** What the MCP handlers read from the router state. */
export interface McpDeps {
  readonly config: Config;
  readonly engine: Engine;
  readonly operations: OperationRegistry;
  readonly mcp: McpState | null;
  readonly log: Logger;
}

/**
 * Builds the MCP state.
 * @param deps Config, engine, operations, logger (mcp not yet set).
 * @returns The MCP state, or null when MCP is disabled.
 */
export function buildMcpState(deps: Omit<McpDeps, "mcp">): Promise<McpState | null> {
  return Promise.resolve(deps.config.mcp.enabled ? { enabled: true } : null);
}

/**
 * Handles a request on the MCP path.
 * @param _request The request.
 * @param _deps Router state.
 * @returns The response.
 */
export function handleMcp(_request: Request, _deps: McpDeps): Promise<Response> {
  return Promise.resolve(new Response("MCP not implemented", { status: 501 }));
}

/**
 * Serves the RFC 9728 protected-resource metadata
 * (`/.well-known/oauth-protected-resource/mcp`, also without `/mcp`).
 * @param _request The request.
 * @param _deps Router state.
 * @returns The response.
 */
export function handleProtectedResourceMetadata(
  _request: Request,
  _deps: McpDeps,
): Promise<Response> {
  return Promise.resolve(new Response("Not implemented", { status: 501 }));
}
