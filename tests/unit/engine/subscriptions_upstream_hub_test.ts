import assert from "node:assert/strict";
import {
  type HubListener,
  SubscriptionHub,
} from "../../../lib/engine/subscriptions/upstream_hub.ts";
import type { UpstreamSink } from "../../../lib/engine/subscriptions/upstream_stream.ts";

const target = { url: "ws://reviews/graphql", protocol: "ws" as const };
const request = { query: "subscription{tick}", variables: {}, headers: {} };

/** A hub whose upstream streams are recorded (opened, closed, their sinks). */
function recordingHub(options: { deduplicate?: boolean } = {}) {
  const streams: { sink: UpstreamSink; closed: boolean }[] = [];
  const hub = new SubscriptionHub({
    open: (_target, _request, sink) => {
      const stream = { sink, closed: false };
      streams.push(stream);
      return () => void (stream.closed = true);
    },
    ...options,
  });
  return { hub, streams };
}

function listener(): HubListener & { events: string[]; ended: unknown[] } {
  const events: string[] = [];
  const ended: unknown[] = [];
  return { events, ended, next: (e) => void events.push(e.body), end: (f) => void ended.push(f) };
}

Deno.test("issue 29: identical subscriptions share one upstream; every listener gets each event; the last to leave closes it", () => {
  const { hub, streams } = recordingHub();
  const a = listener();
  const b = listener();
  const leaveA = hub.listen("reviews", { target, request, listener: a });
  const leaveB = hub.listen("reviews", { target, request, listener: b });
  assert.equal(streams.length, 1);
  streams[0]!.sink.next({ data: { tick: 1 } });
  assert.deepEqual(a.events, ['{"data":{"tick":1}}']);
  assert.deepEqual(b.events, ['{"data":{"tick":1}}']);
  assert.equal(hub.eventsIn, 1);
  leaveA();
  assert.equal(streams[0]!.closed, false);
  leaveA();
  assert.equal(streams[0]!.closed, false, "leaving twice is leaving once");
  leaveB();
  assert.equal(streams[0]!.closed, true);
  assert.equal(hub.upstreams, 0);
});

Deno.test("issue 29: another subgraph, document, variables or forwarded headers is another upstream", () => {
  const { hub, streams } = recordingHub();
  hub.listen("reviews", { target, request, listener: listener() });
  hub.listen("other", { target, request, listener: listener() });
  hub.listen("reviews", {
    target,
    request: { ...request, query: "subscription{tock}" },
    listener: listener(),
  });
  hub.listen("reviews", {
    target,
    request: { ...request, variables: { a: 1 } },
    listener: listener(),
  });
  hub.listen("reviews", {
    target,
    request: { ...request, headers: { "x-tenant": "t1" } },
    listener: listener(),
  });
  hub.listen("reviews", {
    target,
    request: { ...request, headers: { "x-tenant": "t1" } },
    listener: listener(),
  });
  assert.equal(streams.length, 5);
});

Deno.test("issue 29: with deduplicate off every subscription has its own upstream", () => {
  const { hub, streams } = recordingHub({ deduplicate: false });
  hub.listen("reviews", { target, request, listener: listener() });
  hub.listen("reviews", { target, request, listener: listener() });
  assert.equal(streams.length, 2);
});

Deno.test("issue 29: an upstream end reaches every listener once, and a new subscription opens a new upstream", () => {
  const { hub, streams } = recordingHub();
  const a = listener();
  const b = listener();
  hub.listen("reviews", { target, request, listener: a });
  hub.listen("reviews", { target, request, listener: b });
  streams[0]!.sink.end({ reason: "closed" });
  assert.deepEqual(a.ended, [{ reason: "closed" }]);
  assert.deepEqual(b.ended, [{ reason: "closed" }]);
  assert.equal(hub.upstreams, 0);
  hub.listen("reviews", { target, request, listener: listener() });
  assert.equal(streams.length, 2);
});
