/**
 * The `config` command: `config validate [--config FILE]` checks a config file
 * the way `serve` reads it (env applied, the files it names) and lists every
 * problem; `config schema` prints the JSON Schema of the file.
 *
 * @module
 */
import { configJsonSchema, resolveConfigPath, validateConfigFile } from "../config/mod.ts";
import type { CommandOptions } from "./types.ts";

const USAGE =
  "usage: gw-router config validate [--config FILE] [--skip-files] | gw-router config schema";

/** True for a problem that is only a named file not there (yet). */
function notYet(problem: { readonly details: Readonly<Record<string, unknown>> }): boolean {
  return problem.details.notYet === true;
}

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
  let skipFiles = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "--skip-files") {
      skipFiles = true;
      continue;
    }
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
  const all = await validateConfigFile(path, env);
  const skipped = skipFiles ? all.filter(notYet) : [];
  const problems = skipFiles ? all.filter((problem) => !notYet(problem)) : all;
  const note = skipped.length === 0
    ? ""
    : ` (skipped ${skipped.length} file${skipped.length === 1 ? "" : "s"} not there yet: ${
      skipped.map((problem) => problem.details.path).join(", ")
    })`;
  if (problems.length === 0) {
    console.log(`${path}: ok${note}`);
    return 0;
  }
  console.error(`${path}: ${problems.length} problem${problems.length === 1 ? "" : "s"}${note}`);
  for (const problem of problems) {
    const tag = notYet(problem) ? " (not there yet)" : "";
    console.error(`- ${problem.message.replaceAll("\n", "\n  ")}${tag}`);
  }
  const missing = problems.filter(notYet).length;
  if (missing > 0) {
    console.error(
      missing === problems.length
        ? "Only files not there yet (a supergraph your pipeline writes, keys a host provides): rerun with --skip-files to check everything else."
        : `${missing} of them only files not there yet: --skip-files skips those.`,
    );
  }
  return 1;
}
