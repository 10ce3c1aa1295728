/** Issue 18: the pure JWKS key-source state machine (`lib/auth/key_set_machine.ts`). */
import assert from "node:assert/strict";
import {
  fetchFailed,
  fetchSucceeded,
  initialKeySetState,
  type KeySetPolicy,
  type KeySetState,
  takeUnknownKidCredit,
} from "../../lib/auth/key_set_machine.ts";

const policy: KeySetPolicy = {
  refreshIntervalMs: 60_000,
  unknownKid: { enabled: true, intervalMs: 10_000, burst: 2, maxWaitMs: 3_000 },
};

Deno.test("issue 18: failed fetches back off exponentially up to the refresh interval, and a success resets", () => {
  let state: KeySetState = initialKeySetState({ now: 0, burst: 2 });
  const delays: number[] = [];
  let now = 0;
  for (let i = 0; i < 9; i++) {
    state = fetchFailed(state, { now, policy }).state;
    delays.push(state.nextFetchAt - now);
    now = state.nextFetchAt;
  }
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
  assert.equal(state.status, "loading", "never loaded: still loading, not failing");
  state = fetchSucceeded(state, { now, policy }).state;
  assert.equal(state.failures, 0);
  assert.equal(state.nextFetchAt - now, 60_000);
});

Deno.test("issue 18: the outage is reported once per status change, not per failure", () => {
  let state = fetchSucceeded(initialKeySetState({ now: 0, burst: 2 }), { now: 0, policy }).state;
  const changes: string[] = [];
  for (let i = 1; i <= 5; i++) {
    const t = fetchFailed(state, { now: i * 1000, policy });
    if (t.changed) changes.push(`${t.changed.from}->${t.changed.to}`);
    state = t.state;
  }
  const back = fetchSucceeded(state, { now: 9000, policy });
  if (back.changed) changes.push(`${back.changed.from}->${back.changed.to}`);
  assert.deepEqual(changes, ["ok->failing", "failing->ok"]);
});

Deno.test("issue 18: the unknown-kid bucket refills one credit per interval and lets a request wait only up to max_wait", () => {
  let state = initialKeySetState({ now: 0, burst: 2 });
  const take = (now: number) => {
    const taken = takeUnknownKidCredit(state, { now, policy });
    state = taken.state;
    return taken.decision;
  };
  assert.equal(take(0).kind, "now");
  assert.equal(take(0).kind, "now");
  assert.equal(take(0).kind, "denied", "next credit in 10 s > max_wait 3 s");
  assert.deepEqual(
    take(8_000),
    { kind: "wait", ms: 2000 },
    "next credit within max_wait: reserved",
  );
  assert.equal(take(8_000).kind, "denied", "the reserved credit is gone");
  assert.equal(take(20_000).kind, "now");
  const disabled = { ...policy, unknownKid: { ...policy.unknownKid, enabled: false } };
  assert.equal(
    takeUnknownKidCredit(initialKeySetState({ now: 0, burst: 2 }), { now: 0, policy: disabled })
      .decision.kind,
    "denied",
  );
});
