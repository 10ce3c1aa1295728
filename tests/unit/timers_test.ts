import assert from "node:assert/strict";

/**
 * Runs `source` (a module that may import from lib/) in its own Deno process and
 * says whether it exited by itself within `boundMs` (else it is killed).
 */
async function exitsWithin(source: string, boundMs: number): Promise<boolean> {
  const file = await Deno.makeTempFile({
    dir: new URL(".", import.meta.url).pathname,
    suffix: ".ts",
  });
  try {
    await Deno.writeTextFile(file, source);
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", file],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const killer = setTimeout(() => child.kill("SIGKILL"), boundMs);
    const status = await child.status;
    clearTimeout(killer);
    return status.success;
  } finally {
    await Deno.remove(file);
  }
}

const LIB = new URL("../../lib/", import.meta.url).href;

Deno.test("timers: a deadline group whose work finished does not keep the process alive (Deno's Timeout handles)", async () => {
  // The group's timer is 60 s; finished work untracks at once, so the process ends now.
  const ended = await exitsWithin(
    `import { deadlineGroups } from "${LIB}deadline_groups.ts";
const track = deadlineGroups(60_000, { reason: () => new Error("late") });
const untrack = track(new AbortController());
await new Promise((resolve) => setTimeout(resolve, 5));
untrack();`,
    20_000,
  );
  assert.ok(ended, "the process was still alive 20 s after its only work finished");
});

Deno.test("timers: a running deadline group keeps the process alive until it fires", async () => {
  // The control: tracked work holds the process open, and the deadline aborts it.
  const ended = await exitsWithin(
    `import { deadlineGroups } from "${LIB}deadline_groups.ts";
const track = deadlineGroups(200, { reason: () => new Error("late") });
const controller = new AbortController();
track(controller);
controller.signal.addEventListener("abort", () => console.log("aborted"));`,
    20_000,
  );
  assert.ok(ended);
});

Deno.test("timers: unrefTimer lets an interval run in the background", async () => {
  const ended = await exitsWithin(
    `import { unrefTimer } from "${LIB}timers.ts";
unrefTimer(setInterval(() => {}, 60_000));`,
    20_000,
  );
  assert.ok(ended, "an unref'd interval kept the process alive");
});
