import assert from "node:assert/strict";
import { parse } from "graphql";
import { compose } from "./_planner_fixture.ts";
import { normalizeOperation } from "../../../lib/engine/prepare/normalize.ts";
import { queryGraphOf } from "../../../lib/engine/plan/graph.ts";
import { fieldCandidates } from "../../../lib/engine/plan/paths.ts";
import { createGroup, type Pos } from "../../../lib/engine/plan/_groups.ts";
import { REENTER_PARENT, REQUIRES_CHAIN } from "./_planner_graphs.ts";

function at(subgraph: string, type: string, up?: Pos["up"]): Pos {
  const group = createGroup(0, { subgraph, entity: false, path: [], root: 0 });
  const pos: Pos = {
    group,
    sel: group.sel,
    type,
    path: [],
    provided: null,
    parent: null,
    clientKeys: new Map(),
  };
  return up ? { ...pos, up } : pos;
}

Deno.test("issue 13 paths: a field of the position's subgraph is local, nothing else is tried", () => {
  const graph = queryGraphOf(compose(REQUIRES_CHAIN));
  const model = graph.field("Product", "name")!;
  const c = fieldCandidates(graph, at("catalog", "Product"), {
    model,
    name: "name",
    entering: [],
    existing: () => new Set(),
  });
  assert.deepEqual(c.map((x) => x.resolution.kind), ["local"]);
});

Deno.test("issue 13 paths: a field requiring fields in its own subgraph re-enters that subgraph", () => {
  const graph = queryGraphOf(compose(REQUIRES_CHAIN));
  const model = graph.field("Product", "score")!;
  const c = fieldCandidates(graph, at("catalog", "Product"), {
    model,
    name: "score",
    entering: [],
    existing: () => new Set(),
  });
  assert.deepEqual(c.map((x) => x.resolution), [{ kind: "entity", subgraph: "catalog" }]);
  assert.equal(c[0]!.cost.fetches, 2); // the entry, and `base` from pricing first
});

Deno.test("issue 13 paths: a move whose key is being planned is not offered (a key never needs itself)", () => {
  const graph = queryGraphOf(compose(REQUIRES_CHAIN));
  const model = graph.field("Product", "label")!;
  const options = { model, name: "label", existing: () => new Set<string>() };
  const free = fieldCandidates(graph, at("catalog", "Product"), { ...options, entering: [] });
  assert.deepEqual(free.map((x) => x.resolution), [{ kind: "entity", subgraph: "pricing" }]);
  const busy = fieldCandidates(graph, at("catalog", "Product"), {
    ...options,
    entering: ["Product@pricing"],
  });
  assert.deepEqual(busy, []);
});

Deno.test("issue 13 paths: a value-type field only another subgraph resolves re-enters the parent entity by key", () => {
  const model = compose(REENTER_PARENT);
  const graph = queryGraphOf(model);
  const op = normalizeOperation(model.apiSchema, parse(`{ user { profile { avatar } } }`));
  const user = op.selection.fields[0]!;
  const profile = user.selection!.fields[0]!;
  const root = at("a", "Query");
  const userPos: Pos = { ...at("a", "User", { pos: root, field: user, fragment: null }) };
  const profilePos = at("a", "Profile", { pos: userPos, field: profile, fragment: null });
  const c = fieldCandidates(graph, profilePos, {
    model: graph.field("Profile", "avatar")!,
    name: "avatar",
    entering: [],
    existing: () => new Set(),
  });
  assert.equal(c.length, 1);
  const r = c[0]!.resolution;
  assert.equal(r.kind, "up");
  if (r.kind !== "up") return;
  assert.equal(r.subgraph, "b");
  assert.equal(r.chain[0]!.type, "User");
  assert.equal(r.atRoot, false);
});
