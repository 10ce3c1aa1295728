/**
 * Issue 40: the plugin host and loader — hooks in order, refusals, failures
 * masked and logged, the time budget, the no-hook path (nothing to await),
 * config validation by the plugin's own schema, and the engine's subgraph
 * stages around a fetch.
 */
import assert from "node:assert/strict";
import { parse } from "graphql";
import { RouterError } from "../../lib/errors.ts";
import type { Logger } from "../../lib/log/mod.ts";
import {
  loadPlugins,
  operationStage,
  type Plugin,
  PluginHost,
  PluginRefusal,
  pluginRequestOf,
  type StandardSchema,
} from "../../lib/plugins/mod.ts";
import { createSubgraphClient } from "../../lib/engine/fetch/subgraph_client.ts";

function recordingLog(): Logger & { readonly lines: [string, Record<string, unknown>][] } {
  const lines: [string, Record<string, unknown>][] = [];
  const add = (msg: string, fields: Record<string, unknown> = {}) => void lines.push([msg, fields]);
  return { lines, debug: add, info: add, warn: add, error: add };
}

function hostOf(
  plugins: readonly Plugin<unknown>[],
  options: { readonly log?: Logger; readonly timeoutMs?: number } = {},
): PluginHost {
  return new PluginHost(
    plugins.map((plugin) => ({
      plugin,
      config: { of: plugin.name },
      timeoutMs: options.timeoutMs ?? 1000,
    })),
    options.log ?? recordingLog(),
  );
}

const QUERY = { name: "GetMe", kind: "query" as const, document: parse("query GetMe { me }") };

Deno.test("issue 40: without an onOperation hook the operation stage is null (nothing to await)", () => {
  const request = new Request("http://r/graphql");
  assert.equal(
    operationStage(request, { operation: QUERY, identity: null }),
    null,
    "no plugin run",
  );
  const run = hostOf([{ name: "tag", onSubgraphRequest() {} }]).begin(request, {
    facet: "graphql",
    requestId: "r1",
  });
  assert.equal(pluginRequestOf(request), run);
  assert.equal(
    operationStage(request, { operation: QUERY, identity: null }),
    null,
    "a run without onOperation",
  );
  assert.equal(typeof run.stages?.request, "function");
  assert.equal(run.stages?.response, undefined, "no onSubgraphResponse: no response stage");
  const bare = hostOf([{ name: "bare" }]).begin(new Request("http://r/"), {
    facet: "graphql",
    requestId: null,
  });
  assert.equal(bare.stages, undefined, "no subgraph hooks: the engine gets no stages");
});

Deno.test("issue 40: hooks run in plugins: order, share the request's context and get their own config", async () => {
  const seen: string[] = [];
  const plugin = (name: string): Plugin<unknown> => ({
    name,
    onOperation(ctx) {
      seen.push(`${name}:${ctx.operationName}:${JSON.stringify(ctx.config)}`);
      ctx.context.set("last", name);
      ctx.headers.append("x-order", name);
    },
  });
  const request = new Request("http://r/graphql", { headers: new Headers() });
  const run = hostOf([plugin("a"), plugin("b")]).begin(request, {
    facet: "graphql",
    requestId: null,
  });
  assert.deepEqual(await operationStage(request, { operation: QUERY, identity: null }), {
    error: null,
  });
  assert.deepEqual(seen, ['a:GetMe:{"of":"a"}', 'b:GetMe:{"of":"b"}']);
  assert.equal(run.context.get("last"), "b");
  assert.equal(request.headers.get("x-order"), "a, b");
});

Deno.test("issue 40: a refusal stops the stage with the hook's errors and status (default code REFUSED, status 403)", async () => {
  const later: string[] = [];
  const request = new Request("http://r/graphql");
  hostOf([
    {
      name: "gate",
      onOperation: () =>
        Promise.resolve({
          status: 401,
          errors: [{ message: "Who are you?" }, { message: "Also", extensions: { code: "X" } }],
        }),
    },
    { name: "after", onOperation: () => void later.push("ran") },
  ]).begin(request, { facet: "graphql", requestId: null });
  const refused = (await operationStage(request, { operation: QUERY, identity: null }))?.error;
  assert.ok(refused instanceof PluginRefusal);
  assert.equal(refused.status, 401);
  assert.deepEqual(refused.errors, [
    { message: "Who are you?", extensions: { code: "REFUSED" } },
    { message: "Also", extensions: { code: "X" } },
  ]);
  assert.deepEqual(later, [], "no later hook runs");
  assert.equal(
    new PluginRefusal({ errors: [], status: 200 }, "p").status,
    403,
    "not an error status",
  );
  assert.equal(new PluginRefusal({ errors: [] }, "p").message, 'Refused by plugin "p"');
});

