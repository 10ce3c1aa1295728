import assert from "node:assert/strict";
import { BEHIND_FACTOR, EventStream } from "../../../lib/engine/subscriptions/event_stream.ts";
import type { ExecutionResult } from "../../../lib/engine/types.ts";
import { createSubscriptions, eventShareKey } from "../../../lib/engine/subscriptions/subscribe.ts";
import { compileHeaderRules } from "../../../lib/engine/fetch/headers.ts";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";

const event = (n: number) => ({ body: String(n), parsed: {}, shared: new Map() });

function stream(
  options: {
    maxBuffered?: number;
    run?: (n: number) => Promise<ExecutionResult>;
    behind?: () => boolean;
  } = {},
) {
  let ended = 0;
  const dropped: string[] = [];
  const s = new EventStream({
    maxBuffered: options.maxBuffered ?? 8,
    run: (e) => (options.run ?? ((n) => Promise.resolve({ data: { n } })))(Number(e.body)),
    onEnd: () => void ended++,
    onDropped: (reason) => void dropped.push(reason),
    ...(options.behind ? { behind: options.behind } : {}),
  });
  return { s, ended: () => ended, dropped };
}

/** Lets settled executions mark their results ready (a macrotask turn). */
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("issue 29: results come in event order even when a later event executes faster", async () => {
  let release = () => {};
  const slow = new Promise<void>((resolve) => (release = resolve));
  const { s } = stream({
    run: async (n) => {
      if (n === 1) await slow;
      return { data: { n } };
    },
  });
  s.push(event(1));
  s.push(event(2));
  const first = s.next();
  release();
  assert.deepEqual((await first).value, { data: { n: 1 } });
  assert.deepEqual((await s.next()).value, { data: { n: 2 } });
});

Deno.test("issue 29: one result past max_buffered_events ends the stream with SUBSCRIPTION_CLIENT_TOO_SLOW, its buffer dropped", async () => {
  const { s, ended, dropped } = stream({ maxBuffered: 3 });
  for (let i = 0; i < 3; i++) s.push(event(i));
  await turn(); // executed: only the client's taking them is awaited
  s.push(event(3));
  assert.equal(ended(), 1);
  assert.deepEqual(dropped, ["client_too_slow"]);
  const next = await s.next();
  assert.equal(next.value?.errors?.[0]?.extensions?.code, "SUBSCRIPTION_CLIENT_TOO_SLOW");
  assert.equal((await s.next()).done, true);
  s.push(event(9));
  assert.equal((await s.next()).done, true, "nothing is taken after the end");
});

Deno.test("issue 29: an end with an error delivers the results queued, then the error, then done; onEnd runs once", async () => {
  const { s, ended } = stream();
  s.push(event(1));
  s.end({ message: "reloaded", extensions: { code: "SUBSCRIPTION_SCHEMA_RELOAD" } });
  s.end(null);
  assert.equal(ended(), 1);
  assert.deepEqual((await s.next()).value, { data: { n: 1 } });
  assert.equal((await s.next()).value?.errors?.[0]?.extensions?.code, "SUBSCRIPTION_SCHEMA_RELOAD");
  assert.equal((await s.next()).done, true);
});

Deno.test("issue 29: return() (the client left) ends the stream at once and drops what waits", async () => {
  const { s, ended } = stream();
  s.push(event(1));
  const waiting = stream();
  const pending = waiting.s.next();
  await waiting.s.return();
  assert.equal((await pending).done, true, "a waiting next() is released");
  await s.return();
  assert.equal(ended(), 1);
  assert.equal((await s.next()).done, true);
});

Deno.test("issue 29: an event whose execution throws gives an INTERNAL error result, never a rejected stream", async () => {
  const { s } = stream({ run: () => Promise.reject(new Error("boom")) });
  s.push(event(1));
  const next = await s.next();
  assert.equal(next.value?.errors?.[0]?.extensions?.code, "INTERNAL");
  assert.doesNotMatch(JSON.stringify(next.value), /boom/);
});

Deno.test("issue 29: subscribers share an event's result only with the same plan, variables and forwarded headers", () => {
  const model = buildSupergraph(
    Deno.readTextFileSync(new URL("../../../schema/supergraph.graphql", import.meta.url)),
  );
  const propagators = new Map(
    [...model.subgraphs.keys()].map((name) => [
      name,
      compileHeaderRules({
        all: { request: [{ op: "propagate", named: "x-tenant" }] },
        subgraphs: {},
      }, name),
    ]),
  );
  const subs = createSubscriptions(model, { propagators });
  const planA = {};
  const planB = {};
  const key = (plan: object, variables: Record<string, unknown>, tenant: string, other = "") =>
    eventShareKey(subs, {
      plan,
      variables,
      headers: new Headers({ "x-tenant": tenant, "x-other": other }),
    });
  assert.equal(key(planA, { a: 1 }, "t1"), key(planA, { a: 1 }, "t1"));
  assert.equal(key(planA, { a: 1 }, "t1", "x"), key(planA, { a: 1 }, "t1", "y"), "not forwarded");
  assert.notEqual(key(planA, { a: 1 }, "t1"), key(planB, { a: 1 }, "t1"));
  assert.notEqual(key(planA, { a: 1 }, "t1"), key(planA, { a: 2 }, "t1"));
  assert.notEqual(key(planA, { a: 1 }, "t1"), key(planA, { a: 1 }, "t2"));
});

