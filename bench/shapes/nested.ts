/**
 * The `nested` shape (issue 45): one subgraph answering ~8 MB of nested
 * objects — regions, their stores, their shelves, their items (an interface,
 * `Book` or `Tool`) — with lists of floats, ints and strings at every level,
 * selected through named and inline fragments. `nestedheld` adds a field of
 * a second subgraph (`Region.weather`, an entity fetch) that answers after
 * `NESTED_SLOW_MS` (100 ms), so the big answer is held that long. Our schema
 * and our deterministic data (no randomness: the same bytes every run).
 *
 *   deno run -A bench/shapes/nested.ts   POST /nest, /nestslow; GET /health, /count
 *   deno run -A bench/shapes/nested.ts files DIR PORT [held]   writes DIR/supergraph.graphql
 *                                        (subgraphs on PORT), DIR/body.json, DIR/expected.json
 *
 * Env: `NESTED_SUBGRAPH_PORT` (45400), `NESTED_SLOW_MS` (100). Answers are
 * executed with graphql-js on `@apollo/subgraph` schemas once per request
 * body and cached (bounded), so the subgraphs cost little next to the
 * gateway: each answer is exactly what a spec-compliant subgraph sends for
 * the query the gateway planned (`__typename` only where asked).
 *
 * @module
 */
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { cachedSubgraphs, type SubgraphAnswerer } from "./_cached_subgraphs.ts";

/** The subgraph names, one path each. */
export const NESTED_SUBGRAPHS: readonly string[] = ["nest", "nestslow"];

const LEVEL_FIELDS = "weights: [Float!]! counts: [Int!]! labels: [String!]!";

/** Subgraph SDLs (federation v2). */
export const NESTED_SDLS: Readonly<Record<string, string>> = {
  nest: `type Query { regions: [Region!]! }
type Region @key(fields: "id") { id: ID! name: String! score: Float ${LEVEL_FIELDS} stores: [Store!]! }
type Store { id: ID! name: String! rating: Float open: Boolean ${LEVEL_FIELDS} shelves: [Shelf!]! }
type Shelf { id: ID! position: Int! ${LEVEL_FIELDS} items: [Item!]! }
interface Item { id: ID! name: String! price: Float! }
type Book implements Item { id: ID! name: String! price: Float! pages: Int ${LEVEL_FIELDS} }
type Tool implements Item { id: ID! name: String! price: Float! weight: Float ${LEVEL_FIELDS} }`,
  nestslow: `type Region @key(fields: "id") { id: ID! weather: String }`,
};

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@shareable"])';

const FRAGMENTS = `fragment Level on Region { weights counts labels }
fragment StoreFields on Store { id name rating open weights counts labels }
fragment ItemFields on Item { __typename id name price }`;

/** The client's query; `held`: with the second subgraph's `weather`. */
export function nestedQuery(held = false): string {
  return `${FRAGMENTS}
query Nested {
  regions {
    id name score ...Level${held ? " weather" : ""}
    stores {
      ...StoreFields
      shelves {
        ... on Shelf { id position weights counts labels }
        items {
          ...ItemFields
          ... on Book { pages weights counts labels }
          ... on Tool { weight weights counts labels }
        }
      }
    }
  }
}`;
}

/** Regions, stores per region, shelves per store, items per shelf. */
const FAN = [4, 16, 16, 33] as const;

/** A deterministic float of `i` (two or three decimals, some long). */
const float = (i: number, k: number) =>
  k % 3 === 2 ? ((i * 7919 + k) % 10007) / 7 : ((i * 2654435761 + k * 40503) % 1000003) / 100;

/** The lists every level has: four floats, five ints, three strings. */
function lists(prefix: string, i: number): Record<string, unknown> {
  return {
    weights: [0, 1, 2, 3].map((k) => float(i, k)),
    counts: [0, 1, 2, 3, 4].map((k) => (i * 31 + k * 977) % 65536),
    labels: [`${prefix}-${i % 13}`, `tag-${(i * 7) % 101}`, `group ${i % 5}`],
  };
}

/** The subgraph's data: every field of every type. */
export function nestedData(): Record<string, unknown>[] {
  let n = 0;
  return Array.from({ length: FAN[0] }, (_, r) => ({
    id: `r${r}`,
    name: `Region ${r}`,
    score: float(r, 1),
    ...lists("region", r),
    stores: Array.from({ length: FAN[1] }, (_, s) => {
      const store = r * FAN[1] + s;
      return {
        id: `s${store}`,
        name: `Store ${store} of region ${r}`,
        rating: float(store, 0),
        open: store % 3 !== 0,
        ...lists("store", store),
        shelves: Array.from({ length: FAN[2] }, (_, h) => {
          const shelf = store * FAN[2] + h;
          return {
            id: `h${shelf}`,
            position: h,
            ...lists("shelf", shelf),
            items: Array.from({ length: FAN[3] }, () => {
              const i = n++;
              const book = i % 3 !== 0;
              return {
                __typename: book ? "Book" : "Tool",
                id: `i${i}`,
                name: book ? `Book number ${i}` : `Tool number ${i}`,
                price: float(i, 2),
                ...(book ? { pages: 50 + (i % 900) } : { weight: float(i, 3) }),
                ...lists(book ? "book" : "tool", i),
              };
            }),
          };
        }),
      };
    }),
  }));
}

