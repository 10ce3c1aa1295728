/**
 * `deno task test` and `deno task test:unit`: run the test suites and end with
 * one line summing them, `all tests: N passed, N failed (…)`.
 *
 * - `deno task test`: every test file (`deno test --parallel` under
 *   `tests/deno.json`, the test-only import map), then the files that measure
 *   RSS, alone, then every doc example (`deno test --doc` under the runtime
 *   `deno.json`). What CI runs.
 * - `deno task test:unit` (`--unit`): `tests/unit/` and the doc examples.
 * - `deno task test -- <file|folder|filter>…`: the named files or folders, or
 *   the tests whose names contain a filter, without the doc examples; an
 *   argument that starts with `-` goes to `deno test` as it is.
 *
 * The summary line does not start with `ok |`/`FAILED |`, so `.ci/run`, which
 * sums the suites' own totals lines, does not count it twice. Exits non-zero
 * when a suite fails. Test files run `JOBS` at a time (`DENO_JOBS` overrides).
 *
 * @module
 */

/** One suite: its name and the `deno test` arguments. */
export interface Suite {
  readonly name: string;
  readonly args: readonly string[];
}

/**
 * Test files that measure a router process's RSS (`tests/e2e/*_memory_test.ts`).
 * They run after the others, one at a time: among parallel test processes
 * V8's collector threads lag behind and the peaks measure the machine's load
 * (a 416 MB peak against a 389 MB bound in session 13's full suite, which the
 * same test met alone).
 */
export const MEMORY_TESTS: readonly string[] = [
  "tests/e2e/document_caches_memory_test.ts",
  "tests/e2e/file_uploads_memory_test.ts",
  "tests/e2e/large_answers_memory_test.ts",
];

/**
 * Test files run at a time when `DENO_JOBS` is not set: twice the cores (at
 * least 4). Most end-to-end tests wait on sockets, timers and child processes,
 * so two files a core keep the cores busy; the tests' bounds do not depend on
 * the machine's load.
 */
export const JOBS: number = Math.max(4, 2 * navigator.hardwareConcurrency);

const TEST = ["test", "-A", "--config", "tests/deno.json"] as const;
const DOC: Suite = {
  name: "doc examples",
  args: ["test", "-A", "--doc", "--parallel", "lib/", "tools/"],
};

/** The suites `deno task test` runs, in order. */
export const SUITES: readonly Suite[] = [
  {
    name: "test files",
    args: [...TEST, "--parallel", `--ignore=${MEMORY_TESTS.join(",")}`, "tests/", "lib/"],
  },
  { name: "memory tests, alone", args: [...TEST, ...MEMORY_TESTS] },
  DOC,
];

/** The suites `deno task test:unit` runs: the unit tests, then the doc examples. */
export const UNIT_SUITES: readonly Suite[] = [
  { name: "unit tests", args: [...TEST, "--parallel", "tests/unit/"] },
  DOC,
];

/**
 * The suites for `tools/test.ts`'s arguments: none, every suite; `--unit`, the
 * unit suites. Any other argument that starts with `-` is passed to each
 * `deno test`; one that names a file or folder (`isPath`) is run instead of the
 * suites (those alone); any other is a filter on test names over the suites'
 * test files, without the doc examples (the memory tests still alone, after).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SUITES, suitesFor, UNIT_SUITES } from "./test.ts";
 * const isPath = (arg: string) => arg.endsWith(".ts");
 * assert.equal(suitesFor([], isPath), SUITES);
 * assert.equal(suitesFor(["--unit"], isPath), UNIT_SUITES);
 * const [one] = suitesFor(["--", "tests/unit/http_test.ts"], isPath);
 * assert.deepEqual(one!.args.slice(-2), ["--parallel", "tests/unit/http_test.ts"]);
 * const filtered = suitesFor(["cors"], isPath);
 * assert.equal(filtered.length, 2);
 * assert.ok(filtered.every((suite) => suite.args.includes("--filter=cors")));
 * const failFast = suitesFor(["--unit", "--fail-fast"], isPath);
 * assert.equal(failFast.length, UNIT_SUITES.length);
 * assert.ok(failFast.every((suite) => suite.args[1] === "--fail-fast"));
 * ```
 * @param args The command line, `--` allowed.
 * @param isPath Whether an argument names a file or folder.
 * @returns The suites to run, in order.
 */
