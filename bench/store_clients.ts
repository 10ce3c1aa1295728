/**
 * Issue 30: the two maintained Redis clients from npm under Deno, side by side
 * against one local redis-server: GET, SET (200-byte values, PX) and EVALSHA
 * of the GCRA script (`lib/store/gcra.ts`), 20 000 commands each with
 * CONCURRENCY in flight, two rounds (the first warms up). Not a `deno bench`
 * file (it needs a server): run it by hand.
 *
 *   redis-server --port 42379 --save "" --daemonize yes
 *   deno run -A bench/store_clients.ts 42379            # CONCURRENCY=50
 *   CONCURRENCY=1 deno run -A bench/store_clients.ts 42379
 *
 * The clients are imported by non-literal specifiers, so `deno check` leaves
 * their Node type declarations out of the project's program.
 *
 * @module
 */
import { GCRA_LUA } from "../lib/store/gcra.ts";

interface Client {
  get(key: string): Promise<unknown>;
  set(...args: unknown[]): Promise<unknown>;
}

const NODE_REDIS: string = "npm:redis@6.3.1";
const IOREDIS: string = "npm:ioredis@6.0.0";
const port = Number(Deno.args[0] ?? 6379);
const total = 20_000;
const concurrency = Number(Deno.env.get("CONCURRENCY") ?? 50);

async function run(name: string, op: (i: number) => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await op(next++);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  console.log(`${name.padEnd(24)} ${Math.round(total / seconds)} ops/s`);
}

const nodeRedis = await import(NODE_REDIS);
const nr = nodeRedis.createClient({ url: `redis://127.0.0.1:${port}` });
await nr.connect();
const sha: string = await nr.scriptLoad(GCRA_LUA);
const IoRedis = (await import(IOREDIS)).default;
const io = new IoRedis({ port, host: "127.0.0.1", lazyConnect: true });
await io.connect();
const value = "x".repeat(200);
const args = ["10", "10", "1000"];
for (let round = 1; round <= 2; round++) {
  console.log(`round ${round}, ${concurrency} in flight`);
  await run("redis SET", (i) => (nr as Client).set(`k${i % 1000}`, value, { PX: 60_000 }));
  await run("ioredis SET", (i) => (io as Client).set(`k${i % 1000}`, value, "PX", 60_000));
  await run("redis GET", (i) => (nr as Client).get(`k${i % 1000}`));
  await run("ioredis GET", (i) => (io as Client).get(`k${i % 1000}`));
  await run(
    "redis EVALSHA gcra",
    (i) => nr.evalSha(sha, { keys: [`r${i % 100}`], arguments: args }),
  );
  await run("ioredis EVALSHA gcra", (i) => io.evalsha(sha, 1, `r${i % 100}`, ...args));
}
await nr.quit();
io.disconnect();
