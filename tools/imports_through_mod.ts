/**
 * `deno run -A tools/imports_through_mod.ts [--check]`: the codemod that makes
 * every cross-folder import in `lib/` and `main.ts` go through the target
 * folder's `mod.ts` (issue 40), by the rule in `tools/door_rule.ts` that
 * `tests/unit/architecture_test.ts` enforces.
 *
 * What it does, deterministically (files and names in sorted order) and
 * idempotently (a second run changes nothing), for folders it has never seen
 * too:
 * - rewrites `import { a, type B } from "../x/y.ts"` and `export { … } from`
 *   to the door, keeping names and aliases, merging into an import of the same
 *   kind from the door already there;
 * - adds each missing name to the door as `export { a, type B } from "./y.ts"`
 *   (a re-export keeps the declaration's JSDoc), through the sub-folder's door
 *   when `y.ts` sits deeper, creating a missing `mod.ts`;
 * - leaves an import on its module where the rule allows it (the door would
 *   load at once what is meant to load on demand);
 * - refuses, and reports, what it cannot do safely: a name the door already
 *   exports from another module, a default or namespace import, a dynamic or
 *   side-effect import, and any rewrite that would close an import circle (a
 *   door re-exporting a module that imports back through the same door): those
 *   imports stay as they are, and the architecture test keeps failing on them
 *   until a person restructures (or lists the folder loop there).
 *
 * Then it runs `deno fmt` on the files it wrote. `--check` writes nothing and
 * exits 1 when there is something to rewrite. Exits 1 too when something was
 * refused.
 *
 * @module
 */
import { dirname, join, relative } from "node:path";
import {
  doorOf,
  eagerThroughDoor,
  erased,
  isPrivateTo,
  maskComments,
  modules,
  type OnDemand,
  onDemand,
  type Path,
  ROOT,
  type Specifier,
  specifiers,
  type Statement,
  statementsOf,
  Tree,
} from "./door_rule.ts";

export { doorOf, doorViolations, violationsOf } from "./door_rule.ts";

/** What a module exports under a name: where it is declared and whether it is a type. */
interface Exported {
  readonly origin: string;
  readonly type: boolean;
  /** Exported through `export type` only. */
  readonly typeOnly: boolean;
}

/** A specifier from `from` to `to`, `./`-prefixed. */
function specifierTo(from: Path, to: Path): string {
  const path = relative(dirname(from), to);
  return path.startsWith(".") ? path : `./${path}`;
}

const DECLARATION =
  /^[ \t]*export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(function\*?|const|let|var|(?:abstract\s+)?class|(?:const\s+)?enum|interface|type)\s+([\w$]+)/gm;
const LOCAL_LIST = /^[ \t]*export\s+(type\s+)?(\{[^}]*\})\s*;/gm;
const LOCAL_DECLARATION =
  /^[ \t]*(?:declare\s+)?(?:async\s+)?(function\*?|const|let|var|(?:abstract\s+)?class|(?:const\s+)?enum|interface|type)\s+([\w$]+)/gm;

/** What a module exports, by name, following re-exports (cached per tree state). */
function exportsOf(
  tree: Tree,
  file: Path,
  seen: Set<Path> = new Set(),
): Map<string, Exported> {
  const out = new Map<string, Exported>();
  const text = tree.read(file);
  if (text === undefined || seen.has(file)) return out;
  seen.add(file);
  const masked = maskComments(text);
  for (const match of masked.matchAll(DECLARATION)) {
    const type = match[1] === "interface" || match[1] === "type";
    out.set(match[2]!, { origin: `${file}#${match[2]}`, type, typeOnly: false });
  }
  for (const match of masked.matchAll(LOCAL_LIST)) {
    for (const spec of specifiers(match[2]!)) {
      const local = localKind(tree, file, masked, spec.name, seen);
      out.set(spec.alias ?? spec.name, {
        ...local,
        typeOnly: local.typeOnly || match[1] !== undefined || spec.typeOnly,
      });
    }
  }
  for (const statement of statementsOf(file, text)) {
    if (statement.verb !== "export") continue;
    const inner = exportsOf(tree, statement.target, new Set(seen));
    if (statement.form === "star") {
      for (const [name, exported] of inner) {
        if (name === "default" || out.has(name)) continue;
        out.set(name, { ...exported, typeOnly: exported.typeOnly || statement.typeOnly });
      }
    } else if (statement.form === "named") {
      for (const spec of statement.names!) {
        const found = inner.get(spec.name) ??
          { origin: `${statement.target}#${spec.name}`, type: false, typeOnly: false };
        out.set(spec.alias ?? spec.name, {
          ...found,
          typeOnly: found.typeOnly || statement.typeOnly || spec.typeOnly,
        });
      }
    } else if (statement.form === "namespace") {
      const name = /\*\s+as\s+([\w$]+)/.exec(text.slice(statement.start, statement.end))![1]!;
      out.set(name, { origin: `${statement.target}#*`, type: false, typeOnly: false });
    }
  }
  return out;
}

