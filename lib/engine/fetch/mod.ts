/**
 * Stage 4, fetch: the subgraph transport.
 *
 * Takes a subgraph request (URL, body, headers from the propagation rules, a deadline); gives
 * the subgraph's answer body read within its byte cap, or a typed failure (timeout, circuit
 * open, transport error) after the retry policy.
 *
 * - `subgraph_client.ts` — the sender the executor calls (single flight, memory charge);
 * - `http1.ts`, `_http1_wire.ts` — the pooled HTTP/1 client and its wire reader;
 * - `resilient_fetch.ts`, `retry.ts`, `circuit_breaker.ts` — retries and the breaker;
 * - `headers.ts` — header propagation rules (Cosmo's shape);
 * - `response_headers.ts` — response header rules: subgraph answer headers to the client;
 * - `subgraph_body.ts` — body reading with its cap and content-encoding.
 *
 * @module
 */
export { createSubgraphClient, type SendOptions, type SubgraphClient } from "./subgraph_client.ts";
export { createHttp1Pool, http1Eligible, type Http1Pool } from "./http1.ts";
export { type Resilience, resilienceOf, resilientFetch } from "./resilient_fetch.ts";
export {
  compileHeaderRules,
  headerPairs,
  type HeaderPropagator,
  type HeaderSink,
} from "./headers.ts";
export {
  compileResponseHeaderRules,
  mergeCacheControl,
  type ResponseHeaderCollector,
  type ResponseHeaderRules,
} from "./response_headers.ts";
export { readSubgraphBody } from "./subgraph_body.ts";
export { ALL_SUBGRAPHS, clientFor } from "./http_clients.ts";
