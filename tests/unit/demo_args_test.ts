/** Issue 32: the demo's subgraph ports can be moved (flag or env). */
import assert from "node:assert/strict";
import { parseDemoArgs } from "../../demo/main.ts";

Deno.test("issue 32: --subgraph-port-base and DEMO_SUBGRAPH_PORT_BASE move the demo's subgraphs", () => {
  assert.deepEqual(parseDemoArgs([], {}), {
    config: undefined,
    subgraphPortBase: undefined,
  });
  assert.equal(
    parseDemoArgs(["--subgraph-port-base", "44011"], {}).subgraphPortBase,
    44011,
  );
  assert.equal(
    parseDemoArgs(["--subgraph-port-base=5001"], {}).subgraphPortBase,
    5001,
  );
  assert.equal(
    parseDemoArgs([], { DEMO_SUBGRAPH_PORT_BASE: "6001" }).subgraphPortBase,
    6001,
  );
  // The flag wins over the variable.
  assert.equal(
    parseDemoArgs(["--subgraph-port-base", "7001"], {
      DEMO_SUBGRAPH_PORT_BASE: "6001",
    })
      .subgraphPortBase,
    7001,
  );
  assert.throws(
    () => parseDemoArgs(["--subgraph-port-base", "x"], {}),
    /--subgraph-port-base \(env DEMO_SUBGRAPH_PORT_BASE\): expected a port/,
  );
});
