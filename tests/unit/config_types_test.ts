/**
 * Issue 40: the hand-written `Config` (`lib/config/types.ts`, where each key's
 * JSDoc lives) and the schema the reader walks (`lib/config/_schema.ts`) agree
 * both ways. From the schema this test writes one type assertion per object
 * and per key — the same keys, the same optional keys, the same value type
 * (mutual assignability) — and runs `deno check` on them: a key added to the
 * schema but not to the types (or the other way round, or with another type or
 * optionality) fails here, naming the key path. That check is what stands
 * behind `parse.ts`'s one `as unknown as Config`.
 *
 * What `parse.ts` makes of each node: an object, array, record and `value` are
 * always there (`value`: `unknown`); a leaf is there unless it is `optional`
 * (a `derived` one is filled after the walk); `string` → `string`, `boolean`,
 * `int` / `size` / `duration` / `ratio` → `number`, `list` → `readonly
 * string[]`, `enum` → the union of its values.
 */
import assert from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { CONFIG_SCHEMA, type Node, type ObjectNode } from "../../lib/config/_schema.ts";

const ROOT = new URL("../../", import.meta.url);

/**
 * How a path of `types.ts` may differ from the schema, on purpose:
 * - `narrowed`: the hand type is narrower than the schema can say, and a
 *   validator in `_validate.ts` enforces it: it must fit the schema's type
 *   (`Hand extends Schema`), with the same keys over its union members;
 * - `widened`: one hand type serves several schema objects: every schema key
 *   is a hand key, and what `parse.ts` makes fits it (`Schema extends Hand`);
 * - `optional`: the key is always filled by `parse.ts` but optional in the
 *   hand type, so code may build the value without it (its type still checked).
 */
type Refinement = "narrowed" | "widened" | "optional";

const COPROCESSOR_STAGES = ["router", "supergraph", "execution", "subgraph.all"].flatMap((stage) =>
  ["request", "response"].map((side) => `coprocessor.${stage}.${side}`)
);

/** The paths that differ on purpose (see {@linkcode Refinement}), each with why. */
const REFINED: Readonly<Record<string, Refinement>> = {
  // `HeaderRule` is a union by `op` (`propagate` / `set`); _validate.ts checks each rule's keys.
  "headers.all.request[]": "narrowed",
  "headers.all.response[]": "narrowed",
  "headers.subgraphs.*.request[]": "narrowed",
  "headers.subgraphs.*.response[]": "narrowed",
  // Response rules came later (issue 43): code and tests build `HeaderRules` without them.
  "headers.all.response": "optional",
  "headers.subgraphs.*.response": "optional",
  // One `CoprocessorStageConfig` for every stage; a stage lacks the switches Apollo's lacks.
  ...Object.fromEntries(COPROCESSOR_STAGES.map((path) => [path, "widened" as const])),
};

/** The TypeScript type `parse.ts` produces for a leaf. */
function leafType(node: Node): string {
  switch (node.kind) {
    case "string":
      return "string";
    case "boolean":
      return "boolean";
    case "int":
    case "size":
    case "duration":
    case "ratio":
      return "number";
    case "list":
      return "readonly string[]";
    case "enum":
      return node.values.map((value) => JSON.stringify(value)).join(" | ");
    case "value":
      return "unknown";
    default:
      throw new Error(`not a leaf: ${node.kind}`);
  }
}

/** Whether `parse.ts` may leave the key out. */
function isOptional(node: Node): boolean {
  return (node.kind === "string" || node.kind === "enum") && node.optional === true;
}

/** A union of string literals, or `never`. */
function keysType(keys: readonly string[]): string {
  return keys.length === 0 ? "never" : keys.map((key) => JSON.stringify(key)).join(" | ");
}

/**
 * The assertions for `schema`, against the type `root` (a type expression).
 *
 * @param schema The schema's root object.
 * @param refined Paths checked one way only (hand type fits the schema's).
 */
export function typeAssertions(
  schema: ObjectNode,
  refined: Readonly<Record<string, Refinement>> = REFINED,
): string {
  const lines: string[] = [];
  const assert = (path: string, check: string) =>
    lines.push(`type _${lines.length} = Assert<${JSON.stringify(path)}, ${check}>;`);
  const objectAt = (node: ObjectNode, type: string, path: string) => {
    const keys = Object.keys(node.fields);
    assert(`${path || "(root)"}: keys`, `Same<keyof ${type}, ${keysType(keys)}>`);
    const at = (key: string) => path === "" ? key : `${path}.${key}`;
    const optional = keys.filter((key) =>
      isOptional(node.fields[key]!) || refined[at(key)] === "optional"
    );
    assert(
      `${path || "(root)"}: optional keys`,
      `Same<OptionalKeys<${type}>, ${keysType(optional)}>`,
    );
    for (const [key, child] of Object.entries(node.fields)) {
      const value = `Exclude<${type}[${JSON.stringify(key)}], undefined>`;
      nodeAt(child, optional.includes(key) ? value : `${type}[${JSON.stringify(key)}]`, at(key));
    }
  };
  const nodeAt = (node: Node, type: string, path: string) => {
    const schemaType = typeOf(node);
    if (refined[path] === "narrowed") {
      assert(`${path}: narrower than the schema`, `Fits<${type}, ${schemaType}>`);
      assert(`${path}: keys`, `Same<KeysOf<${type}>, KeysOf<${schemaType}>>`);
      return;
    }
    if (refined[path] === "widened") {
      assert(`${path}: wider than the schema`, `Fits<${schemaType}, ${type}>`);
      assert(`${path}: keys`, `Same<Exclude<KeysOf<${schemaType}>, KeysOf<${type}>>, never>`);
      return;
    }
    switch (node.kind) {
      case "object":
        return objectAt(node, type, path);
      case "array":
        assert(`${path}: a list`, `Same<${type}, readonly ${type}[number][]>`);
        return nodeAt(node.item, `${type}[number]`, `${path}[]`);
      case "record":
        assert(`${path}: a mapping`, `Same<keyof ${type}, string>`);
        return nodeAt(node.value, `${type}[string]`, `${path}.*`);
      default:
        assert(path, `Same<${type}, ${leafType(node)}>`);
    }
  };
  objectAt(schema, "Config", "");
  return [
    `import type { Config } from ${JSON.stringify(new URL("lib/config/types.ts", ROOT).href)};`,
    "/** Mutual assignability (a tuple, so unions do not distribute). */",
    "type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false;",
    "/** One type fits the other. */",
    "type Fits<A, B> = [A] extends [B] ? true : false;",
    "/** The keys of every member of a union. */",
    "type KeysOf<T> = T extends unknown ? keyof T : never;",
    "/** The keys a type may leave out. */",
    "type OptionalKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? K : never }[keyof T];",
    "/** Fails to type-check, naming the path, unless `T` is `true`. */",
    "type Assert<_Path extends string, T extends true> = T;",
    ...lines,
    "",
  ].join("\n");
}