/** What a local name of `file` is: its own declaration or an imported binding. */
function localKind(
  tree: Tree,
  file: Path,
  masked: string,
  name: string,
  seen: Set<Path>,
): Exported {
  for (const match of masked.matchAll(LOCAL_DECLARATION)) {
    if (match[2] !== name) continue;
    const type = match[1] === "interface" || match[1] === "type";
    return { origin: `${file}#${name}`, type, typeOnly: false };
  }
  for (const statement of statementsOf(file, tree.read(file)!)) {
    if (statement.verb !== "import" || statement.form !== "named") continue;
    const spec = statement.names!.find((s) => (s.alias ?? s.name) === name);
    if (!spec) continue;
    const found = exportsOf(tree, statement.target, new Set(seen)).get(spec.name);
    if (found) return found;
  }
  return { origin: `${file}#${name}`, type: false, typeOnly: false };
}

/** One thing the codemod refused to do, for the report. */
interface Refusal {
  readonly file: Path;
  readonly statement: string;
  readonly reason: string;
}

/** A folder door's header when the codemod creates it. */
function newDoor(door: Path): string {
  const folder = dirname(door).replace(/^lib\//, "");
  return `/**\n * \`${folder}/\`: what other folders use of it (made by\n * \`tools/imports_through_mod.ts\`; imports from other folders come through here).\n *\n * @module\n */\n`;
}

/**
 * Makes `door` export `name` from `target` (through deeper doors), or returns
 * why it cannot.
 */
function ensureExport(
  tree: Tree,
  door: Path,
  name: string,
  target: Path,
): string | undefined {
  const wanted = exportsOf(tree, target).get(name);
  if (!wanted) return `${target} does not export ${name}`;
  const have = exportsOf(tree, door).get(name);
  if (have) {
    if (have.origin !== wanted.origin) return `${door} already exports ${name} from elsewhere`;
    if (have.typeOnly && !wanted.type && !wanted.typeOnly) {
      return `${door} exports ${name} as a type only`;
    }
    return undefined;
  }
  const deeper = doorOf(door, target);
  let source = target;
  if (deeper !== undefined && deeper !== target) {
    const why = ensureExport(tree, deeper, name, target);
    if (why) return why;
    source = deeper;
  }
  const spec = wanted.type || wanted.typeOnly ? `type ${name}` : name;
  const text = tree.read(door) ?? newDoor(door);
  const from = specifierTo(door, source);
  const existing = statementsOf(door, text).find((s) =>
    s.verb === "export" && s.form === "named" && !s.typeOnly && s.specifier === from
  );
  if (existing) {
    const body = text.slice(existing.start, existing.end);
    const close = body.lastIndexOf("}");
    const inside = body.slice(body.indexOf("{") + 1, close).trim().replace(/,\s*$/, "");
    const names = [...inside.split(",").map((s) => s.trim()).filter(Boolean), spec].sort(byName);
    const updated = `export { ${names.join(", ")} }${body.slice(close + 1)}`;
    tree.write(door, text.slice(0, existing.start) + updated + text.slice(existing.end));
  } else {
    const sep = text.endsWith("\n") ? "" : "\n";
    tree.write(door, `${text}${sep}export { ${spec} } from "${from}";\n`);
  }
  return undefined;
}

/** Prints a specifier list. */
function printNames(names: readonly Specifier[]): string {
  return names.map((s) => `${s.typeOnly ? "type " : ""}${s.name}${s.alias ? ` as ${s.alias}` : ""}`)
    .join(", ");
}

/** Rewrites one module's statements that bypass a door; returns the refusals. */
function rewriteModule(
  tree: Tree,
  file: Path,
  skip: ReadonlySet<string>,
  lazy: OnDemand,
): Refusal[] {
  const refusals: Refusal[] = [];
  const text = tree.read(file)!;
  const edits: { start: number; end: number; text: string }[] = [];
  for (const statement of statementsOf(file, text)) {
    if (!statement.target.startsWith("lib/")) continue;
    const door = doorOf(file, statement.target);
    const source = text.slice(statement.start, statement.end).trim();
    // No door on the way (same folder or one above): a private module there is the
    // importer's own folder's, which it may use.
    if (door === undefined || door === statement.target) continue;
    if (skip.has(`${file} -> ${statement.target}`)) {
      refusals.push({ file, statement: source, reason: "would close an import circle" });
      continue;
    }
    if (statement.form !== "named") {
      refusals.push({ file, statement: source, reason: `${statement.form} import: by hand` });
      continue;
    }
    const eager = erased(statement)
      ? []
      : eagerThroughDoor(tree, file, door, statement.target, lazy);
    if (eager.length > 0 && !isPrivateTo(file, statement.target)) {
      // Not a refusal: the rule allows it (the module stays loaded on demand).
      continue;
    }
    const reasons = statement.names!.map((spec) =>
      ensureExport(tree, door, spec.name, statement.target)
    ).filter((why) => why !== undefined);
    if (reasons.length > 0) {
      refusals.push({ file, statement: source, reason: reasons.join("; ") });
      continue;
    }
    const type = statement.typeOnly ? "type " : "";
    edits.push({
      start: statement.start,
      end: statement.end,
      text: `${statement.verb} ${type}{ ${printNames(statement.names!)} } from "${
        specifierTo(file, door)
      }";`,
    });
  }
  if (edits.length > 0) {
    // The module may have become a door meanwhile (re-read it: offsets are of `text`).
    if (tree.read(file) !== text) throw new Error(`${file} changed while rewriting it`);
    let out = text;
    for (const edit of edits.reverse()) {
      out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
    }
    tree.write(file, mergeImports(file, out));
  }
  return refusals;
}

/** Orders specifiers by name, case-insensitively (as the repository's lists are). */
function byName(a: string, b: string): number {
  const key = (s: string) => s.replace(/^type\s+/, "").toLowerCase();
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Merges named imports (and named re-exports) of the same kind from the same
 * module into the first of them, names in order.
 */
export function mergeImports(file: Path, text: string): string {
  const groups = new Map<string, Statement[]>();
  for (const statement of statementsOf(file, text)) {
    if (statement.form !== "named") continue;
    const key = `${statement.verb}:${statement.typeOnly}:${statement.specifier}`;
    groups.set(key, [...(groups.get(key) ?? []), statement]);
  }
  const edits: { start: number; end: number; text: string }[] = [];
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const names = new Map<string, Specifier>();
    for (const statement of group) {
      for (const spec of statement.names!) {
        const key = `${spec.name} ${spec.alias ?? ""}`;
        const prior = names.get(key);
        // A value import of a name covers a type import of it.
        if (!prior || (prior.typeOnly && !spec.typeOnly)) names.set(key, spec);
      }
    }
    const [first, ...rest] = group;
    const type = first!.typeOnly ? "type " : "";
    const merged = printNames([...names.values()]).split(", ").sort(byName).join(", ");
    edits.push({
      start: first!.start,
      end: first!.end,
      text: `${first!.verb} ${type}{ ${merged} } from "${first!.specifier}";`,
    });
    for (const statement of rest) {
      const end = text[statement.end] === "\n" ? statement.end + 1 : statement.end;
      edits.push({ start: statement.start, end, text: "" });
    }
  }
  let out = text;
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  }
  return out;
}

