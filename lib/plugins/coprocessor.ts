/**
 * Apollo Router's external coprocessor (issue 40), as a built-in plugin on the
 * same stages: each configured stage POSTs Apollo's JSON (version 1, `stage`,
 * `control: "continue"`, `id`, and the data its switches ask for: `headers` as
 * a map of arrays, `body`, `context: {entries}`, `sdl`, `path`, `method`,
 * `uri`, `serviceName`, `statusCode`) and applies the answer: changed headers,
 * body and context, or `control: {"break": status}` to end the request with
 * that status and the answer's body. So a coprocessor written for Apollo
 * Router works unchanged.
 *
 * Stages and where they run here: `RouterRequest` (the HTTP request, before
 * its body is read), `SupergraphRequest` then `ExecutionRequest` (the
 * operation, parsed, validated and authorized: where `@policy` is decided),
 * `SubgraphRequest` / `SubgraphResponse` (each fetch), `ExecutionResponse`,
 * `SupergraphResponse` then `RouterResponse` (the answer, not a stream).
 *
 * A failed call (unreachable, past `timeout`, a non-2xx answer, an answer
 * over `max_response_bytes`, not the protocol's JSON, a changed `version`,
 * `stage` or `id`) fails the request closed with 502 `COPROCESSOR_FAILED`
 * (logged with the reason), unless `fail_open`.
 *
 * @module
 */
import { type DocumentNode, print } from "graphql";
import type { CoprocessorConfig, CoprocessorStageConfig } from "../config/mod.ts";
import { RouterError } from "../errors.ts";
import { readLimited } from "../limited_body.ts";
import type { Logger } from "../log/mod.ts";
import { type LoadedPlugin, PluginRefusal } from "./host.ts";
import type { Plugin, PluginError, Refusal, StageContext } from "./types.ts";

/** Apollo's stage names. */
export type CoprocessorStage =
  | "RouterRequest"
  | "RouterResponse"
  | "SupergraphRequest"
  | "SupergraphResponse"
  | "ExecutionRequest"
  | "ExecutionResponse"
  | "SubgraphRequest"
  | "SubgraphResponse";

/** A coprocessor answer, as read (only what the router takes back). */
export interface CoprocessorAnswer {
  readonly control?: "continue" | { readonly break: number };
  readonly headers?: unknown;
  readonly body?: unknown;
  readonly context?: unknown;
}

/** Options for {@linkcode coprocessorPlugin}. */
export interface CoprocessorOptions {
  /** The supergraph's SDL (sent when `sdl` is on). */
  readonly sdl: string;
  /** Where failed calls are logged. */
  readonly log: Logger;
  /** The HTTP client (tests); default: `fetch`. */
  readonly fetch?: (request: Request) => Promise<Response>;
  /** Counts each call's outcome (metrics); absent: not counted. */
  readonly onCall?: (
    stage: CoprocessorStage,
    outcome: "continue" | "break" | "failed" | "failed_open",
  ) => void;
}

/** Why a call failed (the client sees the stage and this, never the coprocessor's URL). */
class CallFailed extends Error {}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** True when a stage has any switch on (then it is called). */
function on(stage: CoprocessorStageConfig): boolean {
  return Object.values(stage).some((value) => value === true);
}

/**
 * Headers as the protocol sends them: a map of lower-case names to value
 * lists (`set-cookie` keeps one value per cookie).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { headersToMap } from "./coprocessor.ts";
 * const headers = new Headers([["a", "1"], ["set-cookie", "x=1"], ["set-cookie", "y=2"]]);
 * assert.deepEqual(headersToMap(headers), { a: ["1"], "set-cookie": ["x=1", "y=2"] });
 * ```
 * @param headers The headers.
 * @returns The map.
 */
export function headersToMap(headers: Headers): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of headers) {
    if (name !== "set-cookie") out[name] = [value];
  }
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) out["set-cookie"] = cookies;
  return out;
}

/**
 * Replaces `target`'s headers with a coprocessor's map (a value list or one
 * string per name); `content-length` is never taken (Apollo's rule).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { applyHeaderMap } from "./coprocessor.ts";
 * const headers = new Headers({ old: "1", "content-length": "3" });
 * applyHeaderMap(headers, { "x-a": ["1", "2"], "content-length": ["9"] });
 * assert.deepEqual([...headers], [["content-length", "3"], ["x-a", "1, 2"]]);
 * ```
 * @param target The headers to change.
 * @param map The coprocessor's `headers`.
 * @throws {TypeError} When the map is not a map of strings or string lists.
 */
