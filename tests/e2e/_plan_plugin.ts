/**
 * A plugin on the plan stage: refuses a plan that fetches from a subgraph its
 * config names, before any fetch.
 *
 * @module
 */
import type { Plugin } from "../../lib/plugins/mod.ts";

const plugin: Plugin<{ readonly forbidden: string }> = {
  name: "plan-guard",
  onPlan(ctx) {
    if (ctx.subgraphs.includes(ctx.config.forbidden)) {
      return {
        status: 403,
        errors: [{
          message: `The plan fetches from ${ctx.config.forbidden} (${ctx.subgraphs.join(", ")})`,
          extensions: { code: "PLAN_REFUSED" },
        }],
      };
    }
  },
};

export default plugin;
