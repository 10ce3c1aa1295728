/**
 * Running plugins' hooks (issue 40): a {@linkcode PluginHost} per router state
 * holds, for every stage, the hooks in `plugins:` order; a
 * {@linkcode PluginRequest} per request carries the request's shared
 * `context`, its operation's name and the stages the engine calls around each
 * subgraph fetch. Each hook is awaited within its plugin's time budget; a hook
 * that throws or runs out of time fails the request closed with
 * `PLUGIN_FAILED` (the cause is logged, never sent). A stage without hooks
 * costs nothing: no promise, no object.
 *
 * Over 600 lines: the six stages' runners share the time budget, the failure
 * masking and the refusal shapes kept here; `@policy`'s context and the
 * stages' request views could move out with issue 40's pipeline rooms.
 *
 * @module
 */
import { type AccessModel, touchedAccessKeys } from "../auth/mod.ts";
import { RouterError } from "../errors.ts";
import type { Logger } from "../log/mod.ts";
import type {
  PlanNode,
  QueryPlan,
  StagedSubgraphRequest,
  StagedSubgraphResponse,
  SubgraphStages,
} from "../engine/mod.ts";
import type { Facet, MaybePromise, Plugin, PluginError, PluginIdentity, Refusal } from "./types.ts";
import type { DocumentNode } from "graphql";

/** A plugin as loaded: its module's export, its validated config and its time budget. */
export interface LoadedPlugin {
  /** The plugin. */
  readonly plugin: Plugin<unknown>;
  /** Its config, as its `configSchema` returned it. */
  readonly config: unknown;
  /** The time budget of each of its hooks, ms (`plugins[].hook_timeout`). */
  readonly timeoutMs: number;
  /**
   * A built-in (the coprocessor): the `RouterError`s its hooks throw say what
   * failed and go to the client as they are (a user plugin's are masked).
   */
  readonly trusted?: boolean;
}

/** Where the host reports what hooks did (metrics); absent: nothing is counted. */
export interface PluginEvents {
  /** A hook stopped a request: it refused, or it failed. */
  hook(plugin: string, hook: string, outcome: "refused" | "failed"): void;
}

/** The hook names, in stage order. */
export type HookName =
  | "onRouterRequest"
  | "onOperation"
  | "onPlan"
  | "onSubgraphRequest"
  | "onSubgraphResponse"
  | "onRouterResponse";

/** The context key of the `@policy` decisions (Apollo Router's). */
export const REQUIRED_POLICIES_KEY = "apollo::authorization::required_policies";

/**
 * A request refused by a hook: the errors it gave and the status to answer
 * with (a `RouterError` coded `REFUSED`, so every facet can answer it).
 */
export class PluginRefusal extends RouterError {
  /** The errors, each with an `extensions.code` (`REFUSED` unless the hook gave one). */
  readonly errors: readonly PluginError[];
  /** The HTTP status (the hook's, default 403). */
  readonly status: number;
  /**
   * @param refusal What the hook answered.
   * @param plugin The plugin's name (in the default message).
   */
  constructor(refusal: Refusal, plugin: string) {
    const errors = refusal.errors.length > 0
      ? refusal.errors.map(withCode)
      : [{ message: `Refused by plugin "${plugin}"`, extensions: { code: "REFUSED" } }];
    super("REFUSED", errors[0]!.message);
    this.errors = errors;
    this.status = validStatus(refusal.status) ?? 403;
  }
}

function withCode(error: PluginError): PluginError {
  const message = typeof error?.message === "string" ? error.message : "Refused";
  const extensions = error?.extensions ?? {};
  return typeof extensions.code === "string"
    ? { message, extensions }
    : { message, extensions: { ...extensions, code: "REFUSED" } };
}

function validStatus(status: unknown): number | undefined {
  return typeof status === "number" && Number.isInteger(status) && status >= 400 && status <= 599
    ? status
    : undefined;
}

