/**
 * Loading `plugins:` (issue 40): each entry's module is imported (a file path,
 * resolved against the config file's folder, or an `npm:`, `jsr:`, `https:`
 * or `file:` specifier), its default export checked to be a plugin, and its
 * `config` validated by the plugin's own `configSchema`. Anything wrong stops
 * the start (or the reload) with `CONFIG_INVALID` naming the entry.
 *
 * Modules are imported once per process: a changed plugin file needs a
 * restart; a changed `config` applies on reload.
 *
 * @module
 */
import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import type { AccessModel } from "../auth/mod.ts";
import { RouterError } from "../errors.ts";
import type { Logger } from "../log/mod.ts";
import { type HookName, type LoadedPlugin, type PluginEvents, PluginHost } from "./host.ts";
import type { ConfigSchema, Plugin, StandardSchema } from "./types.ts";

/** One `plugins:` entry. */
export interface PluginEntry {
  /** The module: a file path or a specifier. */
  readonly path: string;
  /** The plugin's config (checked by its `configSchema`). */
  readonly config: unknown;
  /** The time budget of each hook, ms. */
  readonly hook_timeout_ms: number;
}

/** Options for {@linkcode loadPlugins}. */
export interface LoadPluginsOptions {
  /** Where hook failures are logged. */
  readonly log: Logger;
  /** Imports a module (tests); default: dynamic `import()`. */
  readonly importModule?: (specifier: string) => Promise<unknown>;
  /** Built-in plugins run before the configured ones (the coprocessor). */
  readonly builtIn?: readonly LoadedPlugin[];
  /** The supergraph's API schema and access map (where `@policy` is read). */
  readonly supergraph?: AccessModel;
  /** Where hook outcomes are counted (metrics). */
  readonly events?: PluginEvents;
}

const HOOKS: readonly HookName[] = [
  "onRouterRequest",
  "onOperation",
  "onPlan",
  "onSubgraphRequest",
  "onSubgraphResponse",
  "onRouterResponse",
];

/** A specifier with a scheme (`npm:`, `jsr:`, `https:`, `file:`), imported as written. */
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * The import specifier of a `plugins[].path`: a specifier as written, an
 * absolute file path as a `file:` URL.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginSpecifier } from "./load.ts";
 * assert.equal(pluginSpecifier("npm:gw-plugin-audit@1"), "npm:gw-plugin-audit@1");
 * assert.equal(pluginSpecifier("/etc/gw/audit.ts"), "file:///etc/gw/audit.ts");
 * ```
 * @param path The configured path (file paths already resolved against the config's folder).
 * @returns The specifier.
 */
export function pluginSpecifier(path: string): string {
  if (SCHEME.test(path) && !/^[a-z]:[\\/]/i.test(path)) return path;
  return isAbsolute(path) ? pathToFileURL(path).href : path;
}

function invalid(index: number, key: string, message: string, cause?: unknown): RouterError {
  return new RouterError("CONFIG_INVALID", `plugins[${index}].${key}: ${message}`, {
    details: { path: `plugins[${index}].${key}` },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The problems a plugin's default export has (none: it is a plugin). */
function shapeProblems(value: unknown): string | null {
  if (typeof value !== "object" || value === null) {
    return "the module's default export is not a plugin object ({ name, on…() })";
  }
  const plugin = value as Record<string, unknown>;
  if (typeof plugin.name !== "string" || plugin.name === "") {
    return "the plugin has no name (a non-empty string)";
  }
  for (const hook of HOOKS) {
    if (plugin[hook] !== undefined && typeof plugin[hook] !== "function") {
      return `${hook} is not a function`;
    }
  }
  const schema = plugin.configSchema;
  if (schema !== undefined && typeof schema !== "function" && !isStandardSchema(schema)) {
    return "configSchema is neither a Standard Schema (~standard.validate) nor a function";
  }
  return null;
}

function isStandardSchema(value: unknown): value is StandardSchema<unknown> {
  const standard = (value as { "~standard"?: { validate?: unknown } } | null)?.["~standard"];
  return typeof standard?.validate === "function";
}

/**
 * A plugin's config checked by its `configSchema`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validatePluginConfig } from "./load.ts";
 * const schema = (config: unknown) => typeof config === "object" ? null : "expected a mapping";
 * assert.deepEqual(await validatePluginConfig(schema, { a: 1 }), { ok: true, value: { a: 1 } });
 * assert.deepEqual(await validatePluginConfig(schema, 3), { ok: false, problems: ["expected a mapping"] });
 * ```
 * @param schema The plugin's `configSchema` (absent: anything goes).
 * @param config The configured value.
 * @returns The config hooks get, or the problems.
 */