Deno.test("issue 40: a hook that throws fails the request closed: PLUGIN_FAILED names the plugin, the cause is only logged", async () => {
  const log = recordingLog();
  const request = new Request("http://r/graphql");
  hostOf([{
    name: "buggy",
    onOperation() {
      throw new Error("secret database password in a stack");
    },
  }], { log }).begin(request, { facet: "graphql", requestId: "req-1" });
  const failed = (await operationStage(request, { operation: QUERY, identity: null }))?.error;
  assert.ok(failed instanceof RouterError);
  assert.equal(failed.code, "PLUGIN_FAILED");
  assert.equal(failed.message, 'Plugin "buggy" failed in onOperation');
  assert.doesNotMatch(failed.message, /secret/);
  const [message, fields] = log.lines[0]!;
  assert.equal(message, "Plugin hook failed");
  assert.equal(fields.plugin, "buggy");
  assert.equal(fields.request_id, "req-1");
  assert.match(String(fields.error), /secret database password/);
});

Deno.test("issue 40: a hook past its time budget fails the request closed (PLUGIN_FAILED), never hangs", async () => {
  const log = recordingLog();
  const request = new Request("http://r/graphql");
  hostOf([{ name: "slow", onOperation: () => new Promise<void>(() => {}) }], {
    log,
    timeoutMs: 5,
  }).begin(request, { facet: "graphql", requestId: null });
  // A deadline of its own: with the budget gone this must fail, not hang.
  let deadline: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    operationStage(request, { operation: QUERY, identity: null }),
    new Promise<never>((_, reject) => {
      deadline = setTimeout(() => reject(new Error("the stage never ended")), 5_000);
    }),
  ]).finally(() => clearTimeout(deadline));
  const failed = outcome?.error;
  assert.equal(failed?.code, "PLUGIN_FAILED");
  assert.equal(
    failed?.message,
    'Plugin "slow" did not finish onOperation within its time budget (5 ms)',
  );
  assert.match(String(log.lines[0]![1].error), /exceeded its budget of 5 ms/);
});

Deno.test("issue 40: onRouterRequest may answer the request itself, refuse it, or change its headers", async () => {
  const request = new Request("http://r/graphql", { headers: { "x-api-key": "k" } });
  const run = hostOf([
    {
      name: "key",
      onRouterRequest(ctx) {
        ctx.headers.set("authorization", `Bearer from-${ctx.headers.get("x-api-key")}`);
      },
    },
    {
      name: "teapot",
      onRouterRequest: (ctx) =>
        ctx.url.pathname === "/graphql" ? new Response("tea", { status: 418 }) : undefined,
    },
  ]).begin(request, { facet: "graphql", requestId: null });
  const answered = await run.routerRequest();
  assert.equal(answered?.status, 418);
  assert.equal(request.headers.get("authorization"), "Bearer from-k");
  const refusing = hostOf([{
    name: "no",
    onRouterRequest: () => ({ errors: [{ message: "No" }] }),
  }])
    .begin(new Request("http://r/"), { facet: "mcp", requestId: null });
  await assert.rejects(async () => await refusing.routerRequest(), PluginRefusal);
});

