/**
 * The layout's rules, checked on the import graph of `lib/` (static and
 * dynamic imports alike): no import circle; a facet (`connect/`, `mcp/`)
 * never imports the HTTP edge; the engine imports no telemetry; the engine's
 * top level keeps only its door and shared types, and every stage folder has
 * its `mod.ts`.
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
  for (const above of ["telemetry/", "http/", "mcp/", "connect/", "cli/"]) {
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