Deno.test("issue 39: while the router is behind (results ready, the serving thread saturated) a full buffer does not end the client's stream", async () => {
  let behind = true;
  const { s, ended } = stream({ maxBuffered: 3, behind: () => behind });
  for (let i = 0; i < 3; i++) s.push(event(i));
  await turn();
  for (let i = 3; i < 6; i++) s.push(event(i));
  assert.equal(ended(), 0, "the router, not the client, is slow: the reader is kept");
  for (let i = 0; i < 6; i++) assert.deepEqual((await s.next()).value, { data: { n: i } });
  // The router caught up: a client that then falls behind with its results ready is blamed.
  behind = false;
  for (let i = 0; i < 3; i++) s.push(event(i));
  await turn();
  s.push(event(3));
  assert.equal(ended(), 1);
  assert.equal(
    (await s.next()).value?.errors?.[0]?.extensions?.code,
    "SUBSCRIPTION_CLIENT_TOO_SLOW",
  );
});

Deno.test("issue 39: results still executing (the router is slow) do not end the stream until BEHIND_FACTOR × max_buffered_events; then SUBSCRIPTION_LIMIT_REACHED, not CLIENT_TOO_SLOW", async () => {
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const { s, ended, dropped } = stream({
    maxBuffered: 3,
    run: async (n) => {
      await gate;
      return { data: { n } };
    },
  });
  for (let i = 0; i < 3 * BEHIND_FACTOR; i++) s.push(event(i));
  assert.equal(ended(), 0, "nothing ready yet: the client is not the slow one");
  s.push(event(99));
  assert.equal(ended(), 1);
  assert.deepEqual(dropped, ["router_behind"]);
  release();
  const last = await s.next();
  assert.equal(last.value?.errors?.[0]?.extensions?.code, "SUBSCRIPTION_LIMIT_REACHED");
  assert.match(last.value?.errors?.[0]?.message ?? "", /fell 12 results behind/);
});

Deno.test("issue 39: a client waiting for a result still executing is not too slow, even when later results are ready and fill the buffer", async () => {
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const { s, ended } = stream({
    maxBuffered: 3,
    run: async (n) => {
      if (n === 0) await gate; // the first event's fetch is slow; the later ones are not
      return { data: { n } };
    },
  });
  s.push(event(0));
  const first = s.next(); // the client asks, and waits on event 0
  for (let i = 1; i <= 3; i++) s.push(event(i));
  await turn();
  s.push(event(4));
  assert.equal(ended(), 0, "the client waits on the router: it is not the slow one");
  release();
  assert.deepEqual((await first).value, { data: { n: 0 } });
  for (let i = 1; i <= 4; i++) assert.deepEqual((await s.next()).value, { data: { n: i } });
});

Deno.test("issue 45: a pushed stream hands each result over as soon as it and the earlier ones are ready, in event order, then the end's error, then done", async () => {
  let release = () => {};
  const slow = new Promise<void>((resolve) => (release = resolve));
  const { s } = stream({
    run: async (n) => {
      if (n === 1) await slow;
      return { data: { n } };
    },
  });
  const got: ExecutionResult[] = [];
  let done = 0;
  s.push(event(1));
  s.pushTo({ next: (r) => void got.push(r), done: () => void done++ });
  s.push(event(2));
  await turn();
  assert.deepEqual(got, [], "event 2 is ready but waits for event 1");
  release();
  await turn();
  assert.deepEqual(got, [{ data: { n: 1 } }, { data: { n: 2 } }]);
  s.push(event(3));
  s.end({ message: "bye", extensions: { code: "SUBSCRIPTION_SCHEMA_RELOAD" } });
  assert.equal(done, 0, "event 3 still executing: not done");
  await turn();
  assert.deepEqual(got.slice(2), [
    { data: { n: 3 } },
    { errors: [{ message: "bye", extensions: { code: "SUBSCRIPTION_SCHEMA_RELOAD" } }] },
  ]);
  assert.equal(done, 1);
});

Deno.test("issue 45: a pushed stream that the client leaves (return) is done at once, and nothing more is handed over", async () => {
  const { s, ended } = stream({ run: () => new Promise(() => {}) });
  const got: ExecutionResult[] = [];
  let done = 0;
  s.pushTo({ next: (r) => void got.push(r), done: () => void done++ });
  s.push(event(1));
  await s.return();
  assert.equal(done, 1);
  assert.equal(ended(), 1);
  s.push(event(2));
  await turn();
  assert.deepEqual(got, []);
});

Deno.test("issue 45: a pushed stream that falls BEHIND_FACTOR × max_buffered_events behind (results still executing) ends with SUBSCRIPTION_LIMIT_REACHED", () => {
  const { s, dropped } = stream({ maxBuffered: 2, run: () => new Promise(() => {}) });
  const got: ExecutionResult[] = [];
  let done = 0;
  s.pushTo({ next: (r) => void got.push(r), done: () => void done++ });
  for (let i = 0; i <= 2 * BEHIND_FACTOR; i++) s.push(event(i));
  assert.deepEqual(dropped, ["router_behind"]);
  assert.equal(got[0]?.errors?.[0]?.extensions?.code, "SUBSCRIPTION_LIMIT_REACHED");
  assert.equal(done, 1);
});