/** A hook's answer is a refusal when it carries an `errors` list. */
function isRefusal(value: unknown): value is Refusal {
  return typeof value === "object" && value !== null && !(value instanceof Response) &&
    Array.isArray((value as Refusal).errors);
}

/** A hook that did not settle within its budget. */
class OverBudget extends Error {}

/**
 * Runs one hook within its plugin's budget. A sync answer is taken as it is
 * (no timer, no promise); a throw, a rejection or a late answer becomes a
 * `PLUGIN_FAILED` error, the cause logged.
 */
function runHook<R>(
  entry: LoadedPlugin,
  hook: HookName,
  options: {
    readonly ctx: unknown;
    readonly log: Logger;
    readonly requestId: string | null;
    readonly events: PluginEvents | undefined;
  },
): MaybePromise<R> {
  let value: MaybePromise<R>;
  try {
    const call = entry.plugin[hook] as unknown as (ctx: unknown) => MaybePromise<R>;
    value = call.call(entry.plugin, options.ctx);
  } catch (error) {
    return hookFailed(entry, hook, error, options);
  }
  if (!(value instanceof Promise)) return value;
  const pending = value;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const budget = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OverBudget()), entry.timeoutMs);
  });
  pending.catch(() => {}); // a rejection after the budget is not an unhandled one
  return Promise.race([pending, budget]).then(
    (result) => {
      clearTimeout(timer);
      return result;
    },
    (error) => {
      clearTimeout(timer);
      return hookFailed(entry, hook, error, options);
    },
  );
}

/** A hook that threw, rejected or overran: logged, and `PLUGIN_FAILED` thrown (a built-in's own error as it is). */
function hookFailed(
  entry: LoadedPlugin,
  hook: HookName,
  error: unknown,
  options: {
    readonly log: Logger;
    readonly requestId: string | null;
    readonly events: PluginEvents | undefined;
  },
): never {
  if (entry.trusted && error instanceof RouterError) throw error;
  const name = entry.plugin.name;
  options.events?.hook(name, hook, "failed");
  options.log.error("Plugin hook failed", {
    plugin: name,
    hook,
    request_id: options.requestId,
    error: error instanceof OverBudget ? `exceeded its budget of ${entry.timeoutMs} ms` : (
      error instanceof Error ? (error.stack ?? error.message) : String(error)
    ),
  });
  throw new RouterError(
    "PLUGIN_FAILED",
    error instanceof OverBudget
      ? `Plugin "${name}" did not finish ${hook} within its time budget (${entry.timeoutMs} ms)`
      : `Plugin "${name}" failed in ${hook}`,
  );
}

/** The plugins of one router state, by stage. */
export class PluginHost {
  /** Every plugin, in `plugins:` order. */
  readonly plugins: readonly LoadedPlugin[];
  /** Where hook failures are logged. */
  readonly log: Logger;
  /** The plugins with each hook, in order (empty: the stage costs nothing). */
  readonly hooks: Readonly<Record<HookName, readonly LoadedPlugin[]>>;
  /** Where hook outcomes are counted; undefined: not counted. */
  readonly events: PluginEvents | undefined;
  readonly #supergraph: AccessModel | null;
  readonly #hasPolicies: boolean;
  readonly #policies = new WeakMap<OperationInfo, readonly string[]>();

