// One Deno process serving all four subgraphs on one port, one path each:
//   POST http://127.0.0.1:$SUBGRAPH_PORT/{accounts,inventory,products,reviews}
//   GET  /health   -> "ok"
//   GET  /stats    -> per-subgraph request counters and cache hits/misses
//   POST /stats/reset
//
// Requests are executed with graphql-js against real federation subgraph
// schemas (see schemas.ts). To keep the subgraphs far cheaper than any
// gateway, the full response for an identical request body is cached
// (bounded; SUBGRAPH_CACHE=0 disables it) and parsed+validated documents are
// cached by query text. Data is deterministic, so a cached response is
// exactly what execution would produce again.
import { type DocumentNode, execute, type GraphQLSchema, parse, validate } from "graphql";
import { buildSubgraph, SUBGRAPH_NAMES } from "./schemas.ts";

const PORT = Number(Deno.env.get("SUBGRAPH_PORT") ?? "14200");
const HOST = Deno.env.get("SUBGRAPH_HOST") ?? "127.0.0.1";
const CACHE = Deno.env.get("SUBGRAPH_CACHE") !== "0";
const CACHE_MAX = 4096;
// Optional artificial latency per subgraph request (ms), 0 = none.
const DELAY_MS = Number(Deno.env.get("SUBGRAPH_DELAY_MS") ?? "0");
// Optional `Cache-Control` on every answer (the entity cache benchmark: "max-age=60").
const CACHE_CONTROL = Deno.env.get("SUBGRAPH_CACHE_CONTROL") ?? "";

interface Subgraph {
  name: string;
  schema: GraphQLSchema;
  docs: Map<string, DocumentNode>;
  responses: Map<string, Uint8Array<ArrayBuffer>>;
  requests: number;
  hits: number;
  misses: number;
  errors: number;
}

const subgraphs = new Map<string, Subgraph>();
for (const name of SUBGRAPH_NAMES) {
  subgraphs.set("/" + name, {
    name,
    schema: buildSubgraph(name),
    docs: new Map(),
    responses: new Map(),
    requests: 0,
    hits: 0,
    misses: 0,
    errors: 0,
  });
}

const enc = new TextEncoder();
const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };
const ANSWER_HEADERS: Record<string, string> = CACHE_CONTROL === ""
  ? JSON_HEADERS
  : { ...JSON_HEADERS, "cache-control": CACHE_CONTROL };

function jsonError(status: number, message: string): Response {
  return new Response(JSON.stringify({ errors: [{ message }] }), {
    status,
    headers: JSON_HEADERS,
  });
}

function run(sg: Subgraph, text: string): { bytes: Uint8Array<ArrayBuffer>; ok: boolean } {
  let req: { query?: string; variables?: Record<string, unknown>; operationName?: string };
  try {
    req = JSON.parse(text);
  } catch {
    return { bytes: enc.encode('{"errors":[{"message":"invalid JSON body"}]}'), ok: false };
  }
  const query = req.query ?? "";
  let doc = sg.docs.get(query);
  if (!doc) {
    try {
      doc = parse(query);
    } catch (e) {
      return {
        bytes: enc.encode(JSON.stringify({ errors: [{ message: String((e as Error).message) }] })),
        ok: false,
      };
    }
    const errs = validate(sg.schema, doc);
    if (errs.length) {
      return {
        bytes: enc.encode(JSON.stringify({ errors: errs.map((e) => ({ message: e.message })) })),
        ok: false,
      };
    }
    if (sg.docs.size >= CACHE_MAX) sg.docs.clear();
    sg.docs.set(query, doc);
  }
  const result = execute({
    schema: sg.schema,
    document: doc,
    variableValues: req.variables ?? undefined,
    operationName: req.operationName ?? undefined,
  });
  if (result instanceof Promise) throw new Error("resolvers must be synchronous");
  const ok = !result.errors;
  return { bytes: enc.encode(JSON.stringify(result)), ok };
}

async function handler(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const sg = subgraphs.get(url.pathname);
  if (sg && request.method === "POST") {
    const text = await request.text();
    sg.requests++;
    let bytes = CACHE ? sg.responses.get(text) : undefined;
    if (bytes) {
      sg.hits++;
    } else {
      sg.misses++;
      const r = run(sg, text);
      bytes = r.bytes;
      if (!r.ok) sg.errors++;
      if (CACHE && r.ok) {
        if (sg.responses.size >= CACHE_MAX) sg.responses.clear();
        sg.responses.set(text, bytes);
      }
    }
    if (DELAY_MS > 0) await new Promise((res) => setTimeout(res, DELAY_MS));
    return new Response(bytes, { headers: ANSWER_HEADERS });
  }
  if (url.pathname === "/health") return new Response("ok");
  if (url.pathname === "/stats") {
    if (request.method === "POST") {
      for (const s of subgraphs.values()) {
        s.requests =
          s.hits =
          s.misses =
          s.errors =
            0;
      }
    }
    const out: Record<string, unknown> = {};
    let total = 0;
    for (const s of subgraphs.values()) {
      out[s.name] = { requests: s.requests, hits: s.hits, misses: s.misses, errors: s.errors };
      total += s.requests;
    }
    out.total = total;
    return new Response(JSON.stringify(out), { headers: JSON_HEADERS });
  }
  if (sg) return jsonError(405, "use POST");
  return jsonError(404, "not found");
}

Deno.serve({
  port: PORT,
  hostname: HOST,
  onListen: ({ hostname, port }) =>
    console.log(
      `subgraphs listening on http://${hostname}:${port}/{${
        SUBGRAPH_NAMES.join(",")
      }} cache=${CACHE}`,
    ),
}, handler);
