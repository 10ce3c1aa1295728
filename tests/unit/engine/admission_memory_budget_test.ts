/** Issue 15: the in-flight memory budget (`lib/engine/memory_budget.ts`). */
import assert from "node:assert/strict";
import { createMemoryBudget } from "../../../lib/engine/admission/memory_budget.ts";

function budget(maxBytes: number, maxTicketBytes = Infinity) {
  let released = 0;
  const b = createMemoryBudget({
    maxBytes,
    maxTicketBytes,
    tooLarge: (limit) => new RangeError(`over ${limit}`),
    onRelease: () => released++,
  });
  return { b, released: () => released };
}

Deno.test("issue 15: once the budget is spent a younger operation's read waits until bytes are released", async () => {
  const { b, released } = budget(100);
  const older = b.open();
  const younger = b.open();
  assert.equal(b.charge(60, { tickets: [younger] }), undefined);
  assert.equal(b.charge(50, { tickets: [older] }), undefined, "the oldest never waits");
  assert.equal(b.spent, true);
  let resumed = false;
  const wait = b.charge(10, { tickets: [younger] })?.then(() => resumed = true);
  assert.ok(wait, "the younger read waits");
  assert.equal(b.waiting, 1);
  await Promise.resolve();
  assert.equal(resumed, false);
  older.close();
  await wait;
  assert.equal(resumed, true);
  assert.equal(b.used, 70);
  assert.equal(released(), 1, "the admission gate hears of the release");
  younger.close();
  assert.equal(b.used, 0);
});

Deno.test("issue 15: a shared answer proceeds when any operation waiting on it is the oldest (no deadlock)", () => {
  const { b } = budget(10);
  const older = b.open();
  const younger = b.open();
  b.charge(20, { tickets: [younger] });
  // The flight was started by the younger one; the older one joined it.
  assert.equal(b.charge(5, { tickets: [younger, older] }), undefined);
  assert.equal(younger.bytes, 25, "charged to the first open ticket");
});

Deno.test("issue 15: an operation over engine.max_response_bytes fails with tooLarge and is marked exceeded", () => {
  const { b } = budget(0, 100);
  const ticket = b.open();
  b.charge(80, { tickets: [ticket] });
  assert.throws(() => b.charge(30, { tickets: [ticket] }), /over 100/);
  assert.equal(ticket.exceeded, true);
  ticket.close();
  ticket.close();
  assert.equal(b.used, 0, "closing twice releases once");
  assert.equal(
    b.charge(10, { tickets: [ticket] }),
    undefined,
    "a closed ticket is charged nothing",
  );
  assert.equal(b.used, 0);
});

Deno.test("issue 15: a read waiting for the budget ends with its signal's reason", async () => {
  const { b } = budget(10);
  b.open();
  const younger = b.open();
  const controller = new AbortController();
  const wait = b.charge(20, { tickets: [younger], signal: controller.signal });
  assert.ok(wait);
  controller.abort(new Error("client gone"));
  await assert.rejects(wait, /client gone/);
  assert.equal(b.waiting, 0);
});

Deno.test("issue 15: a declared length is reserved before it is read, and waits while it would not fit", async () => {
  const { b } = budget(100);
  const older = b.open();
  const younger = b.open();
  const third = b.open();
  assert.equal(b.reserve(70, { tickets: [younger] }), undefined);
  const waits = [b.reserve(40, { tickets: [third] }), b.reserve(40, { tickets: [third] })];
  assert.ok(waits.every((w) => w instanceof Promise));
  assert.equal(b.used, 70, "nothing charged while waiting");
  assert.equal(b.reserve(50, { tickets: [older] }), undefined, "the oldest never waits");
  older.close();
  younger.close();
  await Promise.all(waits);
  assert.equal(b.used, 80, "granted one by one, each seeing the other's bytes");
});

Deno.test("issue 34: answers are charged their cost (bytes × costPerByte), while the per-operation limit counts bytes", () => {
  const b = createMemoryBudget({
    maxBytes: 1_000,
    maxTicketBytes: 300,
    tooLarge: (limit) => new RangeError(`over ${limit}`),
    costPerByte: 4,
  });
  const older = b.open();
  const younger = b.open();
  assert.equal(b.charge(200, { tickets: [older] }), undefined);
  assert.equal(older.bytes, 200);
  assert.equal(b.used, 800, "200 bytes cost 800");
  assert.ok(b.reserve(100, { tickets: [younger] }) instanceof Promise, "400 more would not fit");
  assert.throws(() => b.charge(101, { tickets: [older] }), /over 300/, "the limit is in bytes");
  older.close();
  assert.equal(b.used, 400, "the waiting reservation was charged at its cost");
  younger.close();
});

Deno.test("issue 34: a read waiting for memory past maxWaitMs ends with the overloaded error and marks its ticket refused", async () => {
  const timers = new Map<number, () => void>();
  let id = 0;
  const b = createMemoryBudget({
    maxBytes: 100,
    maxTicketBytes: Infinity,
    tooLarge: () => new RangeError("too large"),
    maxWaitMs: 5_000,
    overloaded: () => Object.assign(new Error("overloaded"), { code: "SERVICE_OVERLOADED" }),
    setTimer: (callback) => {
      timers.set(++id, callback);
      return id;
    },
    clearTimer: (timer) => void timers.delete(timer),
  });
  const older = b.open();
  const younger = b.open();
  const third = b.open();
  b.charge(150, { tickets: [older] });
  const waits = [b.reserve(10, { tickets: [younger] }), b.charge(10, { tickets: [third] })];
  assert.equal(timers.size, 2, "each wait is bounded");
  // The first wait's time runs out (the fake clock fires its timer).
  timers.get(1)!();
  await assert.rejects(waits[0]!, { code: "SERVICE_OVERLOADED" });
  assert.equal(younger.refused, true);
  assert.equal(third.refused, false);
  // The other is granted in time: its timer is cleared.
  older.close();
  await waits[1];
  assert.equal(timers.size, 1, "only the fired timer's entry is left in the fake map");
  assert.equal(third.refused, false);
  younger.close();
  third.close();
  assert.equal(b.used, 0);
});

Deno.test("issue 34: a rendered answer waiting for its client keeps costing its bytes, but no longer runs (the next oldest proceeds)", async () => {
  const b = createMemoryBudget({
    maxBytes: 100,
    maxTicketBytes: Infinity,
    tooLarge: () => new RangeError("too large"),
    costPerByte: 4,
  });
  const done = b.open();
  const next = b.open();
  const third = b.open();
  b.charge(20, { tickets: [done] });
  assert.equal(b.used, 80);
  const waiting = b.reserve(10, { tickets: [third] });
  assert.ok(waiting instanceof Promise);
  done.keep(20); // rendered: 20 bytes wait for the client
  await waiting; // 20 + 40 fit: the waiting reservation is granted at once
  assert.equal(b.used, 60);
  // `next` is now the oldest running operation: it proceeds past the budget.
  assert.equal(b.charge(50, { tickets: [next] }), undefined);
  done.close();
  next.close();
  third.close();
  assert.equal(b.used, 0);
});