  /**
   * The `@policy` names an operation touches, sorted (computed once per
   * prepared operation); none when the supergraph has no `@policy`.
   * @param operation The operation.
   * @returns The names.
   */
  policiesOf(operation: OperationInfo): readonly string[] {
    if (!this.#hasPolicies || this.#supergraph === null) return NO_NAMES;
    let names = this.#policies.get(operation);
    if (names === undefined) {
      const { apiSchema, access } = this.#supergraph;
      const found = new Set<string>();
      const keys = touchedAccessKeys(operation.document, apiSchema, access, {
        operationName: operation.name,
      });
      for (const key of keys) {
        for (const group of access.get(key)?.policies ?? []) {
          for (const name of group) found.add(name);
        }
      }
      names = [...found].sort();
      this.#policies.set(operation, names);
    }
    return names;
  }

  /**
   * @param plugins The loaded plugins, in order.
   * @param log Where hook failures are logged.
   */
  constructor(
    plugins: readonly LoadedPlugin[],
    log: Logger,
    options: {
      /** The supergraph's API schema and access map (where `@policy` is read). */
      readonly supergraph?: AccessModel;
      /** Where hook outcomes are counted. */
      readonly events?: PluginEvents;
    } = {},
  ) {
    this.plugins = plugins;
    this.log = log;
    this.events = options.events;
    this.#supergraph = options.supergraph ?? null;
    this.#hasPolicies = [...this.#supergraph?.access.values() ?? []].some((a) => a.policies);
    const having = (hook: HookName) => plugins.filter((p) => typeof p.plugin[hook] === "function");
    this.hooks = {
      onRouterRequest: having("onRouterRequest"),
      onOperation: having("onOperation"),
      onPlan: having("onPlan"),
      onSubgraphRequest: having("onSubgraphRequest"),
      onSubgraphResponse: having("onSubgraphResponse"),
      onRouterResponse: having("onRouterResponse"),
    };
  }

  /**
   * True when a hook sees the client's headers (`onRouterRequest`,
   * `onOperation`): the edge then gives the request headers they may change.
   */
  get seesClientHeaders(): boolean {
    return this.hooks.onRouterRequest.length > 0 || this.hooks.onOperation.length > 0;
  }

  /**
   * Starts a request's plugin run and attaches it to the request (found again
   * with {@linkcode pluginRequestOf}).
   * @param request The request (its headers mutable: a copy the handler made).
   * @param options The facet and the request's id.
   * @returns The run.
   */
  begin(
    request: Request,
    options: {
      readonly facet: Facet;
      readonly requestId: string | null;
      /** The headers hooks change, when not the request's own (a WebSocket upgrade's copy). */
      readonly headers?: Headers;
    },
  ): PluginRequest {
    const run = new PluginRequest(this, { request, ...options });
    (request as unknown as WithRun)[RUN] = run;
    return run;
  }
}

const NO_NAMES: readonly string[] = Object.freeze([]);

const RUN: unique symbol = Symbol("gw.pluginRequest");
type WithRun = { [RUN]?: PluginRequest };

/**
 * The plugin run of a request, if the router has plugins (else undefined).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pluginRequestOf } from "./host.ts";
 * assert.equal(pluginRequestOf(new Request("http://r/graphql")), undefined);
 * ```
 * @param request The request.
 * @returns The run, or undefined.
 */
export function pluginRequestOf(request: Request): PluginRequest | undefined {
  return (request as unknown as WithRun)[RUN];
}

/**
 * The operation stage of a request, for a facet: null when no plugin hooks it
 * (nothing to await), else the run of its `onOperation` hooks, resolving to
 * the error to answer with (a {@linkcode PluginRefusal} or `PLUGIN_FAILED`),
 * or the `@policy` names they granted (the engine removes the fields of the
 * others). Every facet calls it right after `authorizeOperation`.
 *
 * @example No plugins: nothing to await
 * ```ts
 * import assert from "node:assert/strict";
 * import { parse } from "graphql";
 * import { operationStage } from "./host.ts";
 * const operation = { name: null, kind: "query" as const, document: parse("{ a }") };
 * assert.equal(operationStage(new Request("http://r/"), { operation, identity: null }), null);
 * ```
 * @param request The request (its plugin run attached by the edge).
 * @param options The operation (authorized), the identity, the variables.
 * @returns Null, or the stage's outcome.
 */
export function operationStage(
  request: Request,
  options: {
    /** The operation, authorized. */
    readonly operation: OperationInfo;
    /** The verified identity, null when anonymous. */
    readonly identity: PluginIdentity | null;
    /** The operation's variables as the client sent them. */
    readonly variables?: Readonly<Record<string, unknown>> | null | undefined;
  },
): Promise<OperationOutcome> | null {
  const run = pluginRequestOf(request);
  if (run === undefined || !run.has("onOperation")) return null;
  return run.operation(options.operation, options);
}

/** The operation stage's outcome: the error to answer with, or the `@policy` names granted. */
export interface OperationOutcome {
  /** A refusal or a failure; null: go on. */
  readonly error: RouterError | null;
  /** The `@policy` names the hooks granted (absent: the operation needs none). */
  readonly policies?: ReadonlySet<string>;
}

const NO_REFUSAL: OperationOutcome = Object.freeze({ error: null });

/**
 * The policy map hooks see: the context's (a coprocessor may have replaced it
 * with an object; it is made a map again, keeping only the required names).
 */
function policyMap(
  context: Map<string, unknown>,
  required: Map<string, boolean>,
): Map<string, boolean> {
  const value = context.get(REQUIRED_POLICIES_KEY);
  if (value instanceof Map) return value as Map<string, boolean>;
  const map = new Map<string, boolean>();
  for (const name of required.keys()) {
    map.set(
      name,
      typeof value === "object" && value !== null &&
        (value as Record<string, unknown>)[name] === true,
    );
  }
  context.set(REQUIRED_POLICIES_KEY, map);
  return map;
}

/** The required names the context grants (`true`), whatever shape the hooks left it in. */
function grantedPolicies(context: Map<string, unknown>, names: readonly string[]): Set<string> {
  const value = context.get(REQUIRED_POLICIES_KEY);
  const granted = new Set<string>();
  for (const name of names) {
    const decided = value instanceof Map
      ? value.get(name)
      : typeof value === "object" && value !== null
      ? (value as Record<string, unknown>)[name]
      : undefined;
    if (decided === true) granted.add(name);
  }
  return granted;
}

/** What the operation stage is told about an operation. */
export interface OperationInfo {
  /** The operation's name, null when anonymous. */
  readonly name: string | null;
  /** Its kind. */
  readonly kind: "query" | "mutation" | "subscription";
  /** The parsed document. */
  readonly document: DocumentNode;
}

/** One request's plugin run: its shared context and its stages. */
export class PluginRequest {
  /** Shared by every stage of the request. */
  readonly context: Map<string, unknown> = new Map();
  /** The operation's name once known. */
  operationName: string | null = null;
  /** The stages the engine runs around each subgraph fetch; undefined: none. */
  readonly stages: SubgraphStages | undefined;
  readonly #host: PluginHost;
  readonly #request: Request;
  readonly #facet: Facet;
  readonly #requestId: string | null;
  #headers: Headers | undefined;

