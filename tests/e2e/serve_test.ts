/**
 * The `serve` edge over real sockets: start-up on port 0, health, reload on
 * demand, on file change and on SIGHUP, a failed reload keeping the old
 * state, start-up errors and graceful shutdown on SIGTERM.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startRouter } from "../../lib/cli/serve.ts";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { runCli, spawnServe } from "./_cli.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';

function supergraph(field: string): string {
  const composed = composeSupergraph([{
    name: "greetings",
    url: "http://127.0.0.1:9/graphql",
    sdl: `${LINK}\ntype Query { ${field}: String }`,
  }]);
  if (!composed.ok) throw new Error("does not compose");
  return composed.supergraphSdl;
}

async function workspace(config: string): Promise<string> {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(join(dir, "ops"));
  await Deno.writeTextFile(join(dir, "super.graphql"), supergraph("hello"));
  await Deno.writeTextFile(join(dir, "config.yaml"), config);
  return dir;
}

const BASE_CONFIG = `listen_addr: 127.0.0.1:0
supergraph_path: super.graphql
operations_dir: ops
mcp: { enabled: false }
`;

async function status(url: string, init?: RequestInit): Promise<number> {
  const response = await fetch(url, init);
  await response.body?.cancel();
  return response.status;
}

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Starts the router (logging into `lines`) on a {@linkcode workspace} of
 * BASE_CONFIG, runs `scenario`, then shuts it down and removes the workspace.
 */
async function withRouter(
  options: { watch?: boolean; debounceMs?: number },
  scenario: (
    on: { dir: string; lines: string[]; router: Awaited<ReturnType<typeof startRouter>> },
  ) => Promise<void>,
): Promise<void> {
  const dir = await workspace(BASE_CONFIG);
  const lines: string[] = [];
  const router = await startRouter({
    configPath: join(dir, "config.yaml"),
    log: createLogger({ write: (line) => lines.push(line) }),
    ...options,
  });
  try {
    await scenario({ dir, lines, router });
  } finally {
    await router.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("issue 2: startRouter binds port 0, serves health and reports the bound URL", async () => {
  await withRouter({}, async ({ lines, router }) => {
    assert.match(router.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(router.url, "http://127.0.0.1:0");
    assert.equal(router.state().config.listen_addr, router.url.slice("http://".length));
    assert.equal(router.state().config.mcp.server.base_url, router.url);
    assert.equal(await status(`${router.url}/health/live`), 200);
    assert.equal(await status(`${router.url}/health/ready`), 200);
    const started = lines.map((line) => JSON.parse(line)).find((l) =>
      l.msg === "GW Router listening"
    );
    assert.equal(started?.graphql, `${router.url}/graphql`);
  });
});

Deno.test("DESIGN §4: reload swaps the state; a failed reload logs an error and keeps the old state", async () => {
  await withRouter({}, async ({ dir, lines, router }) => {
    const before = router.state();
    await Deno.writeTextFile(join(dir, "config.yaml"), BASE_CONFIG + "graphql_path: /gql\n");
    assert.equal(await router.reload(), true);
    assert.notEqual(router.state(), before);
    assert.equal(router.state().config.graphql_path, "/gql");
    // The port survives the reload; the new path is routed, the old one is gone.
    assert.equal(router.state().config.listen_addr, router.url.slice("http://".length));
    assert.equal(await status(`${router.url}/graphql?query={hello}`), 404);
    assert.notEqual(await status(`${router.url}/gql?query={hello}`), 404);

    const good = router.state();
    await Deno.writeTextFile(join(dir, "config.yaml"), BASE_CONFIG + "graphql_path: 42\n");
    assert.equal(await router.reload(), false);
    assert.equal(router.state(), good);
    const failure = lines.map((line) => JSON.parse(line)).find((l) =>
      l.msg.startsWith("Reload failed")
    );
    assert.equal(failure?.level, "error");
    assert.equal(failure?.path, "graphql_path");
    assert.equal(failure?.code, "CONFIG_INVALID");
    assert.notEqual(await status(`${router.url}/gql?query={hello}`), 404);
  });
});

Deno.test("DESIGN §4: a change of the supergraph or an operation file reloads (debounced)", async () => {
  await withRouter({ watch: true, debounceMs: 50 }, async ({ dir, lines, router }) => {
    const reloads = () => lines.filter((line) => line.includes("Configuration reloaded")).length;
    const first = router.state();
    await Deno.writeTextFile(join(dir, "super.graphql"), supergraph("greeting"));
    await waitFor(() => router.state() !== first);
    assert.ok(router.state().supergraph.apiSchema.getQueryType()?.getFields().greeting);
    const second = router.state();
    await Deno.writeTextFile(
      join(dir, "ops", "GetGreeting.graphql"),
      "query GetGreeting { greeting }\n",
    );
    await waitFor(() => router.state() !== second);
    // A burst of changes is one reload.
    const before = reloads();
    const burst = router.state();
    for (let i = 0; i < 5; i++) {
      await Deno.writeTextFile(join(dir, "ops", `Op${i}.graphql`), `query Op${i} { greeting }\n`);
    }
    await waitFor(() => router.state() !== burst);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(reloads() - before, 1);
    assert.equal(router.state().operations.operations.length, 6);
    // A file the config does not name does not reload.
    const third = router.state();
    await Deno.writeTextFile(join(dir, "notes.txt"), "unrelated");
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(router.state(), third);
  });
});

Deno.test("issue 2: `main.ts serve` logs its URLs and the ART warning, reloads on SIGHUP, stops on SIGTERM", async () => {
  const dir = await workspace(BASE_CONFIG + "engine: { enable_request_tracing: true }\n");
  const serve = spawnServe(join(dir, "config.yaml"));
  const child = serve.child;
  try {
    const listening = JSON.parse(
      await serve.waitFor((l) => l.includes("GW Router listening")),
    );
    assert.match(listening.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    // Outside dev mode without a token key: one warning (issue 44), naming the key to set.
    const warning = JSON.parse(
      await serve.waitFor((l) => l.includes("Advanced Request Tracing")),
    );
    assert.equal(warning.level, "warn");
    assert.ok(warning.msg.startsWith("Advanced Request Tracing is enabled without a token key"));
    assert.equal(warning.key, "engine.request_tracing_public_key_file");
    assert.equal(await status(`${listening.url}/health/ready`), 200);

    // SIGHUP re-reads the config file: the new graphql_path is served.
    await Deno.writeTextFile(
      join(dir, "config.yaml"),
      BASE_CONFIG + "engine: { enable_request_tracing: true }\ngraphql_path: /gql\n",
    );
    child.kill("SIGHUP");
    const reloaded = JSON.parse(
      await serve.waitFor((l) => l.includes("Configuration reloaded")),
    );
    assert.equal(reloaded.level, "info");
    assert.equal(await status(`${listening.url}/graphql?query={hello}`), 404);
    assert.notEqual(await status(`${listening.url}/gql?query={hello}`), 404);

    child.kill("SIGTERM");
    const { code } = await child.status;
    assert.equal(code, 0);
  } finally {
    await serve.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DESIGN §2: `main.ts serve` with a bad config exits 1 naming the key path", async () => {
  const dir = await workspace(BASE_CONFIG + "mcp_enabled: true\n");
  try {
    const output = await runCli(["serve", "--config", join(dir, "config.yaml")]);
    assert.equal(output.code, 1);
    const text = output.stdout + output.stderr;
    assert.match(text, /Cannot read \\?"mcp_enabled\\?": unknown key/);
    assert.match(text, /"path":"mcp_enabled"/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
