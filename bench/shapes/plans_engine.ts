/**
 * The engine alone on the `plans` shape (issue 45; `SHAPE=many`: the `many`
 * shape's 87 fetches): prepare (cached), plan (cached), execute with the
 * shape's subgraphs answered from memory (the bytes `subgraphs.ts` serves,
 * through the engine's `fetch` hook: no sockets),
 * and the answer's JSON, in one isolate. Prints the process's CPU per request
 * (user + system, `process.cpuUsage`) over `N` requests after a warm-up, every
 * answer's `data` checked. Alternate two checkouts to compare builds:
 *
 *   deno run -A bench/shapes/plans_engine.ts [N=1500] [ROUNDS=3]
 *
 * @module
 */
import process from "node:process";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { buildSupergraph } from "../../lib/supergraph/mod.ts";
import { createEngine, execute, prepare, resultJson } from "../../lib/engine/mod.ts";
import { fanSubgraphs, manyExpected, manyQuery, SDLS } from "./subgraphs.ts";
import { plansExpected, plansQuery } from "./plans.ts";

const MANY = Deno.env.get("SHAPE") === "many";
const QUERY = MANY ? manyQuery(17) : plansQuery;
const N = Number(Deno.args[0] ?? "1500");
const ROUNDS = Number(Deno.args[1] ?? "3");
const link =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@shareable"])';
const composed = composeSupergraph(
  Object.entries(SDLS).map(([name, sdl]) => ({
    name,
    url: `http://127.0.0.1:45100/${name}`,
    sdl: `${link}\n${sdl}`,
  })),
);
if (!composed.ok) throw new Error("the shape's subgraphs do not compose");
const fan = await fanSubgraphs();
const engine = createEngine(buildSupergraph(composed.supergraphSdl), {
  fetch: async (request: Request) => {
    const name = new URL(request.url).pathname.slice(1);
    const bytes = await fan(name, await request.text());
    if (bytes === undefined) return new Response("not found", { status: 404 });
    return new Response(bytes as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": "application/json" },
    });
  },
});
const expected = JSON.stringify(MANY ? manyExpected(17) : plansExpected);

async function once(): Promise<string> {
  const prepared = prepare(engine, { query: QUERY });
  if (!prepared.ok) throw new Error("the shape's query did not prepare");
  return resultJson(await execute(engine, prepared.operation));
}
function check(json: string): void {
  const data = JSON.stringify(JSON.parse(json).data);
  if (data !== expected) throw new Error(`a wrong answer: ${json.slice(0, 300)}`);
}
for (let i = 0; i < 200; i++) check(await once());
for (let round = 1; round <= ROUNDS; round++) {
  const before = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const json = await once();
    if (i % 100 === 0) check(json);
  }
  const used = process.cpuUsage(before);
  const us = (used.user + used.system) / N;
  console.log(
    JSON.stringify({
      round,
      requests: N,
      cpu_us_per_req: Math.round(us),
      req_per_core_s: Math.round(1e6 / us),
    }),
  );
}
Deno.exit(0);
