/**
 * The configuration schema (`_schema.ts`) rendered for people and editors:
 * {@linkcode configJsonSchema} (the JSON Schema `config.schema.json` and
 * `gw-router config schema` print) and {@linkcode configReference} (the
 * Markdown of `docs/configuration.md`). Pure; `deno task docs:config` writes
 * both files, and a test fails when they drift from the schema.
 *
 * @module
 */
import { CONFIG_SCHEMA, type Node, type ObjectNode } from "./_schema.ts";
import { MAX_TIMER_DELAY_MS } from "../timers.ts";

type Json = Record<string, unknown>;

/** One documented key: a leaf, or a list/mapping of objects. */
export interface ConfigKey {
  /** The key path (`mcp.oauth.enabled`; `[]` marks list items, `<name>` free keys). */
  readonly path: string;
  /** The node. */
  readonly node: Node;
  /** The env variable, or undefined inside lists of objects and free mappings. */
  readonly env: string | undefined;
}

/**
 * Every key of the schema in order, sections included (`object` nodes are
 * listed too, so every description is reachable).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { configKeys } from "./reference.ts";
 * const key = configKeys().find((k) => k.path === "listen_addr");
 * assert.equal(key?.env, "LISTEN_ADDR");
 * assert.equal(configKeys().find((k) => k.path === "subgraphs[].name")?.env, undefined);
 * ```
 * @returns The keys.
 */
export function configKeys(): ConfigKey[] {
  const keys: ConfigKey[] = [];
  function walk(node: ObjectNode, prefix: string, envOk: boolean): void {
    for (const [name, child] of Object.entries(node.fields)) {
      const path = prefix === "" ? name : `${prefix}.${name}`;
      const env = envOk && child.kind !== "array" && child.kind !== "record"
        ? path.toUpperCase().replaceAll(".", "_")
        : undefined;
      keys.push({ path, node: child, env: child.kind === "object" ? undefined : env });
      if (child.kind === "object") walk(child, path, envOk);
      else if (child.kind === "array") walk(child.item, `${path}[]`, false);
      else if (child.kind === "record" && child.value.kind === "object") {
        walk(child.value, `${path}.<name>`, false);
      }
    }
  }
  walk(CONFIG_SCHEMA, "", true);
  return keys;
}

const SIZE_PATTERN = "^\\s*\\d+(\\.\\d+)?\\s*([KMG]i?B|B)?\\s*$";
const DURATION_PATTERN = "^\\s*\\d+(\\.\\d+)?\\s*(ms|s|m|h)\\s*$";

function leafSchema(node: Node): Json {
  switch (node.kind) {
    case "string":
      return { type: "string", ...(node.default !== undefined ? { default: node.default } : {}) };
    case "boolean":
      return { type: "boolean", default: node.default };
    case "int":
      return { type: "integer", minimum: node.min ?? 0, default: node.default };
    case "size":
      return {
        anyOf: [
          { type: "integer", minimum: node.min ?? 0 },
          { type: "string", pattern: SIZE_PATTERN },
        ],
        default: node.default,
      };
    case "duration":
      return {
        anyOf: [
          { type: "integer", minimum: node.min ?? 0, maximum: MAX_TIMER_DELAY_MS },
          { type: "string", pattern: DURATION_PATTERN },
        ],
        default: node.default,
      };
    case "ratio":
      return { type: "number", minimum: 0, maximum: 1, default: node.default };
    case "list": {
      const list = { type: "array", items: { type: "string" }, default: [...node.default] };
      return node.scalar ? { anyOf: [{ type: "string" }, list], default: list.default } : list;
    }
    case "enum":
      return {
        enum: [...node.values],
        ...(node.default !== undefined ? { default: node.default } : {}),
      };
    default:
      return {};
  }
}

function nodeSchema(node: Node): Json {
  const described = (schema: Json): Json =>
    node.description === undefined ? schema : { description: node.description, ...schema };
  switch (node.kind) {
    case "object":
      return described(objectSchema(node));
    case "array":
      return described({ type: "array", items: objectSchema(node.item), default: [] });
    case "record":
      return described({
        type: "object",
        additionalProperties: node.value.kind === "object"
          ? objectSchema(node.value)
          : leafSchema(node.value),
        default: {},
      });
    default:
      return described(leafSchema(node));
  }
}

