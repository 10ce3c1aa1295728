/**
 * `parseConfig`: raw YAML data + environment → validated, frozen {@linkcode Config}.
 * Pure: the environment and the config file's folder come in as options.
 *
 * Over 600 lines (607): one walk of the schema over the YAML and the
 * environment (a leaf read from either, with the same messages), the derived
 * values, freezing and the env-key listing share the walk's helpers; each is
 * small.
 *
 * @module
 */
import { isAbsolute, join } from "node:path";
import {
  fail,
  failListenAddr,
  isMapping,
  jwksLists,
  section,
  validate,
  validationRules,
} from "./_validate.ts";
import { RouterError } from "../errors.ts";
import { unknownKeyReason } from "./_unknown_key.ts";
import type { Config } from "./types.ts";
import { MAX_TIMER_DELAY_MS } from "../timers.ts";
import {
  ASYMMETRIC_ALGORITHMS,
  CONFIG_SCHEMA,
  type DurationNode,
  type Node,
  type ObjectNode,
  type SizeNode,
} from "./_schema.ts";
import {
  isWildcardHost,
  listenUrl,
  parseBoolean,
  parseDuration,
  parseListenAddr,
  parseSize,
  splitList,
  withScheme,
} from "./_values.ts";

/** Options for {@linkcode parseConfig}. */
export interface ParseConfigOptions {
  /**
   * Environment variables; each config leaf can be overridden by its key path
   * upper-cased and joined with `_` (`mcp.oauth.enabled` → `MCP_OAUTH_ENABLED`).
   * @default {{}}
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Folder relative file paths in the config are resolved against (the config
   * file's folder). Unset: paths are kept as written.
   */
  readonly baseDir?: string;
  /**
   * The machine's name: the host of the derived `mcp.server.base_url` when
   * `listen_addr` binds every interface (`0.0.0.0`, `[::]`).
   * @default {"localhost"}
   */
  readonly hostname?: string;
}

interface Context {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly baseDir: string | undefined;
  /** Key path → the env variable that set it (so later errors name the variable). */
  readonly fromEnv: Map<string, string>;
  /** Collect every problem here instead of throwing the first (`checkConfig`). */
  readonly problems?: RouterError[];
}

/** Runs `step`; when collecting, a config error is recorded and the walk goes on. */
function attempt<T>(context: Context, step: () => T): T | undefined {
  if (context.problems === undefined) return step();
  try {
    return step();
  } catch (error) {
    if (error instanceof RouterError) {
      context.problems.push(withEnvName(error, context.fromEnv));
      return undefined;
    }
    // A follow-on failure of a key already reported (its value is missing).
    if (context.problems.length > 0) return undefined;
    throw error;
  }
}

/** The error, its message naming the env variable when one set its key. */
function withEnvName(error: RouterError, fromEnv: ReadonlyMap<string, string>): RouterError {
  const details = (error.details ?? {}) as { path?: string; env?: string };
  const envName = details.path === undefined ? undefined : fromEnv.get(details.path);
  if (envName === undefined || details.env !== undefined) return error;
  const prefix = `Cannot read "${details.path}"`;
  const message = error.message.startsWith(prefix)
    ? `${prefix} (env ${envName})${error.message.slice(prefix.length)}`
    : `${error.message} (set by env ${envName})`;
  return new RouterError(error.code, message, {
    cause: error,
    details: { ...details, env: envName },
  });
}

type Raw = Record<string, unknown>;

/**
 * Reads, defaults and validates a configuration. Environment variables win
 * over YAML values. Every failure is a `RouterError` with code
 * `CONFIG_INVALID`, `details.path` the key path, and a message naming it.
 *
 * @example Defaults and an env override
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "./parse.ts";
 * const config = parseConfig({ dev_mode: true }, { env: { LISTEN_ADDR: "127.0.0.1:4000" } });
 * assert.equal(config.listen_addr, "127.0.0.1:4000");
 * assert.equal(config.playground.enabled, true);
 * assert.equal(config.mcp.server.base_url, "http://127.0.0.1:4000");
 * assert.ok(Object.isFrozen(config.mcp.oauth.scopes));
 * ```
 * @example A wrong type names the key
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "./parse.ts";
 * assert.throws(() => parseConfig({ mcp: { oauth: { scopes: { initialize: "a" } } } }), {
 *   code: "CONFIG_INVALID",
 *   message: 'Cannot read "mcp.oauth.scopes.initialize": expected a list of strings',
 * });
 * ```
 * @param raw The parsed YAML document (`undefined`/`null` for an empty file).
 * @param options Environment and base folder.
 * @returns The frozen configuration.
 * @throws {RouterError} `CONFIG_INVALID` naming the key path.
 */
