import assert from "node:assert/strict";
import fc from "fast-check";
import { findDuplicateKey } from "../../lib/duplicate_keys.ts";

Deno.test("duplicate keys: strings ending in backslashes or holding escaped quotes never hide or invent a key", () => {
  const cases: [string, string | null][] = [
    ['{"a":"x\\\\","a":1}', "a"],
    ['{"a":"x\\"","b":1}', null],
    ['{"a":"\\\\\\"","a":2}', "a"],
    ['{"a":"\\"a\\":1","b":2}', null],
    ['{"a":1,"b":{"c":"\\\\\\\\","c":2}}', "c"],
    ['{"\\u0061":1,"a":2}', "a"],
  ];
  for (const [text, key] of cases) {
    JSON.parse(text);
    assert.equal(findDuplicateKey(text)?.key ?? null, key, text);
  }
});

Deno.test("duplicate keys: JSON.stringify output has none; a key written twice is found", () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), (object) => {
      const text = JSON.stringify(object);
      assert.equal(findDuplicateKey(text), null);
      const [first] = Object.keys(object);
      const twice = `{${JSON.stringify(first)}:0,${text.slice(1)}`;
      assert.equal(findDuplicateKey(twice)?.key, first);
    }),
  );
});
