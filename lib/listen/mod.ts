/**
 * The listener: the connection guard that owns client sockets and relays
 * them to `Deno.serve` (`guarded_serve.ts`, its phases in
 * `connection_phase.ts`), its TLS listener and certificate (`server_tls.ts`),
 * the supervisor's forwarding to worker threads (`forward.ts`) and the end of
 * a graceful drain (`_grace.ts`). The command line (`lib/cli/`) starts it.
 *
 * @module
 */

export {
  answerTimeout,
  type ConnectionLimits,
  connectionLimits,
  connectionsWithin,
  type GuardCounts,
  type GuardedServeOptions,
  type GuardedServer,
  openFileLimit,
  serveGuarded,
  withPeerLines,
} from "./guarded_serve.ts";
export {
  ConnectionPhase,
  type DeadlineReason,
  type Phase,
  type PhaseLimits,
} from "./connection_phase.ts";
export {
  ALPN_PROTOCOLS,
  checkServerTls,
  EXPIRY_WARNING_DAYS,
  expiryWarning,
  logServerTls,
  readServerTls,
  type ServerTls,
  serverTlsFiles,
  type ServerTlsKeeper,
  serverTlsKeeper,
  type ServerTlsPems,
  watchServerTls,
} from "./server_tls.ts";
export {
  createForwarder,
  type FacetPaths,
  type ForwarderOptions,
  type UnixUpstream,
  unixUpstream,
  type Upstream,
} from "./forward.ts";
export { drainWithin } from "./_grace.ts";