  /**
   * @param host The state's plugins.
   * @param options The request, its facet and id.
   */
  constructor(
    host: PluginHost,
    options: {
      readonly request: Request;
      readonly facet: Facet;
      readonly requestId: string | null;
      readonly headers?: Headers;
    },
  ) {
    this.#host = host;
    this.#request = options.request;
    this.#headers = options.headers;
    this.#facet = options.facet;
    this.#requestId = options.requestId;
    const { onPlan, onSubgraphRequest, onSubgraphResponse } = host.hooks;
    const none = onPlan.length === 0 && onSubgraphRequest.length === 0 &&
      onSubgraphResponse.length === 0;
    this.stages = none ? undefined : {
      ...(onPlan.length > 0 ? { plan: (plan: QueryPlan) => this.#plan(plan) } : {}),
      ...(onSubgraphRequest.length > 0
        ? { request: (request: StagedSubgraphRequest) => this.#subgraphRequest(request) }
        : {}),
      ...(onSubgraphResponse.length > 0
        ? { response: (response: StagedSubgraphResponse) => this.#subgraphResponse(response) }
        : {}),
    };
  }

  /**
   * The client's headers as hooks change them. Made on first read (a hook
   * that leaves them alone costs no copy): a mutable copy that becomes the
   * request's `headers` from then on, so every later reader sees the hooks'
   * changes; for a WebSocket upgrade, the copy the connection was given.
   */
  get headers(): Headers {
    return this.#headers ??= mutableHeaders(this.#request);
  }

  /**
   * A run of its own for one operation of a batch (its own context and
   * operation name, its own request's headers), attached to that request.
   * @param request The operation's request.
   * @returns The run.
   */
  fork(request: Request): PluginRequest {
    return this.#host.begin(request, { facet: this.#facet, requestId: this.#requestId });
  }

  /** True when some plugin hooks the stage. */
  has(hook: HookName): boolean {
    return this.#host.hooks[hook].length > 0;
  }

  #run<R>(entry: LoadedPlugin, hook: HookName, ctx: unknown): MaybePromise<R> {
    return runHook(entry, hook, {
      ctx,
      log: this.#host.log,
      requestId: this.#requestId,
      events: this.#host.events,
    });
  }

  /**
   * The router request stage: each `onRouterRequest` in order, on the
   * request's (mutable) headers. A `Response` answers the request; a refusal
   * throws a {@linkcode PluginRefusal}; a failure a `PLUGIN_FAILED` error.
   * Sync while every hook answers sync (nothing to await).
   * @returns The response a hook answered with, or null to go on.
   */
  routerRequest(): MaybePromise<Response | null> {
    const clientHeaders = () => this.headers;
    const request = this.#request;
    let url: URL | undefined;
    const events = this.#host.events;
    const answered = eachHook(this.#host.hooks.onRouterRequest, (entry) =>
      settle(
        this.#run<unknown>(entry, "onRouterRequest", {
          operationName: this.operationName,
          context: this.context,
          config: entry.config,
          requestId: this.#requestId,
          facet: this.#facet,
          // Read on demand: a hook that leaves the headers alone costs no copy of them.
          get headers(): Headers {
            return clientHeaders();
          },
          method: request.method,
          get url(): URL {
            return url ??= new URL(request.url);
          },
        }),
        (answer) => {
          if (answer instanceof Response) return answer;
          refuseIf(answer, entry, { hook: "onRouterRequest", events });
          return undefined;
        },
      ));
    return settle(answered, (response) => response ?? null);
  }

  /**
   * The operation stage: each `onOperation` in order, once the operation is
   * authorized and before anything is fetched.
   * @param operation The operation.
   * @param options The identity and the `@policy` names it needs (each false until granted).
   * @returns Null to go on, or the error to answer with (a refusal or a failure).
   */
  operation(
    operation: OperationInfo,
    options: {
      readonly identity: PluginIdentity | null;
      /** The operation's variables as the client sent them. */
      readonly variables?: Readonly<Record<string, unknown>> | null | undefined;
    },
  ): Promise<OperationOutcome> {
    this.operationName = operation.name;
    // `@policy` (Apollo's key): each name the operation touches, false until a hook grants it.
    const names = this.#host.policiesOf(operation);
    const requiredPolicies = new Map<string, boolean>();
    for (const name of names) requiredPolicies.set(name, false);
    if (names.length > 0) this.context.set(REQUIRED_POLICIES_KEY, requiredPolicies);
    const clientHeaders = () => this.headers;
    const events = this.#host.events;
    const decided = (): OperationOutcome =>
      names.length === 0
        ? NO_REFUSAL
        : { error: null, policies: grantedPolicies(this.context, names) };
    const failed = (error: unknown): OperationOutcome => {
      if (error instanceof RouterError) return { error };
      throw error;
    };
    let ran: MaybePromise<undefined>;
    try {
      ran = eachHook(this.#host.hooks.onOperation, (entry) =>
        settle(
          this.#run<unknown>(entry, "onOperation", {
            operationName: this.operationName,
            context: this.context,
            config: entry.config,
            requestId: this.#requestId,
            facet: this.#facet,
            get headers(): Headers {
              return clientHeaders();
            },
            kind: operation.kind,
            document: operation.document,
            identity: options.identity,
            variables: options.variables ?? null,
            // A coprocessor may have replaced the context's map with an object.
            requiredPolicies: policyMap(this.context, requiredPolicies),
          }),
          (answer) => refuseIf(answer, entry, { hook: "onOperation", events }),
        ));
    } catch (error) {
      try {
        return Promise.resolve(failed(error));
      } catch (thrown) {
        return Promise.reject(thrown);
      }
    }
    return ran instanceof Promise ? ran.then(decided, failed) : Promise.resolve(decided());
  }

