/**
 * Issue 18: the authorization stage's cost. `accessSignature` runs on every
 * request (plan cache key); `filterOperation` once per plan-cache miss.
 * Run: `deno bench -A bench/field_access_bench.ts`.
 *
 * @module
 */
import { parse } from "graphql";
import { touchedAccessKeys } from "../lib/auth/mod.ts";
import { accessSignature, filterOperation } from "../lib/engine/prepare/field_access.ts";
import { normalizeOperation } from "../lib/engine/prepare/normalize.ts";
import { buildSupergraph } from "../lib/supergraph/mod.ts";

const sdl = await Deno.readTextFile(new URL("../schema/supergraph.graphql", import.meta.url));
const model = buildSupergraph(sdl);
const query = await Deno.readTextFile(
  new URL("../operations/GetUserAccount.graphql", import.meta.url),
);
const document = parse(query);
const operation = normalizeOperation(model.apiSchema, document);
const keys = touchedAccessKeys(document, model.apiSchema, model.access);
const full = { scopeSet: new Set(["read:email", "read:orders", "read:billing"]) };
let _sink: unknown;

Deno.bench(
  "accessSignature: anonymous (per request)",
  { group: "signature", baseline: true },
  () => {
    _sink = accessSignature(keys, model.access, null);
  },
);
Deno.bench("accessSignature: all scopes (per request)", { group: "signature" }, () => {
  _sink = accessSignature(keys, model.access, full);
});
Deno.bench(
  "filterOperation: anonymous (per plan-cache miss)",
  { group: "filter", baseline: true },
  () => {
    _sink = filterOperation(operation, { access: model.access, identity: null });
  },
);
Deno.bench("filterOperation: all scopes (nothing removed)", { group: "filter" }, () => {
  _sink = filterOperation(operation, { access: model.access, identity: full });
});
Deno.bench("normalizeOperation: GetUserAccount (reference)", { group: "filter" }, () => {
  _sink = normalizeOperation(model.apiSchema, document);
});
