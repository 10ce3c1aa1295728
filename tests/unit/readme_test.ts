/**
 * Issue 32: a README a newcomer reads in ten minutes, and docs whose links
 * hold: at most 400 lines, no prose line over 120 characters, no reference
 * to a file a clone lacks, every relative link to an existing file.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

async function markdownFiles(): Promise<string[]> {
  const files = ["README.md", "CHANGELOG.md"];
  for await (const entry of Deno.readDir(new URL("docs/", ROOT))) {
    if (entry.isFile && entry.name.endsWith(".md")) files.push(`docs/${entry.name}`);
  }
  return files;
}

/** Lines outside fenced code blocks. */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split("\n").filter((line) => {
    if (line.startsWith("```")) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

Deno.test("issue 32: the README is short, narrow and self-contained", async () => {
  const text = await Deno.readTextFile(new URL("README.md", ROOT));
  assert.ok(text.split("\n").length <= 400, `${text.split("\n").length} lines`);
  const wide = proseLines(text).filter((line) => line.length > 120);
  assert.deepEqual(wide, [], "prose lines over 120 characters");
  for (const missing of ["DESIGN.md", "STYLE.md", "../shared"]) {
    assert.ok(!text.includes(missing), `the README names ${missing}, which a clone lacks`);
  }
  for (const topic of ["Connect-Protocol-Version", "inspector", "gw_trace", "config validate"]) {
    assert.ok(text.includes(topic), `the README covers ${topic}`);
  }
});

Deno.test("issue 32: relative links in the README and docs/ point to files that exist", async () => {
  for (const file of await markdownFiles()) {
    const text = await Deno.readTextFile(new URL(file, ROOT));
    for (const line of proseLines(text)) {
      for (const match of line.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const url = new URL(target, new URL(file, ROOT));
        const exists = await Deno.stat(url).then(() => true, () => false);
        assert.ok(exists, `${file}: link to ${target}, which does not exist`);
      }
      for (const missing of ["DESIGN.md", "STYLE.md", "../shared"]) {
        assert.ok(!line.includes(missing), `${file} names ${missing}: ${line}`);
      }
    }
  }
});
