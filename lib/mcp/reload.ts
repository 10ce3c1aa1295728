/**
 * What MCP does when the router state is replaced (reload) or stopped: the
 * new state's stream hub takes over the open streams, its revocations the
 * sessions ended so far (an ended session stays ended), and when the tool list
 * changed every session stream and `subscriptions/listen` stream of this
 * replica gets `notifications/tools/list_changed`; sessions that asked for
 * logs get a `notifications/message` at `info` on every reload. Called after the new state is
 * live, so a client that re-lists sees the new tools.
 *
 * @module
 */
import type { McpState } from "./state.ts";

/**
 * Hands the streams and ended sessions of the previous MCP state to the next one and announces
 * a changed tool list.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { handOverMcp } from "./reload.ts";
 * import { McpStreamHub } from "./streams.ts";
 * import { SessionRevocations } from "./session.ts";
 * import type { McpState } from "./state.ts";
 * const state = (key: string) =>
 *   ({ toolListKey: key, streams: new McpStreamHub(), revocations: new SessionRevocations(), tools: [] }) as unknown as McpState;
 * const before = state("[a]");
 * const after = state("[a,b]");
 * assert.equal(handOverMcp(before, after), true);
 * assert.equal(handOverMcp(after, after), false);
 * ```
 * @param previous The MCP state being replaced (null: MCP was off).
 * @param next The new MCP state (null: MCP is now off; the old streams close).
 * @returns True when the tool list changed and streams were told.
 */
export function handOverMcp(previous: McpState | null, next: McpState | null): boolean {
  if (previous === null || previous === next) return false;
  if (next === null) {
    previous.streams.closeAll();
    return false;
  }
  next.streams.adopt(previous.streams);
  next.revocations.adopt(previous.revocations);
  const changed = previous.toolListKey !== next.toolListKey;
  if (changed) next.streams.toolsChanged();
  next.streams.log("info", {
    message: changed ? "Configuration reloaded; the tool list changed" : "Configuration reloaded",
    tools: next.tools.length,
  });
  return changed;
}

/**
 * Closes the MCP streams (router shutdown: an open stream would hold the
 * server's graceful shutdown until its grace period ends).
 *
 * @example
 * ```ts
 * import { closeMcpStreams } from "./reload.ts";
 * closeMcpStreams(null);
 * ```
 * @param mcp The MCP state, or null.
 */
export function closeMcpStreams(mcp: McpState | null): void {
  mcp?.streams.closeAll();
}
