/**
 * A plugin that hooks every stage and does nothing: what the stages cost.
 *
 * @module
 */
import type { Plugin } from "../../lib/plugins/mod.ts";

const plugin: Plugin = {
  name: "noop",
  onRouterRequest() {},
  onOperation() {},
  onSubgraphRequest() {},
  onSubgraphResponse() {},
  onRouterResponse() {},
};

export default plugin;