/** The import graph of a tree: module -> modules it imports. */
function graphOf(tree: Tree): Map<Path, Path[]> {
  const graph = new Map<Path, Path[]>();
  for (const file of tree.paths()) {
    const text = tree.read(file);
    if (text === undefined) continue;
    graph.set(file, statementsOf(file, text).map((s) => s.target));
  }
  return graph;
}

/** Every import circle's edges (`a -> b`) found by a depth-first walk. */
function circleEdges(graph: Map<Path, Path[]>): string[][] {
  const state = new Map<Path, "open" | "done">();
  const stack: Path[] = [];
  const circles: string[][] = [];
  const visit = (node: Path) => {
    if (state.get(node) === "done") return;
    if (state.get(node) === "open") {
      const path = [...stack.slice(stack.indexOf(node)), node];
      circles.push(path.slice(1).map((to, i) => `${path[i]} -> ${to}`));
      return;
    }
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node) ?? []) visit(next);
    stack.pop();
    state.set(node, "done");
  };
  for (const node of [...graph.keys()].sort()) visit(node);
  return circles;
}

/** The result of a run: the files it would write and what it refused. */
export interface CodemodResult {
  readonly files: ReadonlyMap<Path, string>;
  readonly refusals: readonly Refusal[];
  readonly circles: readonly string[];
}

