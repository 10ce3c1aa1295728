/**
 * Load generator of the subscription benchmark: N subscribers (one
 * `graphql-transport-ws` WebSocket each) on one topic of a gateway, then a
 * warm-up and a measured window. For every delivered event it takes
 * `now - emittedAt` (the emit time the feed subgraph embeds) into a
 * histogram of 0.1 ms buckets (bounded: 0 to 60 s). Around the window it
 * reads the CPU time (utime + stime, all processes of the gateway's process
 * group, from `/proc/<pid>/stat`) and the group's RSS.
 *
 * The protocol is spoken directly (no client library), so the generator
 * stays cheap next to the gateway it measures. A gateway that refuses
 * subscriptions (a failed upgrade, a close, an `error` message, or no event
 * within `--check-timeout` seconds) stops the run with exit code 3 and a line
 * saying why, never a hang.
 *
 * Arrival (`--arrival`): `paused` (the default) connects every subscriber while the feed is
 * paused, then starts it; `live` starts the feed first and connects the subscribers while
 * events flow, as a burst of subscribers meets a running router (issue 39). In `live` mode a
 * subscription refused with `SUBSCRIPTION_LIMIT_REACHED` is counted as refused (not a
 * failure) and asked again on its connection after 1 to 3 × `--retry-s` seconds (jitter, as
 * a client honouring `Retry-After` would) until the warm-up
 * ends; a subscriber is *admitted* once it got an event, and an admitted subscriber that then
 * gets an `error`, a `complete` or a close is *ended* (the figure that must stay 0). The
 * latency, `delivered_ratio` and `expected` then count the admitted subscribers only.
 *
 * Output: one JSON line on stdout (`subscribers`, `delivered`, `expected`,
 * `p50_ms`, `p99_ms`, `cpu_s`, `cpu_s_per_million`, `rss_idle_mib`,
 * `rss_loaded_mib`, `rss_per_1000_mib`, ...).
 *
 * `deno run -A bench/subscriptions/load.ts --url ws://127.0.0.1:47110/graphql
 *   --subscribers 1000 --rate 100 --warmup 5 --measure 20 --pgid <gateway pgid>`
 *
 * @module
 */
import { parseArgs } from "node:util";
import { FEED_ONLY_SUBSCRIPTION, SUBSCRIPTION } from "./subgraphs.ts";

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    subscribers: { type: "string", default: "1000" },
    rate: { type: "string", default: "100" },
    warmup: { type: "string", default: "5" },
    measure: { type: "string", default: "20" },
    pgid: { type: "string", default: "0" },
    "check-timeout": { type: "string", default: "15" },
    "connect-concurrency": { type: "string", default: "50" },
    topic: { type: "string", default: "bench" },
    feed: { type: "string", default: "http://127.0.0.1:47101" },
    /** `feed-only`: the subscription without the entity fields (the `limit` target). */
    query: { type: "string", default: "federated" },
    /** `paused` or `live` (see the module doc). */
    arrival: { type: "string", default: "paused" },
    "retry-s": { type: "string", default: "1" },
  },
});
const URL_ = values.url ?? "";
const SUBSCRIBERS = Number(values.subscribers);
const RATE = Number(values.rate);
const WARMUP_S = Number(values.warmup);
const MEASURE_S = Number(values.measure);
const PGID = Number(values.pgid);
const CHECK_S = Number(values["check-timeout"]);
const CONCURRENCY = Number(values["connect-concurrency"]);
const LIVE = values.arrival === "live";
const RETRY_MS = Number(values["retry-s"]) * 1000;
/** Live arrival: subscribers admitted (got an event), refusals, admitted ones ended. */
let admitted = 0;
let refusals = 0;
/** Refusals because the serving thread was saturated (the rest: over max_cpu_share, or another limit). */
let refusedBehind = 0;
let ended = 0;
let firstEnd = "";
let firstRefusal = "";
let retrying = true;

const BUCKET_MS = 0.1;
const BUCKETS = 600_000; // 60 s
const histogram = new Uint32Array(BUCKETS + 1);
let measuring = false;
let delivered = 0;
let failures = 0;
let firstFailure = "";
const EMITTED = /"emittedAt":([0-9.e+]+)/;

function fail(reason: string): never {
  console.error(`load: ${reason}`);
  console.log(JSON.stringify({ error: reason }));
  Deno.exit(3);
}

function noteFailure(reason: string): void {
  failures++;
  if (firstFailure === "") firstFailure = reason;
}

