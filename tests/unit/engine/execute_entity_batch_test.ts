import { deepEqual, equal } from "node:assert/strict";
import {
  BATCH_FAILED,
  composeEntityBatch,
  parseEntityOperation,
  partOfAnswer,
} from "../../../lib/engine/execute/entity_batch.ts";
import type { FetchStep } from "../../../lib/engine/plan/mod.ts";

const REPS = "$representations:[_Any!]!";

function step(operation: string, variableUsages: string[] = []): FetchStep {
  return {
    kind: "Fetch",
    index: 0,
    queryJson: JSON.stringify(operation),
    subgraph: "s",
    path: ["t"],
    representations: new Map(),
    sendTypename: new Map(),
    variableUsages,
    rewrites: [],
    node: { kind: "Fetch", serviceName: "s", variableUsages, operation, operationKind: "query" },
  };
}

Deno.test("entity batch: a printed entity operation is read into name, definitions and selection", () => {
  const parsed = parseEntityOperation(
    `query Q__s__1(${REPS},$a:[String]=["x,y","z"],$b:In={k:"),{"}){_entities(representations:$representations){...on T{f(a:$a,b:$b)}}}`,
  );
  equal(parsed?.name, "Q__s__1");
  deepEqual([...parsed!.definitions.keys()], ["a", "b"]);
  equal(parsed?.definitions.get("b"), `$b:In={k:"),{"}`);
  equal(parsed?.selection, "{...on T{f(a:$a,b:$b)}}");
  equal(
    parseEntityOperation(`query(${REPS}){_entities(representations:$representations){...on T{x}}}`)
      ?.name,
    undefined,
  );
});

Deno.test("entity batch: operations of another form are not batched", () => {
  equal(parseEntityOperation("query{topProducts{upc}}"), null);
  equal(
    parseEntityOperation(`query($other:[_Any!]!){_entities(representations:$other){...on T{x}}}`),
    null,
  );
  equal(
    parseEntityOperation(
      `mutation(${REPS}){_entities(representations:$representations){...on T{x}}}`,
    ),
    null,
  );
  equal(composeEntityBatch([step("query{a}"), step("query{b}")]), null);
});

Deno.test("entity batch: shared client variables are declared once; conflicting ones refuse the batch", () => {
  const op = (field: string, def: string) =>
    `query Q(${REPS},${def}){_entities(representations:$representations){...on T{${field}}}}`;
  const batch = composeEntityBatch([
    step(op("p(c:$c)", "$c:String!"), ["c"]),
    step(op("q(c:$c,d:$d)", "$c:String!,$d:Int"), ["c", "d"]),
  ]);
  equal(
    JSON.parse(batch!.queryJson),
    "query Q__batch($r0:[_Any!]!,$r1:[_Any!]!,$c:String!,$d:Int){_e0:_entities(representations:$r0){...on T{p(c:$c)}} _e1:_entities(representations:$r1){...on T{q(c:$c,d:$d)}}}",
  );
  deepEqual(batch!.variableUsages, ["c", "d"]);
  equal(composeEntityBatch([step(op("p", "$c:String!")), step(op("q", "$c:Int"))]), null);
});

Deno.test("entity batch: each part gets its own entities and errors, re-pathed to _entities", () => {
  const payload = {
    data: { _e0: [{ x: 1 }], _e1: [{ y: 2 }, null] },
    errors: [
      { message: "a", path: ["_e1", 1, "y"] },
      { message: "b" },
      { message: "c", path: ["_e0", 0] },
    ],
  };
  deepEqual(partOfAnswer(payload, 0), {
    data: { _entities: [{ x: 1 }] },
    errors: [{ message: "b" }, { message: "c", path: ["_entities", 0] }],
  });
  deepEqual(partOfAnswer(payload, 1), {
    data: { _entities: [{ y: 2 }, null] },
    errors: [{ message: "a", path: ["_entities", 1, "y"] }],
  });
});

Deno.test("entity batch: a null data nulls every part (each then reports it)", () => {
  const payload = { data: null, errors: [{ message: "down", path: ["_e1"] }] };
  deepEqual(partOfAnswer(payload, 0), { data: null, errors: [{ message: BATCH_FAILED }] });
  deepEqual(partOfAnswer(payload, 1), {
    data: null,
    errors: [{ message: "down", path: ["_entities"] }],
  });
  // A part the subgraph left out has no `_entities`: its merge reports a malformed answer.
  deepEqual(partOfAnswer({ data: { _e0: [] } }, 1), { data: {} });
});