export function parseConfig(raw: unknown, options: ParseConfigOptions = {}): Config {
  const context: Context = {
    env: options.env ?? {},
    baseDir: options.baseDir,
    fromEnv: new Map(),
  };
  const out = readObject(CONFIG_SCHEMA, raw, "", context, "");
  try {
    fillDerived(out, options.hostname);
    validate(out);
  } catch (error) {
    throw error instanceof RouterError ? withEnvName(error, context.fromEnv) : error;
  }
  // The walk makes what CONFIG_SCHEMA says; tests/unit/config_types_test.ts checks that
  // `Config` (types.ts) says the same, key by key.
  return deepFreeze(out) as unknown as Config;
}

/** What {@linkcode checkConfig} found. */
export interface ConfigCheck {
  /** The config, when there is no problem. */
  readonly config: Config | undefined;
  /** Every problem found (`CONFIG_INVALID` errors naming their keys), in key order. */
  readonly problems: readonly RouterError[];
}

/**
 * Like {@linkcode parseConfig}, but collects every problem instead of
 * throwing the first (what `gw-router config validate` prints). Cross-key rules
 * run each on their own, so one broken rule does not hide the next.
 *
 * @example Two problems at once
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkConfig } from "./parse.ts";
 * const check = checkConfig({ listen_address: "x", dev_mode: "yes" });
 * assert.equal(check.config, undefined);
 * assert.deepEqual(check.problems.map((p) => p.details?.path), ["listen_address", "dev_mode"]);
 * ```
 * @param raw The parsed YAML document.
 * @param options Environment and base folder.
 * @returns The config (when valid) and the problems.
 */
export function checkConfig(raw: unknown, options: ParseConfigOptions = {}): ConfigCheck {
  const problems: RouterError[] = [];
  const context: Context = {
    env: options.env ?? {},
    baseDir: options.baseDir,
    fromEnv: new Map(),
    problems,
  };
  const out = attempt(context, () => readObject(CONFIG_SCHEMA, raw, "", context, "")) ??
    readObject(CONFIG_SCHEMA, undefined, "", context, "");
  attempt(context, () => fillDerived(out, options.hostname));
  for (const rule of validationRules(out)) attempt(context, rule);
  const unique = problems.filter((problem, i) =>
    problems.findIndex((other) => other.message === problem.message) === i
  );
  return {
    config: problems.length === 0 ? deepFreeze(out) as unknown as Config : undefined,
    problems: unique,
  };
}

function joinPath(parent: string, key: string): string {
  return parent === "" ? key : `${parent}.${key}`;
}

function readObject(
  node: ObjectNode,
  raw: unknown,
  path: string,
  context: Context,
  envPrefix: string | null,
): Raw {
  const value = raw ?? {};
  if (!isMapping(value)) fail(path === "" ? "(root)" : path, "expected a mapping");
  const aliases = new Map<string, string>();
  for (const [key, child] of Object.entries(node.fields)) {
    if (child.kind === "duration" && key.endsWith("_ms")) aliases.set(key.slice(0, -3), key);
  }
  for (const key of Object.keys(value)) {
    if (!(key in node.fields) && !aliases.has(key)) {
      attempt(context, () =>
        fail(
          joinPath(path, key),
          unknownKeyReason(key, [...Object.keys(node.fields), ...aliases.keys()]),
        ));
    }
  }
  const out: Raw = {};
  for (const [key, child] of Object.entries(node.fields)) {
    const childPath = joinPath(path, key);
    const envName = envPrefix === null
      ? null
      : (envPrefix === "" ? "" : envPrefix + "_") + key.toUpperCase();
    let childRaw = value[key];
    let yamlPath = childPath;
    if (child.kind === "duration") {
      const alias = key.slice(0, -3);
      if (value[alias] !== undefined && value[key] !== undefined) {
        attempt(
          context,
          () =>
            fail(childPath, `set either "${joinPath(path, alias)}" or "${childPath}", not both`),
        );
        continue;
      }
      if (value[alias] !== undefined) {
        childRaw = value[alias];
        yamlPath = joinPath(path, alias);
      }
    }
    const reported = context.problems?.length ?? 0;
    let result = attempt(
      context,
      () => readNode(child, childRaw, { path: childPath, yamlPath }, context, envName),
    );
    // Collecting: a broken key reads as its default, so the cross-key rules still run.
    if ((context.problems?.length ?? 0) > reported && result === undefined) {
      result = fallback(child, childPath, context, envName);
    }
    if (result !== undefined) out[key] = result;
  }
  return out;
}

