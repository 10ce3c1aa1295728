/**
 * One first poll of a `supergraph_source` against a local registry, with its
 * log lines and a deadline (a bound that regressed fails instead of hanging).
 *
 * @module
 */
import { join } from "node:path";
import { parseConfig } from "../../lib/config/mod.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { createSupergraphSource } from "../../lib/cli/supergraph_source.ts";

/**
 * Polls once with `supergraph_source: { poll_interval: 1s, ...source }`.
 * @param source The source's keys.
 * @returns The schema (null when the poll failed) and the log lines.
 */
export async function firstPoll(
  source: Record<string, unknown>,
): Promise<{ sdl: string | null; lines: string[] }> {
  const dir = await Deno.makeTempDir();
  const lines: string[] = [];
  try {
    const config = parseConfig({
      listen_addr: "127.0.0.1:0",
      supergraph_path: join(dir, "kept.graphql"),
      supergraph_source: { poll_interval: "1s", ...source },
    }, { env: {}, baseDir: dir });
    const started = createSupergraphSource(config.supergraph_source, {
      path: config.supergraph_path,
      log: () => createLogger({ write: (line) => lines.push(line) }),
      env: {},
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const sdl = await Promise.race([
      started.first(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("no answer within 25 s")), 25_000);
      }),
    ]).finally(() => clearTimeout(timer));
    return { sdl, lines };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * The log line of a failed poll.
 * @param lines The log lines.
 * @returns Its fields, or undefined.
 */
export function pollFailure(
  lines: string[],
): { readonly reason: string; readonly registry?: string } | undefined {
  return lines.map((line) => JSON.parse(line)).find((line) => /poll failed/.test(line.msg));
}
