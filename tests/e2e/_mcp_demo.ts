/**
 * The demo graph (four subgraphs, `operations/`, `config.yaml`) behind a real
 * router on port 0, for MCP e2e tests that use the official clients without
 * OAuth (the demo config has `mcp.oauth.enabled: false`).
 *
 * @module
 */
import { type RunningDemo, startDemoSubgraphs } from "../../demo/subgraphs/mod.ts";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { silentLogger } from "../../lib/log/mod.ts";
import { TEST_DEADLINE_MS, within } from "./_deadline.ts";

const ROOT = new URL("../../", import.meta.url);

/** A running demo router. */
export interface McpDemo {
  readonly router: RunningRouter;
  readonly demo: RunningDemo;
  readonly mcpUrl: string;
}

/**
 * Runs `body` against a fresh demo router and stops it afterwards.
 * @param options `env` overrides of config.yaml (e.g. `OPERATIONS_DIR`) and router test hooks.
 * @param body The test body.
 */
export async function withMcpDemo(
  options: { readonly env?: Record<string, string>; readonly watch?: boolean },
  body: (demo: McpDemo) => Promise<void>,
): Promise<void> {
  const demo = startDemoSubgraphs({ basePort: 0 });
  let router: RunningRouter | undefined;
  try {
    router = await startRouter({
      configPath: new URL("config.yaml", ROOT).pathname,
      env: { LISTEN_ADDR: "127.0.0.1:0", ...options.env },
      supergraphSdl: demo.supergraphSdl,
      log: silentLogger,
      ...(options.watch ? { watch: true, debounceMs: 50 } : {}),
    });
    // A wait the test did not bound fails it (then the router stops), never hangs the suite.
    await within(body({ router, demo, mcpUrl: `${router.url}/mcp` }), "the test", TEST_DEADLINE_MS);
  } finally {
    await router?.shutdown();
    await demo.close();
  }
}
