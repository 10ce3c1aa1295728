/**
 * HTTPS on the listener (`tls.server`, docs/tls.md): a private authority made
 * by the real openssl per test; real clients (curl over HTTP/1.1 and HTTP/2,
 * Deno's fetch, Node's https and http2); a certificate rotated under load;
 * client certificates required; the guard's limits kept for TLS connections.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startRouter } from "../../lib/cli/serve.ts";
import { startWorkers } from "../../lib/cli/workers.ts";
import { checkServerTls, serveGuarded } from "../../lib/listen/mod.ts";
import { spawnServe } from "./_cli.ts";
import { helloWorkspace } from "./_workspace.ts";
import { issue, type Issued, makeCa } from "./_tls.ts";

const QUERY = JSON.stringify({ query: "{ hello }" });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`, or a failure after `ms` (a regression fails, never hangs). */
async function within<T>(promise: Promise<T>, ms = 30_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function run(command: string, args: string[]): Promise<{ ok: boolean; out: string }> {
  const output = await new Deno.Command(command, {
    args,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(20_000),
  }).output();
  const text = new TextDecoder();
  return {
    ok: output.success,
    out: text.decode(output.stdout) + text.decode(output.stderr),
  };
}

/** curl POSTs the query; `-v` shows the protocol and the server's certificate. */
function curl(url: string, ca: Issued, extra: string[] = []) {
  return run("curl", [
    "-sS",
    "-v",
    "--max-time",
    "10",
    "--cacert",
    ca.certFile,
    "-H",
    "content-type: application/json",
    "--data",
    QUERY,
    ...extra,
    `${url}/graphql`,
  ]);
}

interface TlsFixture {
  readonly dir: string;
  readonly ca: Issued;
  readonly server: Issued;
  readonly client: Issued;
  readonly configPath: string;
  close(): Promise<void>;
}

/** A hello workspace served over HTTPS (`extra`: more config lines). */
async function tlsWorkspace(tlsExtra = "", extra = ""): Promise<TlsFixture> {
  const hello = await helloWorkspace(extra);
  const ca = await makeCa(hello.dir);
  const server = await issue(hello.dir, ca, { name: "server", use: "server" });
  const client = await issue(hello.dir, ca, { name: "client", use: "client" });
  const config = await Deno.readTextFile(hello.configPath);
  await Deno.writeTextFile(
    hello.configPath,
    `${config}\ntls:\n  server:\n    cert_file: server.crt\n    key_file: server.key\n${tlsExtra}`,
  );
  return { dir: hello.dir, ca, server, client, configPath: hello.configPath, close: hello.close };
}

Deno.test("tls: HTTPS over HTTP/1.1 and HTTP/2 (curl, Deno's fetch, Node's https and http2)", async () => {
  const fx = await tlsWorkspace();
  const router = await startRouter({ configPath: fx.configPath });
  try {
    assert.match(router.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const url = router.url.replace("127.0.0.1", "localhost");
    const h1 = await curl(url, fx.ca, ["--http1.1"]);
    assert.ok(h1.ok, h1.out);
    assert.match(h1.out, /ALPN: server accepted http\/1\.1/);
    assert.match(h1.out, /\{"data":\{"hello":"world"\}\}/);
    const h2 = await curl(url, fx.ca, ["--http2"]);
    assert.ok(h2.ok, h2.out);
    assert.match(h2.out, /ALPN: server accepted h2/);
    assert.match(h2.out, /< HTTP\/2 200/);
    assert.match(h2.out, /\{"data":\{"hello":"world"\}\}/);

    const client = Deno.createHttpClient({ caCerts: [fx.ca.cert] });
    try {
      const response = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: QUERY,
        client,
      });
      assert.deepEqual(await response.json(), { data: { hello: "world" } });
    } finally {
      client.close();
    }
    // Without the private authority the certificate is not trusted.
    await assert.rejects(fetch(`${url}/health/ready`));

    const node = await run("node", [
      "-e",
      `
      const https = require("node:https"), http2 = require("node:http2"), fs = require("node:fs");
      const ca = fs.readFileSync(${JSON.stringify(fx.ca.certFile)});
      const body = ${JSON.stringify(QUERY)};
      const req = https.request(${JSON.stringify(url + "/graphql")}, { method: "POST", ca,
        headers: { "content-type": "application/json" } }, (res) => {
        const alpn = res.socket.alpnProtocol;
        let text = ""; res.on("data", (c) => text += c);
        res.on("end", () => {
          console.log("https", res.statusCode, alpn, text);
          const session = http2.connect(${JSON.stringify(url)}, { ca });
          const stream = session.request({ ":method": "POST", ":path": "/graphql",
            "content-type": "application/json" });
          let h2 = ""; stream.on("response", (h) => h2 += h[":status"] + " ");
          stream.on("data", (c) => h2 += c);
          stream.on("end", () => { console.log("http2", h2); session.close(); });
          stream.end(body);
        });
      });
      req.end(body);`,
    ]);
    assert.ok(node.ok, node.out);
    assert.match(node.out, /https 200 (false|http\/1\.1) \{"data":\{"hello":"world"\}\}/);
    assert.match(node.out, /http2 200 \{"data":\{"hello":"world"\}\}/);
  } finally {
    await router.shutdown();
    await fx.close();
  }
});

