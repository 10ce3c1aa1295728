/**
 * Issue 40: `tools/imports_through_mod.ts`, the codemod that routes
 * cross-folder imports through the folder's `mod.ts`, on small trees of its
 * own: the rewrite and the re-exports it adds (through a deeper door, into a
 * `mod.ts` it creates), a second run that changes nothing, and the rewrites
 * it refuses (a circle through a door, a name the door exports from elsewhere),
 * and a door that would load a module its folder loads on demand.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { doorViolations, violationsOf } from "../../tools/door_rule.ts";
import { planCodemod } from "../../tools/imports_through_mod.ts";

/** Writes `files` (path → text) under a new temporary folder; returns it. */
function tree(files: Record<string, string>): string {
  const root = Deno.makeTempDirSync({ prefix: "imports_through_mod_" });
  for (const [path, text] of Object.entries(files)) {
    Deno.mkdirSync(join(root, dirname(path)), { recursive: true });
    Deno.writeTextFileSync(join(root, path), text);
  }
  return root;
}

/** Writes what the codemod planned into `root`. */
function apply(root: string, files: ReadonlyMap<string, string>): void {
  for (const [path, text] of files) {
    Deno.mkdirSync(join(root, dirname(path)), { recursive: true });
    Deno.writeTextFileSync(join(root, path), text);
  }
}

