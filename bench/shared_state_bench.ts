/**
 * Issue 30, the in-process costs behind `bench/shared_state_load.sh`:
 *
 * - group `rate_limit`: one GCRA step in memory (`RateLimiter.check` on a
 *   `MemoryStore`, the key already made) and the client-IP walk of a
 *   three-hop `X-Forwarded-For` behind a trusted proxy;
 * - group `persisted`: what a request by hash costs before planning (a
 *   trusted document's lookup) against the SHA-256 a text must be hashed
 *   with when the safelist is on or an APQ registration comes (the benchmark
 *   query, 1.4 KB).
 *
 * Run: `deno bench -A bench/shared_state_bench.ts`
 */
import { clientIp, parseCidr } from "../lib/request/client_ip.ts";
import { MemoryStore, RateLimiter } from "../lib/store/mod.ts";
import {
  buildTrustedDocuments,
  type PersistedState,
  resolveDocument,
  sha256Hex,
} from "../lib/persisted/mod.ts";

let _sink: unknown;

const limiter = new RateLimiter({
  store: new MemoryStore({ maxBytes: 0, maxKeys: 100_000 }),
  prefix: "rl",
  failOpen: true,
});
const limit = { rate: 1_000_000_000, burst: 1_000_000_000, periodMs: 1_000 };
const trusted = [parseCidr("10.0.0.0/8")!, parseCidr("127.0.0.1")!];
const { query } = JSON.parse(
  await Deno.readTextFile(new URL("./load/fixtures/federated.request.json", import.meta.url)),
);
const hash = await sha256Hex(query);
const state: PersistedState = {
  documents: await buildTrustedDocuments([{ id: hash, body: query }], {
    prepare: () => ({ ok: false, stage: "select", errors: [] }),
  }),
  safelist: false,
  logUnknown: false,
  apq: null,
};

Deno.bench(
  "rate limit: one GCRA step in memory",
  { group: "rate_limit", baseline: true },
  async () => {
    _sink = await limiter.check("graphql:ip:203.0.113.7", limit);
  },
);
Deno.bench("rate limit: client IP from a 3-hop X-Forwarded-For", { group: "rate_limit" }, () => {
  _sink = clientIp("127.0.0.1", "198.51.100.1, 203.0.113.7, 10.0.0.2", trusted);
});
Deno.bench(
  "persisted: a trusted document by hash",
  { group: "persisted", baseline: true },
  async () => {
    _sink = await resolveDocument(state, { query: null, operationName: null, hash });
  },
);
Deno.bench(
  "persisted: SHA-256 of the benchmark query (1.4 KB)",
  { group: "persisted" },
  async () => {
    _sink = await sha256Hex(query);
  },
);
