/**
 * Issue 32: the config schema documents itself. Every node has a description;
 * `docs/configuration.md` and `config.schema.json` are generated from the
 * schema and fail this test when they drift (`deno task docs:config` rewrites
 * both); the JSON Schema accepts the shipped configs and refuses a typo.
 */
import assert from "node:assert/strict";
import Ajv2020 from "ajv/dist/2020.js";
import { parse } from "yaml";
import { configKeys } from "../../lib/config/reference.ts";
import { generatedFiles } from "../../tools/docs_config.ts";

const ROOT = new URL("../../", import.meta.url);

Deno.test("issue 32: every key of the config schema has a description", () => {
  const missing = configKeys().filter((key) => !key.node.description?.trim()).map((k) => k.path);
  assert.deepEqual(missing, [], `keys without a description: ${missing.join(", ")}`);
  for (const key of configKeys()) {
    const text = key.node.description!;
    assert.ok(/[.)]$/.test(text), `"${key.path}": a description ends with a full stop: ${text}`);
  }
});

for (const [path, text] of Object.entries(generatedFiles())) {
  Deno.test(`issue 32: ${path} matches the config schema (run "deno task docs:config")`, async () => {
    const committed = await Deno.readTextFile(new URL(path, ROOT));
    assert.ok(committed === text, `${path} is stale: run "deno task docs:config"`);
  });
}

Deno.test("issue 32: docs/configuration.md has an entry (type, default, env) per key", () => {
  const page = generatedFiles()["docs/configuration.md"]!;
  for (const key of configKeys()) {
    assert.ok(page.includes(`\`${key.path}\``), key.path);
    if (key.env !== undefined) assert.ok(page.includes(`- env: \`${key.env}\``), key.env);
  }
  const wide = page.split("\n").filter((line) => line.length > 400);
  assert.deepEqual(wide, [], "no wide lines or tables");
});

Deno.test("issue 32: config.schema.json accepts the shipped configs and refuses a typo", async () => {
  const schema = JSON.parse(generatedFiles()["config.schema.json"]!);
  // deno-lint-ignore no-explicit-any
  const ajv = new (Ajv2020 as any)({ strict: false });
  const validate = ajv.compile(schema);
  for (const file of ["config.yaml", "config.production.yaml"]) {
    const raw = parse(await Deno.readTextFile(new URL(file, ROOT)));
    assert.ok(validate(raw), `${file}: ${JSON.stringify(validate.errors)}`);
  }
  assert.equal(validate({ listen_address: "x" }), false);
  assert.equal(validate({ grace_period: "30s", max_request_body_bytes: "5MB" }), true);
});