export function suitesFor(
  args: readonly string[],
  isPath: (arg: string) => boolean,
): readonly Suite[] {
  const rest = args.filter((arg) => arg !== "--");
  const unit = rest.includes("--unit");
  const base = unit ? UNIT_SUITES : SUITES;
  const flags = rest.filter((arg) => arg.startsWith("-") && arg !== "--unit");
  const paths = rest.filter((arg) => !arg.startsWith("-") && isPath(arg));
  const filters = rest.filter((arg) => !arg.startsWith("-") && !isPath(arg));
  if (flags.length === 0 && paths.length === 0 && filters.length === 0) return base;
  const filter = filters.length === 0
    ? []
    : [`--filter=${filters.length === 1 ? filters[0] : `/${filters.map(escape).join("|")}/`}`];
  /** The suite's `deno test` with the extra arguments after `test`. */
  const plus = (suite: Suite): Suite => ({
    ...suite,
    args: [suite.args[0]!, ...flags, ...filter, ...suite.args.slice(1)],
  });
  if (paths.length > 0) {
    return [{ name: "test files", args: [...TEST, ...flags, ...filter, "--parallel", ...paths] }];
  }
  if (filter.length > 0) return base.filter((suite) => suite !== DOC).map(plus);
  return base.map(plus);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** Passed and failed counts of a suite. */
export interface Totals {
  readonly passed: number;
  readonly failed: number;
}

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/**
 * Reads the totals line of `deno test` output (`ok | 12 passed | 0 failed …`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { totalsOf } from "./test.ts";
 * assert.deepEqual(totalsOf("x\nFAILED | 3 passed (1 step) | 2 failed (4s)\n"), {
 *   passed: 3,
 *   failed: 2,
 * });
 * assert.equal(totalsOf("error: Module not found"), undefined);
 * ```
 * @param output The suite's output.
 * @returns The counts, or `undefined` when there is no totals line (a crash).
 */
export function totalsOf(output: string): Totals | undefined {
  let found: Totals | undefined;
  for (const line of output.replace(ANSI, "").split("\n")) {
    const match = /^(?:ok|FAILED) \| (\d+) passed.*\| (\d+) failed/.exec(line);
    if (match) found = { passed: Number(match[1]), failed: Number(match[2]) };
  }
  return found;
}

async function runSuite(suite: Suite): Promise<{ code: number; output: string }> {
  const env: Record<string, string> = {};
  if (!Deno.env.get("DENO_JOBS")) env.DENO_JOBS = String(JOBS);
  const child = new Deno.Command(Deno.execPath(), {
    args: [...suite.args],
    env,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let output = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stdout) {
    await Deno.stdout.write(chunk);
    output += decoder.decode(chunk, { stream: true });
  }
  return { code: (await child.status).code, output };
}

function isPath(arg: string): boolean {
  try {
    Deno.statSync(arg);
    return true;
  } catch {
    return false;
  }
}

async function main(args: readonly string[]): Promise<number> {
  let passed = 0;
  let failed = 0;
  const parts: string[] = [];
  let code = 0;
  const started = performance.now();
  for (const suite of suitesFor(args, isPath)) {
    const result = await runSuite(suite);
    const totals = totalsOf(result.output);
    // A suite that crashed before its totals line (a type error) counts as one failure.
    const counted = totals ?? { passed: 0, failed: result.code === 0 ? 0 : 1 };
    passed += counted.passed;
    failed += counted.failed;
    parts.push(`${suite.name}: ${counted.passed} passed, ${counted.failed} failed`);
    if (result.code !== 0) code = 1;
  }
  const seconds = Math.round((performance.now() - started) / 1000);
  console.log(
    `\nall tests: ${passed} passed, ${failed} failed (${parts.join("; ")}) in ${seconds} s`,
  );
  return code;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
