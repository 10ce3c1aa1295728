/**
 * The plugin contract (issue 40): what a plugin module's default export is,
 * and what each of its hooks gets and may answer. Hooks run in the order the
 * plugins are listed in `plugins:`, each awaited within the plugin's time
 * budget (`plugins[].hook_timeout`); a hook that throws or runs out of time
 * fails the request closed (`PLUGIN_FAILED`, the cause logged, never sent).
 *
 * @module
 */
import type { DocumentNode } from "graphql";
import type { QueryPlan } from "../engine/mod.ts";

/** A GraphQL error as a hook answers it (`extensions.code` is kept; the default is `REFUSED`). */
export interface PluginError {
  /** What the client reads. */
  readonly message: string;
  /** Extensions; `code` names the refusal. */
  readonly extensions?: Readonly<Record<string, unknown>>;
}

/**
 * A hook's refusal: the request (or the subgraph fetch) goes no further and the
 * client gets these errors. `status` is the HTTP status of a refused request
 * (default 403); Connect maps it to its code, MCP answers a tool error.
 */
export interface Refusal {
  readonly errors: readonly PluginError[];
  readonly status?: number;
}

/** What a hook may answer: nothing (go on) or a refusal. */
export type HookResult = void | undefined | Refusal;

/** A value or a promise of it (hooks may be sync or async). */
export type MaybePromise<T> = T | Promise<T>;

/** The facet a request came in through. */
export type Facet = "graphql" | "connect" | "mcp";

/** What every hook's context holds. */
export interface StageContext<C> {
  /** The mutable headers of this stage's request (the client's, or the subgraph request's). */
  readonly headers: Headers;
  /** The operation's name; null before the operation is known, or when anonymous. */
  readonly operationName: string | null;
  /** Shared by every stage of one request (plugins and the coprocessor's `context`). */
  readonly context: Map<string, unknown>;
  /** The plugin's config, as its `configSchema` returned it. */
  readonly config: C;
  /** The request's id (`X-Request-Id`). */
  readonly requestId: string | null;
  /** The facet the request came in through. */
  readonly facet: Facet;
}

/** `onRouterRequest`: the HTTP request, before its body is read. */
export interface RouterRequestContext<C> extends StageContext<C> {
  readonly method: string;
  readonly url: URL;
}

/** The verified identity of a request, as hooks see it. */
export interface PluginIdentity {
  /** `sub`. */
  readonly subject: string;
  /** The token's scopes. */
  readonly scopes: readonly string[];
  /** Every claim of the token. */
  readonly claims: Readonly<Record<string, unknown>>;
}

/**
 * `onOperation`: the operation is parsed and validated, the identity settled
 * and authorized; nothing has been fetched. Header changes reach the header
 * rules of its subgraph requests.
 */
export interface OperationContext<C> extends StageContext<C> {
  /** `query`, `mutation` or `subscription`. */
  readonly kind: "query" | "mutation" | "subscription";
  /** The parsed document. */
  readonly document: DocumentNode;
  /** The verified identity; null when anonymous. */
  readonly identity: PluginIdentity | null;
  /** The variables as the client sent them (before coercion); null without any. */
  readonly variables: Readonly<Record<string, unknown>> | null;
  /**
   * `@policy` names the operation touches, each false until a hook grants it
   * (`requiredPolicies.set("admin", true)`); the same map is in `context`
   * under `apollo::authorization::required_policies`.
   */
  readonly requiredPolicies: Map<string, boolean>;
}

/**
 * `onPlan`: the operation is planned, nothing fetched yet (queries and
 * mutations; a subscription's plan is not staged).
 */
export interface PlanContext<C> extends StageContext<C> {
  /** The query plan (the shape `extensions.trace` shows). */
  readonly plan: QueryPlan;
  /** The subgraphs the plan fetches from, sorted. */
  readonly subgraphs: readonly string[];
}

/** `onSubgraphRequest`: one subgraph fetch, header rules applied. */
export interface SubgraphRequestContext<C> extends StageContext<C> {
  /** The subgraph's name. */
  readonly subgraph: string;
  /** Its URL. */
  readonly url: string;
  /** The JSON body (`{"query":…,"variables":…}`); a hook may replace it. */
  body: string;
}

/** `onSubgraphResponse`: a subgraph's answer, read whole. */
export interface SubgraphResponseContext<C> extends StageContext<C> {
  /** The subgraph's name. */
  readonly subgraph: string;
  /** The HTTP status. */
  readonly status: number;
  /** The answer's body; a hook may replace it. */
  body: string;
}

/** `onRouterResponse`: the response about to be sent (its body is not read). */
export interface RouterResponseContext<C> extends StageContext<C> {
  /** The HTTP status. */
  readonly status: number;
  /**
   * The response itself. Reading its body consumes it: a hook that reads it
   * answers a new `Response` (streams — SSE, multipart — should be left alone).
   */
  readonly response: Response;
}

/** The result of a Standard Schema (v1) validation. */
export type StandardResult<T> =
  | { readonly value: T; readonly issues?: undefined }
  | {
    readonly issues: readonly {
      readonly message: string;
      readonly path?: readonly unknown[];
    }[];
  };

/** A Standard Schema v1 validator (Zod, Valibot, ArkType …): `~standard.validate`. */
export interface StandardSchema<T> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): MaybePromise<StandardResult<T>>;
  };
}

/**
 * How a plugin checks its config at load: a Standard Schema (its output is
 * the config hooks get), or a function returning the problems (none: valid).
 */
export type ConfigSchema<C> =
  | StandardSchema<C>
  | ((config: unknown) => readonly string[] | string | null | undefined);

/**
 * A plugin: the default export of a module listed in `plugins:`. Every hook
 * is optional; a stage without hooks costs nothing.
 *
 * @typeParam C The plugin's config, once validated.
 */
export interface Plugin<C = unknown> {
  /** Names the plugin in logs and errors. */
  readonly name: string;
  /** Checks `plugins[].config` at load (a bad one stops the start or the reload). */
  readonly configSchema?: ConfigSchema<C>;
  /** The HTTP request, before its body is read: refuse, or answer it yourself. */
  onRouterRequest?(ctx: RouterRequestContext<C>): MaybePromise<HookResult | Response>;
  /** The operation, authorized, before anything is fetched: refuse, or change headers. */
  onOperation?(ctx: OperationContext<C>): MaybePromise<HookResult>;
  /** The plan, before any fetch: refuse the operation. */
  onPlan?(ctx: PlanContext<C>): MaybePromise<HookResult>;
  /** Each subgraph request: change headers or the body, or refuse the fetch. */
  onSubgraphRequest?(ctx: SubgraphRequestContext<C>): MaybePromise<HookResult>;
  /** Each subgraph answer: read or replace its body, or refuse it. */
  onSubgraphResponse?(ctx: SubgraphResponseContext<C>): MaybePromise<HookResult>;
  /** The response: change its headers, or replace it. */
  onRouterResponse?(ctx: RouterResponseContext<C>): MaybePromise<void | Response>;
}