/** Opens one subscriber; resolves once it got its first event. */
function subscriber(
  index: number,
): { opened: Promise<void>; firstEvent: Promise<void> } {
  const opened = Promise.withResolvers<void>();
  const firstEvent = Promise.withResolvers<void>();
  let seen = false;
  let open = false;
  const socket = new WebSocket(URL_, "graphql-transport-ws");
  socket.onopen = () => {
    open = true;
    socket.send('{"type":"connection_init","payload":{}}');
  };
  let attempt = 0;
  let gone = false;
  const subscribe = () =>
    socket.send(JSON.stringify({
      id: `${index}.${attempt++}`,
      type: "subscribe",
      payload: {
        query: values.query === "feed-only" ? FEED_ONLY_SUBSCRIPTION : SUBSCRIPTION,
        variables: { topic: values.topic },
      },
    }));
  socket.onmessage = (event) => {
    const text = String(event.data);
    if (text.includes('"type":"next"')) {
      const now = performance.timeOrigin + performance.now();
      if (!seen) {
        seen = true;
        admitted++;
        firstEvent.resolve();
      }
      // Errors count in and out of the window (a subscriber dropped in the warm-up is a failure).
      if (text.includes('"errors"')) {
        noteFailure(`an event with errors: ${text.slice(0, 300)}`);
      }
      if (!measuring) return;
      const match = EMITTED.exec(text);
      if (match === null) {
        return noteFailure(`an event without emittedAt: ${text.slice(0, 200)}`);
      }
      const latency = now - Number(match[1]);
      histogram[
        Math.min(BUCKETS, Math.max(0, Math.round(latency / BUCKET_MS)))
      ]!++;
      delivered++;
      return;
    }
    if (text.includes('"type":"connection_ack"')) {
      opened.resolve();
      subscribe();
      return;
    }
    if (text.includes('"type":"ping"')) return socket.send('{"type":"pong"}');
    if (LIVE && !seen && text.includes("SUBSCRIPTION_LIMIT_REACHED")) {
      // Refused at subscribe time: the documented answer at capacity; asked again later.
      refusals++;
      if (text.includes("saturated")) refusedBehind++;
      if (firstRefusal === "") firstRefusal = text.slice(0, 400);
      opened.resolve();
      // As a client honouring Retry-After would, with jitter: 1 to 3 × --retry-s.
      const delay = RETRY_MS * (1 + 2 * Math.random());
      if (retrying) setTimeout(() => retrying && !gone && subscribe(), delay);
      return;
    }
    if (LIVE && seen && (text.includes('"type":"error"') || text.includes('"type":"complete"'))) {
      ended++;
      if (firstEnd === "") firstEnd = text.slice(0, 300);
    }
    if (text.includes('"type":"error"') || text.includes('"type":"complete"')) {
      const reason = `the gateway answered the subscription with: ${text.slice(0, 300)}`;
      noteFailure(reason);
      firstEvent.reject(new Error(reason));
    }
  };
  socket.onclose = (event) => {
    gone = true;
    if (LIVE && seen && measuringDone === false) {
      ended++;
      if (firstEnd === "") firstEnd = `closed with ${event.code} ${event.reason}`;
    }
    const reason = open
      ? `the gateway closed the WebSocket (code ${event.code}${
        event.reason ? `, "${event.reason}"` : ""
      })`
      : `the gateway refused the WebSocket upgrade on ${URL_} (no graphql-transport-ws there)`;
    noteFailure(reason);
    opened.reject(new Error(reason));
    firstEvent.reject(new Error(reason));
  };
  socket.onerror = () => {};
  sockets.push(socket);
  opened.promise.catch(() => {});
  firstEvent.promise.catch(() => {});
  return { opened: opened.promise, firstEvent: firstEvent.promise };
}

const sockets: WebSocket[] = [];
/** Set when the run closes the sockets itself. */
let measuringDone = false;

/** CPU seconds and RSS bytes of every process in the group. */
function groupUsage(
  pgid: number,
): { cpuS: number; rssBytes: number; pids: number } {
  if (pgid <= 0) return { cpuS: NaN, rssBytes: NaN, pids: 0 };
  const ticks = 100; // CLK_TCK on Linux
  const page = 4096;
  let cpu = 0;
  let rss = 0;
  let pids = 0;
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
    } catch {
      continue;
    }
    // Fields after the command name (which may hold spaces) start at ") ".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) !== pgid) continue; // field 5: pgrp
    cpu += Number(fields[11]) + Number(fields[12]); // fields 14, 15: utime, stime
    rss += Number(fields[21]) * page; // field 24: rss in pages
    pids++;
  }
  return { cpuS: cpu / ticks, rssBytes: rss, pids };
}

