/**
 * Issue 39: subscription admission by capacity, on an engine whose clock, timer and serving
 * thread's CPU time are controlled by the test (no timing on the machine's load). The
 * subgraph's stream is a fake `open` that the test feeds events to; everything else (plan,
 * per-event execution, fan-out, buffers) is the engine's own.
 */
import assert from "node:assert/strict";
import { createEngine, type Engine, prepare, subscribe } from "../../../lib/engine/mod.ts";
import type { EventStream } from "../../../lib/engine/mod.ts";
import type { UpstreamSink } from "../../../lib/engine/subscriptions/upstream_stream.ts";
import { MIN_ADMITTED } from "../../../lib/engine/subscriptions/fanout_capacity.ts";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";

const SUPERGRAPH = Deno.readTextFileSync(
  new URL("../../../schema/supergraph.graphql", import.meta.url),
);
const QUERY = "subscription { reviewAdded { id body } }";
const SAMPLE_MS = 100;

/** An engine whose fan-out sampler runs on the test's clock and CPU figure. */
function harness(options: { maxCpuShare?: number; maxBuffered?: number }) {
  let clock = 0;
  let cpuMicros = 0;
  let due: (() => void) | null = null;
  const sinks: UpstreamSink[] = [];
  const engine: Engine = createEngine(buildSupergraph(SUPERGRAPH), {
    subscriptions: {
      maxBuffered: options.maxBuffered ?? 8,
      ...(options.maxCpuShare === undefined
        ? {}
        : { admission: { maxCpuShare: options.maxCpuShare } }),
      cpuTime: () => cpuMicros,
      now: () => clock,
      setTimer: (callback) => {
        due = callback;
        return 1;
      },
      sampleIntervalMs: SAMPLE_MS,
      open: (_target, _request, sink) => {
        sinks.push(sink);
        return () => {};
      },
    },
  });
  const prepared = prepare(engine, { query: QUERY, operationName: null, variables: null });
  if (!prepared.ok) throw new Error("The subscription does not prepare");
  let seq = 0;
  return {
    engine,
    subscribe: () => subscribe(engine, prepared.operation, {}),
    /** One event on the (shared) upstream stream. */
    emit() {
      seq++;
      for (const sink of sinks) sink.next({ data: { reviewAdded: { id: `r${seq}`, body: "b" } } });
    },
    /**
     * One sample window: `events` events, the serving thread `busy` of the time, then the
     * sampler's timer fires.
     */
    window(busy: number, events: number) {
      for (let i = 0; i < events; i++) this.emit();
      clock += SAMPLE_MS;
      cpuMicros += busy * SAMPLE_MS * 1000;
      const fire = due;
      due = null;
      fire?.();
    },
  };
}

/** Reads a stream's results as they come; `taken` counts them. */
function reader(stream: EventStream) {
  const state = { taken: 0, ended: false, last: null as unknown };
  void (async () => {
    for await (const result of stream) {
      state.taken++;
      state.last = result;
    }
    state.ended = true;
  })();
  return state;
}

const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("issue 39: a saturated router refuses new subscriptions with SUBSCRIPTION_LIMIT_REACHED and keeps every reader", async () => {
  const h = harness({ maxCpuShare: 0.8, maxBuffered: 4 });
  const readers = [];
  for (let i = 0; i < 20; i++) {
    const started = h.subscribe();
    assert.ok(started.ok, "admitted before the fan-out is measured");
    readers.push(reader(started.stream));
  }
  // The serving thread is saturated while events flow (100 % of each window), for 0.5 s.
  for (let i = 0; i < 5; i++) {
    h.window(1, 6);
    await turn();
  }
  assert.equal(h.engine.subscriptions.capacity?.behind, true);
  const refused = h.subscribe();
  assert.equal(refused.ok, false);
  const error = !refused.ok ? refused.result.errors?.[0] : undefined;
  assert.equal(error?.extensions?.code, "SUBSCRIPTION_LIMIT_REACHED");
  assert.match(error?.message ?? "", /behind the events .* saturated/);
  assert.equal(h.engine.subscriptions.limits.refusedBehind, 1);
  // Every reader got every event and none was ended.
  for (const r of readers) {
    assert.equal(r.ended, false);
    assert.equal(r.taken, 30);
  }
  assert.equal(h.engine.subscriptions.active.size, 20);
});

