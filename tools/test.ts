/**
 * `deno task test`: runs the test files (`deno test` under `tests/deno.json`,
 * the test-only import map; those that measure RSS alone, after the others)
 * and then the doc examples (`deno test --doc` under
 * the runtime `deno.json`), passes their output through, and ends with one line
 * summing both: `all tests: N passed, N failed (test files: …; doc examples: …)`.
 * The line does not start with `ok |`/`FAILED |`, so `.ci/run`, which sums the
 * suites' own totals lines, does not count it twice. Exits non-zero when either
 * suite fails.
 *
 * @module
 */

/** One suite: its name and the `deno test` arguments. */
interface Suite {
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

/** The suites `deno task test` runs, in order. */
export const SUITES: readonly Suite[] = [
  {
    name: "test files",
    args: [
      "test",
      "-A",
      "--config",
      "tests/deno.json",
      "--parallel",
      `--ignore=${MEMORY_TESTS.join(",")}`,
      "tests/",
      "lib/",
    ],
  },
  {
    name: "memory tests, alone",
    args: ["test", "-A", "--config", "tests/deno.json", ...MEMORY_TESTS],
  },
  { name: "doc examples", args: ["test", "-A", "--doc", "lib/", "tools/"] },
];

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
  const child = new Deno.Command(Deno.execPath(), {
    args: [...suite.args],
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

async function main(): Promise<number> {
  let passed = 0;
  let failed = 0;
  const parts: string[] = [];
  let code = 0;
  for (const suite of SUITES) {
    const result = await runSuite(suite);
    const totals = totalsOf(result.output);
    // A suite that crashed before its totals line (a type error) counts as one failure.
    const counted = totals ?? { passed: 0, failed: result.code === 0 ? 0 : 1 };
    passed += counted.passed;
    failed += counted.failed;
    parts.push(`${suite.name}: ${counted.passed} passed, ${counted.failed} failed`);
    if (result.code !== 0) code = 1;
  }
  console.log(`\nall tests: ${passed} passed, ${failed} failed (${parts.join("; ")})`);
  return code;
}

if (import.meta.main) Deno.exit(await main());
