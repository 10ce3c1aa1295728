/**
 * MCP tool server facet: Streamable HTTP (revisions 2025-03-26, 2025-06-18,
 * 2025-11-25 with signed sessions and a GET stream; 2026-07-28 without, with
 * `subscriptions/listen`), tools from the operation registry with typed
 * results, live tool-list changes, logging, and the five OAuth scope gates of spec §5.
 *
 * @module
 */
export { buildMcpState, type BuildMcpStateOptions, type McpDeps, type McpState } from "./state.ts";
export { handleMcp, handleProtectedResourceMetadata } from "./handler.ts";
export {
  MODERN_PROTOCOL_VERSION,
  SESSION_PROTOCOL_VERSIONS,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./versions.ts";
export {
  ALLOW,
  checkCallAllLevels,
  checkInitialize,
  checkRequest,
  checkRuntime,
  compileScopePolicy,
  type GateDecision,
  type GateLevel,
  type ScopePolicy,
} from "./policy.ts";
export {
  buildTools,
  BUILT_IN_TOOLS,
  formatOperationInfo,
  type McpTool,
  snakeCase,
  type ToolKind,
} from "./tools.ts";
export { closeMcpStreams, handOverMcp } from "./reload.ts";
export { McpStreamHub, type StreamHubOptions } from "./streams.ts";
export { outputSchema } from "./output_schema.ts";
export {
  importSessionKey,
  issueSessionId,
  SESSION_MAX_AGE_MS,
  SessionRevocations,
  verifySessionId,
} from "./session.ts";