export function applyHeaderMap(target: Headers, map: unknown): void {
  const entries = headerEntries(map);
  for (const name of [...target.keys()]) {
    if (name !== "content-length") target.delete(name);
  }
  for (const [name, value] of entries) {
    if (name.toLowerCase() !== "content-length") target.append(name, value);
  }
}

/** A coprocessor's header map as name-value pairs; throws a `TypeError` naming what is wrong. */
function headerEntries(map: unknown): [string, string][] {
  if (!isObject(map)) throw new TypeError("headers is not a map of names to value lists");
  const entries: [string, string][] = [];
  for (const [name, values] of Object.entries(map)) {
    const list = typeof values === "string" ? [values] : values;
    if (!Array.isArray(list) || list.some((v) => typeof v !== "string")) {
      throw new TypeError(`headers.${name} is not a list of strings`);
    }
    for (const value of list as string[]) entries.push([name, value]);
  }
  return entries;
}

/** The request's context as the protocol sends it (`Map` values as objects). */
function contextOf(context: Map<string, unknown>): { entries: Record<string, unknown> } {
  const entries: Record<string, unknown> = {};
  for (const [key, value] of context) {
    entries[key] = value instanceof Map ? Object.fromEntries(value) : value;
  }
  return { entries };
}

/** A coprocessor's `context.entries`; throws a `TypeError` when it is not `{entries: {…}}`. */
function contextEntries(answer: unknown): Record<string, unknown> {
  const entries = isObject(answer) ? answer.entries : undefined;
  if (!isObject(entries)) throw new TypeError("context is not {entries: {…}}");
  return entries;
}

/** Takes back a changed context (`{entries}`): the request's context becomes it. */
function applyContext(context: Map<string, unknown>, answer: unknown): void {
  const entries = contextEntries(answer);
  context.clear();
  for (const [key, value] of Object.entries(entries)) context.set(key, value);
}

/** The errors of a `break` body: its `errors`, or a string body as one message. */
function breakErrors(body: unknown, status: number): PluginError[] {
  if (typeof body === "string") {
    try {
      return breakErrors(JSON.parse(body), status);
    } catch {
      return [{ message: body }];
    }
  }
  if (isObject(body) && Array.isArray(body.errors)) {
    return body.errors.filter(isObject).map((e) => ({
      message: typeof e.message === "string" ? e.message : "Refused by the coprocessor",
      ...(isObject(e.extensions) ? { extensions: e.extensions } : {}),
    }));
  }
  return [{ message: `The coprocessor ended the request (HTTP ${status})` }];
}

/** The refusal of a `break` answer. */
function refusalOf(answer: CoprocessorAnswer): Refusal | null {
  const control = answer.control;
  if (!isObject(control)) return null;
  const status = control.break as number;
  return { status, errors: breakErrors(answer.body, status) };
}

/** Checks an answer against what was sent (Apollo's rules), else throws `CallFailed`. */
function checked(answer: unknown, sent: Record<string, unknown>): CoprocessorAnswer {
  if (!isObject(answer)) throw new CallFailed("its answer is not a JSON object");
  for (const key of ["version", "stage", "id", "subgraphRequestId", "serviceName"]) {
    if (answer[key] !== undefined && key in sent && answer[key] !== sent[key]) {
      throw new CallFailed(`its answer changed "${key}"`);
    }
  }
  const control = answer.control;
  if (
    control !== undefined && control !== "continue" &&
    !(isObject(control) && Number.isInteger(control.break) &&
      (control.break as number) >= 200 && (control.break as number) <= 599)
  ) {
    throw new CallFailed('its "control" is neither "continue" nor {"break": <HTTP status>}');
  }
  // Checked here, not when taken back: a malformed answer is a failed call (logged, counted,
  // `fail_open` honoured), and the request's headers are never left half-replaced.
  try {
    if (answer.headers !== undefined) new Headers(headerEntries(answer.headers));
    if (answer.context !== undefined) contextEntries(answer.context);
  } catch (error) {
    throw new CallFailed(`its answer is malformed: ${(error as Error).message}`);
  }
  return answer as CoprocessorAnswer;
}

