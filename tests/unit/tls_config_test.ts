/**
 * `tls.server`'s keys (docs/tls.md): read from YAML and env together, the
 * combinations that cannot work refused naming the key; the certificate
 * checks of `lib/listen/server_tls.ts` on certificates the real openssl makes.
 */
import assert from "node:assert/strict";
import { parseConfig, startupWarnings, withBoundPort } from "../../lib/config/mod.ts";
import { checkServerTls, expiryWarning } from "../../lib/listen/server_tls.ts";
import { issue, makeCa } from "../e2e/_tls.ts";

Deno.test("tls.server: cert and key from env, resolved against the config folder", () => {
  const config = parseConfig({}, {
    env: { TLS_SERVER_CERT_FILE: "tls/cert.pem", TLS_SERVER_KEY_FILE: "tls/key.pem" },
    baseDir: "/etc/gw",
  });
  assert.equal(config.tls.server.cert_file, "/etc/gw/tls/cert.pem");
  assert.equal(config.tls.server.key_file, "/etc/gw/tls/key.pem");
  assert.equal(config.tls.server.require_client_cert, false);
});

Deno.test("tls.server: combinations that cannot work are refused naming the key", () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ cert_file: "c.pem" }, /"tls\.server\.key_file": required with "tls\.server\.cert_file"/],
    [{ key_file: "k.pem" }, /"tls\.server\.cert_file": required with "tls\.server\.key_file"/],
    [
      { client_ca_file: "ca.pem", require_client_cert: true },
      /client_ca_file.*needs "tls\.server\.cert_file"/,
    ],
    [
      { cert_file: "c", key_file: "k", require_client_cert: true },
      /require_client_cert.*needs "tls\.server\.client_ca_file"/,
    ],
    [
      { cert_file: "c", key_file: "k", client_ca_file: "ca" },
      /client_ca_file.*require_client_cert: true/,
    ],
  ];
  for (const [server, message] of cases) {
    assert.throws(() => parseConfig({ tls: { server } }), message);
  }
  const ok = parseConfig({
    tls: {
      server: { cert_file: "c", key_file: "k", client_ca_file: "ca", require_client_cert: true },
    },
  });
  assert.equal(ok.tls.server.require_client_cert, true);
});

Deno.test("checkServerTls: a matching pair passes; another key, a past end, a broken PEM do not", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ca = await makeCa(dir);
    const a = await issue(dir, ca, { name: "a", use: "server", days: 10 });
    const b = await issue(dir, ca, { name: "b", use: "server" });
    const now = new Date();
    const checked = checkServerTls({ cert: a.cert, key: a.key, clientCa: null }, now);
    assert.equal(checked.subject, "CN=a");
    assert.ok(checked.daysLeft >= 9 && checked.daysLeft <= 10, String(checked.daysLeft));
    assert.match(expiryWarning(checked)!, /expires in \d+ day/);
    assert.equal(
      expiryWarning(checkServerTls({ cert: b.cert, key: b.key, clientCa: ca.cert }, now)),
      null,
    );
    assert.throws(
      () => checkServerTls({ cert: a.cert, key: b.key, clientCa: null }, now),
      /"tls\.server\.key_file": does not match the certificate of "tls\.server\.cert_file" \(CN=a\)/,
    );
    const later = new Date(now.getTime() + 12 * 86_400_000);
    assert.throws(
      () => checkServerTls({ cert: a.cert, key: a.key, clientCa: null }, later),
      /"tls\.server\.cert_file": the certificate \(CN=a\) expired on .*, 2 day\(s\) ago/,
    );
    assert.throws(
      () => checkServerTls({ cert: a.key, key: a.key, clientCa: null }, now),
      /"tls\.server\.cert_file": not a PEM certificate/,
    );
    assert.throws(
      () => checkServerTls({ cert: a.cert, key: a.cert, clientCa: null }, now),
      /"tls\.server\.key_file": not a PEM private key/,
    );
    assert.throws(
      () => checkServerTls({ cert: a.cert, key: a.key, clientCa: "nope" }, now),
      /"tls\.server\.client_ca_file": not a PEM certificate/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tls.server: the derived mcp.server.base_url is https, and follows the bound port", () => {
  const config = parseConfig({
    listen_addr: "127.0.0.1:0",
    tls: { server: { cert_file: "c.pem", key_file: "k.pem" } },
  });
  assert.equal(config.mcp.server.base_url, "https://127.0.0.1:0");
  assert.equal(withBoundPort(config, 8443).mcp.server.base_url, "https://127.0.0.1:8443");
  const plain = parseConfig({ listen_addr: "127.0.0.1:3002" });
  assert.equal(plain.mcp.server.base_url, "http://127.0.0.1:3002");
});

Deno.test("tls.server.http2 with rate_limit by client_ip: warned (HTTP/2 clients share one limit)", () => {
  const tls = { server: { cert_file: "c.pem", key_file: "k.pem" } };
  const keys = (raw: Record<string, unknown>) =>
    startupWarnings(parseConfig({ engine: { enable_request_tracing: false }, ...raw })).map((
      w,
    ) => w.key);
  assert.ok(keys({ tls, rate_limit: { enabled: true } }).includes("tls.server.http2"));
  assert.ok(
    !keys({ tls: { server: { ...tls.server, http2: false } }, rate_limit: { enabled: true } })
      .includes("tls.server.http2"),
  );
  assert.ok(
    !keys({ tls, rate_limit: { enabled: true, key: "header:X-Api-Key" } }).includes(
      "tls.server.http2",
    ),
  );
  assert.ok(!keys({ rate_limit: { enabled: true } }).includes("tls.server.http2"));
});
