/**
 * The `config` command: `config validate [--config FILE]` checks a config file
 * the way `serve` reads it (env applied, the files it names) and lists every
 * problem; `config schema` prints the JSON Schema of the file.
 *
 * @module
 */
import { resolveConfigPath, validateConfigFile } from "../config/mod.ts";
import { configJsonSchema } from "../config/reference.ts";
import type { CommandOptions } from "./types.ts";

const USAGE = "usage: gw-router config validate [--config FILE] | gw-router config schema";

/**
 * Runs `config validate|schema`.
 * @param args Command-line arguments after `config`.
 * @param _options Shared options.
 * @returns The exit code: 0 valid, 1 problems found, 2 usage error.
 */
export async function configCommand(args: string[], _options: CommandOptions): Promise<number> {
  const [action, ...rest] = args;
  if (action === "schema" && rest.length === 0) {
    console.log(JSON.stringify(configJsonSchema(), null, 2));
    return 0;
  }
  if (action !== "validate") {
    console.error(`config: expected "validate" or "schema"; ${USAGE}`);
    return 2;
  }
  let flag: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "--config" || arg === "-c") flag = rest[++i];
    else if (arg.startsWith("--config=")) flag = arg.slice("--config=".length);
    else {
      console.error(`config validate: unknown argument "${arg}"; ${USAGE}`);
      return 2;
    }
    if (flag === undefined || flag === "") {
      console.error(`config validate: missing value after "${arg}"`);
      return 2;
    }
  }
  const env = Deno.env.toObject();
  const path = resolveConfigPath(flag, env);
  const problems = await validateConfigFile(path, env);
  if (problems.length === 0) {
    console.log(`${path}: ok`);
    return 0;
  }
  console.error(`${path}: ${problems.length} problem${problems.length === 1 ? "" : "s"}`);
  for (const problem of problems) console.error(`- ${problem.message.replaceAll("\n", "\n  ")}`);
  return 1;
}
