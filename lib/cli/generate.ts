/**
 * The `generate` subcommand: `generate proto [--config FILE] --out DIR` writes
 * `<DIR>/<package as path>/service.proto` and its lock
 * (`service.proto.lock.json`, read back on the next run so field numbers stay);
 * `generate openapi [--config FILE] --out FILE` writes the OpenAPI 3.1
 * document (JSON, or YAML when FILE ends in `.yaml`/`.yml`). The generators
 * are pure (`lib/connect/`); this file does the I/O.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { stringify as stringifyYaml } from "yaml";
import {
  listenUrl,
  loadConfig,
  parseListenAddr,
  resolveConfigPath,
  withScheme,
} from "../config/mod.ts";
import type { Config } from "../config/mod.ts";
import {
  buildContractModel,
  type ContractModel,
  generateOpenApi,
  generateProto,
  parseProtoLock,
  PROTO_LOCK_FILE,
  type ProtoLock,
} from "../connect/mod.ts";
import { buildOperationRegistry } from "../operations/mod.ts";
import { buildSupergraph } from "../supergraph/mod.ts";
import type { CommandOptions } from "./types.ts";
import { readOperationFiles } from "./serve.ts";

const USAGE = `Usage:
  gw-router generate proto [--config FILE] --out DIR
  gw-router generate openapi [--config FILE] --out FILE`;

/** Parsed `generate` arguments. */
export interface GenerateArgs {
  readonly target: "proto" | "openapi";
  /** `--config`, or undefined (then `CONFIG_PATH`, then `config.yaml`). */
  readonly config: string | undefined;
  readonly out: string;
}

/**
 * Parses `generate` arguments (`--flag value` or `--flag=value`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseGenerateArgs } from "./generate.ts";
 * assert.deepEqual(parseGenerateArgs(["proto", "--out=gen"]), { target: "proto", config: undefined, out: "gen" });
 * assert.throws(() => parseGenerateArgs(["proto"]), /--out/);
 * ```
 * @param args Arguments after `generate`.
 * @returns The parsed arguments.
 * @throws {TypeError} On a missing target or `--out`, or an unknown flag.
 */
export function parseGenerateArgs(args: readonly string[]): GenerateArgs {
  const [target, ...rest] = args;
  if (target !== "proto" && target !== "openapi") {
    throw new TypeError(
      `Expected "proto" or "openapi" after "generate", got ${JSON.stringify(target ?? "")}`,
    );
  }
  const flags: Record<string, string> = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const match = /^--(config|out)(?:=(.*))?$/.exec(arg);
    if (match === null) throw new TypeError(`Unknown argument "${arg}"`);
    const value = match[2] ?? rest[++i];
    if (value === undefined || value === "") throw new TypeError(`Missing value of --${match[1]}`);
    flags[match[1]!] = value;
  }
  if (flags.out === undefined) {
    throw new TypeError(`Missing --out ${target === "proto" ? "DIR" : "FILE"}`);
  }
  return { target, config: flags.config, out: flags.out };
}

async function loadContract(config: Config): Promise<ContractModel> {
  const sdl = await Deno.readTextFile(config.supergraph_path);
  const supergraph = buildSupergraph(sdl);
  const files = await readOperationFiles(config.operations_dir);
  const registry = buildOperationRegistry(files, supergraph.apiSchema);
  for (const skipped of registry.skipped) {
    console.error(`warning: skipped ${skipped.path}: ${skipped.reason}`);
  }
  const contract = buildContractModel(supergraph.apiSchema, registry.operations);
  for (const skipped of contract.skipped) {
    console.error(`warning: no method for ${skipped.name}: ${skipped.reason}`);
  }
  return contract;
}

async function readLock(path: string): Promise<ProtoLock | null> {
  try {
    return parseProtoLock(await Deno.readTextFile(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw new Error(`Cannot read the lock "${path}": ${(error as Error).message}`);
  }
}

function serverUrl(config: Config): string {
  // listen_addr is validated by loadConfig.
  return withScheme(
    listenUrl(parseListenAddr(config.listen_addr)!),
    config.tls.server.cert_file !== "",
  );
}

/**
 * Runs `generate`.
 * @param args Command-line arguments after the subcommand.
 * @param options Shared options (the version goes into `info.version`).
 * @returns The exit code: 0, 1 on a failure, 2 on bad usage.
 */
export async function generateCommand(args: string[], options: CommandOptions): Promise<number> {
  let parsed: GenerateArgs;
  try {
    parsed = parseGenerateArgs(args);
  } catch (error) {
    console.error(`generate: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  try {
    const env = Deno.env.toObject();
    const config = await loadConfig(resolveConfigPath(parsed.config, env), { env });
    const contract = await loadContract(config);
    const { package: pkg, service } = config.connect_rpc;
    if (parsed.target === "proto") {
      const lockPath = join(parsed.out, ...pkg.split("."), PROTO_LOCK_FILE);
      const proto = generateProto(contract, {
        package: pkg,
        service,
        lock: await readLock(lockPath),
      });
      const protoPath = join(parsed.out, proto.path);
      await Deno.mkdir(dirname(protoPath), { recursive: true });
      await Deno.writeTextFile(protoPath, proto.text);
      await Deno.writeTextFile(lockPath, `${JSON.stringify(proto.lock, null, 2)}\n`);
      console.log(`Wrote ${protoPath} (${contract.methods.length} methods) and ${lockPath}`);
    } else {
      const document = generateOpenApi(contract, {
        package: pkg,
        service,
        version: options.version,
        serverUrl: serverUrl(config),
        bearerAuth: config.authentication.jwt.jwks.length > 0,
      });
      const text = /\.ya?ml$/i.test(parsed.out)
        ? stringifyYaml(document, { aliasDuplicateObjects: false })
        : `${JSON.stringify(document, null, 2)}\n`;
      const folder = dirname(parsed.out);
      if (folder !== "") await Deno.mkdir(folder, { recursive: true });
      await Deno.writeTextFile(parsed.out, text);
      console.log(`Wrote ${parsed.out} (${contract.methods.length} methods)`);
    }
    return 0;
  } catch (error) {
    console.error(`generate: ${(error as Error).message}`);
    return 1;
  }
}