/** What one call sends, besides the control properties. */
interface CallData {
  readonly headers?: Headers;
  readonly body?: () => unknown;
  readonly path?: string;
  readonly method?: string;
  readonly uri?: string;
  readonly serviceName?: string;
  readonly statusCode?: number;
  readonly subgraphRequestId?: string;
}

/** The calls of one coprocessor: payloads built, answers read bounded and checked. */
class CoprocessorClient {
  readonly #config: CoprocessorConfig;
  readonly #options: CoprocessorOptions;
  readonly #url: URL;

  constructor(config: CoprocessorConfig, options: CoprocessorOptions, url: URL) {
    this.#config = config;
    this.#options = options;
    this.#url = url;
  }

  /** One call: the payload the switches ask for, the checked answer; null: failed open. */
  async call(
    stage: CoprocessorStage,
    switches: CoprocessorStageConfig,
    ctx: StageContext<unknown>,
    data: CallData,
  ): Promise<CoprocessorAnswer | null> {
    const payload: Record<string, unknown> = {
      version: 1,
      stage,
      control: "continue",
      id: ctx.requestId ?? crypto.randomUUID(),
    };
    if (data.subgraphRequestId !== undefined) payload.subgraphRequestId = data.subgraphRequestId;
    if (switches.headers && data.headers) payload.headers = headersToMap(data.headers);
    if (switches.body && data.body) payload.body = data.body();
    if (switches.context) payload.context = contextOf(ctx.context);
    if (switches.sdl) payload.sdl = this.#options.sdl;
    if (switches.path && data.path !== undefined) payload.path = data.path;
    if (switches.method && data.method !== undefined) payload.method = data.method;
    if (switches.uri && data.uri !== undefined) payload.uri = data.uri;
    if (switches.service_name && data.serviceName !== undefined) {
      payload.serviceName = data.serviceName;
    }
    if (switches.status_code && data.statusCode !== undefined) {
      payload.statusCode = data.statusCode;
    }
    let answer: CoprocessorAnswer;
    try {
      answer = checked(await this.#post(payload), payload);
    } catch (error) {
      return this.#failed(stage, error, ctx.requestId);
    }
    this.#options.onCall?.(stage, typeof answer.control === "object" ? "break" : "continue");
    return answer;
  }

  /** A failed call: logged; null when failing open, else `COPROCESSOR_FAILED`. */
  #failed(stage: CoprocessorStage, error: unknown, requestId: string | null): null {
    const config = this.#config;
    const reason = error instanceof CallFailed
      ? error.message
      : error instanceof DOMException && error.name === "TimeoutError"
      ? `it did not answer within ${config.timeout_ms} ms (coprocessor.timeout)`
      : "it could not be reached";
    this.#options.log.error("Coprocessor call failed", {
      stage,
      reason,
      request_id: requestId,
      fail_open: config.fail_open,
      ...(error instanceof CallFailed ? {} : { error: String(error) }),
    });
    this.#options.onCall?.(stage, config.fail_open ? "failed_open" : "failed");
    if (config.fail_open) return null;
    throw new RouterError("COPROCESSOR_FAILED", `The coprocessor failed at ${stage}: ${reason}`);
  }

  async #post(payload: Record<string, unknown>): Promise<unknown> {
    const config = this.#config;
    const request = new Request(this.#url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(payload),
      redirect: "manual",
      signal: AbortSignal.timeout(config.timeout_ms),
    });
    const response = await (this.#options.fetch ?? fetch)(request);
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel().catch(() => {});
      throw new CallFailed(`it answered HTTP ${response.status}`);
    }
    const bytes = await readLimited(response, config.max_response_bytes, {
      tooLarge: () =>
        new CallFailed(
          `its answer is over ${config.max_response_bytes} bytes (coprocessor.max_response_bytes)`,
        ),
      broken: (cause) => cause instanceof Error ? cause : new CallFailed("its answer broke off"),
    });
    try {
      return JSON.parse(new TextDecoder().decode(bytes ?? new Uint8Array()));
    } catch {
      throw new CallFailed("its answer is not JSON");
    }
  }
}

