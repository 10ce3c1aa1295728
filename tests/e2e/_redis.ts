/**
 * A real `redis-server` for e2e tests (Debian package `redis-server`,
 * installed by `.ci/setup.d/redis.sh`): started on a free loopback port,
 * stopped and started again on the same port (the "Redis went away" tests).
 * {@linkcode REDIS_SERVER} is null when the binary is missing: those tests
 * are then ignored, with a message saying why.
 *
 * @module
 */

/** The `redis-server` binary, or null when it is not installed. */
export const REDIS_SERVER: string | null = findRedis();

function findRedis(): string | null {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":").concat(["/usr/bin", "/usr/sbin"])) {
    try {
      const path = `${dir}/redis-server`;
      if (Deno.statSync(path).isFile) return path;
    } catch {
      // Not here.
    }
  }
  console.warn(
    "redis-server is not installed (apt-get install redis-server, or bash .ci/setup.d/redis.sh): the Redis e2e tests are skipped",
  );
  return null;
}

/** A running redis-server. */
export interface RedisServer {
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** Kills it (SIGKILL: as a crash). */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: no persistence). */
  start(): Promise<void>;
  /** Freezes it (SIGSTOP: connected, answering nothing) or thaws it (SIGCONT). */
  freeze(frozen: boolean): void;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function pong(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      await conn.write(new TextEncoder().encode("PING\r\n"));
      const buffer = new Uint8Array(16);
      const n = await conn.read(buffer);
      return n !== null && new TextDecoder().decode(buffer.subarray(0, n)).startsWith("+PONG");
    } finally {
      conn.close();
    }
  } catch {
    return false;
  }
}

/**
 * Starts a redis-server on a free port.
 * @param options `stopped`: only pick the port (start it later).
 * @returns The server.
 */
export async function startRedis(
  options: { readonly stopped?: boolean } = {},
): Promise<RedisServer> {
  if (REDIS_SERVER === null) throw new Error("redis-server is not installed");
  const port = freePort();
  let child: Deno.ChildProcess | null = null;
  const start = async () => {
    child = new Deno.Command(REDIS_SERVER, {
      args: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      stdout: "null",
      stderr: "null",
    }).spawn();
    for (let i = 0; i < 100; i++) {
      if (await pong(port)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`redis-server did not answer on port ${port}`);
  };
  if (options.stopped !== true) await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      const running = child;
      child = null;
      if (running === null) return;
      try {
        (running as Deno.ChildProcess).kill("SIGKILL");
      } catch {
        // Gone already.
      }
      await (running as Deno.ChildProcess).status;
    },
    start,
    freeze(frozen) {
      (child as Deno.ChildProcess | null)?.kill(frozen ? "SIGSTOP" : "SIGCONT");
    },
  };
}
