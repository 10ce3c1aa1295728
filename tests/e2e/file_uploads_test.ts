/**
 * Issue 43, file uploads (`file_uploads`): Apollo Client with
 * `apollo-upload-client`'s `UploadHttpLink` (the GraphQL multipart request
 * specification) through the router to a subgraph running `graphql-upload`;
 * each limit's refusal (413), CSRF, uploads off (415), and uploads the plan
 * cannot route refused at planning. A 50 MB file and the router's RSS:
 * file_uploads_memory_test.ts.
 */
import assert from "node:assert/strict";
import { ApolloClient, gql, InMemoryCache } from "@apollo/client";
import UploadHttpLink from "apollo-upload-client/UploadHttpLink.mjs";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { silentLogger } from "../../lib/log/mod.ts";
import {
  composedUploadGraph,
  multipart,
  randomBytes,
  UPLOAD,
  type UploadSubgraph,
} from "./_upload_subgraph.ts";

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

interface Setup {
  readonly router: RunningRouter;
  readonly media: UploadSubgraph;
}

async function withRouter(
  config: Record<string, unknown>,
  fn: (setup: Setup) => Promise<void>,
): Promise<void> {
  const { sdl, media, avatars } = await composedUploadGraph();
  const operationsDir = await Deno.makeTempDir({ prefix: "gw_uploads_" });
  let router: RunningRouter | undefined;
  try {
    router = await startRouter({
      config: parseConfig({
        listen_addr: "127.0.0.1:0",
        dev_mode: false,
        operations_dir: operationsDir,
        mcp: { enabled: false },
        telemetry: { metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:0" } } },
        ...config,
      }, { env: {}, baseDir: "." }),
      supergraphSdl: sdl,
      log: silentLogger,
    });
    await fn({ router, media });
  } finally {
    await router?.shutdown();
    await Promise.all([media.close(), avatars.close()]);
    await Deno.remove(operationsDir, { recursive: true });
  }
}

/** A body that sends `head`, then nothing until `client` aborts (a client that stalls). */
function stalledBody(head: string, client: AbortController): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!sent) {
        sent = true;
        controller.enqueue(new TextEncoder().encode(head));
        return;
      }
      // The rest never comes: the client stalls until it gives up.
      await new Promise((resolve) => client.signal.addEventListener("abort", resolve));
      controller.error(new Error("The client gave up"));
    },
  });
}

const ON = { file_uploads: { enabled: true, max_files: 3, max_file_size: "1MB" } };

Deno.test("issue 43: apollo-upload-client uploads two files; the subgraph's graphql-upload reads both, byte for byte", async () => {
  await withRouter(ON, async ({ router, media }) => {
    const client = new ApolloClient({
      link: new UploadHttpLink({
        uri: `${router.url}/graphql`,
        // CSRF prevention: multipart/form-data is a simple content type.
        headers: { "apollo-require-preflight": "true" },
      }),
      cache: new InMemoryCache(),
    });
    const one = randomBytes(300_000);
    const two = new TextEncoder().encode("second file\n".repeat(1000));
    const { data } = await client.mutate({
      mutation: gql`mutation UploadMany($files: [Upload!]!) {
        uploadMany(files: $files) { filename mimetype size sha256 }
      }`,
      variables: {
        files: [
          new File([one], "random.bin", { type: "application/octet-stream" }),
          new File([two], "notes.txt", { type: "text/plain" }),
        ],
      },
    });
    assert.deepEqual((data as { uploadMany: unknown[] }).uploadMany, [
      {
        __typename: "FileInfo",
        filename: "random.bin",
        mimetype: "application/octet-stream",
        size: one.length,
        sha256: await sha256(one),
      },
      {
        __typename: "FileInfo",
        filename: "notes.txt",
        mimetype: "text/plain",
        size: two.length,
        sha256: await sha256(two),
      },
    ]);
    // The subgraph got a multipart request of its own (the router's boundary).
    assert.match(media.contentTypes.at(-1) ?? "", /^multipart\/form-data; boundary=gw-upload-/);
  });
});

