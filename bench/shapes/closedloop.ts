/**
 * A closed-loop load generator: `CLIENTS` clients, each sending the next
 * request when its answer was read whole, for `SECONDS`. Prints one JSON
 * line: requests, statuses, answers cut short or with `errors`, latency
 * percentiles of the 200s, the largest answer's bytes. With `EXPECT_DATA_FILE`
 * (a JSON file), every 200's `data` is compared with it (`wrong_answers`):
 * an answer that is exactly `{"data":…}` of it printed in selection order is
 * right without parsing; any other is parsed and compared with key order
 * ignored (an answer with `errors` beside the right `data` is counted in
 * `graphql_errors`, not as wrong).
 *
 *   deno run -A bench/shapes/closedloop.ts URL BODY_FILE CLIENTS SECONDS [MIN_BYTES]
 *
 * @module
 */
const [url, bodyFile, clientsText, secondsText, minText] = Deno.args;
if (!url || !bodyFile || !clientsText || !secondsText) {
  console.error("usage: closedloop.ts URL BODY_FILE CLIENTS SECONDS [MIN_BYTES]");
  Deno.exit(2);
}
const body = await Deno.readTextFile(bodyFile);
const minBytes = Number(minText ?? "0");
const end = performance.now() + Number(secondsText) * 1000;
const latencies: number[] = [];
const statuses: Record<string, number> = {};
let errors = 0;
let short = 0;
let socket = 0;
let wrong = 0;
const expectFile = Deno.env.get("EXPECT_DATA_FILE");
const expectedData = expectFile ? JSON.parse(await Deno.readTextFile(expectFile)) : undefined;
const expectedText = expectFile ? `{"data":${JSON.stringify(expectedData)}}` : undefined;
const expectedCanonical = expectFile ? canonical(expectedData) : undefined;

/** JSON text with object keys sorted, so that key order does not count. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** True when the answer's `data` is the expected one. */
function rightData(text: string): boolean {
  if (text === expectedText) return true;
  try {
    return canonical(JSON.parse(text).data) === expectedCanonical;
  } catch {
    return false;
  }
}
/** The largest answer read, bytes (UTF-8). */
let answerBytes = 0;
const utf8 = new TextEncoder();
async function client(): Promise<void> {
  while (performance.now() < end) {
    const started = performance.now();
    try {
      const response = await fetch(url!, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      const text = await response.text();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      if (response.status !== 200) continue;
      latencies.push(performance.now() - started);
      if (text.length > answerBytes) answerBytes = utf8.encode(text).length;
      if (text.length < minBytes) short++;
      else if (text.includes('"errors"')) errors++;
      if (expectedText !== undefined && !rightData(text)) wrong++;
    } catch {
      socket++;
    }
  }
}
const t0 = performance.now();
await Promise.all(Array.from({ length: Number(clientsText) }, client));
const seconds = (performance.now() - t0) / 1000;
latencies.sort((a, b) => a - b);
const at = (p: number) =>
  latencies.length === 0
    ? NaN
    : Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!);
console.log(JSON.stringify({
  clients: Number(clientsText),
  seconds: Math.round(seconds * 10) / 10,
  ok: latencies.length,
  statuses,
  graphql_errors: errors,
  short_bodies: short,
  socket_errors: socket,
  p50_ms: at(0.5),
  p90_ms: at(0.9),
  p99_ms: at(0.99),
  answer_bytes: answerBytes,
  ...(expectedText === undefined ? {} : { wrong_answers: wrong }),
}));
