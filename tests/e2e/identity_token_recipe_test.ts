/**
 * Issue 32: the token recipe of docs/authentication.md works as written: the
 * config block (a secret of 32+ characters) starts, a token minted with jose
 * as shown reads `me { username email }`, and no token gets `me: null` with
 * UNAUTHORIZED_FIELD_OR_TYPE.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { SignJWT } from "jose";
import { startDemo } from "../../demo/main.ts";
import { createLogger } from "../../lib/log/mod.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const DOC = await Deno.readTextFile(`${ROOT}docs/authentication.md`);

/** The first fenced block of `lang` after the recipe's heading. */
function block(lang: string): string {
  const recipe = DOC.slice(DOC.indexOf("## A test token in two minutes"));
  const match = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(recipe);
  assert.ok(match, `a ${lang} block in the recipe`);
  return match[1]!;
}

Deno.test("issue 32: the test-token recipe in docs/authentication.md works as written", async () => {
  const yamlBlock = block("yaml");
  const secret = /secret: "([^"]+)"/.exec(yamlBlock)![1]!;
  assert.ok(secret.length >= 32, "the documented secret is at least 32 characters");
  // The shell block uses the same secret, audience and scope claim.
  const shell = block("sh");
  assert.ok(shell.includes(secret) && shell.includes('setAudience("gw-router")'));
  const dir = await Deno.makeTempDir({ prefix: "gw-recipe-" });
  const configPath = join(dir, "config.yaml");
  await Deno.writeTextFile(
    configPath,
    `listen_addr: 127.0.0.1:0\nsupergraph_path: ${ROOT}schema/supergraph.graphql\n` +
      `operations_dir: ${ROOT}operations\n${yamlBlock}`,
  );
  const demo = await startDemo({
    configPath,
    freePorts: true,
    log: createLogger({ level: "error" }),
  });
  try {
    const key = new TextEncoder().encode(secret);
    const token = await new SignJWT({ scope: "read:email read:orders" })
      .setProtectedHeader({ alg: "HS256" }).setSubject("1").setAudience("gw-router")
      .setIssuedAt().setExpirationTime("1h").sign(key);
    const ask = (headers: Record<string, string>) =>
      fetch(`${demo.router.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ query: "{ me { username email } }" }),
      }).then((r) => r.json());
    const signed = await ask({ authorization: `Bearer ${token}` });
    assert.deepEqual(signed.errors, undefined, JSON.stringify(signed));
    assert.equal(typeof signed.data.me.email, "string");
    const anonymous = await ask({});
    assert.equal(anonymous.data.me, null);
    assert.equal(anonymous.errors[0].extensions.code, "UNAUTHORIZED_FIELD_OR_TYPE");
  } finally {
    await demo.close();
  }
});
