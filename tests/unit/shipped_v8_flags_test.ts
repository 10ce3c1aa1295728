/**
 * Issue 45: the V8 flags the router ships with. `deno task start` and `deno task
 * compile` (the binary operators install) pass the same `--v8-flags`, among them
 * `--heap-growing-percent=100`: V8 sizes the old generation at twice what stayed
 * live instead of up to four times, which kept one client's 8 MiB answers at a
 * peak RSS of ~300 MiB instead of ~600 (bench/shapes/results.md, session 15b).
 * The flags must be ones this Deno's V8 knows: an unknown flag stops the router.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

async function tasks(): Promise<Record<string, string>> {
  const json = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  return json.tasks as Record<string, string>;
}

function v8Flags(command: string): string | undefined {
  return /(?:^|\s)--v8-flags=(\S+)/.exec(command)?.[1];
}

Deno.test("issue 45: `deno task start` and `deno task compile` ship the same V8 flags", async () => {
  const { start, compile } = await tasks();
  const flags = v8Flags(start!);
  assert.ok(flags, "deno task start passes no --v8-flags");
  assert.equal(v8Flags(compile!), flags, "deno task compile bakes in other V8 flags than start");
  assert.ok(
    flags.split(",").includes("--heap-growing-percent=100"),
    `the old generation's growing factor is not bounded: ${flags}`,
  );
});

Deno.test("issue 45: this Deno's V8 accepts the shipped flags", async () => {
  const flags = v8Flags((await tasks()).start!)!;
  const run = await new Deno.Command(Deno.execPath(), {
    args: ["eval", `--v8-flags=${flags}`, "console.log('ok')"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(run.stderr);
  assert.equal(run.code, 0, stderr);
  assert.equal(new TextDecoder().decode(run.stdout).trim(), "ok");
});
