/**
 * GW Router command line: `serve` (default) | `compose` | `generate proto|openapi`
 * | `config validate|schema` | `trace-token` | `version` | `help [command]`.
 *
 * @module
 */
import denoJson from "./deno.json" with { type: "json" };

/** The router version (reported by `version` and in traces). */
export const VERSION: string = denoJson.version;

const USAGE = `GW Router ${VERSION}: a GraphQL federation router with MCP and Connect facets.

Usage: gw-router [command] [options]

Commands:
  serve [--config FILE]                       Run the router (default command)
  compose [--config FILE] [--out FILE]        Compose the supergraph from config.subgraphs
  generate proto [--config FILE] --out DIR    Write the Connect .proto of the operations
  generate openapi [--config FILE] --out FILE Write the OpenAPI document of the operations
  config validate [--config FILE] [--skip-files]  Check a config file (env applied); list every problem
  config schema                               Print the config's JSON Schema
  trace-token --key FILE [--ttl 1h]           Mint an ART request token (X-GW-Token)
  trace-token --generate-key --out DIR        Write an ES256 key pair for ART tokens
  version, --version, -V                      Print the version
  help [command], --help, -h                  Print this help, or a command's

The config file is --config FILE, else env CONFIG_PATH, else ./config.yaml. Every config key
can be set by an environment variable (its path upper-cased: LISTEN_ADDR, MCP_OAUTH_ENABLED).
Docs: docs/configuration.md (every key), docs/deployment.md (production).
`;

/** Per-command help (`help serve`, `serve --help`). */
const COMMAND_HELP: Readonly<Record<string, string>> = {
  serve: `Usage: gw-router serve [--config FILE]

Runs the router until SIGTERM or SIGINT (graceful: grace_period_ms); SIGHUP and file changes
reload the config, the supergraph and the operations.

Options:
  -c, --config FILE   Config file (default: env CONFIG_PATH, else ./config.yaml)
  -h, --help          Print this help

Environment: every config key, upper-cased (LISTEN_ADDR=0.0.0.0:3002, LOG_LEVEL=debug).
`,
  compose: `Usage: gw-router compose [--config FILE] [--out FILE]

Composes the supergraph from the config's "subgraphs" (name, routing_url, schema_file) and
writes it to --out (default: the config's supergraph_path).
`,
  generate: `Usage: gw-router generate proto [--config FILE] --out DIR
       gw-router generate openapi [--config FILE] --out FILE

Writes the Connect .proto, or the OpenAPI document, of the operations in operations_dir.
`,
  config: `Usage: gw-router config validate [--config FILE] [--skip-files]
       gw-router config schema

validate: reads the config file with the environment applied, checks every key and the files
it names, and prints every problem (exit 1) or "ok" (exit 0). A file that is only not there
yet (a supergraph your pipeline writes later) is marked so; --skip-files leaves those out.
schema:   prints the JSON Schema of the config file (also committed as config.schema.json).
`,
  "trace-token": `Usage: gw-router trace-token --key FILE [--ttl 1h]
       gw-router trace-token --generate-key --out DIR

Mints an X-GW-Token for Advanced Request Tracing, signed with the private key FILE; or
writes a new ES256 key pair (the public key goes to engine.request_tracing_public_key_file).
`,
  version: "Usage: gw-router version\n\nPrints the version.\n",
};

function isHelp(arg: string | undefined): boolean {
  return arg === "--help" || arg === "-h";
}

/**
 * Runs the command line and returns the exit code.
 * @param args The arguments after the program name.
 * @returns The exit code.
 */
export async function main(args: string[]): Promise<number> {
  const [first, ...rest] = args;
  if (first === "version" || first === "--version" || first === "-V") {
    console.log(`gw-router ${VERSION}`);
    return 0;
  }
  if (first === "help" || isHelp(first)) {
    const topic = first === "help" ? rest[0] : undefined;
    if (topic === undefined) {
      console.log(USAGE);
      return 0;
    }
    const text = COMMAND_HELP[topic];
    if (text === undefined) {
      console.error(`Unknown command "${topic}"; see "gw-router help"`);
      return 2;
    }
    console.log(text);
    return 0;
  }
  const command = first === undefined || first.startsWith("-") ? "serve" : first;
  const commandArgs = command === first ? rest : args;
  if (commandArgs.some(isHelp) && COMMAND_HELP[command] !== undefined) {
    console.log(COMMAND_HELP[command]);
    return 0;
  }
  const mod = await import("./lib/cli/mod.ts");
  return await mod.runCommand(command, commandArgs, { version: VERSION });
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
