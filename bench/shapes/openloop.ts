/**
 * An open-loop load generator (wrk2 is not in Debian): requests leave at a
 * fixed rate whatever the answers do, so latency includes queueing (no
 * coordinated omission), each with a unique `Authorization` header (with
 * `SAME_AUTHORIZATION`, that one value on every request: identical requests). Prints
 * one JSON line: sent, statuses, 503s with `Retry-After`, latency
 * percentiles of the 200s, and errors (bodies with `errors`, failed sockets).
 * With `EXPECT_DATA_FILE` (a JSON file), every 200's `data` is compared with
 * it (key order ignored); mismatches count as `wrong_answers`.
 *
 *   deno run -A bench/shapes/openloop.ts URL BODY_FILE RATE SECONDS [WARMUP_S]
 *
 * @module
 */
const [url, bodyFile, rateText, secondsText, warmupText] = Deno.args;
if (!url || !bodyFile || !rateText || !secondsText) {
  console.error("usage: openloop.ts URL BODY_FILE RATE SECONDS [WARMUP_S]");
  Deno.exit(2);
}
const body = await Deno.readTextFile(bodyFile);
const rate = Number(rateText);
const seconds = Number(secondsText);
const warmup = Number(warmupText ?? "0");
const expectBytes = Number(Deno.env.get("EXPECT_MIN_BYTES") ?? "0");
const expectFile = Deno.env.get("EXPECT_DATA_FILE");
const sameAuthorization = Deno.env.get("SAME_AUTHORIZATION");

/** JSON text with object keys sorted, so that key order does not count. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
const expected = expectFile
  ? canonical(JSON.parse(await Deno.readTextFile(expectFile)))
  : undefined;

interface Tally {
  sent: number;
  statuses: Record<string, number>;
  retryAfter503: number;
  graphqlErrors: number;
  wrongAnswers: number;
  shortBodies: number;
  socketErrors: number;
  latencies: number[];
}
const tally = (): Tally => ({
  sent: 0,
  statuses: {},
  retryAfter503: 0,
  graphqlErrors: 0,
  wrongAnswers: 0,
  shortBodies: 0,
  socketErrors: 0,
  latencies: [],
});

let serial = 0;
async function one(into: Tally): Promise<void> {
  const started = performance.now();
  into.sent++;
  try {
    const response = await fetch(url!, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: sameAuthorization ?? `Bearer user-${++serial}-${started.toFixed(3)}`,
      },
      body,
    });
    const text = await response.text();
    const key = String(response.status);
    into.statuses[key] = (into.statuses[key] ?? 0) + 1;
    if (response.status === 503 && response.headers.get("retry-after")) into.retryAfter503++;
    if (response.status === 200) {
      into.latencies.push(performance.now() - started);
      if (text.includes('"errors"')) into.graphqlErrors++;
      if (text.length < expectBytes) into.shortBodies++;
      if (expected !== undefined) {
        let data: unknown;
        try {
          data = JSON.parse(text).data;
        } catch {
          data = undefined;
        }
        if (canonical(data) !== expected) into.wrongAnswers++;
      }
    }
  } catch {
    into.socketErrors++;
  }
}

async function phase(durationS: number, into: Tally): Promise<void> {
  const pending = new Set<Promise<void>>();
  const start = performance.now();
  const total = Math.round(rate * durationS);
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const p = one(into).finally(() => pending.delete(p));
    pending.add(p);
  }
  await Promise.all(pending);
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

if (warmup > 0) await phase(warmup, tally());
const measured = tally();
const t0 = performance.now();
await phase(seconds, measured);
const elapsed = (performance.now() - t0) / 1000;
const sorted = measured.latencies.sort((a, b) => a - b);
const round = (n: number) => Math.round(n * 10) / 10;
console.log(JSON.stringify({
  rate,
  seconds: round(elapsed),
  sent: measured.sent,
  statuses: measured.statuses,
  retry_after_503: measured.retryAfter503,
  graphql_errors: measured.graphqlErrors,
  wrong_answers: measured.wrongAnswers,
  short_bodies: measured.shortBodies,
  socket_errors: measured.socketErrors,
  p50_ms: round(percentile(sorted, 50)),
  p90_ms: round(percentile(sorted, 90)),
  p99_ms: round(percentile(sorted, 99)),
  max_ms: round(sorted.at(-1) ?? NaN),
}));
