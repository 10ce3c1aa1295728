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
