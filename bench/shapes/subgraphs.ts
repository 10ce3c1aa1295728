/**
 * The subgraphs of the shape benchmarks (`run.ts`), one Deno process:
 *
 * - `POST /big` — `type Query { bigItems: [BigItem] }`: one answer of
 *   `BIG_BYTES` (8 MiB by default), built once and sent as bytes (the
 *   subgraph costs next to nothing; the gateways do the work);
 * - `POST /slow` — `type Query { slow: String }`: answers after `SLOW_MS`
 *   (100 ms), so that a query with both holds its big answer that long;
 * - `POST /f1` … `POST /f6` — six small subgraphs sharing the entity
 *   `Node @key(fields: "id")`, each adding a field `v<i>` ("f<i>-<id>") and
 *   a hop `n<i>: Node` (the node whose id is one more); `f1` also has
 *   `Query.node(id)`. `manyQuery(levels, chains)` walks `chains` chains of
 *   `levels` nodes, each reached through the hop of the next subgraph in
 *   turn (chains offset) and selecting all six `v<i>`. Executed with graphql-js on `@apollo/subgraph` schemas,
 *   answers cached by request body (bounded) so that the subgraphs stay
 *   cheap;
 * - `POST /p0` … `POST /p6` — the many-plans shape's seven overlapping
 *   subgraphs (`plans.ts`), executed and cached the same way;
 * - `GET /health`, `GET /count` (subgraph requests served so far).
 *
 *   deno run -A bench/shapes/subgraphs.ts   (SHAPES_SUBGRAPH_PORT, default 45100)
 *
 * @module
 */
import { PLAN_NAMES, planResolvers, planSdl } from "./plans.ts";

const PORT = Number(Deno.env.get("SHAPES_SUBGRAPH_PORT") ?? "45100");
const BIG_BYTES = Number(Deno.env.get("BIG_BYTES") ?? String(8 * 1024 * 1024));
const SLOW_MS = Number(Deno.env.get("SLOW_MS") ?? "100");
/** The small subgraphs of the many-fetches shape. */
export const FAN_NAMES: readonly string[] = ["f1", "f2", "f3", "f4", "f5", "f6"];

function fanSdl(name: string): string {
  const i = name.slice(1);
  const root = name === "f1" ? "type Query { node(id: ID!): Node }\n" : "";
  return `${root}type Node @key(fields: "id") { id: ID! v${i}: String n${i}: Node }`;
}

/** Subgraph SDLs (federation v2, composed by `run.ts`). */
export const SDLS: Readonly<Record<string, string>> = {
  big:
    "type Query { bigItems: [BigItem] }\ntype BigItem { id: ID! name: String value: Int tags: [String] }",
  slow: "type Query { slow: String }",
  ...Object.fromEntries(FAN_NAMES.map((name) => [name, fanSdl(name)])),
  ...Object.fromEntries(PLAN_NAMES.map((name) => [name, planSdl(name)])),
};

const manyFields = FAN_NAMES.map((name) => `v${name.slice(1)}`).join(" ");

/** The hop from `level` to the next in chain `chain`: the subgraphs in turn, chains offset. */
const hop = (chain: number, level: number) => `n${((level + chain + 1) % FAN_NAMES.length) + 1}`;

/**
 * The many-fetches query: `chains` aliased `node` fields (ids `chain * 1000` on), each a
 * chain `levels` nodes deep selecting all six subgraphs at every level. At a given depth the
 * chains hop through different subgraphs, so a planner that batches one subgraph's fetches
 * across aliases and defers leaf fields still needs about `chains` fetches per level.
 */
export function manyQuery(levels: number, chains = FAN_NAMES.length): string {
  const fields: string[] = [];
  for (let chain = 0; chain < chains; chain++) {
    let selection = "";
    for (let level = levels - 1; level >= 0; level--) {
      const next = level === levels - 1 ? "" : ` ${hop(chain, level)} { ${selection} }`;
      selection = `id ${manyFields}${next}`;
    }
    fields.push(`a${chain}: node(id: "${chain * 1000}") { ${selection} }`);
  }
  return `query Many { ${fields.join(" ")} }`;
}

/** The `data` a correct gateway answers to `manyQuery(levels, chains)`. */
export function manyExpected(levels: number, chains = FAN_NAMES.length): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (let chain = 0; chain < chains; chain++) {
    let node: Record<string, unknown> | undefined;
    for (let level = levels - 1; level >= 0; level--) {
      const id = String(chain * 1000 + level);
      const here: Record<string, unknown> = { id };
      for (const name of FAN_NAMES) here[`v${name.slice(1)}`] = `${name}-${id}`;
      if (node) here[hop(chain, level)] = node;
      node = here;
    }
    data[`a${chain}`] = node;
  }
  return data;
}

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

/** Executes fan subgraph requests (graphql-js), answers cached by body. */
export async function fanSubgraphs(): Promise<
  (name: string, body: string) => Promise<Uint8Array | undefined>
> {
  const { parse, execute } = await import("graphql");
  type GraphQLSchema = import("graphql").GraphQLSchema;
  const { buildSubgraphSchema } = await import("@apollo/subgraph");
  const link =
    'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@shareable"])';
  const build = (name: string, sdl: string, resolvers: Record<string, Record<string, unknown>>) => {
    const input = { typeDefs: parse(`${link}\n${sdl}`), resolvers };
    // The graphql copy @apollo/subgraph types against is another module: same shapes.
    // deno-lint-ignore no-explicit-any
    const schema = buildSubgraphSchema([input] as any) as unknown as GraphQLSchema;
    return [name, schema] as const;
  };
  const schemas = new Map(FAN_NAMES.map((name) => {
    const i = name.slice(1);
    const resolvers: Record<string, Record<string, unknown>> = {
      Node: {
        __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
        [`v${i}`]: (node: { id: string }) => `${name}-${node.id}`,
        [`n${i}`]: (node: { id: string }) => ({ id: String(Number(node.id) + 1) }),
      },
    };
    if (name === "f1") {
      resolvers.Query = { node: (_: unknown, args: { id: string }) => ({ id: args.id }) };
    }
    return build(name, fanSdl(name), resolvers);
  }));
  for (const name of PLAN_NAMES) schemas.set(...build(name, planSdl(name), planResolvers(name)));
  const cache = new Map<string, Uint8Array>();
  const encoder = new TextEncoder();
  return async (name, body) => {
    const schema = schemas.get(name);
    if (!schema) return undefined;
    const key = `${name} ${body}`;
    const hit = cache.get(key);
    if (hit) return hit;
    const request = JSON.parse(body);
    const result = await execute({
      schema,
      document: parse(request.query),
      variableValues: request.variables,
      operationName: request.operationName,
    });
    const bytes = encoder.encode(JSON.stringify(result));
    if (cache.size >= 4096) cache.delete(cache.keys().next().value!);
    cache.set(key, bytes);
    return bytes;
  };
}

if (import.meta.main) {
  const big = bigAnswer(BIG_BYTES);
  const fan = await fanSubgraphs();
  let served = 0;
  const json = { "content-type": "application/json" };
  Deno.serve({ port: PORT, hostname: "127.0.0.1", onListen() {} }, async (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/health") return new Response("ok");
    if (path === "/count") return Response.json({ served });
    const body = request.method === "POST" ? await request.text() : "";
    served++;
    const fanned = await fan(path.slice(1), body);
    if (fanned) return new Response(fanned as Uint8Array<ArrayBuffer>, { headers: json });
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
