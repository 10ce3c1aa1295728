/**
 * The `query` shape (issue 33, first row): the Grafbase federation benchmark's
 * "query" workload, ported. Four subgraphs — accounts, inventory, products,
 * reviews — with that benchmark's schemas and data shape (six users, nine
 * products, eleven reviews with bodies of 143 to 844 characters, every review
 * author user 1 with a provided `username`, every `User.reviews` the first two
 * reviews), written here with `@apollo/subgraph` (our data, not theirs). The
 * fragment query below answers about 88 KB; `queryExpected()` is the `data` a
 * correct gateway answers, field order as selected.
 *
 * One difference on purpose: `inventory` computes `shippingEstimate` from the
 * `price` and `weight` the gateway passes (`@requires`), where the original
 * ignores them and answers null: a gateway that drops them gives wrong data.
 *
 *   deno run -A bench/shapes/query.ts    POST /accounts /inventory /products /reviews;
 *                                        GET /health, GET /count (requests served)
 *   deno run -A bench/shapes/query.ts files DIR PORT    writes DIR/supergraph.graphql (the
 *                                        subgraphs on PORT), DIR/body.json, DIR/expected.json
 *
 * Env: `QUERY_SUBGRAPH_PORT` (45300), `QUERY_DELAY_MS` (10: every answer waits
 * that long, as the original's `DELAY_MS`), `QUERY_LOG_FILE` (each request's arrival time,
 * path, body and `Authorization` appended as a JSON line: `floor.ts` replays them). Answers are cached by request body
 * (bounded), so the subgraphs cost little next to the gateway.
 *
 * @module
 */
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { cachedSubgraphs, type SubgraphAnswerer } from "./_cached_subgraphs.ts";

/** The subgraph names, one path each. */
export const QUERY_SUBGRAPHS: readonly string[] = ["accounts", "inventory", "products", "reviews"];

/** Subgraph SDLs (federation v2; `run.ts` composes them). */
export const QUERY_SDLS: Readonly<Record<string, string>> = {
  accounts: `type Query { me: User user(id: ID!): User users: [User] }
type User @key(fields: "id") { id: ID! name: String username: String @shareable birthday: Int }`,
  inventory: `type Product @key(fields: "upc") {
  upc: String! weight: Int @external price: Int @external inStock: Boolean
  shippingEstimate: Int @requires(fields: "price weight")
}`,
  products: `type Query { topProducts(first: Int = 5): [Product] }
type Product @key(fields: "upc") { upc: String! name: String price: Int weight: Int }`,
  reviews: `type Review @key(fields: "id") {
  id: ID! body: String product: Product author: User @provides(fields: "username")
}
type User @key(fields: "id") { id: ID! username: String @external reviews: [Review] }
type Product @key(fields: "upc") { upc: String! reviews: [Review] }`,
};

/** The federation `@link` each SDL is composed with. */
export const QUERY_LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@shareable", "@external", "@requires", "@provides"])';

/** The benchmark's query (fragments as in the original request body). */
export const QUERY_TEXT = `fragment User on User { id username name }
fragment Review on Review { id body }
fragment Product on Product { inStock name price shippingEstimate upc weight }
query TestQuery {
  users { ...User reviews { ...Review product { ...Product reviews { ...Review author { ...User reviews { ...Review product { ...Product } } } } } } }
  topProducts { ...Product reviews { ...Review author { ...User reviews { ...Review product { ...Product } } } } }
}`;

const USERS = [
  ["1", "Ines Marchetti", "imarch"],
  ["2", "Tomas Lindqvist", "tomasl"],
  ["3", "Keiko Andersen", "keikoa"],
  ["4", "Rafael Moreno", "rmoreno"],
  ["5", "Olga Petrenko", "opetrenko"],
  ["6", "Samir Haddad", "shaddad"],
].map(([id, name, username]) => ({ id: id!, name: name!, username: username!, birthday: 1990 }));

