/**
 * Issue 40: the coprocessor's failure modes, each a bounded, named answer
 * (502 `COPROCESSOR_FAILED`, the stage and the reason), or `continue` with
 * `fail_open`; and its config refusals at load.
 */
import assert from "node:assert/strict";
import { RouterError } from "../../lib/errors.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import type { Logger } from "../../lib/log/mod.ts";
import { coprocessorPlugin, PluginHost, PluginRefusal } from "../../lib/plugins/mod.ts";

const lines: string[] = [];
const log: Logger = {
  debug() {},
  info() {},
  warn() {},
  error: (msg, fields) => void lines.push(`${msg} ${JSON.stringify(fields)}`),
};

function routerStage(
  fetch: (request: Request) => Promise<Response>,
  extra: Record<string, unknown> = {},
) {
  const config = parseConfig({
    coprocessor: {
      url: "http://coprocessor.test/",
      router: { request: { headers: true } },
      ...extra,
    },
  }, { env: {}, baseDir: "." });
  const loaded = coprocessorPlugin(config.coprocessor, { sdl: "", log, fetch })!;
  const request = new Request("http://r/graphql", { headers: { a: "1" } });
  const run = new PluginHost([loaded], log).begin(request, { facet: "graphql", requestId: "r-1" });
  return { run, request };
}

const answering = (body: BodyInit, init: ResponseInit = {}) => () =>
  Promise.resolve(new Response(body, init));

async function failure(
  fetch: (request: Request) => Promise<Response>,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const { run } = routerStage(fetch, extra);
  const error = await Promise.resolve().then(() => run.routerRequest()).then(() => null, (e) => e);
  assert.ok(error instanceof RouterError, String(error));
  assert.equal(error.code, "COPROCESSOR_FAILED");
  return error.message;
}

Deno.test("issue 40: every coprocessor failure is COPROCESSOR_FAILED naming the stage and why", async () => {
  const at = "The coprocessor failed at RouterRequest: ";
  assert.equal(await failure(answering("no", { status: 500 })), `${at}it answered HTTP 500`);
  assert.equal(await failure(answering("not json")), `${at}its answer is not JSON`);
  assert.equal(await failure(answering("[1]")), `${at}its answer is not a JSON object`);
  assert.equal(
    await failure(answering('{"stage":"SubgraphRequest"}')),
    `${at}its answer changed "stage"`,
  );
  assert.equal(await failure(answering('{"version":2}')), `${at}its answer changed "version"`);
  assert.equal(
    await failure(answering('{"control":{"break":"x"}}')),
    `${at}its "control" is neither "continue" nor {"break": <HTTP status>}`,
  );
  assert.equal(
    await failure(answering("x".repeat(200)), { max_response_bytes: 100 }),
    `${at}its answer is over 100 bytes (coprocessor.max_response_bytes)`,
  );
  assert.equal(
    await failure(() => Promise.reject(new TypeError("connection refused"))),
    `${at}it could not be reached`,
  );
  assert.equal(
    await failure(
      (request) =>
        new Promise((_, reject) =>
          request.signal.addEventListener("abort", () => reject(request.signal.reason))
        ),
      { timeout_ms: 5 },
    ),
    `${at}it did not answer within 5 ms (coprocessor.timeout)`,
  );
  const malformed = routerStage(answering('{"headers":{"x":[1]}}'));
  await assert.rejects(
    async () => await malformed.run.routerRequest(),
    /answer is malformed: headers.x is not/,
  );
  assert.ok(lines.some((line) => line.includes('"stage":"RouterRequest"')), "failures are logged");
});

Deno.test("issue 40: with fail_open a failed call goes on as continue; a good answer's headers replace the client's", async () => {
  const open = routerStage(answering("no", { status: 503 }), { fail_open: true });
  assert.equal(await open.run.routerRequest(), null);
  assert.equal(open.request.headers.get("a"), "1", "nothing changed");
  const malformed = routerStage(answering('{"headers":{"bad name":["x"]}}'), { fail_open: true });
  assert.equal(await malformed.run.routerRequest(), null, "a malformed answer is a failed call");
  assert.equal(malformed.request.headers.get("a"), "1", "the headers are left whole");
  assert.ok(lines.some((line) => line.includes("its answer is malformed")), "and it is logged");
  const changed = routerStage(answering('{"control":"continue","headers":{"b":["2","3"]}}'));
  assert.equal(await changed.run.routerRequest(), null);
  assert.equal(changed.request.headers.get("a"), null);
  assert.equal(changed.request.headers.get("b"), "2, 3");
});

Deno.test("issue 40: coprocessor config GW cannot honour is refused at load", () => {
  const load = (coprocessor: Record<string, unknown>) =>
    coprocessorPlugin(
      parseConfig({ coprocessor }, { env: {}, baseDir: "." }).coprocessor,
      { sdl: "", log },
    );
  assert.equal(load({}), null, "no url: no coprocessor");
  assert.throws(() => load({ url: "not a url" }), /coprocessor\.url: "not a url" is not a URL/);
  assert.throws(() => load({ url: "ftp://x/" }), /called over http: or https:/);
  assert.throws(
    () => load({ url: "http://c/", router: { request: { body: true } } }),
    /coprocessor\.router\.request\.body: GW reads the request body after this stage/,
  );
});

Deno.test("issue 40: with fail_open, three response stages that each time out still go on (the hook's budget covers every call)", async () => {
  const config = parseConfig({
    coprocessor: {
      url: "http://coprocessor.test/",
      timeout_ms: 600,
      fail_open: true,
      execution: { response: { headers: true } },
      supergraph: { response: { headers: true } },
      router: { response: { headers: true } },
    },
  }, { env: {}, baseDir: "." });
  const hung = (request: Request) =>
    new Promise<Response>((_, reject) =>
      request.signal.addEventListener("abort", () => reject(request.signal.reason))
    );
  const loaded = coprocessorPlugin(config.coprocessor, { sdl: "", log, fetch: hung })!;
  const run = new PluginHost([loaded], log).begin(new Request("http://r/graphql"), {
    facet: "graphql",
    requestId: "r-2",
  });
  const sent = Response.json({ data: { a: 1 } });
  assert.equal(
    await run.routerResponse(sent),
    sent,
    "each call failed open: the response as it was",
  );
});

Deno.test("issue 40: a break at RouterResponse is a refusal like at the other stages (status kept, each error coded)", async () => {
  const config = parseConfig({
    coprocessor: { url: "http://coprocessor.test/", router: { response: { headers: true } } },
  }, { env: {}, baseDir: "." });
  const fetch = answering('{"control":{"break":401},"body":{"errors":[{"message":"nope"}]}}');
  const loaded = coprocessorPlugin(config.coprocessor, { sdl: "", log, fetch })!;
  const run = new PluginHost([loaded], log).begin(new Request("http://r/graphql"), {
    facet: "graphql",
    requestId: "r-3",
  });
  const error = await Promise.resolve().then(() =>
    run.routerResponse(Response.json({ data: { a: 1 } }))
  ).then(
    () => null,
    (e) => e,
  );
  assert.ok(error instanceof PluginRefusal, String(error));
  assert.equal(error.status, 401);
  assert.deepEqual(error.errors, [{ message: "nope", extensions: { code: "REFUSED" } }]);
});