Deno.test("issue 39: while the router is behind, a reader whose results wait past max_buffered_events is kept; once the router keeps up, it is SUBSCRIPTION_CLIENT_TOO_SLOW", async () => {
  const h = harness({ maxCpuShare: 0.8, maxBuffered: 4 });
  const started = h.subscribe();
  assert.ok(started.ok);
  const stream = started.stream;
  // Saturated while events flow; the client takes each result.
  for (let i = 0; i < 5; i++) {
    h.window(1, 1);
    assert.equal((await stream.next()).done, false);
  }
  assert.equal(h.engine.subscriptions.capacity?.behind, true);
  // Not read: 4 results ready and waiting, then 4 more while the router is behind.
  for (let i = 0; i < 8; i++) {
    h.emit();
    await turn();
  }
  assert.equal(stream.ended, false, "the router, not the client, is behind: it is kept");
  for (let i = 0; i < 8; i++) assert.equal((await stream.next()).done, false);
  // The router has CPU to spare again: a client that lets its results wait is the slow one.
  for (let i = 0; i < 5; i++) {
    h.window(0.1, 1);
    assert.equal((await stream.next()).done, false);
  }
  assert.equal(h.engine.subscriptions.capacity?.behind, false);
  for (let i = 0; i < 5; i++) {
    h.emit();
    await turn();
  }
  assert.equal(stream.ended, true);
  const last = await stream.next();
  assert.equal(last.value?.errors?.[0]?.extensions?.code, "SUBSCRIPTION_CLIENT_TOO_SLOW");
  assert.equal(h.engine.subscriptions.limits.endedClientTooSlow, 1);
});

Deno.test("issue 39: admission projects the fan-out's CPU: subscriptions are admitted up to subscriptions.admission.max_cpu_share, the next one refused naming the key", async () => {
  const h = harness({ maxCpuShare: 0.8 });
  const readers = [];
  for (let i = 0; i < 20; i++) {
    const started = h.subscribe();
    assert.ok(started.ok);
    readers.push(reader(started.stream));
  }
  // 20 subscribers take 40 % of the thread while events flow: about 40 fit within 80 %.
  for (let i = 0; i < 5; i++) {
    h.window(0.4, 2);
    await turn();
  }
  let admitted = 20;
  let refusal: string | undefined;
  for (let i = 0; i < 100; i++) {
    const started = h.subscribe();
    if (!started.ok) {
      assert.equal(started.result.errors?.[0]?.extensions?.code, "SUBSCRIPTION_LIMIT_REACHED");
      refusal = started.result.errors?.[0]?.message;
      break;
    }
    readers.push(reader(started.stream));
    admitted++;
  }
  assert.ok(admitted >= 38 && admitted <= 40, `admitted ${admitted}`);
  assert.match(refusal ?? "", /subscriptions\.admission\.max_cpu_share: 80 %/);
  assert.equal(h.engine.subscriptions.limits.refusedCapacity, 1);
  // Those admitted all read.
  h.emit();
  await turn();
  assert.ok(readers.every((r) => !r.ended && r.taken >= 1));
});

Deno.test("issue 39: without events flowing there is no fan-out to judge: subscriptions past MIN_ADMITTED are admitted on a busy thread", () => {
  const h = harness({ maxCpuShare: 0.1 });
  for (let i = 0; i < MIN_ADMITTED; i++) assert.ok(h.subscribe().ok);
  for (let i = 0; i < 5; i++) h.window(0.9, 0);
  for (let i = 0; i < 10; i++) assert.ok(h.subscribe().ok);
  assert.equal(h.engine.subscriptions.limits.refusedCapacity, 0);
});

