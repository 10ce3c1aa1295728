/**
 * The `compose` subcommand: `compose [--config FILE] [--out FILE]` reads
 * `subgraphs: [{name, routing_url, schema_file}]` from the config (schema files
 * relative to the config file), composes them and writes the supergraph SDL to
 * FILE (stdout without `--out`). Composition errors go to stderr, one line per
 * position (`schema/reviews.graphql:6:10: [reviews] CODE message`); exit 1.
 *
 * @module
 */
import { relative } from "node:path";
import {
  composeSupergraph,
  type CompositionError,
  formatCompositionError,
} from "../compose/mod.ts";
import { loadConfig, resolveConfigPath } from "../config/mod.ts";
import { RouterError } from "../errors.ts";
import type { CommandOptions } from "./types.ts";

/** Parsed `compose` arguments. */
interface ComposeArgs {
  readonly config: string | undefined;
  readonly out: string | null;
}

function parseArgs(args: readonly string[]): ComposeArgs | string {
  let config: string | undefined;
  let out: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] = arg.startsWith("--") && arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined];
    if (flag !== "--config" && flag !== "--out") return `Unknown argument "${arg}"`;
    const value = inline ?? args[++i];
    if (value === undefined || value === "") return `Missing value after "${flag}"`;
    if (flag === "--config") config = value;
    else out = value;
  }
  return { config, out };
}

function printError(error: CompositionError, files: ReadonlyMap<string, string>): void {
  if (error.locations.length === 0) {
    console.error(formatCompositionError(error));
    return;
  }
  for (const location of error.locations) {
    const file = files.get(location.subgraph) ?? location.subgraph;
    console.error(
      `${file}:${location.line}:${location.column}: [${location.subgraph}] ${error.code} ${error.message}`,
    );
  }
}

/**
 * Runs `compose`.
 * @param args Command-line arguments after the subcommand.
 * @param _options Shared options.
 * @returns The exit code: 0 composed, 1 composition or input error, 2 usage error.
 */
export async function composeCommand(args: string[], _options: CommandOptions): Promise<number> {
  const parsed = parseArgs(args);
  if (typeof parsed === "string") {
    console.error(`compose: ${parsed}\nUsage: gw-router compose [--config FILE] [--out FILE]`);
    return 2;
  }
  const env = Deno.env.toObject();
  const configPath = resolveConfigPath(parsed.config, env);
  let subgraphs;
  try {
    // The whole config is validated (errors name the key path), but the files it
    // names are not required: the supergraph is what this command writes.
    subgraphs = (await loadConfig(configPath, { env, checkFiles: false })).subgraphs;
  } catch (error) {
    console.error(`compose: ${error instanceof RouterError ? error.message : String(error)}`);
    return 1;
  }
  if (subgraphs.length === 0) {
    console.error(
      `compose: ${configPath}: Cannot read "subgraphs": expected a non-empty list of {name, routing_url, schema_file}`,
    );
    return 1;
  }
  const files = new Map<string, string>();
  const inputs = [];
  for (const subgraph of subgraphs) {
    const file = relative(Deno.cwd(), subgraph.schema_file) || subgraph.schema_file;
    try {
      const sdl = await Deno.readTextFile(subgraph.schema_file);
      inputs.push({ name: subgraph.name, url: subgraph.routing_url, sdl });
    } catch (error) {
      const reason = error instanceof Deno.errors.NotFound ? "no such file" : String(error);
      console.error(`compose: [${subgraph.name}] Cannot read schema file "${file}": ${reason}`);
      return 1;
    }
    files.set(subgraph.name, file);
  }
  const outcome = composeSupergraph(inputs);
  if (!outcome.ok) {
    for (const error of outcome.errors) printError(error, files);
    console.error(`compose: ${outcome.errors.length} composition error(s)`);
    return 1;
  }
  const text = outcome.supergraphSdl.endsWith("\n")
    ? outcome.supergraphSdl
    : `${outcome.supergraphSdl}\n`;
  if (parsed.out === null) {
    await Deno.stdout.write(new TextEncoder().encode(text));
  } else {
    await Deno.writeTextFile(parsed.out, text);
    console.error(`compose: wrote ${parsed.out} (${inputs.length} subgraphs)`);
  }
  return 0;
}