function percentile(p: number, total: number): number {
  const rank = Math.ceil((p / 100) * total);
  let seen = 0;
  for (let i = 0; i <= BUCKETS; i++) {
    seen += histogram[i]!;
    if (seen >= rank) return i * BUCKET_MS;
  }
  return NaN;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

if (URL_ === "") fail("--url is required");
const idle = groupUsage(PGID);

/** Tells the feed subgraph to emit one event now, or to start / stop its schedule. */
async function feed(action: "emit" | "start" | "stop"): Promise<void> {
  const response = await fetch(`${values.feed}/${action}`, { method: "POST" });
  await response.body?.cancel();
  if (response.status !== 204) {
    fail(`the feed subgraph answered ${action} with ${response.status}`);
  }
}

// 1. Check: one subscriber must get an event, or the gateway refuses subscriptions.
await feed("stop");
const probe = subscriber(-1);
const nudge = setInterval(() => void feed("emit"), 500);
const checked = await Promise.race([
  probe.firstEvent.then(() => "ok"),
  sleep(CHECK_S * 1000).then(() => "timeout"),
]).catch((error: Error) => error.message);
clearInterval(nudge);
if (checked !== "ok") {
  fail(
    checked === "timeout"
      ? `no event within ${CHECK_S} s on ${URL_}: ${firstFailure || "the subscription is silent"}`
      : checked,
  );
}

// 2. Connect the subscribers, at most CONCURRENCY handshakes at a time: with the feed paused
// (paused), or while it runs (live).
const started = performance.now();
const waiting: Promise<void>[] = [];
if (LIVE) await feed("start");
for (let i = 0; i < SUBSCRIBERS - 1; i += CONCURRENCY) {
  const batch = [];
  for (let j = i; j < Math.min(SUBSCRIBERS - 1, i + CONCURRENCY); j++) {
    const one = subscriber(j);
    batch.push(one.opened);
    waiting.push(one.firstEvent);
  }
  const ok = await Promise.race([
    Promise.all(batch).then(() => true),
    sleep(CHECK_S * 1000).then(() => false),
  ]).catch(() => false);
  if (!ok) {
    fail(`subscriber ${i + 1} could not connect: ${firstFailure || "timeout"}`);
  }
}
// 3. Start the events (paused); every subscriber must get one. Live: those admitted got one.
if (!LIVE) {
  await feed("start");
  const allFirst = await Promise.race([
    Promise.all(waiting).then(() => true),
    sleep(CHECK_S * 1000).then(() => false),
  ]).catch(() => false);
  if (!allFirst) {
    fail(`not every subscriber got an event in ${CHECK_S} s: ${firstFailure}`);
  }
}
const connectS = (performance.now() - started) / 1000;

// 4. Warm-up, then the measured window.
await sleep(WARMUP_S * 1000);
// Refused subscribers stop asking: the window measures the subscribers admitted by now.
retrying = false;
const admittedAtWindow = admitted; // the probe included
const endedBefore = ended;
const failuresBefore = failures;
const before = groupUsage(PGID);
measuring = true;
const windowStart = performance.now();
await sleep(MEASURE_S * 1000);
measuring = false;
const windowS = (performance.now() - windowStart) / 1000;
const after = groupUsage(PGID);
const endedInWindow = ended - endedBefore;
measuringDone = true;
await feed("stop");
for (const socket of sockets) socket.close(1000, "done");

const cpuS = after.cpuS - before.cpuS;
const served = LIVE ? admittedAtWindow : SUBSCRIBERS;
const expected = served * RATE * windowS;
const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
console.log(JSON.stringify({
  subscribers: SUBSCRIBERS,
  rate: RATE,
  window_s: round(windowS),
  connect_s: round(connectS),
  delivered,
  expected: Math.round(expected),
  delivered_ratio: round(delivered / expected, 3),
  events_per_s: Math.round(delivered / windowS),
  p50_ms: round(percentile(50, delivered)),
  p99_ms: round(percentile(99, delivered)),
  max_ms: round(percentile(100, delivered)),
  cpu_s: round(cpuS),
  cpu_pct: round((cpuS / windowS) * 100, 1),
  cpu_s_per_million: round((cpuS / delivered) * 1e6),
  events_per_cpu_s: Math.round(delivered / cpuS),
  rss_idle_mib: mib(idle.rssBytes),
  rss_loaded_mib: mib(after.rssBytes),
  rss_per_1000_mib: round(
    mib(after.rssBytes - idle.rssBytes) / (SUBSCRIBERS / 1000),
    1,
  ),
  gateway_pids: after.pids,
  failures: failures - failuresBefore,
  // Including the connect and warm-up: a subscriber dropped before the window shows only here.
  failures_total: failures,
  first_failure: firstFailure,
  ...(LIVE
    ? {
      arrival: "live",
      admitted: admittedAtWindow,
      refusals,
      refusals_behind: refusedBehind,
      refused_at_window: SUBSCRIBERS - admittedAtWindow,
      ended_total: ended,
      ended_in_window: endedInWindow,
      first_refusal: firstRefusal,
      first_end: firstEnd,
    }
    : {}),
}));
Deno.exit(0);
