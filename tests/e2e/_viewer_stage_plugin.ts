/**
 * A plugin whose subgraph stage depends on the client: it reads the client's `x-user` header
 * at the operation stage and sends it to every subgraph as `x-viewer` (a header the header
 * rules do not forward). Subscribers with different `x-user` must then each get their own
 * `viewerNote`, though their plans, variables and forwarded headers are the same.
 *
 * @module
 */
import type { Plugin } from "../../lib/plugins/mod.ts";

const plugin: Plugin = {
  name: "viewer-from-user",
  onOperation(ctx) {
    ctx.context.set("viewer", ctx.headers.get("x-user"));
  },
  onSubgraphRequest(ctx) {
    const viewer = ctx.context.get("viewer");
    if (typeof viewer === "string") ctx.headers.set("x-viewer", viewer);
  },
};

export default plugin;
