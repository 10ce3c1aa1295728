/**
 * TLS to subgraphs (`tls.subgraphs`, docs/tls.md): a subgraph behind a private
 * authority (queries, and subscriptions over `wss:` and SSE), and one behind a
 * real Node `https` server that requires client certificates (mutual TLS),
 * reached with the router's client certificate and refused without it.
 * Certificates are made by the real openssl.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startRouter } from "../../lib/cli/serve.ts";
import { serveSubgraph } from "../../demo/subgraph.ts";
import { oneSubgraphWorkspace } from "./_workspace.ts";
import { issue, type Issued, makeCa } from "./_tls.ts";
import { multipart, startUploadSubgraph, UPLOAD } from "./_upload_subgraph.ts";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { silentLogger } from "../../lib/log/mod.ts";

const SDL = "type Query { hello: String }\ntype Subscription { tick: Int }";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function helloSubgraph(tls?: { cert: string; key: string }) {
  return serveSubgraph("greetings", {
    typeDefs:
      `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])\n${SDL}`,
    resolvers: {
      Query: { hello: () => "world" },
      Subscription: {
        tick: {
          subscribe: async function* () {
            for (let i = 1; i <= 3; i++) {
              yield { tick: i };
              await sleep(20);
            }
          },
        },
      },
    },
  }, tls ? { tls } : {});
}

async function query(url: string): Promise<unknown> {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: "{ hello }" }),
    signal: AbortSignal.timeout(15_000),
  });
  return await response.json();
}

/** A subscription over SSE from the router, read to its end (within 15 s). */
async function subscribe(url: string): Promise<string> {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ query: "subscription { tick }" }),
    signal: AbortSignal.timeout(15_000),
  });
  return await response.text();
}

async function workspace(subgraphUrl: string, tls: string, protocol = "ws") {
  const dir = await oneSubgraphWorkspace(subgraphUrl, { sdl: SDL });
  const configPath = join(dir, "config.yaml");
  const config = await Deno.readTextFile(configPath);
  await Deno.writeTextFile(
    configPath,
    `${config}\nsubscriptions: { subgraphs: { greetings: { protocol: ${protocol} } } }\n${tls}`,
  );
  return { dir, configPath };
}