Deno.test("issue 40: a server request's headers are copied only when a hook reads them, and every later reader sees the change", async () => {
  const host = hostOf([
    { name: "quiet", onRouterRequest() {} },
    {
      name: "key",
      onOperation(ctx) {
        if (ctx.operationName === "GetMe") ctx.headers.set("authorization", "Bearer from-hook");
      },
    },
  ]);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const run = host.begin(request, { facet: "graphql", requestId: null });
    // A hook that leaves the headers alone: the answer is sync, the request's own headers kept.
    const early = run.routerRequest();
    const copied = Object.hasOwn(request, "headers");
    const outcome = await run.operation(QUERY, { identity: null });
    return Response.json({
      early: early instanceof Promise ? "promise" : early,
      copied,
      error: outcome.error?.message ?? null,
      // The server's headers are immutable: the hook changed the request's copy.
      authorization: request.headers.get("authorization"),
      accept: request.headers.get("x-kept"),
    });
  });
  try {
    const { port } = server.addr as Deno.NetAddr;
    const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
      headers: { "x-kept": "yes" },
    });
    assert.deepEqual(await response.json(), {
      early: null,
      copied: false,
      error: null,
      authorization: "Bearer from-hook",
      accept: "yes",
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("issue 40: the subgraph stages change the request's headers and body and the answer's body", async () => {
  let sent: Request | null = null;
  const client = createSubgraphClient({
    subgraphs: new Map([["a", { name: "a", url: "http://a.test/graphql", enumValue: "A" }]]),
    propagators: new Map(),
    fetch: (request: Request) => {
      sent = request;
      return Promise.resolve(Response.json({ data: { n: 1 } }, { headers: { "x-up": "1" } }));
    },
    singleFlight: true,
    timeoutMs: 1000,
  });
  const request = new Request("http://r/graphql");
  const run = hostOf([{
    name: "rewrite",
    onSubgraphRequest(ctx) {
      ctx.headers.set("x-tag", `${ctx.subgraph}:${ctx.url}`);
      ctx.body = ctx.body.replace("1", "2");
    },
    onSubgraphResponse(ctx) {
      assert.equal(ctx.status, 200);
      assert.equal(ctx.headers.get("x-up"), "1");
      ctx.body = ctx.body.replace('"n":1', '"n":3');
    },
  }]).begin(request, { facet: "graphql", requestId: null });
  const response = await client.send("a", '{"query":"{ n }","v":1}', { stages: run.stages! });
  assert.equal(sent!.headers.get("x-tag"), "a:http://a.test/graphql");
  assert.equal(sent!.headers.get("content-type"), "application/json");
  assert.equal(await sent!.text(), '{"query":"{ n }","v":2}');
  assert.equal(response.body, '{"data":{"n":3}}');
  const refusing = hostOf([{
    name: "deny",
    onSubgraphRequest: () => ({ errors: [{ message: "Not a" }] }),
  }])
    .begin(new Request("http://r/"), { facet: "graphql", requestId: null });
  await assert.rejects(client.send("a", "{}", { stages: refusing.stages! }), /Not a/);
});

Deno.test("issue 40: loadPlugins checks each module and its config with the plugin's own schema", async () => {
  const log = recordingLog();
  const modules: Record<string, unknown> = {
    "npm:ok@1": {
      default: {
        name: "ok",
        configSchema: (c: unknown) => typeof c === "number" ? null : "a number",
      },
    },
    "npm:standard@1": {
      default: {
        name: "standard",
        configSchema: {
          "~standard": {
            version: 1,
            vendor: "test",
            validate: (value: unknown) =>
              typeof value === "string"
                ? { value: value.toUpperCase() }
                : { issues: [{ message: "expected a string", path: [{ key: "level" }] }] },
          },
        } satisfies StandardSchema<string>,
        onOperation() {},
      },
    },
    "npm:none@1": { default: 42 },
    "npm:badhook@1": { default: { name: "bad", onOperation: "yes" } },
  };
  const importModule = (specifier: string) =>
    specifier in modules
      ? Promise.resolve(modules[specifier])
      : Promise.reject(new Error(`Module not found "${specifier}"`));
  const entry = (path: string, config: unknown) => ({ path, config, hook_timeout_ms: 50 });
  assert.equal(await loadPlugins([], { log, importModule }), null, "no plugins: no host");
  const host = await loadPlugins([entry("npm:ok@1", 3), entry("npm:standard@1", "info")], {
    log,
    importModule,
  });
  assert.deepEqual(host?.plugins.map((p) => [p.plugin.name, p.config, p.timeoutMs]), [
    ["ok", 3, 50],
    ["standard", "INFO", 50],
  ]);
  assert.deepEqual(host?.hooks.onOperation.map((p) => p.plugin.name), ["standard"]);
  const refused = async (entries: ReturnType<typeof entry>[], message: RegExp) =>
    await assert.rejects(loadPlugins(entries, { log, importModule }), (error: RouterError) => {
      assert.equal(error.code, "CONFIG_INVALID");
      assert.match(error.message, message);
      return true;
    });
  await refused(
    [entry("npm:ok@1", "x")],
    /^plugins\[0\]\.config: invalid for the plugin "ok": a number$/,
  );
  await refused(
    [entry("npm:standard@1", 1)],
    /^plugins\[0\]\.config: invalid for the plugin "standard": level: expected a string$/,
  );
  await refused([entry("npm:missing@1", null)], /^plugins\[0\]\.path: cannot load "npm:missing@1"/);
  await refused([entry("npm:none@1", null)], /default export is not a plugin object/);
  await refused([entry("npm:badhook@1", null)], /onOperation is not a function/);
  await refused(
    [entry("npm:ok@1", 1), entry("npm:ok@1", 2)],
    /^plugins\[1\]\.path: a second plugin named "ok"/,
  );
});

Deno.test("issue 40: loadPlugins imports a plugin file by its path", async () => {
  const path = new URL("../../docs/examples/tag_and_block.ts", import.meta.url).pathname;
  const host = await loadPlugins([{
    path,
    config: { header: "x-a", value: "b", blocked: [] },
    hook_timeout_ms: 1000,
  }], { log: recordingLog() });
  assert.equal(host?.plugins[0]?.plugin.name, "tag-and-block");
});

Deno.test("issue 40: @policy names go in the context under Apollo's key; what the hooks grant comes back", async () => {
  const { buildSchema } = await import("graphql");
  const supergraph = {
    apiSchema: buildSchema("type Query { me: User } type User { name: String note: String }"),
    access: new Map([
      ["User.note", {
        authenticated: false,
        requiresScopes: null,
        policies: [["staff"], ["a", "b"]],
      }],
    ]),
  };
  const operation = { name: null, kind: "query" as const, document: parse("{ me { name note } }") };
  const other = { name: null, kind: "query" as const, document: parse("{ me { name } }") };
  const seen: unknown[] = [];
  const host = new PluginHost(
    [{
      plugin: {
        name: "grant",
        onOperation(ctx) {
          seen.push(Object.fromEntries(ctx.requiredPolicies));
          assert.equal(
            ctx.context.get("apollo::authorization::required_policies"),
            ctx.requiredPolicies,
          );
          ctx.requiredPolicies.set("staff", ctx.headers.get("x-role") === "staff");
          ctx.requiredPolicies.set("a", true);
        },
      },
      config: null,
      timeoutMs: 1000,
    }],
    recordingLog(),
    { supergraph },
  );
  assert.deepEqual(host.policiesOf(operation), ["a", "b", "staff"]);
  assert.deepEqual(host.policiesOf(other), []);
  const staff = new Request("http://r/", { headers: { "x-role": "staff" } });
  host.begin(staff, { facet: "graphql", requestId: null });
  const granted = await operationStage(staff, { operation, identity: null });
  assert.deepEqual([...granted!.policies!].sort(), ["a", "staff"]);
  assert.deepEqual(seen, [{ a: false, b: false, staff: false }]);
  // A coprocessor answers the map as an object: its `true` names are granted, others are not.
  const coprocessor = new PluginHost(
    [{
      plugin: {
        name: "object",
        onOperation(ctx) {
          ctx.context.set("apollo::authorization::required_policies", { b: true, extra: true });
        },
      },
      config: null,
      timeoutMs: 1000,
    }],
    recordingLog(),
    { supergraph },
  );
  const request = new Request("http://r/");
  coprocessor.begin(request, { facet: "graphql", requestId: null });
  const decided = await operationStage(request, { operation, identity: null });
  assert.deepEqual([...decided!.policies!], ["b"], "only names the operation needs");
});

Deno.test("issue 40: a response an onRouterResponse hook replaces is let go (its stream cancelled), one it carries on is not", async () => {
  const streamed = () => {
    const state = { cancelled: false };
    const body = new ReadableStream<Uint8Array>({
      pull: (c) => c.enqueue(new TextEncoder().encode("data: x\n\n")),
      cancel: () => void (state.cancelled = true),
    });
    const response = new Response(body, { headers: { "content-type": "text/event-stream" } });
    return { state, response };
  };
  const replacing = hostOf([{
    name: "replace",
    onRouterResponse: () => new Response("no", { status: 403 }),
  }]).begin(new Request("http://r/graphql"), { facet: "graphql", requestId: null });
  const dropped = streamed();
  assert.equal((await replacing.routerResponse(dropped.response)).status, 403);
  await Promise.resolve();
  assert.ok(dropped.state.cancelled, "the replaced stream is cancelled");
  const wrapping = hostOf([{
    name: "wrap",
    onRouterResponse: ({ response }) => new Response(response.body, { status: 201 }),
  }]).begin(new Request("http://r/graphql"), { facet: "graphql", requestId: null });
  const carried = streamed();
  const sent = await wrapping.routerResponse(carried.response);
  assert.equal(sent.status, 201);
  assert.equal(carried.state.cancelled, false, "a body carried on is left alone");
  await sent.body?.cancel();
});