Deno.test("imports_through_mod: rewrites through the door, adds re-exports, then changes nothing", () => {
  const root = tree({
    "main.ts": 'const cli = await import("./lib/cli/mod.ts");\nexport { cli };\n',
    "lib/cli/mod.ts": "/** The CLI. @module */\nexport const run = 1;\n",
    "lib/a/mod.ts": '/** a. @module */\nexport { kept } from "./x.ts";\n',
    "lib/a/x.ts": [
      "/** Documented f. */",
      "export function f(): number {",
      "  return 1;",
      "}",
      "/** A type. */",
      "export interface T {",
      "  readonly n: number;",
      "}",
      "/** Kept. */",
      "export const kept = 2;",
      "",
    ].join("\n"),
    "lib/a/deep/w.ts": "/** g. */\nexport const g = 3;\n",
    "lib/b/y.ts": [
      'import { f, type T } from "../a/x.ts";',
      'import { kept } from "../a/mod.ts";',
      'import { g as h } from "../a/deep/w.ts";',
      "/** Uses them. */",
      "export const y: T = { n: f() + kept + h };",
      "",
    ].join("\n"),
  });
  try {
    const first = planCodemod(root);
    assert.deepEqual(first.refusals, []);
    assert.deepEqual([...first.files.keys()], [
      "lib/a/deep/mod.ts",
      "lib/a/mod.ts",
      "lib/b/y.ts",
    ]);
    assert.equal(
      first.files.get("lib/b/y.ts"),
      [
        'import { f, g as h, kept, type T } from "../a/mod.ts";',
        "/** Uses them. */",
        "export const y: T = { n: f() + kept + h };",
        "",
      ].join("\n"),
    );
    assert.equal(
      first.files.get("lib/a/mod.ts"),
      [
        "/** a. @module */",
        'export { f, kept, type T } from "./x.ts";',
        'export { g } from "./deep/mod.ts";',
        "",
      ].join("\n"),
    );
    assert.match(
      first.files.get("lib/a/deep/mod.ts")!,
      /@module[\s\S]*export \{ g \} from "\.\/w\.ts";\n$/,
    );
    apply(root, first.files);
    for (const path of ["lib/b/y.ts", "lib/a/mod.ts", "main.ts"]) {
      assert.deepEqual(violationsOf(path, Deno.readTextFileSync(join(root, path))), [], path);
    }
    const second = planCodemod(root);
    assert.deepEqual([...second.files.keys()], [], "a second run changes nothing");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("imports_through_mod: refuses a rewrite that would close a circle through a door", () => {
  // d/p.ts -> e/q.ts -> d/s.ts, and f/u.ts uses d/p.ts: through the doors, d/mod.ts would
  // re-export p, p import e/mod.ts, e/mod.ts re-export q, q import d/mod.ts: a circle.
  const root = tree({
    "lib/d/p.ts": 'import { q } from "../e/q.ts";\n/** p. */\nexport const p = q + 1;\n',
    "lib/d/s.ts": "/** s. */\nexport const s = 1;\n",
    "lib/e/q.ts": 'import { s } from "../d/s.ts";\n/** q. */\nexport const q = s + 1;\n',
    "lib/f/u.ts": 'import { p } from "../d/p.ts";\n/** u. */\nexport const u = p;\n',
  });
  try {
    const { files, refusals, circles } = planCodemod(root);
    assert.ok(circles.length > 0);
    assert.deepEqual(
      refusals.map((refusal) => `${refusal.file}: ${refusal.reason}`),
      [
        "lib/d/p.ts: would close an import circle",
        "lib/e/q.ts: would close an import circle",
      ],
    );
    assert.equal(
      files.get("lib/f/u.ts"),
      'import { p } from "../d/mod.ts";\n/** u. */\nexport const u = p;\n',
    );
    assert.equal(files.get("lib/d/p.ts"), undefined, "p.ts keeps its import");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("imports_through_mod: refuses a name the door exports from another module", () => {
  const root = tree({
    "lib/a/mod.ts": '/** a. @module */\nexport { name } from "./one.ts";\n',
    "lib/a/one.ts": "/** One. */\nexport const name = 1;\n",
    "lib/a/two.ts": "/** Two. */\nexport const name = 2;\n",
    "lib/b/y.ts": 'import { name } from "../a/two.ts";\n/** y. */\nexport const y = name;\n',
  });
  try {
    const { files, refusals } = planCodemod(root);
    assert.deepEqual(refusals.map((refusal) => refusal.reason), [
      "lib/a/mod.ts already exports name from elsewhere",
    ]);
    assert.deepEqual([...files.keys()], []);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("imports_through_mod: a value import stays off a door that would load an on-demand module", () => {
  // t/heavy.ts is loaded on demand (t/start.ts imports it with import()); t/mod.ts re-exports
  // it, so a module wanting t/light.ts's value keeps importing light.ts; a type goes through.
  const root = tree({
    "lib/t/mod.ts": [
      "/** t. @module */",
      'export { heavy } from "./heavy.ts";',
      'export { light, type Light } from "./light.ts";',
      'export { start } from "./start.ts";',
      "",
    ].join("\n"),
    "lib/t/heavy.ts": "/** Heavy. */\nexport const heavy = 1;\n",
    "lib/t/light.ts":
      "/** Light. */\nexport const light = 2;\n/** L. */\nexport type Light = number;\n",
    "lib/t/start.ts": '/** Start. */\nexport const start = () => import("./heavy.ts");\n',
    "lib/u/v.ts": [
      'import { light } from "../t/light.ts";',
      'import type { Light } from "../t/light.ts";',
      "/** v. */",
      "export const v: Light = light;",
      "",
    ].join("\n"),
  });
  try {
    const { files, refusals } = planCodemod(root);
    assert.deepEqual(refusals, []);
    assert.equal(
      files.get("lib/u/v.ts"),
      [
        'import { light } from "../t/light.ts";',
        'import type { Light } from "../t/mod.ts";',
        "/** v. */",
        "export const v: Light = light;",
        "",
      ].join("\n"),
    );
    apply(root, files);
    assert.deepEqual(doorViolations(root), []);
    // Without the on-demand load, the door is light: the value import must go through it.
    Deno.writeTextFileSync(
      join(root, "lib/t/start.ts"),
      "/** Start. */\nexport const start = 1;\n",
    );
    assert.deepEqual(doorViolations(root), ["lib/u/v.ts -> lib/t/light.ts"]);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("imports_through_mod: a module in front of an import() does not load, through a door, what is behind it", () => {
  // c/w.ts loads h/errors.ts and, on demand, c/serve.ts (which loads h/handler.ts). Through
  // h/mod.ts, w.ts would load handler.ts at once: it keeps h/errors.ts. x/y.ts, not in front
  // of that import(), goes through the door.
  const root = tree({
    "lib/h/mod.ts": [
      "/** h. @module */",
      'export { oops } from "./errors.ts";',
      'export { handle } from "./handler.ts";',
      "",
    ].join("\n"),
    "lib/h/errors.ts": "/** Oops. */\nexport const oops = 1;\n",
    "lib/h/handler.ts": "/** Handle. */\nexport const handle = 2;\n",
    "lib/c/serve.ts":
      'import { handle } from "../h/handler.ts";\n/** Serve. */\nexport const serve = handle;\n',
    "lib/c/w.ts": [
      'import { oops } from "../h/errors.ts";',
      "/** Go. */",
      'export const go = async () => oops + (await import("./serve.ts")).serve;',
      "",
    ].join("\n"),
    "lib/x/y.ts": 'import { oops } from "../h/errors.ts";\n/** y. */\nexport const y = oops;\n',
  });
  try {
    const { files, refusals } = planCodemod(root);
    assert.deepEqual(refusals, []);
    assert.deepEqual([...files.keys()], ["lib/c/serve.ts", "lib/x/y.ts"]);
    assert.match(files.get("lib/x/y.ts")!, /from "\.\.\/h\/mod\.ts"/);
    apply(root, files);
    assert.deepEqual(doorViolations(root), []);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
