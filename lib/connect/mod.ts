/**
 * Connect RPC facet. STUB: the Connect owner implements it.
 *
 * @module
 */
import type { Config } from "../config/types.ts";
import type { Engine } from "../engine/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { OperationRegistry } from "../operations/mod.ts";

/** Compiled Connect methods. */
export interface ConnectState {
  /** `/<package>.<Service>/`. */
  readonly prefix: string;
}

/** What the Connect handler reads from the router state. */
export interface ConnectDeps {
  readonly config: Config;
  readonly engine: Engine;
  readonly operations: OperationRegistry;
  readonly connect: ConnectState | null;
  readonly log: Logger;
}

/**
 * Builds the Connect state.
 * @param deps Config, engine, operations, logger.
 * @returns The state, or null when Connect is disabled.
 */
export function buildConnectState(deps: Omit<ConnectDeps, "connect">): ConnectState | null {
  const c = deps.config.connect_rpc;
  return c.enabled ? { prefix: `/${c.package}.${c.service}/` } : null;
}

/**
 * Handles `POST/GET /<package>.<Service>/<Method>`.
 * @param _request The request.
 * @param _deps Router state.
 * @returns The response.
 */
export function handleConnect(_request: Request, _deps: ConnectDeps): Promise<Response> {
  return Promise.resolve(new Response("Connect not implemented", { status: 501 }));
}