async function send(
  router: RunningRouter,
  form: FormData,
  headers: Record<string, string> = { "apollo-require-preflight": "true" },
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${router.url}/graphql`, { method: "POST", headers, body: form });
  return { status: response.status, json: await response.json() };
}

function error(json: Record<string, unknown>): { message: string; code: unknown } {
  const first = (json.errors as { message: string; extensions?: { code?: unknown } }[])[0]!;
  return { message: first.message, code: first.extensions?.code };
}

Deno.test("issue 43: each upload limit is refused with 413 and says which; CSRF needs a preflight header", async () => {
  await withRouter(ON, async ({ router }) => {
    const small = new Blob([new Uint8Array(1000)]);
    const ok = await send(router, multipart(UPLOAD, { 0: ["variables.file"] }, { 0: small }));
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json, { data: { upload: { size: 1000 } } });

    // max_file_size (1 MB): found as the file streams.
    const big = new Blob([new Uint8Array(1_500_000)]);
    const tooBig = await send(router, multipart(UPLOAD, { 0: ["variables.file"] }, { 0: big }));
    assert.equal(tooBig.status, 413);
    assert.equal(error(tooBig.json).code, "PAYLOAD_TOO_LARGE");
    assert.match(
      error(tooBig.json).message,
      /larger than 1000000 bytes \(file_uploads\.max_file_size\)/,
    );

    // max_files (3): refused before anything runs.
    const four = {
      query: "mutation($files: [Upload!]!) { uploadMany(files: $files) { size } }",
      variables: { files: [null, null, null, null] },
    };
    const map = Object.fromEntries([0, 1, 2, 3].map((i) => [String(i), [`variables.files.${i}`]]));
    const files = Object.fromEntries([0, 1, 2, 3].map((i) => [String(i), small]));
    const tooMany = await send(router, multipart(four, map, files));
    assert.equal(tooMany.status, 413);
    assert.match(
      error(tooMany.json).message,
      /4 files, more than the 3 allowed \(file_uploads\.max_files\)/,
    );

    // A multipart body is a simple request: without a preflight header it is refused.
    const csrf = await send(router, multipart(UPLOAD, { 0: ["variables.file"] }, { 0: small }), {});
    assert.equal(csrf.status, 400);
    assert.match(error(csrf.json).message, /Cross-Site Request Forgery/);

    // A map naming a variable the operation does not give, and a missing file.
    const stray = await send(router, multipart(UPLOAD, { 0: ["variables.nope"] }, { 0: small }));
    assert.equal(stray.status, 400);
    assert.match(error(stray.json).message, /names the variable "nope"/);
    const batched = await send(
      router,
      multipart([UPLOAD], { 0: ["variables.0.file"] }, { 0: small }),
    );
    assert.equal(batched.status, 400);
    assert.match(error(batched.json).message, /one operation, not a batch/);
    const missing = await send(router, multipart(UPLOAD, { 0: ["variables.file"] }, {}));
    assert.equal(missing.status, 400);
    assert.match(error(missing.json).message, /ends without the files "0"/);

    // Each upload's outcome is counted (the CSRF refusal never reached the upload).
    const metrics = await (await fetch(router.metricsUrl!)).text();
    assert.match(metrics, /gw_router_uploads_total\{outcome="streamed"\} 1\n/);
    assert.match(metrics, /gw_router_uploads_total\{outcome="refused"\} 5\n/);
    assert.match(metrics, /gw_router_upload_bytes_total \d+/);
  });
});

Deno.test("issue 43: an upload needed by two subgraphs, or in a variable no fetch uses, is refused at planning", async () => {
  await withRouter(ON, async ({ router, media }) => {
    const small = new Blob([new Uint8Array(10)]);
    const both = await send(
      router,
      multipart(
        {
          query: "mutation($file: Upload!) { upload(file: $file) { size } avatar(file: $file) }",
          variables: { file: null },
        },
        { 0: ["variables.file"] },
        { 0: small },
      ),
    );
    assert.equal(error(both.json).code, "FILE_UPLOAD_NOT_ROUTABLE");
    assert.match(error(both.json).message, /needed by 2 subgraph fetches \(media, avatars\)/);
    const unused = await send(
      router,
      multipart(
        {
          query:
            "mutation($file: Upload!, $skip: Boolean!) { upload(file: $file) @skip(if: $skip) { size } }",
          variables: { file: null, skip: true },
        },
        { 0: ["variables.file"] },
        { 0: small },
      ),
    );
    assert.equal(error(unused.json).code, "FILE_UPLOAD_NOT_ROUTABLE", JSON.stringify(unused.json));
    assert.match(
      error(unused.json).message,
      /No subgraph fetch of the operation takes the files in \$file/,
    );
    // Neither reached a subgraph.
    assert.deepEqual(media.contentTypes, []);
  });
});

Deno.test("issue 43: file uploads are off by default: a multipart request is a 415 naming file_uploads.enabled", async () => {
  await withRouter({}, async ({ router }) => {
    const form = multipart(UPLOAD, { 0: ["variables.file"] }, { 0: new Blob(["x"]) });
    const { status, json } = await send(router, form);
    assert.equal(status, 415);
    assert.match(error(json).message, /file_uploads\.enabled/);
  });
});

Deno.test("issue 43: an upload whose file stops arriving is answered at the router's deadline, not waited for", async () => {
  await withRouter(
    { ...ON, traffic_shaping: { router: { request_timeout: "1s" } } },
    async ({ router }) => {
      const boundary = "stall";
      const head =
        `--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${
          JSON.stringify(UPLOAD)
        }\r\n--${boundary}\r\nContent-Disposition: form-data; name="map"\r\n\r\n{"0":["variables.file"]}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="0"; filename="a.bin"\r\n\r\nfirst bytes`;
      const client = new AbortController();
      const body = stalledBody(head, client);
      const started = performance.now();
      const timer = setTimeout(() => client.abort(), 15_000);
      const response = await fetch(`${router.url}/graphql`, {
        method: "POST",
        headers: {
          "content-type": `multipart/form-data; boundary=${boundary}`,
          "apollo-require-preflight": "true",
        },
        body,
        signal: client.signal,
      });
      const json = await response.json();
      const ms = performance.now() - started;
      // The client gives up its upload (and its connection) once answered.
      client.abort();
      clearTimeout(timer);
      assert.equal(response.status, 504);
      assert.equal(error(json).code, "GATEWAY_TIMEOUT");
      assert.ok(ms < 10_000, `answered in ${Math.round(ms)} ms`);
    },
  );
});

Deno.test("an upload whose operations part stalls waits outside the gate: the only slot stays free", async () => {
  await withRouter(
    {
      ...ON,
      engine: { max_concurrent_operations: 1 },
      traffic_shaping: { router: { request_timeout: "3s" } },
    },
    async ({ router }) => {
      const boundary = "slowhead";
      // Half of the operations part, then nothing until the client gives up.
      const head =
        `--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n{"query":"mut`;
      const client = new AbortController();
      const body = stalledBody(head, client);
      const timer = setTimeout(() => client.abort(), 15_000);
      let uploadAnswered = false;
      const upload = fetch(`${router.url}/graphql`, {
        method: "POST",
        headers: {
          "content-type": `multipart/form-data; boundary=${boundary}`,
          "apollo-require-preflight": "true",
        },
        body,
        signal: client.signal,
      }).then(async (response) => {
        uploadAnswered = true;
        return { status: response.status, json: await response.json() };
      });
      try {
        await new Promise((resolve) => setTimeout(resolve, 300)); // the upload is in
        const query = await fetch(`${router.url}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ query: "{ __typename }" }),
          signal: AbortSignal.timeout(10_000),
        });
        assert.equal(query.status, 200);
        assert.deepEqual(await query.json(), { data: { __typename: "Query" } });
        assert.equal(uploadAnswered, false, "the query was answered while the upload stalled");
        // The stalled upload is answered at the router's deadline as any body too slow to
        // arrive is: 408, the client was slow.
        const stalled = await upload;
        assert.equal(stalled.status, 408);
        assert.equal(error(stalled.json).code, "REQUEST_TIMEOUT");
      } finally {
        client.abort();
        clearTimeout(timer);
        await upload.catch(() => {});
      }
    },
  );
});