  #plan(plan: QueryPlan): MaybePromise<void> {
    const clientHeaders = () => this.headers;
    let subgraphs: string[] | undefined;
    const events = this.#host.events;
    return eachHook(this.#host.hooks.onPlan, (entry) =>
      settle(
        this.#run<unknown>(entry, "onPlan", {
          operationName: this.operationName,
          context: this.context,
          config: entry.config,
          requestId: this.#requestId,
          facet: this.#facet,
          get headers(): Headers {
            return clientHeaders();
          },
          plan,
          get subgraphs(): string[] {
            return subgraphs ??= subgraphsOf(plan);
          },
        }),
        (answer) => refuseIf(answer, entry, { hook: "onPlan", events }),
      ));
  }

  #subgraphRequest(request: StagedSubgraphRequest): MaybePromise<void> {
    return this.#subgraphStage("onSubgraphRequest", request);
  }

  #subgraphResponse(response: StagedSubgraphResponse): MaybePromise<void> {
    return this.#subgraphStage("onSubgraphResponse", response);
  }

  /** A subgraph stage's hooks in order; a hook may refuse, or change the body it was given. */
  #subgraphStage(
    hook: "onSubgraphRequest" | "onSubgraphResponse",
    staged: StagedSubgraphRequest | StagedSubgraphResponse,
  ): MaybePromise<void> {
    return eachHook(this.#host.hooks[hook], (entry) => {
      const context = new SubgraphContext(this.#shared(entry), staged);
      const answered = (answer: unknown): undefined => {
        refuseIf(answer, entry, { hook, events: this.#host.events });
        if (typeof context.body === "string") staged.body = context.body;
        return undefined;
      };
      const answer = this.#run<unknown>(entry, hook, context);
      return answer instanceof Promise ? answer.then(answered) : answered(answer);
    });
  }

  /** What every hook context carries, for one plugin. */
  #shared(entry: LoadedPlugin): SharedContext {
    return {
      operationName: this.operationName,
      context: this.context,
      config: entry.config,
      requestId: this.#requestId,
      facet: this.#facet,
    };
  }

  /**
   * The router response stage: each `onRouterResponse` in order, on the
   * response's headers (a hook may answer another response instead). Sync
   * while every hook answers sync.
   * @param response The response about to be sent.
   * @returns The response to send.
   */
  routerResponse(response: Response): MaybePromise<Response> {
    const replaced = eachHook(this.#host.hooks.onRouterResponse, (entry) =>
      settle(
        this.#run<unknown>(
          entry,
          "onRouterResponse",
          // The router's own responses: their headers are mutable.
          Object.assign(this.#base(entry), {
            headers: response.headers,
            status: response.status,
            response,
          }),
        ),
        (answer) => {
          if (answer instanceof Response && answer !== response) {
            // The replaced response is let go: its stream's source (a subscription) stops,
            // unless the new response carries that body on. A body already read cannot be
            // cancelled.
            if (answer.body !== response.body) response.body?.cancel().catch(() => {});
            response = answer;
          }
          return undefined;
        },
      ));
    return settle(replaced, () => response);
  }

  #base(entry: LoadedPlugin) {
    return {
      operationName: this.operationName,
      context: this.context,
      config: entry.config,
      requestId: this.#requestId,
      facet: this.#facet,
    };
  }
}

