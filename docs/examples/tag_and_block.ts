/**
 * The worked plugin of docs/extending.md: tags every subgraph request with a
 * header and refuses operations by name, before anything is fetched.
 *
 * ```yaml
 * plugins:
 *   - path: ./docs/examples/tag_and_block.ts
 *     config:
 *       header: x-gateway
 *       value: gw
 *       blocked: [DeleteEverything]
 * ```
 *
 * @module
 */
import type { Plugin } from "../../lib/plugins/mod.ts";

/** The plugin's config. */
export interface TagAndBlockConfig {
  /** The header added to every subgraph request. */
  readonly header: string;
  /** Its value. */
  readonly value: string;
  /** Operation names refused with 403 `OPERATION_NOT_ALLOWED`. */
  readonly blocked: readonly string[];
}

const plugin: Plugin<TagAndBlockConfig> = {
  name: "tag-and-block",
  // Checked once at load: a bad config stops the start (or the reload), naming the entry.
  configSchema(config) {
    const c = config as Partial<TagAndBlockConfig> | null;
    const problems: string[] = [];
    if (typeof c?.header !== "string" || c.header === "") problems.push("header: a header name");
    if (typeof c?.value !== "string") problems.push("value: a string");
    if (!Array.isArray(c?.blocked) || c.blocked.some((name) => typeof name !== "string")) {
      problems.push("blocked: a list of operation names");
    }
    return problems;
  },
  onOperation(ctx) {
    const name = ctx.operationName;
    if (name !== null && ctx.config.blocked.includes(name)) {
      return {
        status: 403,
        errors: [{
          message: `The operation ${name} is not allowed here`,
          extensions: { code: "OPERATION_NOT_ALLOWED" },
        }],
      };
    }
  },
  onSubgraphRequest(ctx) {
    ctx.headers.set(ctx.config.header, ctx.config.value);
  },
};

export default plugin;