/** `Region.weather` of the second subgraph. */
const weather = (id: string) => `weather of ${id}: ${id.length % 2 ? "sunny" : "rain"}`;

/**
 * The `data` a correct gateway answers to {@linkcode nestedQuery}: graphql-js
 * executing the query over the data on the API schema (field order as selected).
 */
export async function nestedExpected(held = false): Promise<Record<string, unknown>> {
  const { buildSchema, execute, parse } = await import("graphql");
  const api = `${NESTED_SDLS.nest}\nextend type Region { weather: String }`
    .replace(/ @key\([^)]*\)/g, "");
  const schema = buildSchema(api);
  const result = await execute({
    schema,
    document: parse(nestedQuery(held)),
    rootValue: {
      regions: nestedData().map((r) => ({ ...r, weather: weather(r.id as string) })),
    },
  });
  if (result.errors?.length) throw new Error(`nestedExpected: ${result.errors[0]!.message}`);
  return result.data as Record<string, unknown>;
}

/** The supergraph SDL of the two subgraphs served on `port` (127.0.0.1). */
export function nestedSupergraphSdl(port: number): string {
  const composed = composeSupergraph(
    NESTED_SUBGRAPHS.map((name) => ({
      name,
      url: `http://127.0.0.1:${port}/${name}`,
      sdl: `${LINK}\n${NESTED_SDLS[name]}`,
    })),
  );
  if (!composed.ok) throw new Error("the nested subgraphs do not compose");
  return composed.supergraphSdl;
}

/**
 * The two subgraphs as a function: a path and a request body to the answer's
 * bytes (null: no such subgraph), cached by body (bounded).
 * @returns The answerer.
 */
export async function nestedSubgraphs(): Promise<SubgraphAnswerer> {
  const data = nestedData();
  const resolvers: Record<string, Record<string, Record<string, unknown>>> = {
    nest: {
      Query: { regions: () => data },
      Region: { __resolveReference: (ref: { id: string }) => data.find((r) => r.id === ref.id) },
    },
    nestslow: {
      Region: {
        __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
        weather: (r: { id: string }) => weather(r.id),
      },
    },
  };
  return await cachedSubgraphs(
    NESTED_SUBGRAPHS.map((name) => ({
      name,
      sdl: `${LINK}\n${NESTED_SDLS[name]}`,
      resolvers: resolvers[name],
    })),
    { maxCached: 64 },
  );
}

/**
 * The floor of the shape: CPU ms of `JSON.parse` + `JSON.stringify` of the
 * answer's text (median of `runs`, the process's own CPU).
 */
export function parseStringifyFloorMs(text: string, runs = 15): number {
  const { cpuUsage } = globalThis.process ?? {};
  const cpu = () => {
    if (cpuUsage === undefined) return performance.now();
    const u = cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = cpu();
    JSON.stringify(JSON.parse(text));
    times.push(cpu() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(runs / 2)]!;
}

if (import.meta.main && Deno.args[0] === "files") {
  const [, dir, port, held] = Deno.args;
  Deno.writeTextFileSync(`${dir}/supergraph.graphql`, nestedSupergraphSdl(Number(port)));
  Deno.writeTextFileSync(`${dir}/body.json`, JSON.stringify({ query: nestedQuery(!!held) }));
  Deno.writeTextFileSync(`${dir}/expected.json`, JSON.stringify(await nestedExpected(!!held)));
}

if (import.meta.main && Deno.args[0] !== "files") {
  const PORT = Number(Deno.env.get("NESTED_SUBGRAPH_PORT") ?? "45400");
  const SLOW_MS = Number(Deno.env.get("NESTED_SLOW_MS") ?? "100");
  const answer = await nestedSubgraphs();
  const json = { "content-type": "application/json" };
  let served = 0;
  Deno.serve({ port: PORT, hostname: "127.0.0.1", onListen() {} }, async (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/health") return new Response("ok");
    if (path === "/count") return Response.json({ served });
    if (request.method !== "POST") return new Response("not found", { status: 404 });
    const body = await request.text();
    const bytes = await answer(path, body);
    if (bytes === null) return new Response("not found", { status: 404 });
    served++;
    if (path === "/nestslow") await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
    return new Response(bytes, { headers: json });
  });
  console.log(`nested subgraphs on 127.0.0.1:${PORT}`);
}