const PRODUCTS = [
  ["Desk", 899, 100, true],
  ["Sofa", 1299, 1000, false],
  ["Mug", 15, 20, false],
  ["Stool", 499, 100, false],
  ["Radio", 1299, 1000, true],
  ["Heater", 6999, 300, true],
  ["Smoker", 3999, 2000, true],
  ["Freezer", 100000, 6000, false],
  ["Futon", 9999, 800, true],
].map(([name, price, weight, inStock], i) => ({
  upc: String(i + 1),
  name: name as string,
  price: price as number,
  weight: weight as number,
  inStock: inStock as boolean,
}));

/** Deterministic prose of exactly `length` characters. */
function prose(seed: number, length: number): string {
  const words = "the router plans each fetch and merges every answer into one response tree"
    .split(" ");
  let text = "";
  for (let i = seed; text.length < length; i++) text += `${words[i % words.length]} `;
  return text.slice(0, length - 1) + ".";
}

/** Reviews: [product upc, body length] (the original's lengths, so the answer size matches). */
const REVIEWS = (
  [
    ["1", 445],
    ["1", 289],
    ["1", 275],
    ["1", 143],
    ["2", 445],
    ["2", 289],
    ["2", 275],
    ["2", 143],
    ["3", 143],
    ["4", 143],
    ["4", 844],
  ] as const
).map(([upc, length], i) => ({ id: String(i + 1), body: prose(i, length), upc }));

const product = (upc: string) => PRODUCTS.find((p) => p.upc === upc)!;
const user = (id: string) => USERS.find((u) => u.id === id)!;
const reviewsOf = (upc: string) => REVIEWS.filter((r) => r.upc === upc);
/** Every review's author is user 1; every `User.reviews` is the first two reviews. */
const AUTHOR_ID = "1";
const USER_REVIEWS = REVIEWS.slice(0, 2);

function shippingEstimate(price: unknown, weight: unknown): number | null {
  if (typeof price !== "number") return null;
  if (price > 1000) return 0;
  return typeof weight === "number" ? Math.floor(weight / 2) : null;
}

/** The `data` a correct gateway answers to `QUERY_TEXT`. */
export function queryExpected(): Record<string, unknown> {
  const productFields = (upc: string) => {
    const p = product(upc);
    return {
      inStock: p.inStock,
      name: p.name,
      price: p.price,
      shippingEstimate: shippingEstimate(p.price, p.weight),
      upc,
      weight: p.weight,
    };
  };
  const author = () => {
    const u = user(AUTHOR_ID);
    return {
      id: u.id,
      username: u.username,
      name: u.name,
      reviews: USER_REVIEWS.map((r) => ({ id: r.id, body: r.body, product: productFields(r.upc) })),
    };
  };
  const reviewWithAuthor = (r: typeof REVIEWS[number]) => ({
    id: r.id,
    body: r.body,
    author: author(),
  });
  return {
    users: USERS.map((u) => ({
      id: u.id,
      username: u.username,
      name: u.name,
      reviews: USER_REVIEWS.map((r) => ({
        id: r.id,
        body: r.body,
        product: { ...productFields(r.upc), reviews: reviewsOf(r.upc).map(reviewWithAuthor) },
      })),
    })),
    topProducts: PRODUCTS.slice(0, 5).map((p) => ({
      ...productFields(p.upc),
      reviews: reviewsOf(p.upc).map(reviewWithAuthor),
    })),
  };
}

/** The supergraph SDL of the four subgraphs served on `port` (127.0.0.1). */
export function querySupergraphSdl(port: number): string {
  const composed = composeSupergraph(
    QUERY_SUBGRAPHS.map((name) => ({
      name,
      url: `http://127.0.0.1:${port}/${name}`,
      sdl: `${QUERY_LINK}\n${QUERY_SDLS[name]}`,
    })),
  );
  if (!composed.ok) throw new Error("the query subgraphs do not compose");
  return composed.supergraphSdl;
}

