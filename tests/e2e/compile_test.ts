/**
 * Issue 32: the single binary. `deno task compile` needs Deno's `denort`
 * runtime: from `DENORT_BIN`, or downloaded once into the Deno cache. Where
 * one is available this test builds the binary (the task's own flags) and
 * checks that it finds its config as `deno run` does (`--config`,
 * `CONFIG_PATH`, `./config.yaml`) and serves; where none is, it is skipped
 * with a name that says why.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;
const decoder = new TextDecoder();

async function denoDir(): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output();
  return (JSON.parse(decoder.decode(output.stdout)) as { denoDir: string }).denoDir;
}

/** Why no runtime is available, or null when one is. */
async function missingRuntime(): Promise<string | null> {
  const denort = Deno.env.get("DENORT_BIN");
  if (denort) {
    return await Deno.stat(denort).then(() => null, () => `DENORT_BIN=${denort} does not exist`);
  }
  const dir = join(await denoDir(), "dl", "release", `v${Deno.version.deno}`);
  const cached = await Array.fromAsync(Deno.readDir(dir)).then(
    (entries) => entries.some((e) => e.name.startsWith("denort-")),
    () => false,
  );
  return cached ? null : `no denort runtime: DENORT_BIN is unset and ${dir} holds none ` +
    "(deno compile would download it, which needs Deno's release server)";
}

const missing = await missingRuntime();

async function run(
  binary: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(binary, {
    args,
    cwd: options.cwd ?? ROOT,
    env: { NO_COLOR: "1", ...options.env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

Deno.test({
  name: missing === null
    ? "issue 32: deno task compile builds a binary that finds its config like deno run and serves"
    : `issue 32: the compiled binary (SKIPPED: ${missing})`,
  ignore: missing !== null,
  async fn() {
    const out = await Deno.makeTempDir({ prefix: "gw-compile-" });
    const binary = join(out, "gw-router");
    const task = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks.compile as string;
    const args = task.replace(/^deno /, "").replace("--output gw-router", `--output ${binary}`);
    const build = await new Deno.Command(Deno.execPath(), {
      args: args.split(/\s+/),
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(build.code, 0, decoder.decode(build.stderr));

    const version = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).version;
    assert.equal((await run(binary, ["--version"])).stdout.trim(), `gw-router ${version}`);

    // A config outside the repository, its files named absolutely.
    const work = await Deno.makeTempDir({ prefix: "gw-compile-run-" });
    const text = `listen_addr: 127.0.0.1:0\nsupergraph_path: ${ROOT}schema/supergraph.graphql\n` +
      `operations_dir: ${ROOT}operations\n`;
    await Deno.writeTextFile(join(work, "config.yaml"), text);
    await Deno.writeTextFile(join(work, "other.yaml"), text);
    const flag = await run(binary, ["config", "validate", "--config", join(work, "other.yaml")]);
    assert.match(flag.stdout, /other\.yaml: ok/, flag.stderr);
    const env = await run(binary, ["config", "validate"], {
      env: { CONFIG_PATH: join(work, "other.yaml") },
    });
    assert.match(env.stdout, /other\.yaml: ok/, env.stderr);
    const cwd = await run(binary, ["config", "validate"], { cwd: work });
    assert.equal(cwd.stdout.trim(), "config.yaml: ok", cwd.stderr);

    // It serves: start on a free port, ask readiness, stop with SIGTERM.
    const child = new Deno.Command(binary, {
      args: ["serve"],
      cwd: work,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "null",
    }).spawn();
    let log = "";
    try {
      for await (const chunk of child.stdout) {
        log += decoder.decode(chunk, { stream: true });
        if (log.includes("GW Router listening")) break;
      }
      const url = /"url":"([^"]+)"/.exec(log)?.[1];
      assert.ok(url, log);
      const ready = await fetch(`${url}/health/ready`);
      await ready.body?.cancel();
      assert.equal(ready.status, 200);
    } finally {
      child.kill("SIGTERM");
      await child.status;
    }
    await Deno.remove(out, { recursive: true });
    await Deno.remove(work, { recursive: true });
  },
});