function fallback(node: Node, path: string, context: Context, envName: string | null): unknown {
  switch (node.kind) {
    case "object":
      return attempt(context, () => readObject(node, undefined, path, context, envName));
    case "array":
      return [];
    case "record":
      return {};
    case "value":
      return undefined;
    default:
      return "default" in node && Array.isArray(node.default) ? [...node.default] : node.default;
  }
}

interface Where {
  /** The canonical key path (what `details.path` carries). */
  readonly path: string;
  /** The key as written in YAML (differs for `refresh_interval` → `refresh_interval_ms`). */
  readonly yamlPath: string;
}

function readNode(
  node: Node,
  raw: unknown,
  where: Where,
  context: Context,
  envName: string | null,
): unknown {
  switch (node.kind) {
    case "object":
      return readObject(node, raw, where.path, context, envName);
    case "array": {
      if (raw === undefined || raw === null) return [];
      if (!Array.isArray(raw)) fail(where.path, "expected a list");
      return raw.map((item, i) =>
        readObject(node.item, item, `${where.path}[${i}]`, context, null)
      );
    }
    case "record": {
      if (raw === undefined || raw === null) return {};
      if (!isMapping(raw)) fail(where.path, "expected a mapping");
      const out: Raw = {};
      for (const [key, item] of Object.entries(raw)) {
        const path = `${where.path}.${key}`;
        out[key] = node.value.kind === "object"
          ? readObject(node.value, item, path, context, null)
          : readLeaf(
            node.value,
            item,
            { path, yamlPath: `${where.yamlPath}.${key}` },
            context,
            null,
          );
      }
      return out;
    }
    case "value":
      // A plugin's config: passed on as written (YAML only), checked by the plugin.
      return raw === undefined ? null : raw;
    default:
      return readLeaf(node, raw, where, context, envName);
  }
}

type LeafNode = Exclude<Node, { kind: "object" | "array" | "record" | "value" }>;

function envValue(
  node: LeafNode,
  context: Context,
  envName: string | null,
): { name: string; text: string } | undefined {
  if (envName === null) return undefined;
  const names = node.kind === "duration" && envName.endsWith("_MS")
    ? [envName, envName.slice(0, -3)]
    : [envName];
  for (const name of names) {
    const text = context.env[name];
    if (text === undefined) continue;
    // Empty means unset, except for plain strings and lists (where empty is a value).
    const derived = node.kind === "string" && node.derived === true;
    if (text === "" && (derived || (node.kind !== "string" && node.kind !== "list"))) continue;
    return { name, text };
  }
  return undefined;
}

function readLeaf(
  node: LeafNode,
  raw: unknown,
  where: Where,
  context: Context,
  envName: string | null,
): unknown {
  const fromEnv = envValue(node, context, envName);
  let value: unknown;
  if (fromEnv !== undefined) {
    context.fromEnv.set(where.path, fromEnv.name);
    value = readEnvLeaf(node, fromEnv.text, where.path, fromEnv.name);
  } else if (raw === undefined || raw === null) {
    if (node.kind === "string" && node.required) fail(where.path, "required, expected a string");
    if ("derived" in node && node.derived) return undefined;
    if ("optional" in node && node.optional) return undefined;
    value = "default" in node ? node.default : undefined;
    if (Array.isArray(value)) value = [...value];
  } else {
    value = readYamlLeaf(node, raw, where.yamlPath, where.path);
  }
  if (node.kind === "string" && node.file && typeof value === "string") {
    return resolveFile(value, context.baseDir);
  }
  if (node.kind === "list" && node.file && Array.isArray(value)) {
    return value.map((item) => resolveFile(String(item), context.baseDir));
  }
  return value;
}

function resolveFile(value: string, baseDir: string | undefined): string {
  if (value === "" || baseDir === undefined || isAbsolute(value)) return value;
  // A module specifier (`npm:x`, `jsr:@a/b`, `https://…`, `file:///…`) is not a path.
  if (/^[a-z][a-z0-9+.-]+:/i.test(value)) return value;
  return join(baseDir, value);
}

