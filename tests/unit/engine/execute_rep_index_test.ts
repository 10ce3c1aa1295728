import assert from "node:assert/strict";
import fc from "fast-check";
import { Layers } from "../../../lib/engine/execute/_layers.ts";
import { RepresentationIndex } from "../../../lib/engine/execute/_rep_index.ts";
import type { RepField, RepSelection } from "../../../lib/engine/plan/rep.ts";
import { parseJsonExact } from "../../../lib/engine/prepare/json_numbers.ts";

function leaf(key: string, isKey = false): RepField {
  return { key, dataKey: key, selection: null, ...(isKey ? { isKey } : {}) };
}

const INVENTORY: RepSelection = {
  fields: [leaf("upc", true), leaf("price"), leaf("weight")],
  byType: new Map(),
};

function indexOver(layers: Layers, selections: [string, RepSelection][]) {
  return new RepresentationIndex(layers, {
    selections: new Map(selections),
    sendTypename: new Map(),
    shared: false,
  });
}

function indexAll(objects: Record<string, unknown>[], selection = INVENTORY) {
  const index = indexOver(new Layers({}, { inPlace: true }), [["Product", selection]]);
  const numbers = objects.map((o) => index.indexOf(o, "Product", undefined));
  return { numbers, json: index.json };
}

/** What the index must give: each distinct JSON once, in the order first met. */
function byJsonAlone(objects: Record<string, unknown>[], selection = INVENTORY) {
  const json: string[] = [];
  const numbers = objects.map((o) => {
    const rep: Record<string, unknown> = {};
    for (const f of selection.fields) {
      const value = o[f.dataKey];
      if (f.isKey && (value === null || value === undefined)) return null;
      rep[f.key] = value === undefined ? null : value;
    }
    rep.__typename = "Product";
    const text = JSON.stringify(rep);
    if (!json.includes(text)) json.push(text);
    return json.indexOf(text);
  });
  return { numbers, json };
}

Deno.test("representations: values that differ but print alike are one representation", () => {
  const objects = [
    { upc: "1", price: null, weight: 1 },
    { upc: "1", weight: 1 }, // price missing: sent as null
    { upc: "1", price: 0, weight: 1 },
    { upc: "1", price: -0, weight: 1 }, // prints 0
    { upc: 1, price: 0, weight: 1 }, // a number is not the string "1"
  ];
  const { numbers, json } = indexAll(objects);
  assert.deepEqual(numbers, [0, 0, 1, 1, 2]);
  assert.deepEqual(json, [
    '{"upc":"1","price":null,"weight":1,"__typename":"Product"}',
    '{"upc":"1","price":0,"weight":1,"__typename":"Product"}',
    '{"upc":1,"price":0,"weight":1,"__typename":"Product"}',
  ]);
});

Deno.test("representations: object values (exact big integers, JSON scalars) are compared by their JSON", () => {
  const parsed = parseJsonExact(
    '[{"upc":"1","price":12345678901234567890,"weight":{"kg":1}},' +
      '{"upc":"1","price":12345678901234567890,"weight":{"kg":1}},' +
      '{"upc":"1","price":12345678901234567891,"weight":{"kg":1}}]',
  ) as Record<string, unknown>[];
  // 1e20 parses to a double printed as these digits: the same JSON as the exact integer.
  const exact = parseJsonExact('{"upc":"2","price":100000000000000000000,"weight":null}');
  const double = { upc: "2", price: 1e20, weight: null };
  const objects = [...parsed, exact as Record<string, unknown>, double];
  const { numbers, json } = indexAll(objects);
  assert.deepEqual(numbers, [0, 0, 1, 2, 2]);
  assert.deepEqual(json, [
    '{"upc":"1","price":12345678901234567890,"weight":{"kg":1},"__typename":"Product"}',
    '{"upc":"1","price":12345678901234567891,"weight":{"kg":1},"__typename":"Product"}',
    '{"upc":"2","price":100000000000000000000,"weight":null,"__typename":"Product"}',
  ]);
});

Deno.test("representations: an object without a key field is not sent, whatever was met before", () => {
  const { numbers } = indexAll([{ upc: "1", price: 1 }, { price: 1 }, { upc: null, price: 1 }]);
  assert.deepEqual(numbers, [0, null, null]);
});

Deno.test("representations: types are looked up apart (same values, another __typename)", () => {
  const selection = { fields: [leaf("id", true)], byType: new Map() };
  const index = indexOver(new Layers({}, { inPlace: true }), [
    ["User", selection],
    ["Admin", selection],
  ]);
  assert.equal(index.indexOf({ id: "1" }, "User", undefined), 0);
  assert.equal(index.indexOf({ id: "1" }, "Admin", undefined), 1);
  assert.equal(index.indexOf({ id: "1" }, "User", undefined), 0);
  assert.equal(index.json[1], '{"id":"1","__typename":"Admin"}');
});

Deno.test("representations: fields are read through the request's layer", () => {
  const shared = { upc: "1", price: 1, weight: 1 };
  const layers = new Layers({});
  const index = indexOver(layers, [["Product", INVENTORY]]);
  assert.equal(index.indexOf(shared, "Product", layers.layerOf(shared)), 0);
  layers.set(shared, "price", 2);
  assert.equal(index.indexOf(shared, "Product", layers.layerOf(shared)), 1);
  assert.equal(index.json[1], '{"upc":"1","price":2,"weight":1,"__typename":"Product"}');
});

Deno.test("representations: numbered as by their JSON alone, for any objects", () => {
  // Few values, so that objects often print alike: fresh objects with equal JSON among them.
  const value = fc.oneof(
    { arbitrary: fc.constantFrom(null, undefined, 0, -0, 1, "1", true), weight: 4 },
    { arbitrary: fc.constantFrom(0, 1).map((n) => ({ n })), weight: 1 },
  );
  const object = fc.record({ upc: value, price: value, weight: value, __typename: value }, {
    requiredKeys: [],
  });
  // The planner's selections name `__typename` among the fields (sent as the type's name).
  const typed: RepSelection = {
    fields: [leaf("__typename"), leaf("upc", true), leaf("price")],
    byType: new Map(),
  };
  fc.assert(
    fc.property(fc.array(object, { maxLength: 30 }), (objects) => {
      assert.deepEqual(indexAll(objects), byJsonAlone(objects));
      assert.deepEqual(indexAll(objects, typed), byJsonAlone(objects, typed));
    }),
  );
});

Deno.test("representations: a member named __typename or twice is printed as the rendered object", () => {
  const typed: RepSelection = {
    fields: [leaf("upc", true), leaf("__typename")],
    byType: new Map(),
  };
  const twice: RepSelection = {
    fields: [leaf("upc", true), { key: "upc", dataKey: "sku", selection: null }],
    byType: new Map(),
  };
  const objects = [{ upc: "1", sku: "9", __typename: "Item" }];
  assert.deepEqual(indexAll(objects, typed), byJsonAlone(objects, typed));
  assert.deepEqual(indexAll(objects, typed).json, ['{"upc":"1","__typename":"Product"}']);
  const first: RepSelection = {
    fields: [leaf("__typename"), leaf("upc", true)],
    byType: new Map(),
  };
  assert.deepEqual(indexAll(objects, first).json, ['{"__typename":"Product","upc":"1"}']);
  assert.deepEqual(indexAll(objects, twice).json, ['{"upc":"9","__typename":"Product"}']);
});
