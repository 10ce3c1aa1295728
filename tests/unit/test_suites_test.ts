import assert from "node:assert/strict";
import { MEMORY_TESTS, SUITES } from "../../tools/test.ts";

Deno.test("deno task test: every RSS-measuring test file runs alone, after the parallel suite, and only there", () => {
  const root = new URL("../../", import.meta.url).pathname;
  const found = [...Deno.readDirSync(`${root}tests/e2e`)]
    .map((entry) => entry.name)
    .filter((name) => name.endsWith("_memory_test.ts"))
    .map((name) => `tests/e2e/${name}`)
    .sort();
  assert.deepEqual([...MEMORY_TESTS].sort(), found);
  const parallel = SUITES.find((suite) => suite.args.includes("--parallel"))!;
  const ignored = parallel.args.find((arg) => arg.startsWith("--ignore="))!;
  assert.deepEqual(ignored.slice("--ignore=".length).split(",").sort(), found);
  const alone = SUITES.filter((suite) => MEMORY_TESTS.some((file) => suite.args.includes(file)));
  assert.equal(alone.length, 1);
  assert.ok(!alone[0]!.args.includes("--parallel"));
  assert.ok(SUITES.indexOf(alone[0]!) > SUITES.indexOf(parallel));
});
