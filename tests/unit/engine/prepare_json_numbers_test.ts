import assert from "node:assert/strict";
import { composeServices } from "@theguild/federation-composition";
import { parse } from "graphql";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { createEngine, execute, prepare } from "../../../lib/engine/mod.ts";
import { mayHoldInexactInteger, parseJsonExact } from "../../../lib/engine/prepare/json_numbers.ts";
import { parseConfig } from "../../../lib/config/mod.ts";
import { createHandler } from "../../../lib/http/mod.ts";
import { silentLogger } from "../../../lib/log/mod.ts";
import { buildState } from "../../../lib/state/mod.ts";

const FED =
  `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])\n`;

function supergraphSdl(): string {
  const result = composeServices([
    {
      name: "a",
      typeDefs: parse(
        FED +
          `scalar Long input Filter { ids: [ID!] n: Long } type Query { things: [Thing] thing(id: ID!, n: Long, f: Float, filter: Filter): Thing } type Thing @key(fields: "id") { id: ID! n: Long f: Float s: String }`,
      ),
      url: "http://a.test/graphql",
    },
    {
      name: "b",
      typeDefs: parse(FED + `type Thing @key(fields: "id") { id: ID! echo: String }`),
      url: "http://b.test/graphql",
    },
  ]);
  if (result.errors !== undefined) throw new Error(result.errors.map((e) => e.message).join());
  return result.supergraphSdl;
}

function model() {
  return buildSupergraph(supergraphSdl());
}

Deno.test("issue 15 silent data: integers beyond 2^53 from a subgraph reach the client and the next subgraph digit for digit", async () => {
  for (const enableSingleFlight of [true, false]) await bigIntegers(enableSingleFlight);
});

async function bigIntegers(enableSingleFlight: boolean) {
  const sent: string[] = [];
  const engine = createEngine(model(), {
    enableSingleFlight,
    fetch: async (request) => {
      const body = await request.text();
      sent.push(body);
      const text = new URL(request.url).hostname === "a.test"
        ? `{"data":{"things":[{"__typename":"Thing","id":12345678901234567891,"n":9007199254740993,"f":12345678901234567891,"s":-98765432109876543210}]}}`
        : `{"data":{"_entities":[{"__typename":"Thing","id":12345678901234567891,"echo":"ok"}]}}`;
      return new Response(text, { headers: { "content-type": "application/json" } });
    },
  });
  const prepared = prepare(engine, { query: "{ things { id n f s echo } }" });
  assert.ok(prepared.ok);
  const result = await execute(engine, prepared.operation);
  assert.equal(
    JSON.stringify(result),
    `{"data":{"things":[{"id":"12345678901234567891","n":9007199254740993,"f":12345678901234567000,"s":"-98765432109876543210","echo":"ok"}]}}`,
  );
  assert.equal(sent.length, 2);
  assert.match(sent[1]!, /"id":12345678901234567891[,}]/, "the representation keeps the key");
}

Deno.test("issue 15 silent data: numbers past the doubles' range are passed on exact (a custom scalar) or refused, never printed as null", async () => {
  const huge = `1${"0".repeat(400)}`;
  const run = async (answer: string) => {
    const engine = createEngine(model(), {
      fetch: () =>
        Promise.resolve(new Response(answer, { headers: { "content-type": "application/json" } })),
    });
    const prepared = prepare(engine, { query: "{ things { n f s } }" });
    assert.ok(prepared.ok);
    return await execute(engine, prepared.operation);
  };
  // With a long run of digits the numbers keep their text: a Long as written,
  // a String the integer's digits, a Float that no double holds refused.
  const exact = await run(
    `{"data":{"things":[{"n":${huge},"f":1.5,"s":"x"},{"n":-1e400,"f":${huge},"s":${huge}}]}}`,
  );
  assert.equal(
    JSON.stringify(exact.data),
    `{"things":[{"n":${huge},"f":1.5,"s":"x"},{"n":-1e400,"f":null,"s":"${huge}"}]}`,
  );
  assert.equal(exact.errors?.length, 1, JSON.stringify(exact.errors));
  assert.deepEqual(exact.errors![0]!.path, ["things", 1, "f"]);
  // Without one, JSON.parse gives Infinity: refused, for a custom scalar too.
  const short = await run(`{"data":{"things":[{"n":1e400,"f":-2e999,"s":"x"}]}}`);
  assert.deepEqual(short.data, { things: [{ n: null, f: null, s: "x" }] });
  assert.deepEqual(short.errors?.map((e) => e.path), [["things", 0, "n"], ["things", 0, "f"]]);
  for (const error of short.errors!) assert.match(error.message, /a number/);
});

Deno.test("issue 15 silent data: JSON too deep to keep its large integers exact is refused by name, not read rounded", async () => {
  const deep = `${"[".repeat(10_000)}12345678901234567891${"]".repeat(10_000)}`;
  const engine = createEngine(model(), {
    fetch: () =>
      Promise.resolve(
        new Response(`{"data":{"things":[{"n":${deep}}]}}`, {
          headers: { "content-type": "application/json" },
        }),
      ),
  });
  const prepared = prepare(engine, { query: "{ things { n } }" });
  assert.ok(prepared.ok);
  const result = await execute(engine, prepared.operation);
  assert.equal(result.data?.things, null);
  assert.match(result.errors?.[0]?.message ?? "", /nested too deeply .* exact/);
});