/** Takes back the headers and context of a `continue` answer (checked by `checked`). */
function take(
  answer: CoprocessorAnswer,
  target: { readonly headers?: Headers; readonly context: Map<string, unknown> },
): void {
  if (answer.headers !== undefined && target.headers) {
    applyHeaderMap(target.headers, answer.headers);
  }
  if (answer.context !== undefined) applyContext(target.context, answer.context);
}

type Ctx<T = unknown> = StageContext<unknown> & T;

/** `RouterRequest`: the HTTP request, before its body is read. */
function routerRequestHook(client: CoprocessorClient, switches: CoprocessorStageConfig) {
  return async (ctx: Ctx<{ readonly method: string; readonly url: URL }>) => {
    const answer = await client.call("RouterRequest", switches, ctx, {
      headers: ctx.headers,
      path: ctx.url.pathname,
      method: ctx.method,
    });
    if (answer === null) return;
    const refusal = refusalOf(answer);
    if (refusal !== null) return breakResponse(answer, refusal);
    take(answer, ctx);
  };
}

/** `SupergraphRequest` then `ExecutionRequest`: the operation, authorized. */
function operationHook(
  client: CoprocessorClient,
  stages: readonly (readonly [CoprocessorStage, CoprocessorStageConfig])[],
) {
  return async (
    ctx: Ctx<{
      readonly document: DocumentNode;
      readonly variables: Readonly<Record<string, unknown>> | null;
    }>,
  ) => {
    // The operation is printed once for both stages (a changed body is not taken back here).
    let operation: Record<string, unknown> | undefined;
    for (const [name, stage] of stages) {
      const answer = await client.call(name, stage, ctx, {
        headers: ctx.headers,
        method: "POST",
        body: () =>
          operation ??= {
            query: print(ctx.document),
            operationName: ctx.operationName,
            variables: ctx.variables ?? {},
          },
      });
      if (answer === null) continue;
      const refusal = refusalOf(answer);
      if (refusal !== null) return refusal;
      take(answer, ctx);
    }
  };
}

/** `SubgraphRequest`: each fetch, header rules applied. */
function subgraphRequestHook(client: CoprocessorClient, switches: CoprocessorStageConfig) {
  return async (ctx: Ctx<{ readonly subgraph: string; readonly url: string; body: string }>) => {
    const answer = await client.call("SubgraphRequest", switches, ctx, {
      headers: ctx.headers,
      body: () => JSON.parse(ctx.body),
      uri: ctx.url,
      method: "POST",
      serviceName: ctx.subgraph,
      subgraphRequestId: crypto.randomUUID(),
    });
    if (answer === null) return;
    const refusal = refusalOf(answer);
    if (refusal !== null) return refusal;
    take(answer, ctx);
    if (answer.body !== undefined) ctx.body = bodyText(answer.body);
  };
}

/** `SubgraphResponse`: each answer, read whole. */
function subgraphResponseHook(client: CoprocessorClient, switches: CoprocessorStageConfig) {
  return async (ctx: Ctx<{ readonly subgraph: string; readonly status: number; body: string }>) => {
    const answer = await client.call("SubgraphResponse", switches, ctx, {
      headers: ctx.headers,
      body: () => jsonOrText(ctx.body),
      serviceName: ctx.subgraph,
      statusCode: ctx.status,
      subgraphRequestId: crypto.randomUUID(),
    });
    if (answer === null) return;
    const refusal = refusalOf(answer);
    if (refusal !== null) return refusal;
    take(answer, ctx);
    if (answer.body !== undefined) ctx.body = bodyText(answer.body);
  };
}

/** `ExecutionResponse`, `SupergraphResponse` then `RouterResponse`: the answer (a stream's body is never sent). */
function routerResponseHook(
  client: CoprocessorClient,
  stages: readonly (readonly [CoprocessorStage, CoprocessorStageConfig, "json" | "text"])[],
) {
  return async (ctx: Ctx<{ readonly status: number; readonly response: Response }>) => {
    const response = ctx.response;
    const streaming = /^(text\/event-stream|multipart\/)/i.test(
      response.headers.get("content-type") ?? "",
    );
    let text: string | null = null;
    for (const [name, stage, kind] of stages) {
      if (stage.body && !streaming && text === null) text = await response.text();
      const body = text;
      const answer = await client.call(name, stage, ctx, {
        headers: response.headers,
        statusCode: response.status,
        ...(body === null ? {} : { body: () => kind === "json" ? jsonOrText(body) : body }),
      });
      if (answer === null) continue;
      const refusal = refusalOf(answer);
      if (refusal !== null) {
        const ended = breakResponse(answer, refusal);
        // A refusal is answered as at the other stages: in the facet's shape, each error coded.
        if (ended instanceof Response) return ended;
        throw new PluginRefusal(ended, "coprocessor");
      }
      take(answer, { headers: response.headers, context: ctx.context });
      if (answer.body !== undefined && !streaming) text = bodyText(answer.body);
    }
    if (text === null) return;
    const replaced = new Response(text, { status: response.status, headers: response.headers });
    replaced.headers.delete("content-length");
    return replaced;
  };
}