function expected(node: LeafNode): string {
  switch (node.kind) {
    case "string":
      return "expected a string";
    case "boolean":
      return "expected a boolean (true or false)";
    case "int":
      return `expected a whole number of at least ${node.min ?? 0}`;
    case "size":
      return `expected a size in bytes, like 1048576, 512KB or 5MB, of at most ${Number.MAX_SAFE_INTEGER} bytes${
        atLeast(node, "bytes")
      }`;
    case "duration":
      return `expected a duration, like 500ms, 30s or 1m, of at most ${MAX_TIMER_DELAY_MS} ms (about 24 days, the longest a timer holds)${
        atLeast(node, "ms")
      }`;
    case "ratio":
      return "expected a number from 0 to 1";
    case "list":
      return "expected a list of strings";
    case "enum":
      return `expected one of ${node.values.map((v) => `"${v}"`).join(", ")}`;
  }
}

/** `, and at least N unit` for a size or duration with a floor (0 would stop all traffic). */
function atLeast(node: SizeNode | DurationNode, unit: string): string {
  if (node.min === undefined || node.min <= 0) return "";
  return `, and at least ${node.min} ${node.min === 1 && unit === "bytes" ? "byte" : unit}`;
}

/** A size or duration at or above the node's floor, else undefined. */
function floored(node: SizeNode | DurationNode, value: number | undefined): number | undefined {
  return value !== undefined && value >= (node.min ?? 0) ? value : undefined;
}

