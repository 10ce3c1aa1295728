import assert from "node:assert/strict";
import { BASE, edgeState, handlerOf } from "./_edge_fixture.ts";

const OPERATION = {
  path: "GetUser.graphql",
  text: "query GetUser($id: ID!) { user(id: $id) { id } }",
};

/** The subgraph answers on a later timer turn, after an overflowed timer would have fired. */
function later<T>(value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), 20));
}

async function handler() {
  return handlerOf(
    await edgeState({}, {
      operations: [OPERATION],
      answer: () => later({ data: { user: { id: "1" } } }),
    }),
  );
}

function call(body: string, headers: Record<string, string> = {}): Request {
  return new Request(`${BASE}/service.v1.GraphService/GetUser`, {
    method: "POST",
    headers: { "content-type": "application/json", "connect-protocol-version": "1", ...headers },
    body,
  });
}

Deno.test("issue 14: a Connect message with a duplicate key is invalid_argument naming the key", async () => {
  const handle = await handler();
  const response = await handle(call('{"id": "1", "id": "2"}'));
  assert.equal(response.status, 400);
  const body = await response.json();
  assert.equal(body.code, "invalid_argument");
  assert.match(body.message, /duplicate key "id" in \$/);
  const escaped = await handle(call('{"id": "1", "\\u0069d": "2"}'));
  assert.match((await escaped.json()).message, /duplicate key "id"/);
  const fine = await handle(call('{"id": "1"}'));
  assert.equal(fine.status, 200);
  assert.deepEqual(await fine.json(), { user: { id: "1" } });
});

Deno.test("issue 14: a Connect-Timeout-Ms above 2^31-1 is clamped, not an instant deadline_exceeded", async () => {
  const handle = await handler();
  for (const timeout of ["9999999999", "2147483648"]) {
    const response = await handle(call('{"id": "1"}', { "connect-timeout-ms": timeout }));
    assert.equal(response.status, 200, timeout);
    assert.deepEqual(await response.json(), { user: { id: "1" } });
  }
});

Deno.test("a Connect error quotes an unknown or duplicate key up to 100 characters, never whole", async () => {
  const handle = await handler();
  const key = "k".repeat(100_000);
  for (const body of [`{"${key}": 1}`, `{"${key}": 1, "${key}": 2}`]) {
    const response = await handle(call(body));
    assert.equal(response.status, 400);
    const text = await response.text();
    assert.match(text, /k{100}…/);
    assert.ok(text.length < 1000, `${text.length} characters answered`);
  }
});

Deno.test("Connect-Timeout-Ms: 0 is a deadline already passed: deadline_exceeded, and no subgraph is asked", async () => {
  let asked = 0;
  const handle = handlerOf(
    await edgeState({}, {
      operations: [OPERATION],
      answer: () => {
        asked++;
        return { data: { user: { id: "1" } } };
      },
    }),
  );
  const response = await handle(call('{"id": "1"}', { "connect-timeout-ms": "0" }));
  assert.equal(response.status, 504);
  assert.equal((await response.json()).code, "deadline_exceeded");
  assert.equal(asked, 0);
  const fine = await handle(call('{"id": "1"}', { "connect-timeout-ms": "1000" }));
  assert.equal(fine.status, 200);
  await fine.body?.cancel();
  assert.equal(asked, 1);
});
