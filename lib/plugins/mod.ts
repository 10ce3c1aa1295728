/**
 * TypeScript plugins (issue 40): modules listed in `plugins:` whose default
 * export hooks the request pipeline's stages — router request, operation,
 * subgraph request and response, router response (docs/extending.md). The
 * types are what a plugin author imports:
 *
 * ```ts ignore
 * import type { Plugin } from "@gw/router/plugins";
 * ```
 *
 * @module
 */
export type {
  ConfigSchema,
  Facet,
  HookResult,
  MaybePromise,
  OperationContext,
  PlanContext,
  Plugin,
  PluginError,
  PluginIdentity,
  Refusal,
  RouterRequestContext,
  RouterResponseContext,
  StageContext,
  StandardResult,
  StandardSchema,
  SubgraphRequestContext,
  SubgraphResponseContext,
} from "./types.ts";
export {
  type HookName,
  type LoadedPlugin,
  type OperationInfo,
  type OperationOutcome,
  operationStage,
  type PluginEvents,
  PluginHost,
  PluginRefusal,
  PluginRequest,
  pluginRequestOf,
  REQUIRED_POLICIES_KEY,
} from "./host.ts";
export {
  applyHeaderMap,
  type CoprocessorAnswer,
  type CoprocessorOptions,
  coprocessorPlugin,
  type CoprocessorStage,
  headersToMap,
} from "./coprocessor.ts";
export {
  loadPlugins,
  type LoadPluginsOptions,
  type PluginEntry,
  pluginSpecifier,
  validatePluginConfig,
} from "./load.ts";
