/**
 * GW Router command line: `serve` (default) | `compose` | `generate proto|openapi`
 * | `trace-token` | `version`.
 *
 * @module
 */
import denoJson from "./deno.json" with { type: "json" };

/** The router version (reported by `version` and in traces). */
export const VERSION: string = denoJson.version;

const USAGE = `Usage: gw-router [command] [options]

Commands:
  serve [--config FILE]                       Run the router (default command)
  compose [--config FILE] [--out FILE]        Compose the supergraph from config.subgraphs
  generate proto [--config FILE] --out DIR    Write the Connect .proto of the operations
  generate openapi [--config FILE] --out FILE Write the OpenAPI document of the operations
  trace-token --key FILE [--ttl 1h]           Mint an ART request token (X-GW-Token)
  trace-token --generate-key --out DIR        Write an ES256 key pair for ART tokens
  version                                     Print the version
`;

async function main(args: string[]): Promise<number> {
  const [first, ...rest] = args;
  const command = first === undefined || first.startsWith("-") ? "serve" : first;
  const commandArgs = command === first ? rest : args;
  switch (command) {
    case "version":
      console.log(`gw-router ${VERSION}`);
      return 0;
    case "help":
    case "--help":
      console.log(USAGE);
      return 0;
    default: {
      const mod = await import("./lib/cli/mod.ts");
      return await mod.runCommand(command, commandArgs, { version: VERSION });
    }
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
