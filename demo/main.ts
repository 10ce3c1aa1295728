/**
 * `deno task demo [--config FILE] [--subgraph-port-base N]`: serves the four
 * demo subgraphs (accounts, products, reviews, inventory) on the ports of the
 * config's `subgraphs` routing URLs (4001–4004 in `config.yaml`), or on N to
 * N+3 (env `DEMO_SUBGRAPH_PORT_BASE`) with a supergraph composed for them,
 * starts the router on the same config and prints where everything answers.
 * The router's own port is `listen_addr` (env `LISTEN_ADDR`). Ctrl-C stops it all.
 *
 * @module
 */
import { type RunningRouter, startRouter } from "../lib/cli/serve.ts";
import { loadConfig, resolveConfigPath } from "../lib/config/mod.ts";
import type { Config } from "../lib/config/types.ts";
import type { Logger } from "../lib/log/mod.ts";
import { DEMO_SUBGRAPHS, type RunningDemo, startDemoSubgraphs } from "./subgraphs/mod.ts";

/** The query the banner's curl example sends: it crosses all four subgraphs. */
export const DEMO_QUERY =
  '{ product(upc: "5") { name price shippingEstimate stockStatus reviews { rating author { name username } } } }';

/** Options for {@linkcode startDemo}. */
export interface StartDemoOptions {
  /** Config file of the router (its `subgraphs` must route to the demo ports). */
  readonly configPath: string;
  /** Environment for config overrides (`LISTEN_ADDR`, …). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Serve the subgraphs on free ports and give the router a supergraph composed
   * for them, instead of ports 4001–4004 and `supergraph_path` (tests).
   */
  readonly freePorts?: boolean;
  /**
   * Serve the subgraphs from this port on (4 consecutive ports) and give the
   * router a supergraph composed for them; `config.subgraphs` is then not used.
   * Default: the ports of `config.yaml` (4001–4004).
   */
  readonly subgraphPortBase?: number;
  /** Reload on file changes and handle SIGHUP/SIGTERM/SIGINT (the `deno task demo` process). */
  readonly interactive?: boolean;
  /** Router logger (default: JSON lines on stdout). */
  readonly log?: Logger;
}

/** A running demo: subgraphs and router. */
export interface RunningDemoRouter {
  readonly router: RunningRouter;
  readonly subgraphs: RunningDemo;
  /** What `deno task demo` prints: URLs and curl examples. */
  readonly banner: string;
  /** Stops the router, then the subgraphs. */
  close(): Promise<void>;
}

const DEMO_USAGE = "usage: deno task demo [--config FILE] [--subgraph-port-base N]";

/**
 * Reads `deno task demo`'s arguments (`--config FILE`, `--subgraph-port-base N`,
 * env `DEMO_SUBGRAPH_PORT_BASE`).
 * @param args The arguments.
 * @param env The environment.
 * @returns The config flag and the subgraphs' first port, if given.
 * @throws {Error} On an unknown argument or a port out of range, naming it.
 */
export function parseDemoArgs(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { config: string | undefined; subgraphPortBase: number | undefined } {
  let config: string | undefined;
  let base: string | undefined = env.DEMO_SUBGRAPH_PORT_BASE || undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--config") config = args[++i];
    else if (arg.startsWith("--config=")) {
      config = arg.slice("--config=".length);
    } else if (arg === "--subgraph-port-base") base = args[++i];
    else if (arg.startsWith("--subgraph-port-base=")) {
      base = arg.slice(arg.indexOf("=") + 1);
    } else throw new Error(`Unknown argument "${arg}"; ${DEMO_USAGE}`);
  }
  if (base === undefined) return { config, subgraphPortBase: undefined };
  const port = Number(base);
  if (!Number.isInteger(port) || port < 1 || port > 65532) {
    throw new Error(
      `--subgraph-port-base (env DEMO_SUBGRAPH_PORT_BASE): expected a port from 1 to 65532, got "${base}"`,
    );
  }
  return { config, subgraphPortBase: port };
}