/**
 * Builds the coprocessor plugin of a configuration.
 * @param config `coprocessor`.
 * @param options The SDL, the logger, the HTTP client.
 * @returns The plugin (first in the stage order), or null without a `url`.
 * @throws {RouterError} `CONFIG_INVALID` for a URL or a switch GW cannot honour.
 */
export function coprocessorPlugin(
  config: CoprocessorConfig,
  options: CoprocessorOptions,
): LoadedPlugin | null {
  if (config.url === "") return null;
  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    throw invalid("url", `"${config.url}" is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalid("url", "the coprocessor is called over http: or https:");
  }
  const { router, supergraph, execution, subgraph } = config;
  if (router.request.body) {
    throw invalid(
      "router.request.body",
      "GW reads the request body after this stage: use supergraph.request.body (the operation, parsed)",
    );
  }
  const client = new CoprocessorClient(config, options, url);
  // Only the stages with a switch on, decided once here (not on every request).
  const operationStages = ([
    ["SupergraphRequest", supergraph.request],
    ["ExecutionRequest", execution.request],
  ] as const).filter(([, stage]) => on(stage));
  const responseStages = ([
    ["ExecutionResponse", execution.response, "json"],
    ["SupergraphResponse", supergraph.response, "json"],
    ["RouterResponse", router.response, "text"],
  ] as const).filter(([, stage]) => on(stage));
  const plugin: Plugin<unknown> = {
    name: "coprocessor",
    ...(on(router.request) ? { onRouterRequest: routerRequestHook(client, router.request) } : {}),
    ...(operationStages.length > 0 ? { onOperation: operationHook(client, operationStages) } : {}),
    ...(on(subgraph.all.request)
      ? { onSubgraphRequest: subgraphRequestHook(client, subgraph.all.request) }
      : {}),
    ...(on(subgraph.all.response)
      ? { onSubgraphResponse: subgraphResponseHook(client, subgraph.all.response) }
      : {}),
    ...(responseStages.length > 0
      ? { onRouterResponse: routerResponseHook(client, responseStages) }
      : {}),
  };
  return {
    plugin,
    config: null,
    // The coprocessor's own timeout answers first, naming itself (or failing open); this is
    // the backstop, per hook: one hook makes up to three calls (the response stages).
    timeoutMs: config.timeout_ms * 3 + 1_000,
    trusted: true,
  };
}

function invalid(key: string, message: string): RouterError {
  return new RouterError("CONFIG_INVALID", `coprocessor.${key}: ${message}`, {
    details: { path: `coprocessor.${key}` },
  });
}

/** A body as JSON when it is, else as the text it is. */
function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A coprocessor's body as text (an object is serialized). */
function bodyText(body: unknown): string {
  return typeof body === "string" ? body : JSON.stringify(body);
}

/** The response of a `break` at a router stage: its body as the coprocessor gave it. */
function breakResponse(answer: CoprocessorAnswer, refusal: Refusal): Response | Refusal {
  const body = answer.body;
  // A GraphQL answer with data (break 200) goes out as it is; errors are answered in each
  // facet's own shape (GraphQL, Connect, MCP).
  if (isObject(body) && "data" in body) {
    return Response.json(body, { status: refusal.status ?? 200 });
  }
  if (typeof body === "string") {
    const parsed = jsonOrText(body);
    if (isObject(parsed) && "data" in parsed) {
      return new Response(body, {
        status: refusal.status ?? 200,
        headers: { "content-type": "application/json" },
      });
    }
  }
  return refusal;
}