Deno.test("tls: large answers to many connections at once come whole and unmixed (the relay writes without copying)", async () => {
  const dir = await Deno.makeTempDir();
  const ca = await makeCa(dir);
  const cert = await issue(dir, ca, { name: "server", use: "server" });
  const tls = checkServerTls(
    { cert: cert.cert, key: cert.key, clientCa: null, http2: false },
    new Date(),
  );
  // Each answer is its request's own bytes, 300 KB: a relay buffer reused before
  // the TLS socket took its bytes would show here.
  const answer = (id: string) => id.repeat(300_000 / id.length);
  const server = await serveGuarded({
    hostname: "127.0.0.1",
    port: 0,
    limits: { headerReadTimeoutMs: 10_000, keepAliveTimeoutMs: 60_000, maxConnections: 0 },
    log: { debug() {}, info() {}, warn() {}, error() {} },
    tls,
  }, (request) => new Response(answer(new URL(request.url).searchParams.get("id")!)));
  const client = Deno.createHttpClient({ caCerts: [ca.cert], http2: false });
  try {
    await within(Promise.all(Array.from({ length: 40 }, async (_, n) => {
      for (let round = 0; round < 2; round++) {
        const id = `<${String(n).padStart(3, "0")}-${round}>`;
        const url = `https://localhost:${server.addr.port}/?id=${encodeURIComponent(id)}`;
        const response = await fetch(url, { client });
        assert.equal(await response.text(), answer(id), id);
      }
    })));
  } finally {
    client.close();
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tls: a client certificate is required: none, or one another authority signed, is refused", async () => {
  const fx = await tlsWorkspace("    client_ca_file: ca.crt\n    require_client_cert: true\n");
  const other = await makeCa(fx.dir, "other");
  const stranger = await issue(fx.dir, other, { name: "stranger", use: "client" });
  const router = await startRouter({ configPath: fx.configPath });
  try {
    const url = router.url.replace("127.0.0.1", "localhost");
    const none = await curl(url, fx.ca, ["--http1.1"]);
    assert.ok(!none.ok, none.out);
    assert.doesNotMatch(none.out, /"hello"/);
    const wrong = await curl(url, fx.ca, [
      "--cert",
      stranger.certFile,
      "--key",
      stranger.keyFile,
    ]);
    assert.ok(!wrong.ok, wrong.out);
    assert.doesNotMatch(wrong.out, /"hello"/);
    for (const protocol of ["--http1.1", "--http2"]) {
      const good = await curl(url, fx.ca, [
        protocol,
        "--cert",
        fx.client.certFile,
        "--key",
        fx.client.keyFile,
      ]);
      assert.ok(good.ok, good.out);
      assert.match(good.out, /\{"data":\{"hello":"world"\}\}/);
    }
    const client = Deno.createHttpClient({
      caCerts: [fx.ca.cert],
      cert: fx.client.cert,
      key: fx.client.key,
    });
    try {
      const response = await fetch(`${url}/health/ready`, { client });
      assert.equal(response.status, 200);
      await response.body?.cancel();
    } finally {
      client.close();
    }
  } finally {
    await router.shutdown();
    await fx.close();
  }
});

Deno.test("tls: a certificate rotated under load: no request fails, new connections get the new one", async () => {
  const fx = await tlsWorkspace();
  const next = await issue(fx.dir, fx.ca, { name: "next", use: "server" });
  const router = await startRouter({ configPath: fx.configPath, watch: true, debounceMs: 50 });
  const url = router.url.replace("127.0.0.1", "localhost");
  let stop = false;
  let served = 0;
  const failures: string[] = [];
  // Half the loops keep their connection, half open a new one each time.
  const loop = async (fresh: boolean) => {
    let client = Deno.createHttpClient({ caCerts: [fx.ca.cert] });
    while (!stop) {
      try {
        const response = await fetch(`${url}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: QUERY,
          client,
          signal: AbortSignal.timeout(10_000),
        });
        const body = await response.json();
        if (body?.data?.hello !== "world") failures.push(JSON.stringify(body));
        else served++;
      } catch (error) {
        failures.push(String(error));
      }
      if (fresh) {
        client.close();
        client = Deno.createHttpClient({ caCerts: [fx.ca.cert] });
      }
    }
    client.close();
  };
  try {
    const subject = async () => (await curl(url, fx.ca)).out.match(/subject: (.*)/)?.[1];
    assert.equal(await subject(), "CN=server");
    const loops = [loop(false), loop(true), loop(false), loop(true)];
    await sleep(500);
    const before = served;
    // What cert-manager or certbot do: the new files written in place of the old.
    await Deno.writeTextFile(join(fx.dir, "server.key"), next.key);
    await Deno.writeTextFile(join(fx.dir, "server.crt"), next.cert);
    const deadline = Date.now() + 10_000;
    while (await subject() !== "CN=next") {
      assert.ok(Date.now() < deadline, "the new certificate was not served within 10 s");
      await sleep(100);
    }
    await sleep(500);
    stop = true;
    await Promise.all(loops);
    assert.deepEqual(failures, []);
    assert.ok(served > before, `served ${served}, ${before} before the rotation`);
  } finally {
    stop = true;
    await router.shutdown();
    await fx.close();
  }
});

Deno.test("tls: a stalled handshake is closed at header_read_timeout; max_connections counts handshakes", async () => {
  const fx = await tlsWorkspace(
    "",
    "traffic_shaping: { router: { header_read_timeout: 1500ms, max_connections: 2 } }",
  );
  const router = await startRouter({ configPath: fx.configPath });
  const port = Number(new URL(router.url).port);
  try {
    const stalled = await Deno.connect({ hostname: "127.0.0.1", port });
    // Half a ClientHello, then nothing.
    await stalled.write(new Uint8Array([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]));
    const started = performance.now();
    const silent = await Deno.connect({ hostname: "127.0.0.1", port });
    // Two are open: a third is closed at once.
    await sleep(100);
    const third = await Deno.connect({ hostname: "127.0.0.1", port });
    const buffer = new Uint8Array(64);
    const thirdEnd = await Promise.race([
      third.read(buffer).then((n) => n ?? "closed", () => "closed"),
      sleep(700).then(() => "open"),
    ]);
    // Closed by the limit, long before its handshake would be owed.
    assert.equal(thirdEnd, "closed");
    third.close();
    for (const conn of [stalled, silent]) {
      const end = await Promise.race([
        conn.read(buffer).then(() => "closed", () => "closed"),
        sleep(5_000).then(() => "open"),
      ]);
      assert.equal(end, "closed");
      conn.close();
    }
    const elapsed = performance.now() - started;
    assert.ok(elapsed > 1_000 && elapsed < 4_000, `closed after ${elapsed} ms`);
    // A handshake done, then no request: closed at header_read_timeout, as over plain TCP.
    const idle = await Deno.connectTls({ hostname: "localhost", port, caCerts: [fx.ca.cert] });
    await idle.handshake();
    const idleStart = performance.now();
    const idleEnd = await Promise.race([
      idle.read(buffer).then(() => "closed", () => "closed"),
      sleep(5_000).then(() => "open"),
    ]);
    idle.close();
    assert.equal(idleEnd, "closed");
    assert.ok(performance.now() - idleStart > 1_000, "closed before header_read_timeout");
    // The slots are free again: a client is served.
    const ok = await curl(router.url.replace("127.0.0.1", "localhost"), fx.ca);
    assert.match(ok.out, /\{"data":\{"hello":"world"\}\}/);
  } finally {
    await router.shutdown();
    await fx.close();
  }
});

Deno.test("tls: a production-like router (SIGHUP reload, metrics, access logs) serves HTTPS", async () => {
  const fx = await tlsWorkspace(
    "",
    "dev_mode: false\naccess_logs: { enabled: true }\ntelemetry: { metrics: { prometheus: { enabled: true, listen_addr: 127.0.0.1:0 } } }",
  );
  const next = await issue(fx.dir, fx.ca, { name: "next", use: "server" });
  const serve = spawnServe(fx.configPath);
  try {
    const listening = JSON.parse(
      await serve.waitFor((line) => line.includes("GW Router listening")),
    );
    const url = String(listening.url).replace(/\/\/[^:]+:/, "//localhost:");
    assert.match(url, /^https:/);
    const loaded = JSON.parse(
      await serve.waitFor((line) => line.includes("TLS certificate loaded")),
    );
    assert.equal(loaded.subject, "CN=server");
    const first = await curl(url, fx.ca, ["--http2"]);
    assert.match(first.out, /\{"data":\{"hello":"world"\}\}/);
    await within(serve.waitFor((line) => line.includes('"msg":"request"')));
    await Deno.copyFile(next.keyFile, join(fx.dir, "server.key"));
    await Deno.copyFile(next.certFile, join(fx.dir, "server.crt"));
    serve.child.kill("SIGHUP");
    const reloaded = JSON.parse(
      await within(serve.waitFor((line) => line.includes("TLS certificate reloaded"))),
    );
    assert.equal(reloaded.subject, "CN=next");
    const second = await curl(url, fx.ca);
    assert.match(second.out, /subject: CN=next/);
    assert.match(second.out, /\{"data":\{"hello":"world"\}\}/);
    // A client that does not trust the certificate: its failed handshake is counted.
    const untrusted = await run("curl", ["-sS", "--max-time", "5", `${url}/health/ready`]);
    assert.ok(!untrusted.ok, untrusted.out);
    const metricsLine = JSON.parse(
      await within(serve.waitFor((line) => line.includes("Prometheus metrics listening"))),
    );
    const deadline = Date.now() + 5_000;
    let metrics = "";
    while (!/gw_router_tls_handshake_failures_total [1-9]/.test(metrics)) {
      assert.ok(Date.now() < deadline, metrics);
      metrics = await (await fetch(metricsLine.url)).text();
      await sleep(100);
    }
  } finally {
    await serve.close();
    await fx.close();
  }
});

Deno.test("tls: a missing file, a key of another certificate, a broken certificate: refused, naming the key", async () => {
  const fx = await tlsWorkspace();
  const other = await issue(fx.dir, fx.ca, { name: "other", use: "server" });
  const config = await Deno.readTextFile(fx.configPath);
  try {
    const cases: [string, RegExp][] = [
      [
        config.replace("cert_file: server.crt", "cert_file: gone.crt"),
        /"tls\.server\.cert_file".*gone\.crt.*no such file/,
      ],
      [
        config.replace("key_file: server.key", `key_file: ${other.keyFile}`),
        /"tls\.server\.key_file": does not match the certificate/,
      ],
      [
        config.replace("cert_file: server.crt", "cert_file: server.key"),
        /"tls\.server\.cert_file": not a PEM certificate/,
      ],
      [
        config.replace("    key_file: server.key\n", ""),
        /tls\.server\.key_file.*required with "tls\.server\.cert_file"/,
      ],
    ];
    for (const [text, message] of cases) {
      await Deno.writeTextFile(fx.configPath, text);
      await assert.rejects(startRouter({ configPath: fx.configPath }), message);
    }
  } finally {
    await fx.close();
  }
});

Deno.test("tls: workers: 2 — the supervisor terminates TLS and reloads the certificate on reload()", async () => {
  const fx = await tlsWorkspace("", "workers: 2\nlog_level: error");
  const next = await issue(fx.dir, fx.ca, { name: "next", use: "server" });
  const router = await startWorkers({ configPath: fx.configPath, workerStartTimeoutMs: 60_000 });
  try {
    assert.match(router.url, /^https:/);
    const url = router.url.replace("127.0.0.1", "localhost");
    for (const protocol of ["--http1.1", "--http2"]) {
      const answer = await curl(url, fx.ca, [protocol]);
      assert.match(answer.out, /\{"data":\{"hello":"world"\}\}/, answer.out);
    }
    await Deno.copyFile(next.keyFile, join(fx.dir, "server.key"));
    await Deno.copyFile(next.certFile, join(fx.dir, "server.crt"));
    await router.reload();
    const after = await curl(url, fx.ca);
    assert.match(after.out, /subject: CN=next/);
    assert.match(after.out, /\{"data":\{"hello":"world"\}\}/);
  } finally {
    await router.shutdown();
    await fx.close();
  }
});

Deno.test("tls: workers: 2 with watch — a certificate written in place is served without a reload", async () => {
  const fx = await tlsWorkspace("", "workers: 2\nlog_level: error");
  const next = await issue(fx.dir, fx.ca, { name: "next", use: "server" });
  const router = await startWorkers({
    configPath: fx.configPath,
    workerStartTimeoutMs: 60_000,
    watch: true,
    debounceMs: 50,
  });
  try {
    const url = router.url.replace("127.0.0.1", "localhost");
    assert.match((await curl(url, fx.ca)).out, /subject: CN=server/);
    await Deno.writeTextFile(join(fx.dir, "server.key"), next.key);
    await Deno.writeTextFile(join(fx.dir, "server.crt"), next.cert);
    const deadline = Date.now() + 10_000;
    let answer = await curl(url, fx.ca);
    while (!/subject: CN=next/.test(answer.out)) {
      assert.ok(Date.now() < deadline, "the new certificate was not served within 10 s");
      await sleep(100);
      answer = await curl(url, fx.ca);
    }
    assert.match(answer.out, /\{"data":\{"hello":"world"\}\}/);
  } finally {
    await router.shutdown();
    await fx.close();
  }
});

Deno.test("tls: a shutdown ends connections still in their handshake", async () => {
  const fx = await tlsWorkspace();
  const router = await startRouter({ configPath: fx.configPath, shutdownGraceMs: 500 });
  const port = Number(new URL(router.url).port);
  const pending = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await pending.write(new Uint8Array([0x16, 0x03, 0x01]));
    await sleep(100);
    await within(router.shutdown(), 10_000);
    const end = await Promise.race([
      pending.read(new Uint8Array(64)).then(() => "closed", () => "closed"),
      sleep(2_000).then(() => "open"),
    ]);
    assert.equal(end, "closed");
  } finally {
    pending.close();
    await router.shutdown();
    await fx.close();
  }
});

Deno.test("tls: http2: false offers HTTP/1.1 only (curl --http2 gets HTTP/1.1)", async () => {
  const fx = await tlsWorkspace("    http2: false\n");
  const router = await startRouter({ configPath: fx.configPath });
  try {
    const answer = await curl(router.url.replace("127.0.0.1", "localhost"), fx.ca, ["--http2"]);
    assert.ok(answer.ok, answer.out);
    assert.doesNotMatch(answer.out, /ALPN: server accepted h2/);
    assert.match(answer.out, /< HTTP\/1\.1 200/);
    assert.match(answer.out, /\{"data":\{"hello":"world"\}\}/);
  } finally {
    await router.shutdown();
    await fx.close();
  }
});
