/**
 * The door rule of `lib/` (issue 40), shared by the codemod
 * (`tools/imports_through_mod.ts`) and `tests/unit/architecture_test.ts`.
 *
 * A module importing a module of another folder imports that folder's door,
 * the `mod.ts` of the first folder on the way down from the two modules'
 * lowest common folder (`lib/http/x.ts` → `lib/engine/plan/y.ts` goes through
 * `lib/engine/mod.ts`; `lib/engine/execute/x.ts` → `lib/engine/plan/y.ts`
 * through `lib/engine/plan/mod.ts`). A module in a folder above the importer
 * (`lib/errors.ts`, `lib/engine/types.ts` from `lib/engine/execute/`) is
 * imported directly: that folder's `mod.ts` re-exports the importer's folder,
 * so going through it would close a circle. So is a module whose folder's door
 * would load at once what is meant to load on demand, and the imported module
 * does not: an `import()` target (`telemetry/metrics.ts`, with prom-client), or,
 * for a module loaded in front of an `import()`, what only loads behind it
 * (`lib/cli/forward.ts` in the listener's thread and the router behind
 * `workers.ts`'s `import("./serve.ts")`). Type-only imports go through the door
 * all the same. `main.ts` counts as a module of `lib/`. An `_underscore.ts`
 * module is private to its folder: only the modules of that folder (its
 * `mod.ts` among them) and of the folders inside it import it; other folders
 * get what its `mod.ts` re-exports.
 *
 * Modules are read with regular expressions over their text, comments blanked
 * (so `@example` imports do not count): the repository's imports are plain
 * `import`/`export … from` statements, formatted by `deno fmt`.
 *
 * @module
 */
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (with a trailing slash). */
export const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** A module path relative to the repository root (`lib/http/graphql.ts`). */
export type Path = string;

/** One `import … from` / `export … from` statement (or a dynamic or bare import). */
export interface Statement {
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
export interface Specifier {
  readonly name: string;
  readonly alias: string | undefined;
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
export function specifiers(braces: string): Specifier[] {
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
 * import { doorOf } from "./door_rule.ts";
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

/** The repository's modules the codemod reads: `main.ts` and every `.ts` under `lib/`. */
export function modules(root: string): Path[] {
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
export class Tree {
  /** The folder the paths are relative to. */
  readonly root: string;
  readonly #texts = new Map<Path, string | undefined>();
  /** The paths written since the tree was made. */
  readonly changed: Set<Path> = new Set<Path>();

  /** A tree reading the files under `root`. */
  constructor(root: string) {
    this.root = root;
  }

  /** A file's text (as changed, if it was), or `undefined` when there is none. */
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

  /** Changes a file's text (in memory). */
  write(path: Path, text: string): void {
    this.#texts.set(path, text);
    this.changed.add(path);
  }

  /** The modules: the files under `lib/` and `main.ts`, and the files written, sorted. */
  paths(): Path[] {
    return [...new Set([...modules(this.root), ...this.changed])].sort();
  }
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
export function erased(statement: Statement): boolean {
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
export interface OnDemand {
  /** The `import()` targets. */
  readonly targets: ReadonlySet<Path>;
  readonly boundaries: readonly { front: ReadonlySet<Path>; behind: ReadonlySet<Path> }[];
}

export function onDemand(tree: Tree): OnDemand {
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
export function eagerThroughDoor(
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
