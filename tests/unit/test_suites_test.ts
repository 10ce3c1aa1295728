import assert from "node:assert/strict";
import { MEMORY_TESTS, SUITES, suitesFor } from "../../tools/test.ts";

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

Deno.test("issue 46: deno task test:unit runs tests/unit and the doc examples; a filter keeps the memory tests alone, after", () => {
  const isPath = (arg: string) => arg.startsWith("tests/");
  const unit = suitesFor(["--unit"], isPath);
  assert.deepEqual(unit.map((suite) => suite.args.at(-1)), ["tests/unit/", "tools/"]);
  assert.ok(unit[1]!.args.includes("--doc"));
  assert.deepEqual(suitesFor(["--"], isPath), SUITES);
  const filtered = suitesFor(["--", "ws", "--fail-fast"], isPath);
  assert.equal(filtered.length, 2);
  assert.ok(filtered[0]!.args.includes("--parallel"));
  assert.ok(filtered[0]!.args.includes(`--ignore=${MEMORY_TESTS.join(",")}`));
  assert.deepEqual(filtered[1]!.args.slice(-MEMORY_TESTS.length), MEMORY_TESTS);
  assert.ok(!filtered[1]!.args.includes("--parallel"));
  for (const suite of filtered) {
    assert.ok(suite.args.includes("--filter=ws") && suite.args.includes("--fail-fast"));
  }
  const file = suitesFor(["tests/unit/http_test.ts"], isPath);
  assert.deepEqual(file.map((suite) => suite.args.at(-1)), ["tests/unit/http_test.ts"]);
});
