/**
 * A one-subgraph router workspace for e2e tests: the supergraph composed from
 * one SDL at `url`, written with a config (`listen_addr: 127.0.0.1:0`, an empty
 * `operations_dir`, MCP off, then `extra`) into a temporary folder.
 *
 * @module
 */
import { join } from "node:path";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { withProfileYaml } from "./_production_profile.ts";

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
  options: {
    readonly sdl: string;
    readonly extra?: string;
    readonly name?: string;
    /** The `mcp` section, as a YAML flow mapping (default `{ enabled: false }`). */
    readonly mcp?: string;
    /**
     * Merge the production profile's settings under `extra` (default true).
     * The RSS tests keep the bounds they were measured with: false.
     */
    readonly profile?: boolean;
  },
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
  const yaml = `listen_addr: 127.0.0.1:0
supergraph_path: super.graphql
operations_dir: ops
mcp: ${options.mcp ?? "{ enabled: false }"}
${options.extra ?? ""}`;
  // The production profile (issue 39): access logs, metrics and tracing on.
  await Deno.writeTextFile(
    join(dir, "config.yaml"),
    options.profile === false ? yaml : withProfileYaml(yaml),
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
  const arbitrary = options.mcp === "arbitrary" ? " enable_arbitrary_operations: true," : "";
  const dir = await oneSubgraphWorkspace(`http://127.0.0.1:${subgraph.addr.port}/graphql`, {
    sdl: "type Query { hello: String }",
    extra,
    ...(options.mcp === undefined
      ? {}
      : { mcp: `{ enabled: true,${arbitrary} server: { base_url: "http://127.0.0.1" } }` }),
  });
  const configPath = join(dir, "config.yaml");
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
