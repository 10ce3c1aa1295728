/**
 * The subgraphs of the shape benchmarks (`run.ts`), one Deno process:
 *
 * - `POST /big` — `type Query { bigItems: [BigItem] }`: one answer of
 *   `BIG_BYTES` (8 MiB by default), built once and sent as bytes (the
 *   subgraph costs next to nothing; the gateways do the work);
 * - `POST /slow` — `type Query { slow: String }`: answers after `SLOW_MS`
 *   (100 ms), so that a query with both holds its big answer that long;
 * - `GET /health`, `GET /sdl/<name>`.
 *
 *   deno run -A bench/shapes/subgraphs.ts   (SHAPES_SUBGRAPH_PORT, default 45100)
 *
 * @module
 */
const PORT = Number(Deno.env.get("SHAPES_SUBGRAPH_PORT") ?? "45100");
const BIG_BYTES = Number(Deno.env.get("BIG_BYTES") ?? String(8 * 1024 * 1024));
const SLOW_MS = Number(Deno.env.get("SLOW_MS") ?? "100");

/** Subgraph SDLs (federation v2, composed by `run.ts`). */
export const SDLS: Readonly<Record<string, string>> = {
  big:
    "type Query { bigItems: [BigItem] }\ntype BigItem { id: ID! name: String value: Int tags: [String] }",
  slow: "type Query { slow: String }",
};

/** The big answer: items of about 100 bytes until `bytes`. */
export function bigAnswer(bytes: number): Uint8Array<ArrayBuffer> {
  const items: unknown[] = [];
  let size = 24;
  for (let i = 0; size < bytes; i++) {
    const item = {
      id: `item-${i}`,
      name: `name of item ${i}`,
      value: i,
      tags: ["a", `t${i % 97}`],
    };
    size += JSON.stringify(item).length + 1;
    items.push(item);
  }
  return new TextEncoder().encode(JSON.stringify({ data: { bigItems: items } }));
}

if (import.meta.main) {
  const big = bigAnswer(BIG_BYTES);
  const json = { "content-type": "application/json" };
  Deno.serve({ port: PORT, hostname: "127.0.0.1", onListen() {} }, async (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/health") return new Response("ok");
    const body = request.method === "POST" ? await request.text() : "";
    if (path === "/big") {
      if (body.includes("bigItems")) return new Response(big, { headers: json });
      return Response.json({ data: { __typename: "Query" } });
    }
    if (path === "/slow") {
      await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
      return Response.json({ data: { slow: "held" } });
    }
    return new Response("not found", { status: 404 });
  });
  console.log(`shape subgraphs on 127.0.0.1:${PORT} (big answer ${big.length} bytes)`);
}
