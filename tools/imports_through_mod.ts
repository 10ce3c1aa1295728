/**
 * `deno run -A tools/imports_through_mod.ts [--check]`: the codemod that makes
 * every cross-folder import in `lib/` and `main.ts` go through the target
 * folder's `mod.ts` (issue 40), the rule `tests/unit/architecture_test.ts`
 * enforces.
 *
 * The rule: a module importing a module of another folder imports that
 * folder's door, the `mod.ts` of the first folder on the way down from the two
 * modules' lowest common folder (`lib/http/x.ts` → `lib/engine/plan/y.ts` goes
 * through `lib/engine/mod.ts`; `lib/engine/execute/x.ts` → `lib/engine/plan/y.ts`
 * through `lib/engine/plan/mod.ts`). A module in a folder above the importer
 * (`lib/errors.ts`, `lib/engine/types.ts` from `lib/engine/execute/`) is
 * imported directly: that folder's `mod.ts` re-exports the importer's folder,
 * so going through it would close a circle. So is a module whose folder's door
 * would load at once what is meant to load on demand, and the imported module
 * does not: an `import()` target (`telemetry/metrics.ts`, with prom-client), or,
 * for a module loaded in front of an `import()`, what only loads behind it
 * (`lib/cli/forward.ts` in the listener's thread and the router behind
 * `workers.ts`'s `import("./serve.ts")`). Type-only imports go through the door
 * all the same. `main.ts` counts as a module of
 * `lib/`. An `_underscore.ts` module is private to its folder: only the
 * modules of that folder (its `mod.ts` among them) and of the folders inside it
 * import it; other folders get what its `mod.ts` re-exports.
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
 * - refuses, and reports, what it cannot do safely: a name the door already
 *   exports from another module, a default or namespace import, a dynamic or
 *   side-effect import, and any rewrite that would close an import circle (a door re-exporting a
 *   module that imports back through the same door): those imports stay as
 *   they are, and the architecture test keeps failing on them until a person
 *   restructures.
 *
 * Then it runs `deno fmt` on the files it wrote. `--check` writes nothing and
 * exits 1 when there is something to rewrite. Exits 1 too when something was
 * refused.
 *
 * @module
 */
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (with a trailing slash). */
const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** A module path relative to the repository root (`lib/http/graphql.ts`). */
type Path = string;

/** One `import … from` / `export … from` statement (or a dynamic or bare import). */
interface Statement {
  readonly start: number;
  readonly end: number;
  /** `import` or `export`. */
  readonly verb: "import" | "export";
  /** `import type { … }` / `export type { … }`. */
  readonly typeOnly: boolean;
  /** The named specifiers, or `undefined` for default, namespace, `*`, bare or dynamic. */
  readonly names: readonly Specifier[] | undefined;
  /** What the statement looks like when it is not named (for reports). */
  readonly form: "named" | "star" | "default" | "namespace" | "bare" | "dynamic";
  readonly specifier: string;
  readonly target: Path;
}

/** One `name`, `type name` or `name as alias` inside braces. */
interface Specifier {
  readonly name: string;
  readonly alias: string | undefined;
  readonly typeOnly: boolean;
}

/** What a module exports under a name: where it is declared and whether it is a type. */
interface Exported {
  readonly origin: string;
  readonly type: boolean;
  /** Exported through `export type` only. */
  readonly typeOnly: boolean;
}

/** Blanks out comments (keeping offsets), so `@example` imports are not read. */
export function maskComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (comment) => comment.replace(/[^\n]/g, " "));
}

const STATEMENT =
  /^[ \t]*(import|export)\s+(type\s+)?(\{[^}]*\}|\*\s+as\s+[\w$]+|\*|[\w$]+\s*,\s*\{[^}]*\}|[\w$]+)\s*from\s*["']([^"']+)["'](\s+with\s*\{[^}]*\})?;?/gm;
const BARE = /^[ \t]*import\s*["']([^"']+)["'];?/gm;
const DYNAMIC = /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

/** Parses `{ a, type B, c as d }`. */
function specifiers(braces: string): Specifier[] {
  return braces.slice(1, -1).split(",").map((part) => part.trim()).filter(Boolean).map(
    (part) => {
      const match = /^(type\s+)?([\w$]+)(?:\s+as\s+([\w$]+))?$/.exec(part);
      if (!match) throw new Error(`cannot read the specifier "${part}"`);
      return { name: match[2]!, alias: match[3], typeOnly: match[1] !== undefined };
    },
  );
}

/** Resolves a relative specifier of `from` to a repository path, or `undefined`. */
function resolveSpecifier(from: Path, specifier: string): Path | undefined {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return undefined;
  return normalize(join(dirname(from), specifier));
}