export async function validatePluginConfig(
  schema: ConfigSchema<unknown> | undefined,
  config: unknown,
): Promise<
  { readonly ok: true; readonly value: unknown } | {
    readonly ok: false;
    readonly problems: readonly string[];
  }
> {
  if (schema === undefined) return { ok: true, value: config };
  if (typeof schema === "function") {
    const problems = schema(config);
    const list = problems == null ? [] : typeof problems === "string" ? [problems] : problems;
    return list.length === 0 ? { ok: true, value: config } : { ok: false, problems: list };
  }
  const result = await schema["~standard"].validate(config);
  if (result.issues === undefined) return { ok: true, value: result.value };
  return {
    ok: false,
    problems: result.issues.map((issue) =>
      issue.path && issue.path.length > 0
        ? `${
          issue.path.map((p) =>
            typeof p === "object" && p !== null && "key" in p
              ? String((p as { key: unknown }).key)
              : String(p)
          ).join(".")
        }: ${issue.message}`
        : issue.message
    ),
  };
}

/**
 * Loads the configured plugins, in order.
 * @param entries `plugins:`.
 * @param options Logger (and a module importer, for tests).
 * @returns The host, or null without plugins (then no stage costs anything).
 * @throws {RouterError} `CONFIG_INVALID` naming the entry that cannot be loaded.
 */
export async function loadPlugins(
  entries: readonly PluginEntry[],
  options: LoadPluginsOptions,
): Promise<PluginHost | null> {
  const builtIn = options.builtIn ?? [];
  if (entries.length === 0 && builtIn.length === 0) return null;
  const importModule = options.importModule ?? ((specifier: string) => import(specifier));
  const loaded: LoadedPlugin[] = [...builtIn];
  const names = new Set(builtIn.map((entry) => entry.plugin.name));
  for (const [index, entry] of entries.entries()) {
    let module: unknown;
    try {
      module = await importModule(pluginSpecifier(entry.path));
    } catch (error) {
      throw invalid(
        index,
        "path",
        `cannot load "${entry.path}": ${error instanceof Error ? error.message : String(error)}`,
        error,
      );
    }
    const plugin = (module as { default?: unknown } | null)?.default;
    const problem = shapeProblems(plugin);
    if (problem !== null) throw invalid(index, "path", `"${entry.path}": ${problem}`);
    const typed = plugin as Plugin<unknown>;
    if (names.has(typed.name)) {
      throw invalid(index, "path", `a second plugin named "${typed.name}"`);
    }
    names.add(typed.name);
    let checked;
    try {
      checked = await validatePluginConfig(typed.configSchema, entry.config);
    } catch (error) {
      throw invalid(index, "config", `the plugin "${typed.name}" could not check it`, error);
    }
    if (!checked.ok) {
      throw invalid(
        index,
        "config",
        `invalid for the plugin "${typed.name}": ${checked.problems.join("; ")}`,
      );
    }
    loaded.push({ plugin: typed, config: checked.value, timeoutMs: entry.hook_timeout_ms });
  }
  return new PluginHost(
    loaded,
    options.log,
    {
      ...(options.supergraph ? { supergraph: options.supergraph } : {}),
      ...(options.events ? { events: options.events } : {}),
    },
  );
}