type Resolvers = Record<string, Record<string, unknown>>;

/** The resolvers of one subgraph, over the data above. */
function resolvers(name: string): Resolvers {
  const reviewObject = (r: typeof REVIEWS[number]) => ({ id: r.id, body: r.body, upc: r.upc });
  switch (name) {
    case "accounts":
      return {
        Query: {
          me: () => user("1"),
          user: (_: unknown, args: { id: string }) => USERS.find((u) => u.id === args.id),
          users: () => USERS,
        },
        User: { __resolveReference: (ref: { id: string }) => USERS.find((u) => u.id === ref.id) },
      };
    case "inventory":
      return {
        Product: {
          __resolveReference: (ref: { upc: string; price?: number; weight?: number }) => ({
            upc: ref.upc,
            inStock: product(ref.upc)?.inStock,
            shippingEstimate: shippingEstimate(ref.price, ref.weight),
          }),
        },
      };
    case "products":
      return {
        Query: {
          topProducts: (_: unknown, args: { first?: number }) => PRODUCTS.slice(0, args.first ?? 5),
        },
        Product: { __resolveReference: (ref: { upc: string }) => product(ref.upc) },
      };
    default:
      return {
        Review: {
          __resolveReference: (ref: { id: string }) =>
            reviewObject(REVIEWS.find((r) => r.id === ref.id)!),
          product: (r: { upc: string }) => ({ upc: r.upc }),
          author: () => ({ id: AUTHOR_ID, username: user(AUTHOR_ID).username }),
        },
        User: {
          __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
          reviews: () => USER_REVIEWS.map(reviewObject),
        },
        Product: {
          __resolveReference: (ref: { upc: string }) => ({ upc: ref.upc }),
          reviews: (p: { upc: string }) => reviewsOf(p.upc).map(reviewObject),
        },
      };
  }
}

if (import.meta.main && Deno.args[0] === "files") {
  const [, dir, port] = Deno.args;
  Deno.writeTextFileSync(`${dir}/supergraph.graphql`, querySupergraphSdl(Number(port)));
  Deno.writeTextFileSync(`${dir}/body.json`, JSON.stringify({ query: QUERY_TEXT }));
  Deno.writeTextFileSync(`${dir}/expected.json`, JSON.stringify(queryExpected()));
}

/**
 * The four subgraphs as a function: a subgraph's path and a request body to
 * the answer's bytes (null: no such subgraph). Answers are cached by body
 * (bounded), as the server below serves them.
 * @returns The answerer.
 */
export async function querySubgraphs(): Promise<SubgraphAnswerer> {
  return await cachedSubgraphs(
    QUERY_SUBGRAPHS.map((name) => ({
      name,
      sdl: `${QUERY_LINK}\n${QUERY_SDLS[name]}`,
      resolvers: resolvers(name),
    })),
    { maxCached: 1024 },
  );
}

if (import.meta.main && Deno.args[0] !== "files") {
  const PORT = Number(Deno.env.get("QUERY_SUBGRAPH_PORT") ?? "45300");
  const DELAY_MS = Number(Deno.env.get("QUERY_DELAY_MS") ?? "10");
  const LOG_FILE = Deno.env.get("QUERY_LOG_FILE");
  const answer = await querySubgraphs();
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
    if (LOG_FILE) {
      const line = JSON.stringify({
        t: performance.now(),
        path,
        body,
        authorization: request.headers.get("authorization"),
      });
      Deno.writeTextFileSync(LOG_FILE, line + "\n", { append: true });
    }
    if (DELAY_MS > 0) await new Promise((resolve) => setTimeout(resolve, DELAY_MS));
    return new Response(bytes, { headers: json });
  });
  console.log(`query subgraphs on 127.0.0.1:${PORT}, answering after ${DELAY_MS} ms`);
}