/** The fields every hook context carries. */
interface SharedContext {
  readonly operationName: string | null;
  readonly context: Map<string, unknown>;
  readonly config: unknown;
  readonly requestId: string | null;
  readonly facet: Facet;
}

/**
 * A subgraph request's or answer's hook context (one per fetch and hook): its
 * `headers` read from the staged request or answer on demand (a prototype
 * getter: no closure per fetch), its `body` replaceable.
 */
class SubgraphContext {
  readonly operationName: string | null;
  readonly context: Map<string, unknown>;
  readonly config: unknown;
  readonly requestId: string | null;
  readonly facet: Facet;
  readonly subgraph: string;
  /** The request's URL (request stage). */
  readonly url: string | undefined;
  /** The answer's status (response stage). */
  readonly status: number | undefined;
  body: string;
  readonly #staged: { readonly headers: Headers };

  constructor(
    shared: SharedContext,
    staged: StagedSubgraphRequest | StagedSubgraphResponse,
  ) {
    this.operationName = shared.operationName;
    this.context = shared.context;
    this.config = shared.config;
    this.requestId = shared.requestId;
    this.facet = shared.facet;
    this.subgraph = staged.subgraph;
    this.url = "url" in staged ? staged.url : undefined;
    this.status = "status" in staged ? staged.status : undefined;
    this.body = staged.body;
    this.#staged = staged;
  }

