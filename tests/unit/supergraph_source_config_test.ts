/**
 * `supergraph_source`'s keys (docs/supergraph-source.md): what each kind needs,
 * refused naming the key; with a registry, `supergraph_path` need not exist.
 */
import assert from "node:assert/strict";
import { checkFiles, parseConfig } from "../../lib/config/mod.ts";

Deno.test("supergraph_source: each kind's keys are checked, naming the key", () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ kind: "url" }, /"supergraph_source\.url".*http\(s\) URL/],
    [{ kind: "url", url: "ftp://x" }, /"supergraph_source\.url"/],
    [{ kind: "hive_cdn", key: "k" }, /"supergraph_source\.endpoint"/],
    [{ kind: "hive_cdn", endpoint: "https://cdn.example/a" }, /"supergraph_source\.key": required/],
    [{ kind: "apollo_uplink", endpoints: ["nope"] }, /"supergraph_source\.endpoints\[0\]"/],
    [{ kind: "s3" }, /supergraph_source\.kind/],
    [{ kind: "url", url: "https://r.example/s", poll_interval: "10ms" }, /poll_interval/],
  ];
  for (const [source, message] of cases) {
    assert.throws(() => parseConfig({ supergraph_source: source }), message);
  }
  const ok = parseConfig({
    supergraph_source: { kind: "hive_cdn", endpoint: "https://cdn.example/a", key: "k" },
  });
  assert.equal(ok.supergraph_source.poll_interval_ms, 10_000);
});

Deno.test("supergraph_source: from a registry, a missing supergraph_path is no problem; from a file it is", async () => {
  const registry = parseConfig({
    supergraph_path: "/nonexistent/supergraph.graphql",
    supergraph_source: { kind: "url", url: "https://r.example/s" },
  });
  await checkFiles(registry);
  const file = parseConfig({ supergraph_path: "/nonexistent/supergraph.graphql" });
  await assert.rejects(checkFiles(file), /"supergraph_path".*no such file/);
});
