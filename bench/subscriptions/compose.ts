/**
 * Composes the subscription benchmark's supergraph (feed + products) for the
 * given ports with the router's own composition (`lib/compose`), and writes it
 * to the path given as the first argument.
 *
 * `deno run -A bench/subscriptions/compose.ts OUT [FEED_PORT] [PRODUCTS_PORT]`
 *
 * @module
 */
import { composeSupergraph, formatCompositionError } from "../../lib/compose/mod.ts";
import { FEED_SDL, PRODUCTS_SDL } from "./subgraphs.ts";

const [out, feedPort = "47101", productsPort = "47102"] = Deno.args;
if (out === undefined) {
  console.error("Usage: compose.ts OUT [FEED_PORT] [PRODUCTS_PORT]");
  Deno.exit(2);
}
const outcome = composeSupergraph([
  { name: "feed", url: `http://127.0.0.1:${feedPort}/graphql`, sdl: FEED_SDL },
  {
    name: "products",
    url: `http://127.0.0.1:${productsPort}/graphql`,
    sdl: PRODUCTS_SDL,
  },
]);
if (!outcome.ok) {
  console.error(outcome.errors.map(formatCompositionError).join("\n"));
  Deno.exit(1);
}
Deno.writeTextFileSync(out, outcome.supergraphSdl);