const parsed = new Map<string, { text: string; statements: Statement[] }>();

/** The statements of a module that import relative modules. */
export function statementsOf(file: Path, text: string): Statement[] {
  const cached = parsed.get(file);
  if (cached?.text === text) return cached.statements;
  const statements = parseStatements(file, text);
  parsed.set(file, { text, statements });
  return statements;
}

function parseStatements(file: Path, text: string): Statement[] {
  const masked = maskComments(text);
  const out: Statement[] = [];
  for (const match of masked.matchAll(STATEMENT)) {
    const target = resolveSpecifier(file, match[4]!);
    if (target === undefined) continue;
    const clause = match[3]!;
    const form = clause.startsWith("{")
      ? "named"
      : clause.startsWith("* as")
      ? "namespace"
      : clause === "*"
      ? "star"
      : "default";
    out.push({
      start: match.index!,
      end: match.index! + match[0].length,
      verb: match[1] as "import" | "export",
      typeOnly: match[2] !== undefined,
      names: form === "named" ? specifiers(clause) : undefined,
      form,
      specifier: match[4]!,
      target,
    });
  }
  for (const [regex, form] of [[BARE, "bare"], [DYNAMIC, "dynamic"]] as const) {
    for (const match of masked.matchAll(regex)) {
      const target = resolveSpecifier(file, match[1]!);
      if (target === undefined) continue;
      out.push({
        start: match.index!,
        end: match.index! + match[0].length,
        verb: "import",
        typeOnly: false,
        names: undefined,
        form,
        specifier: match[1]!,
        target,
      });
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

/** The folder a module counts in: `main.ts` counts as a module of `lib/`. */
function folderOf(file: Path): string {
  return file === "main.ts" ? "lib" : dirname(file);
}

/**
 * The door an import from `importer` into `target` must go through, or
 * `undefined` when none is needed (same folder, or a folder above the importer).
 *
 * @example The door of another top folder, and of a sibling stage
 * ```ts
 * import { doorOf } from "./imports_through_mod.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(doorOf("lib/http/a.ts", "lib/engine/plan/b.ts"), "lib/engine/mod.ts");
 * assert.equal(doorOf("lib/engine/execute/a.ts", "lib/engine/plan/b.ts"), "lib/engine/plan/mod.ts");
 * assert.equal(doorOf("lib/engine/execute/a.ts", "lib/engine/types.ts"), undefined);
 * assert.equal(doorOf("main.ts", "lib/cli/serve.ts"), "lib/cli/mod.ts");
 * ```
 */
export function doorOf(importer: Path, target: Path): Path | undefined {
  const from = folderOf(importer).split("/");
  const into = dirname(target).split("/");
  let common = 0;
  while (common < from.length && common < into.length && from[common] === into[common]) common++;
  if (common === into.length) return undefined;
  return [...into.slice(0, common + 1), "mod.ts"].join("/");
}

/** Whether `target` is a private module `importer` may not import. */
export function isPrivateTo(importer: Path, target: Path): boolean {
  const name = target.slice(target.lastIndexOf("/") + 1);
  const folder = dirname(target);
  const from = folderOf(importer);
  return name.startsWith("_") && from !== folder && !from.startsWith(`${folder}/`);
}

/** A specifier from `from` to `to`, `./`-prefixed. */
function specifierTo(from: Path, to: Path): string {
  const path = relative(dirname(from), to);
  return path.startsWith(".") ? path : `./${path}`;
}

/** The repository's modules the codemod reads: `main.ts` and every `.ts` under `lib/`. */
function modules(root: string): Path[] {
  const out: Path[] = [];
  try {
    Deno.statSync(join(root, "main.ts"));
    out.push("main.ts");
  } catch {
    // A tree without main.ts (a test's).
  }
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(join(root, dir))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (entry.name.endsWith(".ts")) out.push(path);
    }
  };
  walk("lib");
  return out.sort();
}

/** Files in memory: what was read, then what the codemod changed. */
class Tree {
  readonly root: string;
  readonly #texts = new Map<Path, string | undefined>();
  readonly changed = new Set<Path>();

  constructor(root: string) {
    this.root = root;
  }

  read(path: Path): string | undefined {
    if (!this.#texts.has(path)) {
      let text: string | undefined;
      try {
        text = Deno.readTextFileSync(join(this.root, path));
      } catch {
        text = undefined;
      }
      this.#texts.set(path, text);
    }
    return this.#texts.get(path);
  }

  write(path: Path, text: string): void {
    this.#texts.set(path, text);
    this.changed.add(path);
  }

  paths(): Path[] {
    return [...new Set([...modules(this.root), ...this.changed])].sort();
  }
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

/** The statements of `file` that import across folders not through the door. */
function bypassesOf(file: Path, text: string): Statement[] {
  return statementsOf(file, text).filter((statement) => {
    if (!statement.target.startsWith("lib/")) return false;
    const door = doorOf(file, statement.target);
    const bypass = door !== undefined && door !== statement.target;
    return bypass || isPrivateTo(file, statement.target);
  });
}

/**
 * The imports of `file` that go across folders not through the door, as
 * `file -> target` (by its text alone; {@linkcode doorViolations} also knows
 * which doors would load a module on demand eagerly).
 */
export function violationsOf(file: Path, text: string): string[] {
  return bypassesOf(file, text).map((statement) => `${file} -> ${statement.target}`);
}

/** Whether a statement loads nothing at run time (`import type`, or every name `type`). */
function erased(statement: Statement): boolean {
  return statement.typeOnly ||
    (statement.names !== undefined && statement.names.length > 0 &&
      statement.names.every((spec) => spec.typeOnly));
}

/**
 * What the tree loads on demand: each `import()` is a boundary, with the
 * modules loaded before it (`front`: the importing module's static closure)
 * and those only behind it (`behind`: the imported module's closure, less the
 * front). `lib/cli/workers.ts` loads the listener and, with `import()`, the
 * router (`serve.ts`): the listener's thread stays without the router.
 */
interface OnDemand {
  /** The `import()` targets. */
  readonly targets: ReadonlySet<Path>;
  readonly boundaries: readonly { front: ReadonlySet<Path>; behind: ReadonlySet<Path> }[];
}

function onDemand(tree: Tree): OnDemand {
  const targets = new Set<Path>();
  const boundaries: { front: Set<Path>; behind: Set<Path> }[] = [];
  for (const file of tree.paths()) {
    for (const statement of statementsOf(file, tree.read(file) ?? "")) {
      if (statement.form !== "dynamic") continue;
      targets.add(statement.target);
      const front = loads(tree, file);
      const behind = new Set([...loads(tree, statement.target)].filter((m) => !front.has(m)));
      boundaries.push({ front, behind });
    }
  }
  return { targets, boundaries };
}

/** Every module `file` loads at run time, itself included (static imports that are not erased). */
function loads(tree: Tree, file: Path): Set<Path> {
  const out = new Set<Path>([file]);
  const queue = [file];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const statement of statementsOf(next, tree.read(next) ?? "")) {
      if (statement.form === "dynamic" || erased(statement) || out.has(statement.target)) continue;
      out.add(statement.target);
      queue.push(statement.target);
    }
  }
  return out;
}