/**
 * Plans the rewrite: every module, in sorted order; a rewrite whose import
 * would sit on a new import circle is refused and the plan made again without it.
 */
export function planCodemod(root: string = ROOT): CodemodResult {
  const before = new Set(circleEdges(graphOf(new Tree(root))).map((c) => c.join(" | ")));
  // What loads on demand, as the tree is now (the rewrite keeps it so).
  const lazy = onDemand(new Tree(root));
  const skip = new Set<string>();
  const circles: string[] = [];
  for (;;) {
    const tree = new Tree(root);
    const refusals: Refusal[] = [];
    for (const file of modules(root)) refusals.push(...rewriteModule(tree, file, skip, lazy));
    for (const door of [...tree.changed].sort()) {
      const merged = mergeImports(door, tree.read(door)!);
      if (merged !== tree.read(door)) tree.write(door, merged);
    }
    const fresh = circleEdges(graphOf(tree)).filter((c) => !before.has(c.join(" | ")));
    if (fresh.length === 0) {
      const files = new Map([...tree.changed].sort().map((path) => [path, tree.read(path)!]));
      return { files, refusals, circles };
    }
    // Refuse the original imports whose rewrite made the circle: a rewritten module on
    // the circle, importing the door the circle runs through.
    const original = new Tree(root);
    let refused = 0;
    for (const circle of fresh) {
      circles.push(circle.join(" ; "));
      for (const edge of circle) {
        const [from, door] = edge.split(" -> ") as [Path, Path];
        if (!tree.changed.has(from)) continue;
        for (const statement of statementsOf(from, original.read(from) ?? "")) {
          if (doorOf(from, statement.target) !== door || statement.target === door) continue;
          const key = `${from} -> ${statement.target}`;
          if (!skip.has(key)) refused++;
          skip.add(key);
        }
      }
    }
    if (refused === 0) throw new Error(`cannot break the circles:\n${circles.join("\n")}`);
  }
}

async function main(args: string[]): Promise<number> {
  const { files, refusals, circles } = planCodemod();
  for (const circle of [...new Set(circles)]) console.error(`circle (refused): ${circle}`);
  for (const refusal of refusals) {
    console.error(`refused: ${refusal.file}: ${refusal.statement}\n  ${refusal.reason}`);
  }
  if (args.includes("--check")) {
    for (const path of files.keys()) console.log(`would rewrite ${path}`);
    return files.size === 0 && refusals.length === 0 ? 0 : 1;
  }
  // A pass's new re-exports can open doors the pass decided without: passes
  // run until one changes nothing (a fixed point; a few at most).
  const rewritten = new Set<string>();
  let pending = files;
  for (let pass = 1; pending.size > 0; pass++) {
    if (pass > MAX_PASSES) {
      console.error(`no fixed point after ${MAX_PASSES} passes`);
      return 1;
    }
    for (const [path, text] of pending) Deno.writeTextFileSync(join(ROOT, path), text);
    const fmt = new Deno.Command(Deno.execPath(), {
      args: ["fmt", "--quiet", ...pending.keys()],
      cwd: ROOT,
    });
    const { code } = await fmt.output();
    if (code !== 0) console.error("deno fmt failed on the rewritten files");
    for (const path of pending.keys()) rewritten.add(path);
    pending = planCodemod().files;
  }
  console.log(`rewrote ${rewritten.size} files; refused ${refusals.length} imports`);
  return refusals.length === 0 ? 0 : 1;
}

/** Passes the codemod makes at most before it gives up on a fixed point. */
const MAX_PASSES = 5;

if (import.meta.main) Deno.exit(await main(Deno.args));