/** A YAML value as an error quotes it (short). */
function shown(raw: unknown): string {
  const text = typeof raw === "string" ? JSON.stringify(raw) : JSON.stringify(raw) ?? String(raw);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function readYamlLeaf(node: LeafNode, raw: unknown, yamlPath: string, path: string): unknown {
  const bad = (): never => {
    // Name the key as the user wrote it (refresh_interval, not refresh_interval_ms);
    // details.path stays the key's own path.
    throw new RouterError("CONFIG_INVALID", `Cannot read "${yamlPath}": ${expected(node)}`, {
      details: yamlPath === path ? { path } : { path, written: yamlPath, got: shown(raw) },
    });
  };
  switch (node.kind) {
    case "string":
      return typeof raw === "string" ? raw : bad();
    case "boolean":
      return typeof raw === "boolean" ? raw : bad();
    case "int":
      return Number.isSafeInteger(raw) && (raw as number) >= (node.min ?? 0) ? raw : bad();
    case "size":
      if (Number.isSafeInteger(raw) && (raw as number) >= 0) {
        return floored(node, raw as number) ?? bad();
      }
      return floored(node, typeof raw === "string" ? parseSize(raw) : undefined) ?? bad();
    case "duration":
      if (Number.isSafeInteger(raw) && (raw as number) >= 0) {
        return (raw as number) <= MAX_TIMER_DELAY_MS
          ? floored(node, raw as number) ?? bad()
          : bad();
      }
      return floored(node, typeof raw === "string" ? parseDuration(raw) : undefined) ?? bad();
    case "ratio":
      return typeof raw === "number" && raw >= 0 && raw <= 1 ? raw : bad();
    case "list":
      if (node.scalar && typeof raw === "string") return [raw];
      return Array.isArray(raw) && raw.every((item) => typeof item === "string") ? [...raw] : bad();
    case "enum":
      return typeof raw === "string" && node.values.includes(raw) ? raw : bad();
  }
}

function readEnvLeaf(node: LeafNode, text: string, path: string, envName: string): unknown {
  const bad = (): never => fail(path, `${expected(node)}, got "${text}"`, envName);
  switch (node.kind) {
    case "string":
      return text;
    case "boolean":
      return parseBoolean(text) ?? bad();
    case "int": {
      const value = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
      return Number.isSafeInteger(value) && value >= (node.min ?? 0) ? value : bad();
    }
    case "size":
      return floored(node, parseSize(text)) ?? bad();
    case "duration":
      return floored(node, parseDuration(text)) ?? bad();
    case "ratio": {
      const value = /^\s*\d+(\.\d+)?\s*$/.test(text) ? Number(text) : NaN;
      return value >= 0 && value <= 1 ? value : bad();
    }
    case "list":
      return splitList(text);
    case "enum":
      return node.values.includes(text.trim()) ? text.trim() : bad();
  }
}

function fillDerived(out: Raw, hostname: string | undefined): void {
  const playground = section(out, "playground");
  if (playground.enabled === undefined) playground.enabled = out.dev_mode;
  const introspection = section(out, "introspection");
  if (introspection.enabled === undefined) introspection.enabled = out.dev_mode;
  const mcp = section(out, "mcp");
  if (mcp.expose_schema === undefined) mcp.expose_schema = introspection.enabled;
  const accessLogs = section(out, "access_logs");
  if (accessLogs.enabled === undefined) accessLogs.enabled = !out.dev_mode;
  const server = section(out, "mcp", "server");
  if (server.base_url === undefined) {
    const address = parseListenAddr(String(out.listen_addr));
    if (address === undefined) failListenAddr(String(out.listen_addr));
    // HTTPS when the listener serves TLS: OAuth metadata and tool links name the URL clients use.
    const secure = String(section(out, "tls", "server").cert_file) !== "";
    server.base_url = withScheme(listenUrl(address, hostname), secure);
  }
  for (const [, sources] of jwksLists(out)) {
    sources.forEach((source) => {
      if ((source.algorithms as string[]).length > 0) return;
      const symmetric = source.symmetric_algorithm;
      // A secret without symmetric_algorithm keeps [] and fails in validateJwks.
      if (source.secret !== undefined && typeof symmetric === "string") {
        source.algorithms = [symmetric];
      } else if (source.secret === undefined) {
        source.algorithms = [...ASYMMETRIC_ALGORITHMS];
      }
    });
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** One environment-settable key. */
export interface ConfigEnvKey {
  /** Key path (`mcp.oauth.scopes.initialize`). */
  readonly path: string;
  /** Environment variable (`MCP_OAUTH_SCOPES_INITIALIZE`). */
  readonly env: string;
  /** Leaf kind: string, boolean, int, size, duration, list or enum. */
  readonly kind: string;
}

/**
 * Lists every key that an environment variable can set (all leaves outside
 * lists of objects), in schema order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { configEnvKeys } from "./parse.ts";
 * const keys = configEnvKeys();
 * assert.ok(keys.some((k) => k.path === "mcp.server.base_url" && k.env === "MCP_SERVER_BASE_URL"));
 * ```
 * @returns The keys with their env names.
 */
export function configEnvKeys(): ConfigEnvKey[] {
  const keys: ConfigEnvKey[] = [];
  function walk(node: ObjectNode, path: string): void {
    for (const [key, child] of Object.entries(node.fields)) {
      const childPath = joinPath(path, key);
      if (child.kind === "object") walk(child, childPath);
      else if (child.kind !== "array" && child.kind !== "record" && child.kind !== "value") {
        keys.push({
          path: childPath,
          env: childPath.toUpperCase().replaceAll(".", "_"),
          kind: child.kind,
        });
      }
    }
  }
  walk(CONFIG_SCHEMA, "");
  return keys;
}

/**
 * Returns the config with the port the listener actually got (after binding
 * port 0); `mcp.server.base_url` follows when it was the derived default.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig, withBoundPort } from "./parse.ts";
 * const config = withBoundPort(parseConfig({ listen_addr: "127.0.0.1:0" }), 4123);
 * assert.equal(config.listen_addr, "127.0.0.1:4123");
 * assert.equal(config.mcp.server.base_url, "http://127.0.0.1:4123");
 * ```
 * @param config The configuration.
 * @param port The bound port.
 * @returns The same config when nothing changes, else an updated frozen copy.
 */
export function withBoundPort(config: Config, port: number): Config {
  const address = parseListenAddr(config.listen_addr);
  if (address === undefined || address.port === port) return config;
  const host = config.listen_addr.slice(0, config.listen_addr.lastIndexOf(":"));
  const base = new URL(config.mcp.server.base_url);
  // The derived default (`http://<listen host or machine name>:<port>`) follows the bound port.
  const derived = base.pathname === "/" && base.port === String(address.port) &&
    (config.mcp.server.base_url ===
        withScheme(listenUrl(address), config.tls.server.cert_file !== "") ||
      isWildcardHost(address.hostname));
  if (derived) base.port = String(port);
  const baseUrl = derived ? base.href.replace(/\/$/, "") : config.mcp.server.base_url;
  return deepFreeze({
    ...config,
    listen_addr: `${host}:${port}`,
    mcp: { ...config.mcp, server: { ...config.mcp.server, base_url: baseUrl } },
  });
}
