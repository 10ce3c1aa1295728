/**
 * Issue 17: the official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * every server scenario, pending ones included) against the router over the
 * demo subgraphs. Every scenario of a feature the router offers passes (no
 * FAILURE check); the others are listed with why the router does not offer
 * them, and a scenario the suite adds that is in neither list fails the test.
 * `.ci/setup.d/mcp_conformance.sh` fetches the suite; without npm the test is
 * registered as ignored, saying so.
 */
import assert from "node:assert/strict";
import { withMcpDemo } from "./_mcp_demo.ts";

const SUITE = "npm:@modelcontextprotocol/conformance@0.1.16";

/** Scenarios of offered features: every check must be SUCCESS, INFO or WARNING. */
const OFFERED: Readonly<Record<string, string>> = {
  "server-initialize": "initialize handshake (2025-06-18, 2025-11-25)",
  "ping": "ping",
  "tools-list": "tools/list",
  "logging-set-level": "logging/setLevel",
  "server-sse-multiple-streams": "concurrent POSTs on one session",
  "server-sse-polling":
    "SSE priming/resumption (POSTs answer JSON: the scenario's checks are INFO)",
  "dns-rebinding-protection": "Origin validation (loopback and configured origins only)",
};

const FIXTURE_TOOL =
  "needs a fixture tool of the suite's reference server; the router's tools are the graph's operations";

/** Scenarios the router does not pass, with why. */
const NOT_OFFERED: Readonly<Record<string, string>> = {
  "completion-complete": "completion: no prompts or resource templates to complete",
  "tools-call-simple-text": FIXTURE_TOOL + " (test_simple_text)",
  "tools-call-image": FIXTURE_TOOL + "; results are GraphQL JSON, never images",
  "tools-call-audio": FIXTURE_TOOL + "; results are GraphQL JSON, never audio",
  "tools-call-embedded-resource": FIXTURE_TOOL + "; no resources",
  "tools-call-mixed-content": FIXTURE_TOOL + "; results are one text (plus structuredContent)",
  "tools-call-with-logging": FIXTURE_TOOL +
    " (test_tool_with_logging); logging itself is offered (logging-set-level)",
  "tools-call-error": FIXTURE_TOOL + " (test_error_handling); GraphQL errors are isError results",
  "tools-call-with-progress": FIXTURE_TOOL + "; no progress notifications",
  "tools-call-sampling": FIXTURE_TOOL + "; sampling: the router never asks the client's model",
  "tools-call-elicitation": FIXTURE_TOOL + "; elicitation: the router never asks the user",
  "json-schema-2020-12": FIXTURE_TOOL + " (json_schema_2020_12_tool)",
  "elicitation-sep1034-defaults": "elicitation: not offered",
  "elicitation-sep1330-enums": "elicitation: not offered",
  "resources-list": "resources: not offered (the schema is a tool: get_schema)",
  "resources-read-text": "resources: not offered",
  "resources-read-binary": "resources: not offered",
  "resources-templates-read": "resources: not offered",
  "resources-subscribe": "resources: not offered",
  "resources-unsubscribe": "resources: not offered",
  "prompts-list": "prompts: not offered",
  "prompts-get-simple": "prompts: not offered",
  "prompts-get-with-args": "prompts: not offered",
  "prompts-get-embedded-resource": "prompts: not offered",
  "prompts-get-with-image": "prompts: not offered",
};

async function suiteAvailable(): Promise<boolean> {
  const cwd = await Deno.makeTempDir({ prefix: "gw_conformance_probe_" });
  try {
    const out = await new Deno.Command("deno", {
      args: ["run", "-A", "--quiet", "--no-config", "--no-lock", SUITE, "--version"],
      cwd,
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
}

const available = await suiteAvailable();

interface Check {
  readonly id: string;
  readonly status: string;
  readonly errorMessage?: string;
}

Deno.test({
  name: available
    ? "issue 17: MCP conformance 0.1.16: every server scenario of an offered feature passes; the rest are listed with reasons"
    : `KNOWN GAP: issue 17: MCP conformance suite not run — ${SUITE} could not be fetched (run .ci/setup.d/mcp_conformance.sh)`,
  ignore: !available,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "gw_conformance_" });
    try {
      await withMcpDemo({}, async ({ mcpUrl }) => {
        const run = await new Deno.Command("deno", {
          args: [
            "run",
            "-A",
            "--quiet",
            "--no-config",
            "--no-lock",
            SUITE,
            "server",
            "--url",
            mcpUrl,
            "--suite",
            "all",
            "-o",
            `${dir}/results`,
          ],
          cwd: dir,
          stdout: "piped",
          stderr: "piped",
        }).output();
        // The suite exits non-zero while any scenario fails (the not-offered ones do).
        const log = new TextDecoder().decode(run.stdout);
        const results = new Map<string, Check[]>();
        for await (const entry of Deno.readDir(`${dir}/results`)) {
          const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT/.exec(entry.name)?.[1];
          assert.ok(scenario, entry.name);
          const checks = JSON.parse(
            await Deno.readTextFile(`${dir}/results/${entry.name}/checks.json`),
          ) as Check[];
          results.set(scenario, checks);
        }
        assert.ok(results.size >= Object.keys(OFFERED).length, log.slice(-2000));
        for (const [scenario, checks] of results) {
          assert.ok(
            scenario in OFFERED || scenario in NOT_OFFERED,
            `new scenario "${scenario}": decide whether the router offers it`,
          );
          if (!(scenario in OFFERED)) continue;
          const failed = checks.filter((c) => c.status === "FAILURE");
          assert.deepEqual(failed, [], `${scenario}: ${JSON.stringify(failed)}`);
        }
        for (const scenario of Object.keys(OFFERED)) {
          assert.ok(results.has(scenario), `${scenario} ran`);
        }
        const dns = results.get("dns-rebinding-protection")!;
        assert.deepEqual(dns.map((c) => c.status), ["SUCCESS", "SUCCESS"]);
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
