/**
 * Issue 32: the router's dependencies apart from the tests'. `deno.json` maps
 * only what `main.ts`, `lib/` and `demo/` import (its lock holds only their
 * closure, so `deno task demo`, `start` and `compile` fetch nothing else);
 * `tests/deno.json` is the test-only import map: every runtime entry, same
 * version, plus the test tools, with its own lock.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

async function readJson(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await Deno.readTextFile(new URL(path, ROOT)));
}

async function sourceFiles(folder: URL): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(folder)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), folder);
    if (entry.isDirectory && entry.name !== "node_modules") files.push(...await sourceFiles(url));
    else if (entry.isFile && /\.tsx?$/.test(entry.name)) files.push(url.pathname);
  }
  return files;
}

Deno.test("issue 32: tests/deno.json maps every runtime import to the same package", async () => {
  const runtime = (await readJson("deno.json")).imports as Record<string, string>;
  const test = await readJson("tests/deno.json");
  const testImports = test.imports as Record<string, string>;
  for (const [name, target] of Object.entries(runtime)) {
    assert.equal(testImports[name], target, `tests/deno.json "${name}"`);
  }
  const root = await readJson("deno.json");
  assert.deepEqual(test.compilerOptions, root.compilerOptions);
  assert.deepEqual(test.unstable, root.unstable);
  // Editors format tests/ with tests/deno.json: the same width as the rest.
  assert.equal(
    (test.fmt as { lineWidth: number }).lineWidth,
    (root.fmt as { lineWidth: number }).lineWidth,
  );
});

Deno.test("issue 32: every import in deno.json is used by main.ts, lib/ or demo/", async () => {
  const runtime = (await readJson("deno.json")).imports as Record<string, string>;
  const files = [
    new URL("main.ts", ROOT).pathname,
    ...await sourceFiles(new URL("lib/", ROOT)),
    ...await sourceFiles(new URL("demo/", ROOT)),
  ];
  const used = new Set<string>();
  for (const file of files) {
    const text = await Deno.readTextFile(file);
    for (const match of text.matchAll(/(?:from|import\()\s*"([^".][^"]*)"/g)) used.add(match[1]!);
    // A module loaded by a non-literal dynamic import (the Redis client, kept out of type checks).
    for (const match of text.matchAll(/_MODULE: string = "([^".][^"]*)"/g)) used.add(match[1]!);
  }
  for (const name of Object.keys(runtime)) {
    const isUsed = [...used].some((s) => s === name || (name.endsWith("/") && s.startsWith(name)));
    assert.ok(isUsed, `"${name}" is in deno.json but no runtime module imports it`);
  }
});