Deno.test("issue 39: with admission off (subscriptions.admission.enabled: false) nothing is refused by capacity, and a saturated router still does not blame its readers", async () => {
  const h = harness({ maxBuffered: 4 });
  const started = h.subscribe();
  assert.ok(started.ok);
  for (let i = 0; i < 5; i++) {
    h.window(1, 1);
    await started.stream.next();
  }
  assert.equal(h.engine.subscriptions.capacity?.behind, true);
  for (let i = 0; i < 40; i++) assert.ok(h.subscribe().ok, "no refusal by capacity");
  for (let i = 0; i < 8; i++) {
    h.emit();
    await turn();
  }
  assert.equal(started.stream.ended, false, "behind: the reader is kept");
});

Deno.test("admission: the first MIN_ADMITTED subscriptions are admitted even while the thread reads saturated (a loaded machine is no cause to refuse them)", async () => {
  const h = harness({ maxCpuShare: 0.8 });
  const first = h.subscribe();
  assert.ok(first.ok);
  const readers = [reader(first.stream)];
  // Other processes take the cores: the one subscription's thread reads 100 % while events flow.
  for (let i = 0; i < 5; i++) {
    h.window(1, 1);
    await turn();
  }
  assert.equal(h.engine.subscriptions.capacity?.behind, true);
  for (let i = 1; i < MIN_ADMITTED; i++) {
    const started = h.subscribe();
    assert.ok(started.ok, `subscription ${i + 1} of ${MIN_ADMITTED} admitted`);
    readers.push(reader(started.stream));
  }
  // Past the floor the router's own fan-out is on the thread: behind, it refuses.
  const refused = h.subscribe();
  assert.equal(refused.ok, false);
  assert.match(!refused.ok ? refused.result.errors?.[0]?.message ?? "" : "", /behind/);
  assert.equal(h.engine.subscriptions.limits.refusedBehind, 1);
  assert.equal(h.engine.subscriptions.active.size, MIN_ADMITTED);
});

Deno.test("admission: a thread that reads more than 100 % (a CPU clock faster than the window) says at most 100 %", async () => {
  const h = harness({ maxCpuShare: 0.8 });
  for (let i = 0; i < 20; i++) assert.ok(h.subscribe().ok);
  for (let i = 0; i < 5; i++) {
    h.window(5.45, 1);
    await turn();
  }
  assert.equal(h.engine.subscriptions.capacity?.busy, 1);
  const refused = h.subscribe();
  assert.match(
    !refused.ok ? refused.result.errors?.[0]?.message ?? "" : "",
    /saturated: 100 % busy/,
  );
});

Deno.test("admission: subscribers crowding in are judged by each sample's own count (an averaged count lags them, and the projection multiplied the lag)", async () => {
  const h = harness({ maxCpuShare: 0.8 });
  let active = 0;
  // A crowd connects while events trickle: the thread's share stays at 50 % while the count
  // grows 2, 6, 10, 14, 16; 16 subscribers cost at most 50 %, so 17 fit within 80 %
  // (the averaged count, 9.6, projected 0.5 / 9.6 × 17 = 89 %: refused).
  for (const count of [2, 6, 10, 14, 16]) {
    while (active < count) {
      assert.ok(h.subscribe().ok);
      active++;
    }
    h.window(0.5, 1);
    await turn();
  }
  const started = h.subscribe();
  assert.ok(started.ok, !started.ok ? started.result.errors?.[0]?.message : "");
  assert.equal(h.engine.subscriptions.limits.refusedCapacity, 0);
});

Deno.test("admission: a sample without deliveries is no evidence of the fan-out's cost (the CPU of subscribers connecting is not)", async () => {
  const h = harness({ maxCpuShare: 0.8 });
  // 40 subscribers connect while the feed is paused: the thread reads 90 % (handshakes, plans).
  for (let i = 0; i < 40; i++) assert.ok(h.subscribe().ok);
  for (let i = 0; i < 4; i++) {
    h.window(0.9, 0);
    await turn();
  }
  // Then events flow and delivering them to the 40 costs 10 % of the thread: about 320 fit.
  h.window(0.1, 1);
  await turn();
  for (let i = 0; i < 40; i++) {
    const started = h.subscribe();
    assert.ok(started.ok, !started.ok ? started.result.errors?.[0]?.message : "");
  }
  assert.equal(h.engine.subscriptions.limits.refusedCapacity, 0);
});
