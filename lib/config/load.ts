/**
 * The I/O edge of configuration: read the YAML file, parse it, check that the
 * files it names exist.
 *
 * @module
 */
import { dirname, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { RouterError } from "../errors.ts";
import { checkConfig, parseConfig } from "./parse.ts";
import type { Config } from "./types.ts";

/** Options for {@linkcode loadConfig}. */
export interface LoadConfigOptions {
  /**
   * Environment variables (overrides and `CONFIG_PATH`).
   * @default {{}}
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Check that the files the config names exist (`compose` turns it off: it
   * writes the supergraph).
   * @default {true}
   */
  readonly checkFiles?: boolean;
}

/** The config file used when neither `--config` nor `CONFIG_PATH` is given. */
export const DEFAULT_CONFIG_PATH = "config.yaml";

/**
 * Picks the config file: the `--config` value, else env `CONFIG_PATH`, else
 * `config.yaml`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveConfigPath } from "./load.ts";
 * assert.equal(resolveConfigPath(undefined, { CONFIG_PATH: "prod.yaml" }), "prod.yaml");
 * assert.equal(resolveConfigPath("dev.yaml", { CONFIG_PATH: "prod.yaml" }), "dev.yaml");
 * assert.equal(resolveConfigPath(undefined, {}), "config.yaml");
 * ```
 * @param flag The `--config` value, if any.
 * @param env Environment variables.
 * @returns The path to read.
 */
export function resolveConfigPath(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  return flag || env.CONFIG_PATH || DEFAULT_CONFIG_PATH;
}

/**
 * Parses YAML text into the raw document for {@linkcode parseConfig}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfigYaml } from "./load.ts";
 * assert.deepEqual(parseConfigYaml("dev_mode: true\n", "config.yaml"), { dev_mode: true });
 * assert.throws(() => parseConfigYaml("a: [", "config.yaml"), { code: "CONFIG_INVALID" });
 * // The message keeps the parser's code frame (the line and a caret under the error).
 * assert.throws(() => parseConfigYaml("a: 1\nb: [c\n", "x.yaml"), /\n.*\^/);
 * // A line indented by mistake is named, not the key before it.
 * assert.throws(() => parseConfigYaml("dev_mode: true\n  listen_addr: x\n", "x.yaml"), /x\.yaml:2:14/);
 * ```
 * @param text YAML text.
 * @param file The file name, for messages.
 * @returns The raw document.
 * @throws {RouterError} `CONFIG_INVALID` on a YAML syntax error.
 */
export function parseConfigYaml(text: string, file: string): unknown {
  try {
    return parseYaml(text, { prettyErrors: true });
  } catch (error) {
    const found = (error as { linePos?: [{ line: number; col: number }] }).linePos?.[0];
    const moved = found === undefined ? null : offendingColon(text, error, found);
    const position = moved ?? found;
    const at = position ? `:${position.line}:${position.col}` : "";
    // The yaml package's message: a first line, then a code frame pointing at the error.
    const message = moved === null
      ? String((error as Error).message).trimEnd()
      : `${firstLine((error as Error).message)} at line ${moved.line}, column ${moved.col}:\n\n${
        text.split("\n")[moved.line - 1]
      }\n${" ".repeat(moved.col - 1)}^`;
    throw new RouterError("CONFIG_INVALID", `Cannot parse "${file}${at}": ${message}`, {
      cause: error,
      details: { path: "", file, ...(position ? { line: position.line } : {}) },
    });
  }
}

function firstLine(message: string): string {
  return message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
}

/**
 * Where a "block as implicit key" error really is. The yaml package points at
 * the start of the value a stray `key: value` continued (`dev_mode: true` on
 * line 1 when line 2 is indented by mistake); the mistake is the next `: ` —
 * on the line the user indented. Null when that is the line already named.
 */
function offendingColon(
  text: string,
  error: unknown,
  found: { line: number; col: number },
): { line: number; col: number } | null {
  const { code, pos } = error as { code?: string; pos?: [number, number] };
  if (code !== "BLOCK_AS_IMPLICIT_KEY" || pos === undefined) return null;
  const colon = /:(?=[ \t]|\r?\n|$)/g;
  colon.lastIndex = pos[0];
  const match = colon.exec(text);
  if (match === null) return null;
  const before = text.slice(0, match.index);
  const line = before.split("\n").length;
  if (line === found.line) return null;
  return { line, col: match.index - before.lastIndexOf("\n") };
}

/**
 * Reads and validates the config file, then checks that the files it names
 * exist (`supergraph_path`, `engine.request_tracing_public_key_file`, JWKS
 * `file` sources). Relative paths in the file are resolved against its folder.
 *
 * @param path The config file path (see {@linkcode resolveConfigPath}).
 * @param options Environment variables; whether to check the files.
 * @returns The frozen configuration.
 * @throws {RouterError} `CONFIG_INVALID`; `details.path` is the key path, or
 * `"CONFIG_PATH"` when the config file itself cannot be read.
 */
export async function loadConfig(path: string, options: LoadConfigOptions = {}): Promise<Config> {
  const env = options.env ?? {};
  const text = await readConfigText(path);
  const hostname = machineName();
  const config = parseConfig(parseConfigYaml(text, path), {
    env,
    baseDir: dirname(resolve(path)),
    ...(hostname === undefined ? {} : { hostname }),
  });
  if (options.checkFiles ?? true) await checkFiles(config);
  return config;
}

/** The machine's name (the advertised host for `0.0.0.0`), or undefined when unknown. */
export function machineName(): string | undefined {
  try {
    return Deno.hostname() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks a config file the way `serve` reads it, but lists every problem:
 * the file, its YAML, each key (env applied), the cross-key rules and the files
 * it names (`gw-router config validate`).
 *
 * @param path The config file.
 * @param env Environment variables (overrides).
 * @returns Every problem (empty when the file is valid).
 */
export async function validateConfigFile(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<RouterError[]> {
  let raw: unknown;
  try {
    raw = parseConfigYaml(await readConfigText(path), path);
  } catch (error) {
    if (error instanceof RouterError) return [error];
    throw error;
  }
  const hostname = machineName();
  const check = checkConfig(raw, {
    env,
    baseDir: dirname(resolve(path)),
    ...(hostname === undefined ? {} : { hostname }),
  });
  if (check.config === undefined) return [...check.problems];
  return await missingFiles(check.config);
}

async function readConfigText(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    const reason = error instanceof Deno.errors.NotFound
      ? "no such file"
      : (error as Error).message;
    throw new RouterError("CONFIG_INVALID", `Cannot read config file "${path}": ${reason}`, {
      cause: error,
      details: { path: "CONFIG_PATH", file: path },
    });
  }
}

/**
 * Checks that the files a config names exist (what {@linkcode loadConfig} does
 * after parsing; also used for configs built in code).
 * @param config The configuration.
 * @returns Nothing; throws on the first missing file.
 * @throws {RouterError} `CONFIG_INVALID` naming the key path and the file.
 */
export async function checkFiles(config: Config): Promise<void> {
  const [first] = await missingFiles(config);
  if (first !== undefined) throw first;
}

async function missingFiles(config: Config): Promise<RouterError[]> {
  // From a registry, supergraph_path only keeps the last good one: it may not exist yet.
  const files: [string, string][] = config.supergraph_source.kind === "file"
    ? [["supergraph_path", config.supergraph_path]]
    : [];
  if (config.engine.request_tracing_public_key_file !== "") {
    files.push([
      "engine.request_tracing_public_key_file",
      config.engine.request_tracing_public_key_file,
    ]);
  }
  config.authentication.jwt.jwks.forEach((source, i) => {
    if (source.file !== undefined) files.push([`authentication.jwt.jwks[${i}].file`, source.file]);
  });
  config.mcp.oauth.jwks.forEach((source, i) => {
    if (source.file !== undefined) files.push([`mcp.oauth.jwks[${i}].file`, source.file]);
  });
  for (const name of ["cert_file", "key_file", "client_ca_file"] as const) {
    const file = config.tls.server[name];
    if (file !== "") files.push([`tls.server.${name}`, file]);
  }
  for (const [subgraph, tls] of Object.entries(config.tls.subgraphs)) {
    for (const name of ["ca_file", "cert_file", "key_file"] as const) {
      if (tls[name] !== "") files.push([`tls.subgraphs.${subgraph}.${name}`, tls[name]]);
    }
  }
  const problems: RouterError[] = [];
  for (const [key, file] of files) {
    try {
      const info = await Deno.stat(file);
      if (!info.isFile) throw new Error("not a file");
    } catch (error) {
      const reason = error instanceof Deno.errors.NotFound
        ? "no such file"
        : (error as Error).message;
      problems.push(
        new RouterError("CONFIG_INVALID", `Cannot read "${key}": file "${file}": ${reason}`, {
          cause: error,
          // `notYet`: the file is only not there (yet): `config validate --skip-files` skips it.
          details: { path: key, file, notYet: error instanceof Deno.errors.NotFound },
        }),
      );
    }
  }
  return problems;
}
