/**
 * Summarizes a V8 `.cpuprofile` (from `deno run --cpu-prof`): the functions
 * with the most self time, and the project files with the most inclusive time.
 *
 * ```
 * deno run -R bench/load/cpuprofile_top.ts PROFILE.cpuprofile [TOP=30]
 * ```
 *
 * @module
 */

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/**
 * Self and inclusive time per function.
 * @param profile The parsed profile.
 * @returns Rows `{name, self, total}` in microseconds, and the profile's total.
 */
export function summarize(
  profile: CpuProfile,
): { rows: { name: string; self: number; total: number }[]; total: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const selfTime = new Map<number, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    const id = profile.samples[i]!;
    selfTime.set(id, (selfTime.get(id) ?? 0) + dt);
    total += dt;
  }
  const key = (n: ProfileNode): string => {
    const file = n.callFrame.url.replace(/^.*\/(node_modules|lib|bench|\.deno)\//, "$1/");
    return `${n.callFrame.functionName || "(anonymous)"} ${file}:${n.callFrame.lineNumber + 1}`;
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, t] of selfTime) {
    const node = byId.get(id)!;
    self.set(key(node), (self.get(key(node)) ?? 0) + t);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const k = key(byId.get(at)!);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + t);
    }
  }
  const rows = [...inclusive.keys()].map((name) => ({
    name,
    self: self.get(name) ?? 0,
    total: inclusive.get(name) ?? 0,
  }));
  return { rows, total };
}

if (import.meta.main) {
  const [path, topText] = Deno.args;
  if (path === undefined) {
    console.error("usage: cpuprofile_top.ts PROFILE.cpuprofile [TOP]");
    Deno.exit(2);
  }
  const top = Number(topText ?? "30");
  const { rows, total } = summarize(JSON.parse(await Deno.readTextFile(path)));
  const pct = (t: number) => (100 * t / total).toFixed(1).padStart(5) + "%";
  console.log(`total ${(total / 1e6).toFixed(2)} s sampled\n\n-- self time`);
  for (const r of [...rows].sort((a, b) => b.self - a.self).slice(0, top)) {
    console.log(`${pct(r.self)}  ${r.name}`);
  }
  console.log("\n-- inclusive time (lib/ only)");
  for (
    const r of rows.filter((r) => r.name.includes(" lib/")).sort((a, b) => b.total - a.total)
      .slice(0, top)
  ) {
    console.log(`${pct(r.total)}  ${r.name}`);
  }
}
