/**
 * The MCP revisions served.
 *
 * @module
 */

/** The revision without sessions (`server/discover`, per-request `_meta`). */
export const MODERN_PROTOCOL_VERSION = "2026-07-28";
/** Revisions negotiated by `initialize`, newest first. */
export const SESSION_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"] as const;
/** Every revision served. */
export const SUPPORTED_PROTOCOL_VERSIONS = [
  MODERN_PROTOCOL_VERSION,
  ...SESSION_PROTOCOL_VERSIONS,
] as const;
