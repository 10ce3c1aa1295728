/**
 * A closed-loop load generator: `CLIENTS` clients, each sending the next
 * request when its answer was read whole, for `SECONDS`. Prints one JSON
 * line: requests, statuses, answers cut short or with `errors`, latency
 * percentiles of the 200s, the largest answer's bytes.
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
}));
