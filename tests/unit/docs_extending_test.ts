/**
 * Issue 40: docs/extending.md shows the worked plugin and coprocessor as they
 * are in `docs/examples/` (the files the e2e tests run), so the doc cannot
 * drift from what is tested.
 */
import assert from "node:assert/strict";

const read = (path: string) => Deno.readTextFileSync(new URL(`../../${path}`, import.meta.url));

Deno.test("issue 40: docs/extending.md embeds the tested examples verbatim", () => {
  const doc = read("docs/extending.md");
  for (const example of ["docs/examples/tag_and_block.ts", "docs/examples/apollo_coprocessor.ts"]) {
    assert.ok(doc.includes("```ts\n" + read(example) + "```"), `${example} is in the doc as it is`);
  }
});
