import assert from "node:assert/strict";
import { jsonErrorOffset } from "../../../lib/engine/execute/_answer_faults.ts";

Deno.test("issue 34: jsonErrorOffset finds no fault in JSON, and the first one in text that is not", () => {
  for (
    const valid of ["{}", "[]", '[1,2,{"a":[true,false,null,-1.5e3,"x\\u00e9\\n"]}]', ' "s" ', "0"]
  ) {
    JSON.parse(valid);
    assert.equal(jsonErrorOffset(valid), -1, valid);
  }
  const cases: [string, number][] = [
    ["", 0],
    ["{", 1],
    ["[1,]", 3],
    ['{"a":1,}', 7],
    ['{"a" 1}', 5],
    ["01", 1],
    ['"\\x"', 1],
    ['"a\nb"', 2],
    ['{"a":1}}', 7],
    ["nul", 0],
    ["<html>", 0],
  ];
  for (const [text, offset] of cases) {
    assert.throws(() => JSON.parse(text));
    assert.equal(jsonErrorOffset(text), offset, JSON.stringify(text));
  }
});

Deno.test("issue 34: jsonErrorOffset walks any nesting without recursion", () => {
  const deep = "[".repeat(200_000) + "]".repeat(199_999);
  assert.equal(jsonErrorOffset(deep), deep.length);
});