/** Checks that the config routes each demo subgraph to the port the demo serves it on. */
function checkRoutingUrls(config: Config): void {
  for (const subgraph of DEMO_SUBGRAPHS) {
    const source = config.subgraphs.find((s) => s.name === subgraph.name);
    if (source === undefined) continue;
    const port = new URL(source.routing_url).port;
    if (port !== String(subgraph.port)) {
      throw new Error(
        `Config routes subgraph "${subgraph.name}" to ${source.routing_url}, but the demo serves it on port ${subgraph.port}`,
      );
    }
  }
}

function banner(router: RunningRouter, subgraphs: RunningDemo): string {
  const base = router.url;
  const state = router.state();
  const config = state.config;
  const lines = ["", "GW Router demo", ""];
  for (const subgraph of subgraphs.subgraphs) {
    lines.push(`  subgraph ${subgraph.name.padEnd(10)} ${subgraph.url}`);
  }
  lines.push("", `  GraphQL     ${base}${config.graphql_path}`);
  if (state.mcp !== null) lines.push(`  MCP         ${base}${config.mcp.path}`);
  if (state.connect !== null) {
    lines.push(`  Connect     ${base}${state.connect.prefix}<Operation>`);
  }
  if (config.playground.enabled) lines.push(`  Playground  ${base}/`);
  lines.push(
    `  Health      ${base}/health/ready`,
    `  Operations  ${state.operations.operations.map((o) => o.name).join(", ")}`,
    "",
    "Try (a query that crosses all four subgraphs):",
    `  curl -s ${base}${config.graphql_path} -H 'content-type: application/json' \\`,
    `    -d '${JSON.stringify({ query: DEMO_QUERY })}'`,
  );
  if (state.connect !== null) {
    const message = encodeURIComponent(JSON.stringify({ upc: "5" }));
    lines.push(
      "",
      "A registered operation (operations/GetProduct.graphql) through Connect GET:",
      `  curl -s '${base}${state.connect.prefix}GetProduct?connect=v1&encoding=json&message=${message}'`,
    );
  }
  lines.push("", "Ctrl-C stops the router and the subgraphs.", "");
  return lines.join("\n");
}

/**
 * Starts the demo subgraphs and the router in front of them.
 * @param options Config file, environment, ports, signals.
 * @returns The running demo and its banner.
 * @throws {Error} When a port is taken or the config does not route to the demo ports.
 * @throws {RouterError} `CONFIG_INVALID` when the config is invalid.
 */
export async function startDemo(
  options: StartDemoOptions,
): Promise<RunningDemoRouter> {
  const env = options.env ?? {};
  const freePorts = options.freePorts ?? false;
  const basePort = freePorts ? 0 : options.subgraphPortBase;
  // Own ports get their own supergraph; the fixed-port demo checks the config
  // first, then starts from it (no second read).
  const composed = basePort !== undefined;
  const config = composed ? undefined : await loadConfig(options.configPath, { env });
  if (config !== undefined) checkRoutingUrls(config);
  const subgraphs = startDemoSubgraphs(
    basePort === undefined ? {} : { basePort },
  );
  let router: RunningRouter;
  try {
    router = await startRouter({
      configPath: options.configPath,
      ...(config === undefined ? {} : { config }),
      env,
      watch: options.interactive ?? false,
      signals: options.interactive ?? false,
      ...(composed ? { supergraphSdl: subgraphs.supergraphSdl } : {}),
      ...(options.log === undefined ? {} : { log: options.log }),
    });
  } catch (error) {
    await subgraphs.close();
    throw error;
  }
  return {
    router,
    subgraphs,
    banner: banner(router, subgraphs),
    close: async () => {
      await router.shutdown();
      await subgraphs.close();
    },
  };
}

async function main(args: readonly string[]): Promise<number> {
  const env = Deno.env.toObject();
  const { config: flag, subgraphPortBase } = parseDemoArgs(args, env);
  const demo = await startDemo({
    configPath: resolveConfigPath(flag, env),
    env,
    interactive: true,
    ...(subgraphPortBase === undefined ? {} : { subgraphPortBase }),
  });
  console.log(demo.banner);
  await demo.router.finished; // SIGINT/SIGTERM shut the router down
  await demo.close();
  return 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await main(Deno.args));
  } catch (error) {
    console.error(
      `demo: ${error instanceof Error ? error.message : String(error)}`,
    );
    Deno.exit(1);
  }
}