function objectSchema(node: ObjectNode): Json {
  const properties: Json = {};
  const required: string[] = [];
  for (const [name, child] of Object.entries(node.fields)) {
    properties[name] = nodeSchema(child);
    if (child.kind === "string" && child.required) required.push(name);
    // A duration `x_ms` is also written `x` with a unit (`30s`).
    if (child.kind === "duration" && name.endsWith("_ms")) {
      properties[name.slice(0, -3)] = {
        description: `${name} with a unit: 500ms, 30s, 1m, 1h.`,
        type: "string",
        pattern: DURATION_PATTERN,
      };
    }
  }
  return {
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/**
 * The JSON Schema (draft 2020-12) of the config file, for editors
 * (`# yaml-language-server: $schema=./config.schema.json`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { configJsonSchema } from "./reference.ts";
 * const schema = configJsonSchema() as { properties: Record<string, { default?: unknown }> };
 * assert.equal(schema.properties.listen_addr?.default, "localhost:3002");
 * ```
 * @returns The schema as a JSON value.
 */
export function configJsonSchema(): Json {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://github.com/gw-router/gw-router/config.schema.json",
    title: "GW Router configuration",
    description:
      "The config file of GW Router (config.yaml). Generated from lib/config/_schema.ts by `deno task docs:config`; do not edit.",
    ...objectSchema(CONFIG_SCHEMA),
  };
}

function kindText(node: Node): string {
  switch (node.kind) {
    case "string":
      return node.file ? "string (a file path, relative to the config file)" : "string";
    case "boolean":
      return "boolean";
    case "int":
      return `integer (≥ ${node.min ?? 0})`;
    case "size":
      return `size (bytes, or 512KB, 5MB, 1MiB${node.min ? `; ≥ ${node.min}` : ""})`;
    case "duration":
      return `duration (ms, or 500ms, 30s, 1m, 1h${node.min ? `; ≥ ${node.min} ms` : ""})`;
    case "ratio":
      return "number from 0 to 1";
    case "list":
      return node.scalar ? "list of strings (or one string)" : "list of strings";
    case "enum":
      return `one of ${node.values.map((v) => `\`${v}\``).join(", ")}`;
    case "object":
      return "section";
    case "array":
      return "list of objects";
    case "record":
      return node.value.kind === "object"
        ? "mapping of name → object"
        : "mapping of name → boolean";
  }
}

function defaultText(node: Node): string | undefined {
  switch (node.kind) {
    case "object":
    case "array":
    case "record":
      return undefined;
    case "string":
      if (node.derived) return "derived (see the description)";
      if (node.optional || node.required) return node.required ? "required" : "unset";
      return `\`${JSON.stringify(node.default)}\``;
    case "boolean":
      return node.derived ? "derived (see the description)" : `\`${node.default}\``;
    case "enum":
      return node.default === undefined ? "unset" : `\`${node.default}\``;
    case "list":
      return node.default.length === 0 ? "`[]`" : `\`${JSON.stringify(node.default)}\``;
    default:
      return `\`${node.default}\``;
  }
}

/**
 * The Markdown of `docs/configuration.md`: one entry per key (type, default,
 * env variable, description), sections as headings, no wide tables.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { configReference } from "./reference.ts";
 * assert.match(configReference(), /### `listen_addr`\n/);
 * assert.match(configReference(), /- env: `LISTEN_ADDR`/);
 * ```
 * @returns The page.
 */
export function configReference(): string {
  const lines = [
    "# Configuration reference",
    "",
    "<!-- Generated from lib/config/_schema.ts by `deno task docs:config`; do not edit by hand. -->",
    "",
    "The router reads one YAML file: `--config FILE`, else the `CONFIG_PATH` environment variable,",
    "else `./config.yaml`. Every key outside lists of objects can also be set by an environment",
    "variable, its path upper-cased with `_` (`mcp.oauth.enabled` → `MCP_OAUTH_ENABLED`); the",
    "environment wins over the file. Lists take commas or spaces in the environment. Relative file",
    "paths are resolved against the config file's folder. A duration key `x_ms` is also written `x`",
    "with a unit (`request_timeout: 30s`). Unknown keys are refused, with a suggestion.",
    "",
    "Check a file without starting the router: `gw-router config validate --config FILE` (every",
    "problem, env applied). Editors complete and check keys with the JSON Schema",
    "[`config.schema.json`](../config.schema.json) (`gw-router config schema` prints it).",
    "",
  ];
  const keys = configKeys();
  const topLeaves = keys.filter((k) => !k.path.includes(".") && k.node.kind !== "object");
  const sections = keys.filter((k) => !k.path.includes(".") && k.node.kind === "object");
  lines.push("Contents:", "", "- [Top-level keys](#top-level-keys)");
  for (const section of sections) lines.push(`- [\`${section.path}\`](#${anchor(section.path)})`);
  lines.push("", "## Top-level keys", "");
  const ordered = [
    ...topLeaves,
    ...keys.filter((k) => k.path.includes(".") || k.node.kind === "object"),
  ];
  for (const key of ordered) {
    const depth = key.path.split(".").length;
    if (key.node.kind === "object") {
      lines.push(`${depth === 1 ? "##" : "###"} \`${key.path}\``, "");
      if (key.node.description) lines.push(...wrap(key.node.description), "");
      continue;
    }
    lines.push(`### \`${key.path}\``, "");
    if (key.node.description) lines.push(...wrap(key.node.description), "");
    lines.push(`- type: ${kindText(key.node)}`);
    const fallback = defaultText(key.node);
    if (fallback !== undefined) lines.push(`- default: ${fallback}`);
    if (key.env !== undefined) {
      const alias = key.node.kind === "duration" && key.env.endsWith("_MS")
        ? ` (or \`${key.env.slice(0, -3)}\` with a unit)`
        : "";
      lines.push(`- env: \`${key.env}\`${alias}`);
    }
    lines.push("");
  }
  return lines.join("\n").replace(/\n+$/, "\n");
}

/** Splits prose into lines of at most 100 characters (words kept whole). */
function wrap(text: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > 100) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines;
}

function anchor(path: string): string {
  return path.toLowerCase().replace(/[^a-z0-9_ -]/g, "").replaceAll(" ", "-");
}
