/**
 * `deno task docs:config`: rewrites `docs/configuration.md` and
 * `config.schema.json` from the config schema (`lib/config/_schema.ts`). Run
 * it after adding or changing a key; `tests/unit/config_reference_test.ts`
 * fails while either file is stale. `--check` only compares (exit 1 on drift).
 *
 * @module
 */
import { configJsonSchema, configReference } from "../lib/config/reference.ts";

/** The generated files: path (from the repository root) → content. */
export function generatedFiles(): Record<string, string> {
  return {
    "docs/configuration.md": configReference(),
    "config.schema.json": JSON.stringify(configJsonSchema(), null, 2) + "\n",
  };
}

async function main(args: string[]): Promise<number> {
  const root = new URL("../", import.meta.url);
  let stale = 0;
  for (const [path, text] of Object.entries(generatedFiles())) {
    const url = new URL(path, root);
    const current = await Deno.readTextFile(url).catch(() => "");
    if (current === text) continue;
    if (args.includes("--check")) {
      console.error(`${path} is stale: run "deno task docs:config"`);
      stale++;
    } else {
      await Deno.writeTextFile(url, text);
      console.log(`wrote ${path}`);
    }
  }
  return stale === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
