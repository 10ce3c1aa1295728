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

/** A running Redis Cluster of masters only (no replicas). */
export interface RedisCluster {
  /** Its masters' ports on 127.0.0.1. */
  readonly ports: readonly number[];
  /** `redis://127.0.0.1:<port>` of each master (the router's seed nodes). */
  readonly urls: readonly string[];
  /** Kills every node and removes their files. */
  stop(): Promise<void>;
  /** Kills one master (SIGKILL: as a crash). */
  kill(index: number): Promise<void>;
}

/**
 * Starts a Redis Cluster on free ports: `cluster-enabled yes` on each node,
 * then `redis-cli --cluster create … --cluster-replicas 0`, and waits for
 * `cluster_state:ok` on every node.
 * @param masters How many masters (at least 3, as Redis requires).
 * @returns The cluster.
 */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  if (REDIS_SERVER === null) throw new Error("redis-server is not installed");
  const dir = await Deno.makeTempDir({ prefix: "gw_redis_cluster_" });
  const ports = Array.from({ length: masters }, () => freePort());
  const children = ports.map((port) =>
    new Deno.Command(REDIS_SERVER!, {
      args: [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        `${dir}/nodes-${port}.conf`,
        "--dir",
        dir,
      ],
      stdout: "null",
      stderr: "null",
    }).spawn()
  );
  const stop = async () => {
    for (const child of children) {
      try {
        child.kill("SIGKILL");
      } catch {
        // Gone already.
      }
      await child.status;
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    for (const port of ports) {
      for (let i = 0; i < 100 && !(await pong(port)); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const created = await new Deno.Command("redis-cli", {
      args: [
        "--cluster",
        "create",
        ...ports.map((port) => `127.0.0.1:${port}`),
        "--cluster-replicas",
        "0",
        "--cluster-yes",
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!created.success) {
      throw new Error(
        `redis-cli --cluster create failed: ${new TextDecoder().decode(created.stderr)}`,
      );
    }
    for (const port of ports) {
      let ok = false;
      for (let i = 0; i < 200 && !ok; i++) {
        const info = await new Deno.Command("redis-cli", {
          args: ["-p", String(port), "cluster", "info"],
          stdout: "piped",
          stderr: "null",
        }).output();
        ok = new TextDecoder().decode(info.stdout).includes("cluster_state:ok");
        if (!ok) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      if (!ok) throw new Error(`the cluster node on ${port} never reached cluster_state:ok`);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    ports,
    urls: ports.map((port) => `redis://127.0.0.1:${port}`),
    stop,
    async kill(index) {
      try {
        children[index]!.kill("SIGKILL");
      } catch {
        // Gone already.
      }
      await children[index]!.status;
    },
  };
}
