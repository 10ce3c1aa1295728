/**
 * `gw-router trace-token` as users run it: a real subprocess of `main.ts`.
 */
import assert from "node:assert/strict";
import { decodeJwt } from "jose";
import { importTraceVerificationKey, verifyTraceToken } from "../../lib/trace/mod.ts";
import { type CliOutput, MAIN, runCli } from "./_cli.ts";

function cli(...args: string[]): Promise<CliOutput> {
  return runCli(["trace-token", ...args]);
}

Deno.test("DESIGN §2: trace-token --generate-key writes a key pair whose tokens the router accepts", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const generated = await cli("--generate-key", "--out", dir);
    assert.equal(generated.code, 0, generated.stderr);
    const privateKey = await Deno.readTextFile(`${dir}/trace_private.pem`);
    const publicKey = await Deno.readTextFile(`${dir}/trace_public.pem`);
    assert.match(privateKey, /^-----BEGIN PRIVATE KEY-----/);
    assert.match(publicKey, /^-----BEGIN PUBLIC KEY-----/);
    assert.equal((await Deno.stat(`${dir}/trace_private.pem`)).mode! & 0o077, 0);

    const minted = await cli(
      "--key",
      `${dir}/trace_private.pem`,
      "--ttl",
      "15m",
      "--iss",
      "ops",
      "--aud",
      "gw",
    );
    assert.equal(minted.code, 0, minted.stderr);
    const token = minted.stdout.trim();
    const claims = decodeJwt(token);
    assert.equal(claims.exp! - claims.iat!, 900);
    assert.equal(claims.iss, "ops");
    assert.equal(claims.aud, "gw");
    const key = await importTraceVerificationKey(publicKey);
    assert.deepEqual(await verifyTraceToken(token, key, { issuer: "ops", audience: "gw" }), {
      ok: true,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DESIGN §2: trace-token refuses bad arguments with a clear message", async () => {
  const missing = await cli();
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--key FILE/);
  const ttl = await cli("--key", MAIN, "--ttl", "forever");
  assert.equal(ttl.code, 2);
  assert.match(ttl.stderr, /Cannot read --ttl "forever"/);
  const notAKey = await cli("--key", MAIN);
  assert.equal(notAKey.code, 1);
  assert.match(notAKey.stderr, /PKCS8 PEM ES256/);
  const noOut = await cli("--generate-key");
  assert.equal(noOut.code, 2);
  assert.match(noOut.stderr, /--out DIR/);
});