Deno.test("tls.subgraphs: a subgraph behind a private authority — queries, wss and SSE subscriptions", async () => {
  const dir = await Deno.makeTempDir();
  const ca = await makeCa(dir);
  const cert = await issue(dir, ca, { name: "subgraph", use: "server" });
  const subgraph = helloSubgraph({ cert: cert.cert, key: cert.key });
  try {
    // Without the authority the subgraph's certificate is not trusted.
    const untrusted = await workspace(subgraph.url, "");
    const plain = await startRouter({ configPath: untrusted.configPath });
    try {
      const answer = await query(plain.url) as { errors?: { extensions?: { code?: string } }[] };
      assert.equal(answer.errors?.[0]?.extensions?.code, "SUBGRAPH_UNREACHABLE");
    } finally {
      await plain.shutdown();
      await Deno.remove(untrusted.dir, { recursive: true });
    }
    for (const protocol of ["ws", "sse"]) {
      const trusted = await workspace(
        subgraph.url,
        `tls: { subgraphs: { all: { ca_file: ${JSON.stringify(ca.certFile)} } } }`,
        protocol,
      );
      const router = await startRouter({ configPath: trusted.configPath });
      try {
        assert.deepEqual(await query(router.url), { data: { hello: "world" } });
        const stream = await subscribe(router.url);
        for (const i of [1, 2, 3]) assert.match(stream, new RegExp(`"tick":${i}`), stream);
        assert.doesNotMatch(stream, /errors/, stream);
      } finally {
        await router.shutdown();
        await Deno.remove(trusted.dir, { recursive: true });
      }
    }
  } finally {
    await subgraph.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * A real Node `https` server requiring client certificates `ca` signed, in
 * front of `upstream` (POSTs relayed as they are).
 */
async function mtlsProxy(upstream: string, ca: Issued, server: Issued) {
  const script = `
    const https = require("node:https"), fs = require("node:fs");
    const s = https.createServer({
      cert: fs.readFileSync(${JSON.stringify(server.certFile)}),
      key: fs.readFileSync(${JSON.stringify(server.keyFile)}),
      ca: fs.readFileSync(${JSON.stringify(ca.certFile)}),
      requestCert: true, rejectUnauthorized: true,
    }, async (req, res) => {
      let body = ""; for await (const c of req) body += c;
      const r = await fetch(${JSON.stringify(upstream)}, { method: "POST", body,
        headers: { "content-type": "application/json" } });
      res.writeHead(r.status, { "content-type": "application/json",
        "x-client-cert": req.socket.getPeerCertificate().subject.CN });
      res.end(await r.text());
    });
    s.listen(0, "127.0.0.1", () => console.log("port " + s.address().port));`;
  const child = new Deno.Command("node", {
    args: ["-e", script],
    stdout: "piped",
    stderr: "inherit",
  })
    .spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const deadline = Date.now() + 15_000;
  while (!/port \d+/.test(text)) {
    assert.ok(Date.now() < deadline, "the Node proxy did not start");
    const { value, done } = await reader.read();
    if (done) throw new Error(`node exited: ${text}`);
    text += value;
  }
  const port = Number(/port (\d+)/.exec(text)![1]);
  return {
    url: `https://localhost:${port}/graphql`,
    async close() {
      child.kill("SIGKILL");
      await reader.cancel().catch(() => {});
      await child.status;
    },
  };
}

Deno.test("tls.subgraphs: mutual TLS — reached with the client certificate, refused without it", async () => {
  const dir = await Deno.makeTempDir();
  const ca = await makeCa(dir);
  const serverCert = await issue(dir, ca, { name: "proxy", use: "server" });
  const clientCert = await issue(dir, ca, { name: "router", use: "client" });
  const subgraph = helloSubgraph();
  const proxy = await mtlsProxy(subgraph.url, ca, serverCert);
  try {
    const withCert = await workspace(
      proxy.url,
      `tls:\n  subgraphs:\n    greetings:\n      ca_file: ${ca.certFile}\n      cert_file: ${clientCert.certFile}\n      key_file: ${clientCert.keyFile}\n`,
    );
    const router = await startRouter({ configPath: withCert.configPath });
    try {
      assert.deepEqual(await query(router.url), { data: { hello: "world" } });
    } finally {
      await router.shutdown();
      await Deno.remove(withCert.dir, { recursive: true });
    }
    // `all` gives the authority but no certificate: the server refuses the handshake.
    const without = await workspace(
      proxy.url,
      `tls: { subgraphs: { all: { ca_file: ${JSON.stringify(ca.certFile)} } } }`,
    );
    const refused = await startRouter({ configPath: without.configPath });
    try {
      const answer = await query(refused.url) as {
        data?: unknown;
        errors?: { extensions?: { code?: string } }[];
      };
      assert.equal(answer.errors?.[0]?.extensions?.code, "SUBGRAPH_UNREACHABLE");
      assert.ok(
        answer.data === undefined || answer.data === null ||
          JSON.stringify(answer.data) === '{"hello":null}',
      );
    } finally {
      await refused.shutdown();
      await Deno.remove(without.dir, { recursive: true });
    }
  } finally {
    await proxy.close();
    await subgraph.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tls.subgraphs: a key of another certificate, a missing file — refused naming the key", async () => {
  const dir = await Deno.makeTempDir();
  const ca = await makeCa(dir);
  const a = await issue(dir, ca, { name: "a", use: "client" });
  const b = await issue(dir, ca, { name: "b", use: "client" });
  const subgraph = helloSubgraph();
  try {
    const cases: [string, RegExp][] = [
      [
        `tls: { subgraphs: { greetings: { cert_file: ${a.certFile}, key_file: ${b.keyFile} } } }`,
        /"tls\.subgraphs\.greetings\.key_file": does not match the certificate/,
      ],
      [
        `tls: { subgraphs: { all: { ca_file: ${join(dir, "gone.pem")} } } }`,
        /"tls\.subgraphs\.all\.ca_file".*no such file/,
      ],
      [
        `tls: { subgraphs: { all: { cert_file: ${a.certFile} } } }`,
        /"tls\.subgraphs\.all\.key_file": required with "tls\.subgraphs\.all\.cert_file"/,
      ],
    ];
    for (const [tls, message] of cases) {
      const ws = await workspace(subgraph.url, tls);
      try {
        await assert.rejects(startRouter({ configPath: ws.configPath }), message);
      } finally {
        await Deno.remove(ws.dir, { recursive: true });
      }
    }
  } finally {
    await subgraph.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tls.subgraphs.all leaves a plain http: subgraph on the HTTP/1.1 pool", async () => {
  const dir = await Deno.makeTempDir();
  const ca = await makeCa(dir);
  const agents: (string | null)[] = [];
  const subgraph = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    // Deno's fetch names itself; the pool sends no user-agent.
    agents.push(request.headers.get("user-agent"));
    return Response.json({ data: { hello: "world" } });
  });
  const ws = await workspace(
    `http://127.0.0.1:${subgraph.addr.port}/graphql`,
    `tls: { subgraphs: { all: { ca_file: ${JSON.stringify(ca.certFile)} } } }`,
  );
  const router = await startRouter({ configPath: ws.configPath });
  try {
    assert.deepEqual(await query(router.url), { data: { hello: "world" } });
    assert.deepEqual(agents, [null]);
  } finally {
    await router.shutdown();
    await subgraph.shutdown();
    await Deno.remove(ws.dir, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tls.subgraphs: a file upload goes through the subgraph's client (its private authority)", async () => {
  const dir = await Deno.makeTempDir();
  const ca = await makeCa(dir);
  const cert = await issue(dir, ca, { name: "media", use: "server" });
  const media = await startUploadSubgraph(["upload"], { cert: cert.cert, key: cert.key });
  const operationsDir = join(dir, "operations");
  await Deno.mkdir(operationsDir);
  try {
    const composed = composeSupergraph([{ name: "media", url: media.url, sdl: media.sdl }]);
    if (!composed.ok) throw new Error(`does not compose: ${JSON.stringify(composed)}`);
    const router = await startRouter({
      config: parseConfig({
        listen_addr: "127.0.0.1:0",
        operations_dir: operationsDir,
        mcp: { enabled: false },
        file_uploads: { enabled: true },
        tls: { subgraphs: { media: { ca_file: ca.certFile } } },
      }, { env: {}, baseDir: "." }),
      supergraphSdl: composed.supergraphSdl,
      log: silentLogger,
    });
    try {
      const response = await fetch(`${router.url}/graphql`, {
        method: "POST",
        headers: { "apollo-require-preflight": "true" },
        body: multipart(UPLOAD, { "0": ["variables.file"] }, { "0": new Blob(["twelve bytes"]) }),
        signal: AbortSignal.timeout(15_000),
      });
      assert.deepEqual(await response.json(), { data: { upload: { size: 12 } } });
    } finally {
      await router.shutdown();
    }
  } finally {
    await media.close();
    await Deno.remove(dir, { recursive: true });
  }
});