Deno.test("issue 15 silent data: the digit scan finds every run of 16 digits wherever it starts, and no shorter run", () => {
  for (let offset = 0; offset < 48; offset++) {
    const pad = "x".repeat(offset);
    assert.equal(mayHoldInexactInteger(`${pad}${"9".repeat(16)}${pad}`), true, `16 at ${offset}`);
    assert.equal(mayHoldInexactInteger(`${pad}${"9".repeat(15)},${pad}`), false, `15 at ${offset}`);
  }
  assert.deepEqual(parseJsonExact(`{"a":[1.5,9007199254740991,"12345678901234567890"]}`), {
    a: [1.5, 9007199254740991, "12345678901234567890"],
  });
});

Deno.test("issue 45: a long fraction (how most doubles print) is parsed without the reviver; an exponent, or a long integer part, still is not", () => {
  for (let offset = 0; offset < 48; offset++) {
    const pad = "x".repeat(offset);
    const fraction = `0.${"3".repeat(16 + (offset % 5))}`;
    assert.equal(mayHoldInexactInteger(`${pad}${fraction},${pad}`), false, `fraction at ${offset}`);
    assert.equal(
      mayHoldInexactInteger(`${pad}${fraction}`),
      false,
      `fraction at the end, ${offset}`,
    );
    // `1.2345678901234567e19` is an integer beyond 2^53.
    assert.equal(
      mayHoldInexactInteger(`${pad}1.${"2".repeat(16)}e19${pad}`),
      true,
      `e at ${offset}`,
    );
    assert.equal(
      mayHoldInexactInteger(`${pad}1.${"2".repeat(16)}E19${pad}`),
      true,
      `E at ${offset}`,
    );
    // A long integer part before a long fraction.
    assert.equal(mayHoldInexactInteger(`${pad}${"9".repeat(17)}.${"1".repeat(16)}`), true);
  }
  // Parsed exact where it matters: the integer beyond 2^53 written with an exponent.
  const parsed = parseJsonExact(`{"f":0.2857142857142857,"e":1.2345678901234567e19}`);
  assert.equal(JSON.stringify(parsed), `{"f":0.2857142857142857,"e":1.2345678901234567e19}`);
});

Deno.test("issue 15 silent data: a long integer where an object belongs is named as a number, not read as an object", async () => {
  const engine = createEngine(model(), {
    fetch: () =>
      Promise.resolve(
        new Response(`{"data":{"things":[12345678901234567891]}}`, {
          headers: { "content-type": "application/json" },
        }),
      ),
  });
  const prepared = prepare(engine, { query: "{ things { n } }" });
  assert.ok(prepared.ok);
  const result = await execute(engine, prepared.operation);
  assert.deepEqual(result.data, { things: [null] });
  assert.equal(result.errors?.length, 1);
  assert.match(result.errors![0]!.message, /object/);
  assert.match(JSON.stringify(result.errors), /a number/);
});

Deno.test("issue 15 silent data: a client's integers beyond 2^53 reach the subgraph exact (ID as its digits, a Long as the number, a Float rounded)", async () => {
  const sent: string[] = [];
  const state = await buildState({
    config: parseConfig({}),
    log: silentLogger,
    supergraphSdl: supergraphSdl(),
    operationFiles: [],
    traceKeyPem: null,
    fetch: async (request) => {
      sent.push(await request.text());
      return Response.json({ data: { thing: { n: 1 } } });
    },
  });
  const handle = createHandler(() => state);
  const query =
    "query($id: ID!, $n: Long, $f: Float, $filter: Filter) { thing(id: $id, n: $n, f: $f, filter: $filter) { n } }";
  const variables =
    `{"id":12345678901234567891,"n":9007199254740993,"f":12345678901234567891,"filter":{"ids":[98765432109876543211,"x"],"n":-9007199254740993}}`;
  const post = await handle(
    new Request("http://router.test/graphql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"query":${JSON.stringify(query)},"variables":${variables}}`,
    }),
  );
  assert.equal(post.status, 200, await post.clone().text());
  await post.body?.cancel();
  const get = await handle(
    new Request(
      `http://router.test/graphql?query=${encodeURIComponent(query)}&variables=${
        encodeURIComponent(variables)
      }`,
      { headers: { accept: "application/json", "graphql-preflight": "1" } },
    ),
  );
  assert.equal(get.status, 200, await get.clone().text());
  await get.body?.cancel();
  assert.equal(sent.length, 2);
  for (const body of sent) {
    const at = body.indexOf('"variables":');
    assert.equal(
      body.slice(at),
      `"variables":{"f":12345678901234567000,"filter":{"ids":["98765432109876543211","x"],"n":-9007199254740993},"id":"12345678901234567891","n":9007199254740993}}`,
    );
  }
});
