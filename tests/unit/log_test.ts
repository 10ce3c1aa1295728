import assert from "node:assert/strict";
import { RouterError } from "../../lib/errors.ts";
import { createLogger, flushLogs } from "../../lib/log/mod.ts";

function capture(level: "debug" | "info" | "warn" | "error") {
  const lines: string[] = [];
  const log = createLogger({ level, write: (line) => lines.push(line), now: () => new Date(0) });
  return { log, records: () => lines.map((line) => JSON.parse(line)), lines };
}

Deno.test("DESIGN §4 Logs: one JSON object per line with level, msg, time, then the fields", () => {
  const { log, records, lines } = capture("debug");
  log.info("Router listening", { url: "http://127.0.0.1:1", operations: 3 });
  assert.equal(lines.length, 1);
  assert.ok(!lines[0]?.includes("\n"));
  assert.deepEqual(Object.keys(records()[0]), ["level", "msg", "time", "url", "operations"]);
  assert.deepEqual(records()[0], {
    level: "info",
    msg: "Router listening",
    time: "1970-01-01T00:00:00.000Z",
    url: "http://127.0.0.1:1",
    operations: 3,
  });
});

Deno.test("DESIGN §4 Logs: log_level sets the threshold", () => {
  for (
    const [level, want] of [
      ["debug", ["debug", "info", "warn", "error"]],
      ["info", ["info", "warn", "error"]],
      ["warn", ["warn", "error"]],
      ["error", ["error"]],
    ] as const
  ) {
    const { log, records } = capture(level);
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    assert.deepEqual(records().map((r) => r.level), want, level);
  }
});

Deno.test("DESIGN §4 Logs: errors are written with name, message and code; odd values never throw", () => {
  const { log, records } = capture("info");
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  log.error("Reload failed", {
    error: new RouterError("CONFIG_INVALID", 'Cannot read "x": expected a string'),
    big: 10n,
    circular,
  });
  const [record] = records();
  assert.deepEqual(record.error, {
    name: "RouterError",
    message: 'Cannot read "x": expected a string',
    code: "CONFIG_INVALID",
  });
  assert.equal(record.big, "10");
  assert.equal(typeof record.circular, "string");
  assert.equal(record.msg, "Reload failed");
});

Deno.test("issue 15/16: stdout log lines are written in batches; a warning or an error at once", () => {
  const stdout = Deno.stdout as unknown as { writeSync: (bytes: Uint8Array) => number };
  const original = stdout.writeSync;
  const writes: string[] = [];
  stdout.writeSync = (bytes) => {
    writes.push(new TextDecoder().decode(bytes));
    return bytes.length;
  };
  try {
    flushLogs();
    writes.length = 0;
    const log = createLogger({ level: "info", now: () => new Date(0) });
    for (let i = 0; i < 100; i++) log.info("request", { i });
    // Nothing written per line (one write(2) per request was 6 % of the router's time).
    assert.equal(writes.length, 0);
    log.error("boom");
    // The error and every line before it, in one write, in order.
    assert.equal(writes.length, 1);
    const lines = writes[0]!.trimEnd().split("\n").map((line) => JSON.parse(line));
    assert.equal(lines.length, 101);
    assert.deepEqual(lines.slice(0, 2).map((line) => line.i), [0, 1]);
    assert.equal(lines.at(-1).msg, "boom");
    log.info("pending");
    flushLogs();
    assert.equal(writes.length, 2);
    assert.equal(JSON.parse(writes[1]!).msg, "pending");
  } finally {
    stdout.writeSync = original;
  }
});

Deno.test("issue 15/16: a failing stdout (broken pipe) drops log lines, never throws into a request or a timer", () => {
  const stdout = Deno.stdout as unknown as { writeSync: (bytes: Uint8Array) => number };
  const original = stdout.writeSync;
  const originalError = console.error;
  let attempts = 0;
  const said: string[] = [];
  stdout.writeSync = () => {
    attempts++;
    throw new Deno.errors.BrokenPipe("Broken pipe (os error 32)");
  };
  console.error = (message: string) => void said.push(message);
  try {
    const log = createLogger({ level: "info" });
    log.info("pending");
    flushLogs(); // as the timer would
    log.error("at once"); // written in the caller's turn
    flushLogs();
    assert.equal(attempts, 2);
    assert.equal(said.length, 1);
    assert.match(said[0]!, /log lines dropped, stdout failed: BrokenPipe/);
  } finally {
    stdout.writeSync = original;
    console.error = originalError;
  }
});
