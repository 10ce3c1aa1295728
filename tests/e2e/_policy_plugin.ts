/**
 * A plugin that decides `@policy` from the client's `x-grant` header (a comma
 * list of policy names): each required policy it names is granted.
 *
 * @module
 */
import type { Plugin } from "../../lib/plugins/mod.ts";

const plugin: Plugin = {
  name: "grant-from-header",
  onOperation(ctx) {
    const granted = (ctx.headers.get("x-grant") ?? "").split(",").map((name) => name.trim());
    for (const policy of ctx.requiredPolicies.keys()) {
      ctx.requiredPolicies.set(policy, granted.includes(policy));
    }
  },
};

export default plugin;