/** The whole type of a node, as `parse.ts` makes it (for refined paths). */
function typeOf(node: Node): string {
  switch (node.kind) {
    case "object":
      return `{ ${
        Object.entries(node.fields).map(([key, child]) =>
          `readonly ${JSON.stringify(key)}${isOptional(child) ? "?" : ""}: ${typeOf(child)}`
        ).join("; ")
      } }`;
    case "array":
      return `readonly (${typeOf(node.item)})[]`;
    case "record":
      return `Readonly<Record<string, ${typeOf(node.value)}>>`;
    default:
      return leafType(node);
  }
}

/** Type-checks `text` under the repository's compiler options; the diagnostics on failure. */
async function typeCheck(text: string): Promise<{ ok: boolean; diagnostics: string }> {
  const dir = await Deno.makeTempDir({ prefix: "config_types_" });
  try {
    const file = `${dir}/config_types_check.ts`;
    await Deno.writeTextFile(file, text);
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", "--config", fromFileUrl(new URL("deno.json", ROOT)), file],
      cwd: fromFileUrl(ROOT),
      env: { NO_COLOR: "1" },
      stdout: "null",
      stderr: "piped",
    }).output();
    const diagnostics = new TextDecoder().decode(stderr);
    return { ok: code === 0, diagnostics };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The key paths of the assertions a failed check points at (by line), in order. */
function pathsIn(diagnostics: string, text: string): string[] {
  const lines = text.split("\n");
  const paths = [...diagnostics.matchAll(/config_types_check\.ts:(\d+):\d+/g)].map((match) =>
    /Assert<"([^"]+)"/.exec(lines[Number(match[1]) - 1] ?? "")?.[1] ?? `line ${match[1]}`
  );
  return [...new Set(paths)];
}

Deno.test("issue 40: Config (types.ts) and the config schema agree, key by key, both ways", async () => {
  const text = typeAssertions(CONFIG_SCHEMA);
  const { ok, diagnostics } = await typeCheck(text);
  assert.ok(ok, `types.ts and _schema.ts disagree at: ${pathsIn(diagnostics, text).join(", ")}`);
});

Deno.test("issue 40: the agreement check fails on a key missing from types.ts, naming it", async () => {
  const schema: ObjectNode = {
    ...CONFIG_SCHEMA,
    fields: {
      ...CONFIG_SCHEMA.fields,
      added_key: { kind: "int", default: 1, description: "A key only the schema has." },
    },
  };
  const text = typeAssertions(schema);
  const { ok, diagnostics } = await typeCheck(text);
  assert.equal(ok, false);
  assert.deepEqual(pathsIn(diagnostics, text), ["(root): keys", "added_key"]);
});

Deno.test("issue 40: the agreement check fails on a key only types.ts has, a wrong type or optionality", async () => {
  const schema = structuredClone(CONFIG_SCHEMA) as { fields: Record<string, Node> } & ObjectNode;
  const csrf = schema.fields.csrf_prevention as { fields: Record<string, Node> } & ObjectNode;
  // `required_headers` stays in types.ts only; `enabled` becomes a number; `listen_addr` optional.
  delete csrf.fields.required_headers;
  csrf.fields.enabled = { kind: "int", default: 1 };
  schema.fields.listen_addr = { kind: "string", optional: true };
  const text = typeAssertions(schema);
  const { ok, diagnostics } = await typeCheck(text);
  assert.equal(ok, false);
  assert.deepEqual(pathsIn(diagnostics, text), [
    "(root): optional keys",
    "csrf_prevention: keys",
    "csrf_prevention.enabled",
  ]);
});

/** Every path the agreement check visits (`a.b`, `a.list[]`, `a.record.*`). */
function schemaPaths(node: Node, path: string): string[] {
  switch (node.kind) {
    case "object":
      return [
        path,
        ...Object.entries(node.fields).flatMap(([key, child]) =>
          schemaPaths(child, path === "" ? key : `${path}.${key}`)
        ),
      ];
    case "array":
      return [path, ...schemaPaths(node.item, `${path}[]`)];
    case "record":
      return [path, ...schemaPaths(node.value, `${path}.*`)];
    default:
      return [path];
  }
}

Deno.test("issue 40: every path that differs on purpose is still in the schema", () => {
  const paths = new Set(schemaPaths(CONFIG_SCHEMA, ""));
  assert.deepEqual(Object.keys(REFINED).filter((path) => !paths.has(path)), []);
});