/**
 * What `door` would load at once, for `importer`'s import of `target`, that is
 * meant to load on demand: an `import()` target (a door re-exporting
 * `telemetry/metrics.ts` would load prom-client for every module that counts a
 * body size), or, for a module in front of an `import()` boundary, a module
 * behind it (`http/mod.ts` would load the whole router into the listener's
 * thread). Such an import keeps going to `target` itself; empty: none.
 */
function eagerThroughDoor(
  tree: Tree,
  importer: Path,
  door: Path,
  target: Path,
  lazy: OnDemand,
): Path[] {
  const wanted = loads(tree, target);
  const fronts = lazy.boundaries.filter((boundary) => boundary.front.has(importer));
  return [...loads(tree, door)].filter((module) =>
    !wanted.has(module) &&
    (lazy.targets.has(module) || fronts.some((boundary) => boundary.behind.has(module)))
  ).sort();
}

/**
 * Every import of `main.ts` and `lib/` under `root` that goes across folders
 * not through the door, as `file -> target`, but those the door would make
 * load at once what is meant to load on demand (see `eagerThroughDoor`).
 */
export function doorViolations(root: string = ROOT): string[] {
  const tree = new Tree(root);
  const lazy = onDemand(tree);
  return tree.paths().flatMap((file) =>
    bypassesOf(file, tree.read(file)!).filter((statement) => {
      const door = doorOf(file, statement.target);
      if (door === undefined || erased(statement) || isPrivateTo(file, statement.target)) {
        return true;
      }
      return eagerThroughDoor(tree, file, door, statement.target, lazy).length === 0;
    }).map((statement) => `${file} -> ${statement.target}`)
  );
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
  for (const [path, text] of files) Deno.writeTextFileSync(join(ROOT, path), text);
  if (files.size > 0) {
    const fmt = new Deno.Command(Deno.execPath(), {
      args: ["fmt", "--quiet", ...files.keys()],
      cwd: ROOT,
    });
    const { code } = await fmt.output();
    if (code !== 0) console.error("deno fmt failed on the rewritten files");
  }
  console.log(`rewrote ${files.size} files; refused ${refusals.length} imports`);
  return refusals.length === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
