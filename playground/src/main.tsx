/**
 * Browser entry of the GW Router playground: GraphiQL plus the ART trace view.
 * Bundled by `playground/build.ts` into `lib/playground/assets.generated.ts`.
 *
 * @module
 */
import { createRoot } from "react-dom/client";
import "graphiql/style.css";
import "./playground.css";
import { App } from "./app.tsx";

const root = document.getElementById("root");
const path = document.querySelector('meta[name="gw-graphql-path"]')
  ?.getAttribute("content");
if (root) createRoot(root).render(<App graphqlPath={path || "/graphql"} />);
