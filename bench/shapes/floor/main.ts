/**
 * The runtime's floor on the `query` shape (issue 33): a server that does
 * only what no gateway on Deno can skip for that workload, with the router's
 * own subgraph transport (`lib/engine/fetch/http1.ts`) — read the client's
 * request, send the six subgraph requests the router sends (recorded with
 * `QUERY_LOG_FILE`, replayed level by level with the client's
 * `Authorization`), read their answers, answer the client. No parse, plan,
 * merge or validation. `FLOOR_WORK=json` adds `JSON.parse` of every
 * subgraph answer and `JSON.stringify` of the client's answer (the JSON work
 * a JavaScript gateway cannot avoid); otherwise the answer is fixed bytes.
 *
 * Run like the router, so `ab.sh` measures it the same way (its CPU per
 * request beside the router's is what the router itself costs):
 *
 *   FLOOR_LOG=log.jsonl FLOOR_ANSWER=answer.json deno run -A main.ts serve --config c.yaml
 *
 * `c.yaml` needs only `listen_addr`; `FLOOR_LOG` is a `QUERY_LOG_FILE` of
 * one request (its lines, grouped by arrival within 5 ms, are the levels);
 * `FLOOR_ANSWER` the client's answer. Not part of the router.
 *
 * @module
 */
import { createHttp1Pool } from "../../../lib/engine/fetch/http1.ts";

interface Logged {
  readonly t: number;
  readonly path: string;
  readonly body: string;
}

const configPath = Deno.args[Deno.args.indexOf("--config") + 1]!;
const listen = /listen_addr:\s*([^\s:]+):(\d+)/.exec(Deno.readTextFileSync(configPath))!;
const subgraphOrigin = Deno.env.get("FLOOR_SUBGRAPHS") ?? "http://127.0.0.1:45300";
const logged: Logged[] = Deno.readTextFileSync(Deno.env.get("FLOOR_LOG")!).trim().split("\n")
  .map((line) => JSON.parse(line));
const levels: Logged[][] = [];
for (const entry of logged.slice(0, 6)) {
  const last = levels.at(-1);
  if (last && entry.t - last[0]!.t < 5) last.push(entry);
  else levels.push([entry]);
}
const answerText = Deno.readTextFileSync(Deno.env.get("FLOOR_ANSWER")!);
const answerBytes = new TextEncoder().encode(answerText);
const answerValue = JSON.parse(answerText);
const json = Deno.env.get("FLOOR_WORK") === "json";
const pool = createHttp1Pool();
const headers = { "content-type": "application/json" };

Deno.serve({ hostname: listen[1]!, port: Number(listen[2]), onListen() {} }, async (request) => {
  const query = await request.text();
  if (query.length === 0) return new Response("empty", { status: 400 });
  const authorization = request.headers.get("authorization") ?? "";
  for (const level of levels) {
    await Promise.all(level.map(async (entry) => {
      const answer = await pool.post(`${subgraphOrigin}${entry.path}`, {
        headers: [["content-type", "application/json"], ["authorization", authorization]],
        body: entry.body,
        idempotent: true,
      });
      const text = await answer.text();
      if (json) JSON.parse(text);
    }));
  }
  return new Response(json ? JSON.stringify(answerValue) : answerBytes, { headers });
});
