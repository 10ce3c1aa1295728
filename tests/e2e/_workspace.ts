/**
 * A one-subgraph router workspace for e2e tests: the supergraph composed from
 * one SDL at `url`, written with a config (`listen_addr: 127.0.0.1:0`, an empty
 * `operations_dir`, MCP off, then `extra`) into a temporary folder.
 *
 * @module
 */
import { join } from "node:path";
import { composeSupergraph } from "../../lib/compose/mod.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';

/**
 * Writes the workspace.
 * @param url The subgraph's URL.
 * @param options Its SDL (after the federation link), extra config lines, its name (`greetings`).
 * @returns The folder; its config is `config.yaml` (remove the folder after).
 */
export async function oneSubgraphWorkspace(
  url: string,
  options: { readonly sdl: string; readonly extra?: string; readonly name?: string },
): Promise<string> {
  const composed = composeSupergraph([{
    name: options.name ?? "greetings",
    url,
    sdl: `${LINK}\n${options.sdl}`,
  }]);
  if (!composed.ok) throw new Error("does not compose");
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(join(dir, "ops"));
  await Deno.writeTextFile(join(dir, "super.graphql"), composed.supergraphSdl);
  await Deno.writeTextFile(
    join(dir, "config.yaml"),
    `listen_addr: 127.0.0.1:0
supergraph_path: super.graphql
operations_dir: ops
mcp: { enabled: false }
${options.extra ?? ""}`,
  );
  return dir;
}

/** A workspace whose one subgraph answers every query `{ hello: "world" }`. */
export interface HelloWorkspace {
  /** The folder. */
  readonly dir: string;
  /** Its `config.yaml`. */
  readonly configPath: string;
  /** Stops the subgraph and removes the folder. */
  close(): Promise<void>;
}

/**
 * Starts a subgraph answering `{ hello: "world" }` to everything and writes a
 * workspace for it (`type Query { hello: String }`).
 * @param extra Config lines.
 * @param options `mcp`: MCP on (base URL http://127.0.0.1), with `execute_graphql` when asked.
 * @returns The workspace.
 */
export async function helloWorkspace(
  extra: string,
  options: { readonly mcp?: "on" | "arbitrary" } = {},
): Promise<HelloWorkspace> {
  const subgraph = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => Response.json({ data: { hello: "world" } }),
  );
  const dir = await oneSubgraphWorkspace(`http://127.0.0.1:${subgraph.addr.port}/graphql`, {
    sdl: "type Query { hello: String }",
    extra,
  });
  const configPath = join(dir, "config.yaml");
  if (options.mcp !== undefined) {
    const arbitrary = options.mcp === "arbitrary" ? " enable_arbitrary_operations: true," : "";
    const config = await Deno.readTextFile(configPath);
    await Deno.writeTextFile(
      configPath,
      config.replace(
        "mcp: { enabled: false }",
        `mcp: { enabled: true,${arbitrary} server: { base_url: "http://127.0.0.1" } }`,
      ),
    );
  }
  return {
    dir,
    configPath,
    async close() {
      await subgraph.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/**
 * POSTs one GraphQL query to a router and reads the JSON answer.
 * @param routerUrl The router's base URL.
 * @param query The query text.
 * @returns The parsed answer (as `Response.json` gives it).
 */
export async function postQuery(routerUrl: string, query: string) {
  const response = await fetch(`${routerUrl}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ query }),
  });
  return await response.json();
}