  /** Read on demand: a hook that leaves the headers alone costs no copy of them. */
  get headers(): Headers {
    return this.#staged.headers;
  }
}

/**
 * A request's headers made mutable (a server request's are not): a copy,
 * installed as the request's own `headers` so every later reader sees what
 * hooks change, without copying the request.
 */
function mutableHeaders(request: Request): Headers {
  const copy = new Headers(request.headers);
  Object.defineProperty(request, "headers", { value: copy, configurable: true });
  return copy;
}

/** `then` without a promise for a value that is not one. */
function settle<T, R>(
  value: MaybePromise<T>,
  next: (value: T) => MaybePromise<R>,
): MaybePromise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/**
 * Runs `step` for each plugin in order, sync while the steps answer sync (no
 * promise, no microtask); the first step that answers a value ends the run.
 */
function eachHook<T>(
  entries: readonly LoadedPlugin[],
  step: (entry: LoadedPlugin) => MaybePromise<T | undefined>,
  from = 0,
): MaybePromise<T | undefined> {
  for (let i = from; i < entries.length; i++) {
    const value = step(entries[i]!);
    if (value instanceof Promise) {
      return value.then((settled) =>
        settled !== undefined ? settled : eachHook(entries, step, i + 1)
      );
    }
    if (value !== undefined) return value;
  }
  return undefined;
}

/** The subgraphs a plan fetches from, sorted. */
function subgraphsOf(plan: QueryPlan): string[] {
  const names = new Set<string>();
  const visit = (node: PlanNode | null): void => {
    if (node === null) return;
    switch (node.kind) {
      case "Fetch":
        names.add(node.serviceName);
        return;
      case "Flatten":
        return visit(node.node);
      case "Sequence":
      case "Parallel":
        return node.nodes.forEach(visit);
      case "Defer":
        visit(node.primary.node);
        return node.deferred.forEach((d) => visit(d.node));
    }
  };
  visit(plan.node);
  return [...names].sort();
}

/** Throws the refusal a hook answered (counted), if it answered one. */
function refuseIf(
  answer: unknown,
  entry: LoadedPlugin,
  options: { readonly hook: HookName; readonly events: PluginEvents | undefined },
): undefined {
  if (!isRefusal(answer)) return undefined;
  options.events?.hook(entry.plugin.name, options.hook, "refused");
  throw new PluginRefusal(answer, entry.plugin.name);
}
