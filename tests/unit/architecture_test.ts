/**
 * The layout's rules, checked on the import graph of `lib/` (static and
 * dynamic imports alike): no import circle; folders ranked, each importing
 * only lower ones (no folder loop); a facet (`connect/`, `mcp/`) never imports
 * the HTTP edge; the engine imports no telemetry; the engine's top level keeps
 * only its door and shared types, and every stage folder has its `mod.ts`;
 * every facet authorizes through `authorizeOperation` and nothing outside
 * `lib/auth/` decides authorization itself.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const LIB = fileURLToPath(new URL("../../lib/", import.meta.url));
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm;

/** Every `.ts` file under `dir`, as paths relative to `lib/`. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...sources(path));
    else if (entry.name.endsWith(".ts")) out.push(relative(LIB, path));
  }
  return out.sort();
}

/** Drops JSDoc and line comments, so `@example` imports do not count. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

/** The import graph: module -> the `lib/` modules it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(LIB)) {
    const text = code(Deno.readTextFileSync(join(LIB, file)));
    const targets: string[] = [];
    for (const match of text.matchAll(IMPORT)) {
      const target = normalize(join(dirname(file), match[1]!));
      if (!target.startsWith("..")) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The first import circle found, as a path of modules, or `undefined`. */
function findCircle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === "done") return undefined;
    if (state.get(node) === "open") return [...stack.slice(stack.indexOf(node)), node];
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const circle = visit(next);
      if (circle) return circle;
    }
    stack.pop();
    state.set(node, "done");
    return undefined;
  };
  for (const node of graph.keys()) {
    const circle = visit(node);
    if (circle) return circle;
  }
  return undefined;
}

const GRAPH = importGraph();

function importsInto(from: string, into: string): string[] {
  const found: string[] = [];
  for (const [file, targets] of GRAPH) {
    if (!file.startsWith(from)) continue;
    for (const target of targets) if (target.startsWith(into)) found.push(`${file} -> ${target}`);
  }
  return found;
}

Deno.test("architecture: no import circle in lib/ (static and dynamic imports)", () => {
  assert.equal(findCircle(GRAPH)?.join(" -> "), undefined);
});

Deno.test("architecture: the circle finder sees a circle", () => {
  const graph = new Map([["a.ts", ["b.ts"]], ["b.ts", ["c.ts"]], ["c.ts", ["a.ts"]]]);
  assert.deepEqual(findCircle(graph), ["a.ts", "b.ts", "c.ts", "a.ts"]);
});

Deno.test("architecture: facets never import the HTTP edge", () => {
  assert.deepEqual([...importsInto("connect/", "http/"), ...importsInto("mcp/", "http/")], []);
});

Deno.test("architecture: the engine imports no telemetry and no facet", () => {
  for (const above of ["telemetry/", "http/", "mcp/", "connect/", "listen/", "cli/"]) {
    assert.deepEqual(importsInto("engine/", above), [], above);
  }
});

Deno.test("architecture: the engine's top level is its door and shared types; each stage has mod.ts", () => {
  const loose = [...Deno.readDirSync(join(LIB, "engine"))]
    .filter((entry) => entry.isFile).map((entry) => entry.name).sort();
  assert.ok(loose.length <= 4, `loose files in lib/engine: ${loose.join(", ")}`);
  assert.ok(loose.includes("mod.ts"));
  for (const stage of ["prepare", "plan", "execute", "fetch", "admission", "pipeline"]) {
    assert.ok(GRAPH.has(`engine/${stage}/mod.ts`), `lib/engine/${stage}/mod.ts`);
  }
});

/**
 * The folders of `lib/` by rank, lowest first: a module imports only folders
 * of a lower rank (so no folder loop, and nothing points upward). A new folder
 * must be ranked here.
 */
const RANKS: readonly (readonly string[])[] = [
  ["(root)"],
  ["request", "compose"],
  ["config"],
  ["log", "supergraph", "playground"],
  ["auth"],
  ["engine"],
  ["plugins", "trace", "store", "operations"],
  ["telemetry", "persisted"],
  ["connect", "mcp"],
  ["state"],
  ["http"],
  ["listen"],
  ["cli"],
];

/** The top folder of a module (`(root)` for `lib/*.ts`). */
function folderOf(file: string): string {
  const slash = file.indexOf("/");
  return slash < 0 ? "(root)" : file.slice(0, slash);
}

/** The imports that do not point to a lower-ranked folder, and the folders without a rank. */
function rankViolations(graph: Map<string, string[]>, ranks: readonly (readonly string[])[]) {
  const rank = new Map<string, number>();
  ranks.forEach((folders, index) => folders.forEach((folder) => rank.set(folder, index)));
  const upward: string[] = [];
  const unranked = new Set<string>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    if (!rank.has(from)) unranked.add(from);
    for (const target of targets) {
      const into = folderOf(target);
      if (into === from) continue;
      if (!rank.has(into)) unranked.add(into);
      else if (rank.has(from) && !(rank.get(into)! < rank.get(from)!)) {
        upward.push(`${file} -> ${target}`);
      }
    }
  }
  return { upward, unranked: [...unranked].sort() };
}

Deno.test("architecture: every folder has a rank and imports only lower-ranked folders", () => {
  assert.deepEqual(rankViolations(GRAPH, RANKS), { upward: [], unranked: [] });
});

Deno.test("architecture: the rank rule sees an upward import, a same-rank import and an unranked folder", () => {
  const graph = new Map([
    ["auth/a.ts", ["engine/b.ts"]],
    ["trace/c.ts", ["store/d.ts"]],
    ["newfolder/e.ts", ["config/f.ts"]],
  ]);
  assert.deepEqual(rankViolations(graph, RANKS), {
    upward: ["auth/a.ts -> engine/b.ts", "trace/c.ts -> store/d.ts"],
    unranked: ["newfolder"],
  });
});

/**
 * The facets' modules: each settles who may run an operation through
 * `authorizeOperation`, then runs the plugins' operation stage.
 */
const FACETS = [
  "http/graphql.ts",
  "http/subscriptions.ts",
  "http/subscriptions_ws.ts",
  "connect/handler.ts",
  "mcp/call.ts",
];

/**
 * Authorization internals no module outside `lib/auth/` may use: its checks,
 * and the `reject_operation_if_unauthorized` setting (read by the door alone).
 */
const AUTH_INTERNALS =
  /\b(checkRequirement|operationRequirement)\s*\(|\.reject_operation_if_unauthorized\b/;

Deno.test("architecture: every facet goes through the one authorization door (authorizeOperation)", () => {
  for (const facet of FACETS) {
    const text = code(Deno.readTextFileSync(join(LIB, facet)));
    assert.match(text, /\bauthorizeOperation\(/, `${facet} calls authorizeOperation`);
    // Then the plugins' operation stage (issue 40), where the door let the operation through.
    assert.match(
      text,
      /\b(operationStage|plugin\.operation)\(/,
      `${facet} runs the operation stage`,
    );
  }
  const bypassing = sources(LIB).filter((file) =>
    !file.startsWith("auth/") && !file.startsWith("config/") &&
    AUTH_INTERNALS.test(code(Deno.readTextFileSync(join(LIB, file))))
  );
  assert.deepEqual(bypassing, [], "modules deciding authorization outside lib/auth");
});
