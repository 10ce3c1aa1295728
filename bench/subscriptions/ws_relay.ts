/**
 * The connection guard's relay on WebSocket fan-out, alone: a server that
 * broadcasts one FRAME-byte text frame to every open WebSocket RATE times a
 * second, served through {@linkcode serveGuarded} with the default limits
 * (`guard`) or by `Deno.serve` on TCP (`direct`); the driver (this file with
 * `drive`) starts it pinned to CPU 1, opens SUBSCRIBERS WebSockets, checks
 * every frame arrives in order, and prints the server's CPU per frame
 * delivered (/proc/<pid>/stat): guard minus direct is the relay's cost.
 *
 *   deno run -A bench/subscriptions/ws_relay.ts drive [SUBSCRIBERS=1000] [RATE=10] [SECONDS=10] [FRAME=300]
 *   ROUNDS=3 bench/subscriptions/ws_relay.sh [BASE_ROOT]   # guard (and base) and direct alternated
 *
 * @module
 */
import { serveGuarded } from "../../lib/listen/mod.ts";

const [mode = "drive", ...rest] = Deno.args;

if (mode === "guard" || mode === "direct") {
  const [port = "15520", rate = "10", frame = "300"] = rest;
  const limits = mode === "guard"
    ? { headerReadTimeoutMs: 10_000, keepAliveTimeoutMs: 75_000, maxConnections: 4_096 }
    : { headerReadTimeoutMs: 0, keepAliveTimeoutMs: 0, maxConnections: 0 };
  const log = { debug() {}, info() {}, warn() {}, error() {} };
  const sockets = new Set<WebSocket>();
  let seq = 0;
  const pad = "x".repeat(Math.max(0, Number(frame) - 30));
  setInterval(() => {
    const text = JSON.stringify({ seq: seq++, pad });
    for (const socket of sockets) if (socket.readyState === WebSocket.OPEN) socket.send(text);
  }, 1_000 / Number(rate));
  const server = await serveGuarded(
    { hostname: "127.0.0.1", port: Number(port), limits, log },
    (request) => {
      const { socket, response } = Deno.upgradeWebSocket(request);
      socket.onopen = () => sockets.add(socket);
      socket.onclose = () => sockets.delete(socket);
      return response;
    },
  );
  console.log(`ready ${Deno.pid}`);
  Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
  // A clean exit writes a --cpu-prof profile.
  await server.finished;
} else {
  const [subscribers = "1000", rate = "10", seconds = "10", frame = "300", which = "guard"] = rest;
  const port = 15520;
  const child = new Deno.Command("taskset", {
    args: [
      "-c",
      "1",
      Deno.execPath(),
      "run",
      "-A",
      ...(Deno.env.get("CPU_PROF") ? [`--cpu-prof-dir=${Deno.env.get("CPU_PROF")}`] : []),
      new URL(import.meta.url).pathname,
      which,
      `${port}`,
      rate,
      frame,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("ready")) out += (await reader.read()).value ?? "";
  const pid = Number(out.match(/ready (\d+)/)![1]);
  const cpuTicks = () => {
    const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1]!.split(" ");
    return Number(fields[11]) + Number(fields[12]);
  };
  let frames = 0;
  let outOfOrder = 0;
  const sockets: WebSocket[] = [];
  for (let i = 0; i < Number(subscribers); i++) {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/`);
    let last = -1;
    socket.onmessage = (event) => {
      const seq = JSON.parse(event.data).seq as number;
      if (last >= 0 && seq !== last + 1) outOfOrder++;
      last = seq;
      frames++;
    };
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    sockets.push(socket);
  }
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const t0 = cpuTicks();
  const f0 = frames;
  await new Promise((resolve) => setTimeout(resolve, Number(seconds) * 1_000));
  const ticks = cpuTicks() - t0;
  const delivered = frames - f0;
  const expected = Number(subscribers) * Number(rate) * Number(seconds);
  const load = Deno.readTextFileSync("/proc/loadavg").split(" ")[0];
  console.log(
    `${which.padEnd(6)} ${(1e6 * ticks / 100 / delivered).toFixed(1).padStart(6)} us/frame  ` +
      `${delivered} frames (${
        (delivered / expected).toFixed(2)
      } of sent)  out of order ${outOfOrder}  ` +
      `cpu ${(100 * ticks / 100 / Number(seconds)).toFixed(0)}%  load ${load}`,
  );
  for (const socket of sockets) socket.close();
  Deno.kill(pid, "SIGTERM");
  await child.status;
  Deno.exit(0);
}
