/**
 * Demand control's cost rules, case by case, on GW's own fixtures
 * (`tests/unit/fixtures/demand_control/`: a lending library, a transit network, a music catalog).
 * Every expected figure is worked out by hand from the rules — the IBM GraphQL Cost Directives
 * specification, and Apollo Router's documented choices where it leaves room (a mutation's 10,
 * the planned estimate summed over the subgraph fetches) — with its arithmetic beside the case.
 * `estimated` scores the client's document on the supergraph (`@requires` selections counted),
 * `planned` sums the subgraph operations of GW's plan (what the router enforces), `actual` scores
 * an answer's data. The list size is 100 unless a case says otherwise.
 *
 * Over 600 lines: one case per rule, each with its arithmetic, reads best in one file.
 */
import assert from "node:assert/strict";
import { parse } from "graphql";
import { buildCostSchema, buildSupergraph } from "../../../lib/supergraph/mod.ts";
import {
  actualCost,
  CostError,
  estimateOperation,
  estimatePlan,
} from "../../../lib/engine/cost/mod.ts";
import { createEngine, prepare } from "../../../lib/engine/mod.ts";
import { planFor } from "../../../lib/engine/pipeline/prepare_plan.ts";
import { composeSupergraph } from "../../../lib/compose/mod.ts";

import type { QueryPlan } from "../../../lib/engine/plan/mod.ts";

type Vars = Record<string, unknown>;
const DIR = new URL("../fixtures/demand_control/", import.meta.url);
const read = (name: string) => Deno.readTextFileSync(new URL(name, DIR));

/** A supergraph composed by `gw-router compose` from subgraph SDL, one subgraph a file. */
function compose(subgraphs: Record<string, string>): string {
  const composed = composeSupergraph(
    Object.entries(subgraphs).map(([name, sdl]) => ({ name, url: `http://${name}.test`, sdl })),
  );
  if (!composed.ok) throw new Error(JSON.stringify(composed.errors));
  return composed.supergraphSdl;
}

function estimated(sdl: string, query: string, variables: Vars = {}, listSize = 100): number {
  const schema = buildCostSchema(parse(sdl));
  return estimateOperation(schema, parse(query), { variables, listSize, estimateRequires: true });
}

function planned(
  sdl: string,
  query: string,
  options: {
    variables?: Vars;
    subgraphListSize?: Record<string, number>;
    onPlan?: (plan: QueryPlan) => void;
  } = {},
): number {
  const variables = options.variables ?? {};
  const model = buildSupergraph(sdl);
  const engine = createEngine(model);
  const prepared = prepare(engine, { query });
  assert.ok(prepared.ok, JSON.stringify(prepared));
  // Planned as the router plans a request that accepts incremental delivery (`@defer` parts).
  const { plan } = planFor(engine, prepared.operation, variables, {
    identity: null,
    incremental: true,
  }).planned;
  if (options.onPlan) options.onPlan(plan);
  return estimatePlan(model.cost, plan, {
    variables,
    listSize: 100,
    subgraphListSize: (name) => options.subgraphListSize?.[name],
  }).total;
}

function actual(sdl: string, query: string, data: Vars, variables: Vars = {}): number {
  return actualCost(buildCostSchema(parse(sdl)), parse(query), { data, variables });
}

const many = <T>(n: number, item: (i: number) => T): T[] =>
  Array.from({ length: n }, (_, i) => item(i));

// ---------------------------------------------------------------------------------------------
// The library: default weights only.
const LIBRARY = read("library.graphql");

Deno.test("default weights: scalars cost 0, their arguments too", () => {
  // visitorCount 0 + branchName 0 + its ID argument 0 = 0
  assert.equal(estimated(LIBRARY, 'query Counts { visitorCount branchName(id: "b1") }'), 0);
});
Deno.test("default weights: a mutation's root costs 10, its object 1", () => {
  // 10 (mutation) + placeHold's Hold 1 + id, position 0 + scalar arguments 0 = 11
  const mutation = 'mutation { placeHold(item: "i1", patron: "p1") { id position } }';
  assert.equal(estimated(LIBRARY, mutation), 11);
});
Deno.test("default weights: an object costs 1, an object inside it 1 more", () => {
  // branch 1 + name 0 + address 1 + city 0 = 2
  assert.equal(estimated(LIBRARY, '{ branch(id: "b1") { name address { city } } }'), 2);
});
Deno.test("default weights: an interface costs 1", () => {
  // newestArrival (Holding) 1 + title, year 0 = 1
  assert.equal(estimated(LIBRARY, "{ newestArrival { title year } }"), 1);
});
Deno.test("default weights: a union costs 1; scalar fragments on its members 0", () => {
  // lookup (SearchHit) 1 + three fragments of scalars 0 = 1
  const query =
    '{ lookup(code: "x") { ... on Book { title } ... on Disc { minutes } ... on Person { name } } }';
  assert.equal(estimated(LIBRARY, query), 1);
});
Deno.test("lists: an unsized list of objects costs list_size times its item", () => {
  // branches: 100 × (Branch 1 + name 0) = 100; with list_size 7: 7 × 1 = 7
  assert.equal(estimated(LIBRARY, "{ branches { name } }"), 100);
  assert.equal(estimated(LIBRARY, "{ branches { name } }", {}, 7), 7);
});
Deno.test("lists: a list of scalars costs 0", () => {
  // openingHours: 100 × String 0 = 0
  assert.equal(estimated(LIBRARY, '{ openingHours(branch: "b1") }'), 0);
});
Deno.test("lists: nested lists multiply", () => {
  // branches 100 × (1 + shelves 100 × (1 + items 100 × 1)) = 100 × (1 + 100 × 101) = 1010100
  const query = "{ branches { shelves { items { title } } } }";
  assert.equal(estimated(LIBRARY, query), 1_010_100);
  // with list_size 3: 3 × (1 + 3 × (1 + 3 × 1)) = 3 × 13 = 39
  assert.equal(estimated(LIBRARY, query, {}, 3), 39);
});
Deno.test("arguments: an input object costs 1, each nested one 1, scalars 0", () => {
  // filter 1 + years 1 (from, to 0) + authors: the list 0 + 3 PersonRef × 1 + text 0 = 5
  const query =
    '{ catalogueSize(filter: { years: { from: 1990, to: 2000 }, authors: [{ name: "A" }, { name: "B" }, { name: "C" }], text: "sea" }) }';
  assert.equal(estimated(LIBRARY, query), 5);
});
Deno.test("arguments: a null argument costs 0", () => {
  assert.equal(estimated(LIBRARY, "{ catalogueSize(filter: null) }"), 0);
});
Deno.test("arguments count once per field: estimate 103, actual 5 on two holdings", () => {
  const query =
    'query Recent { catalogue(filter: { years: { from: 1990 }, authors: [{ name: "Le Guin" }] }) { title year } }';
  // catalogue 100 × Holding 1 = 100, + filter 1 + years 1 + one PersonRef 1 = 103
  assert.equal(estimated(LIBRARY, query), 103);
  // two holdings × 1 + the same arguments 3 (once, not per item) = 5
  const data = { catalogue: [{ title: "A", year: 1991 }, { title: "B", year: 1999 }] };
  assert.equal(actual(LIBRARY, query, data), 5);
});
Deno.test("arguments: an input object given by a variable is scored from its value", () => {
  // as above, the filter from $f: 100 + (1 + years 1 + one PersonRef 1) = 103
  const query = "query Recent($f: CatalogueFilter) { catalogue(filter: $f) { title } }";
  const variables = { f: { years: { from: 1990 }, authors: [{ name: "Le Guin" }] } };
  assert.equal(estimated(LIBRARY, query, variables), 103);
});
Deno.test("@skip(if: true) drops a field, literal or variable", () => {
  // visitorCount 0 + branches skipped 0 = 0; with $hide false: branches 100 × 1 = 100
  assert.equal(estimated(LIBRARY, "{ visitorCount branches @skip(if: true) { name } }"), 0);
  const query = "query Q($hide: Boolean!) { branches @skip(if: $hide) { name } }";
  assert.equal(estimated(LIBRARY, query, { hide: true }), 0);
  assert.equal(estimated(LIBRARY, query, { hide: false }), 100);
});
Deno.test("@include(if: false) drops a field, literal or variable", () => {
  // visitorCount 0 + branches excluded 0 = 0; with $show true: 100 × 1 = 100
  assert.equal(estimated(LIBRARY, "{ visitorCount branches @include(if: false) { name } }"), 0);
  const query = "query Q($show: Boolean!) { branches @include(if: $show) { name } }";
  assert.equal(estimated(LIBRARY, query, { show: false }), 0);
  assert.equal(estimated(LIBRARY, query, { show: true }), 100);
});
Deno.test("fragments narrowing and widening: estimated and planned 105", () => {
  const query = `fragment AsBook on Book { year author { name } }
fragment Titled on Holding { title }
{
  newestArrival { title ...AsBook }
  lookup(code: "x") { ...AsBook ... on Person { name } ... on Disc { ...Titled minutes } }
  patron { loans { ...Titled } }
}`;
  // newestArrival 1 + AsBook (author 1) = 2
  // lookup 1 + AsBook (author 1) + Person 0 + Disc (Titled 0, minutes 0) = 2
  // patron 1 + loans 100 × (Book 1 + Titled 0) = 101;  2 + 2 + 101 = 105
  assert.equal(estimated(LIBRARY, query), 105);
  const link = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.9")';
  // One subgraph: its single fetch is the same document.
  assert.equal(planned(compose({ library: `${link}\n${LIBRARY}` }), query), 105);
});
Deno.test("actual cost: aliases are read by their response keys", () => {
  const query = "{ near: branches { name } far: branches { name } }";
  // estimate: two lists of 100 × 1 = 200; actual: 2 branches + 1 branch = 3
  assert.equal(estimated(LIBRARY, query), 200);
  const data = { near: [{ name: "North" }, { name: "Quay" }], far: [{ name: "Hill" }] };
  assert.equal(actual(LIBRARY, query, data), 3);
});
Deno.test("actual cost: a null object costs 0, a list counts its items", () => {
  // branch null 0 + branches 2 × (1 + address 1) = 4
  const query = '{ branch(id: "x") { name } branches { address { city } } }';
  const data = { branch: null, branches: [{ address: { city: "A" } }, { address: { city: "B" } }] };
  assert.equal(actual(LIBRARY, query, data), 4);
});

// ---------------------------------------------------------------------------------------------
// The transit network: two subgraphs, entities and a @requires.
const TRANSIT = compose({
  timetable: read("transit_timetable.graphql"),
  agencies: read("transit_agencies.graphql"),
});
const OPERATORS = many(3, (i) => ({ id: `o${i}`, name: `Operator ${i}` }));

Deno.test("federated, one subgraph: estimate and planned 100, actual 3", () => {
  const query = "query Agencies { operators { id name } }";
  // operators 100 × Operator 1 = 100; one fetch to agencies, the same 100; three answered: 3
  assert.equal(estimated(TRANSIT, query), 100);
  assert.equal(planned(TRANSIT, query), 100);
  assert.equal(actual(TRANSIT, query, { operators: OPERATORS }), 3);
});
Deno.test("federated @requires: estimate 20200, planned 20400, actual 8", () => {
  const query = "{ trips { headsign stops { zone } fare } }";
  // estimate: trips 100 × (Trip 1 + stops 100 × 1 + fare 0
  //   + its @requires "operator { depots { town } }": operator 1 + depots 100 × 1) = 100 × 202
  assert.equal(estimated(TRANSIT, query), 20200);
  // planned: timetable { trips { stops operator } } 100 × (1 + 100 + 1) = 10200
  //   + agencies _entities 100 × (Operator { depots 100 × 1 } 1 + 100) = 10100
  //   + timetable _entities 100 × (Trip { fare 0 } 1) = 100;  10200 + 10100 + 100 = 20400
  assert.equal(planned(TRANSIT, query), 20400);
  // two trips with three stops each: 2 × (1 + 3 × 1) = 8 (fare a scalar: 0)
  const trip = (i: number) => ({
    headsign: `H${i}`,
    stops: many(3, (z) => ({ zone: z })),
    fare: 2.5,
  });
  assert.equal(actual(TRANSIT, query, { trips: many(2, trip) }), 8);
});

const TRIPS_WITH_OPERATORS = {
  trips: many(3, (i) => ({ headsign: `H${i}`, operator: OPERATORS[i % 2] })),
  operators: OPERATORS.slice(0, 2),
};
Deno.test("federated named fragments: estimate 300, planned 400, actual 8", () => {
  const query = `fragment Who on Operator { id name }
fragment Run on Trip { operator { ...Who } }
{ trips { ...Run headsign } operators { ...Who } }`;
  // estimate: trips 100 × (1 + operator 1) = 200 + operators 100 × 1 = 100;  300
  assert.equal(estimated(TRANSIT, query), 300);
  // planned: timetable trips 100 × (1 + 1) = 200 + agencies operators 100
  //   + agencies _entities for the operators' names 100 × 1 = 100;  400
  assert.equal(planned(TRANSIT, query), 400);
  // three trips × (1 + operator 1) = 6 + two operators = 8
  assert.equal(actual(TRANSIT, query, TRIPS_WITH_OPERATORS), 8);
});
Deno.test("federated inline fragments: the same figures, 300, 400 and 8", () => {
  const query = `{
  trips { operator { ... on Operator { id name } } headsign }
  operators { ... on Operator { id name } }
}`;
  assert.equal(estimated(TRANSIT, query), 300);
  assert.equal(planned(TRANSIT, query), 400);
  assert.equal(actual(TRANSIT, query, TRIPS_WITH_OPERATORS), 8);
});
Deno.test("federated @defer: the deferred part counts; estimate 10200, planned 10400, actual 2", () => {
  const query = "{ trips { headsign ... @defer { fare } } }";
  // estimate: 100 × (Trip 1 + fare's @requires: operator 1 + depots 100 × 1) = 100 × 102
  assert.equal(estimated(TRANSIT, query), 10200);
  // planned: the primary part, timetable trips 100 × (1 + operator 1) = 200, and the deferred
  //   part: agencies depots 100 × (1 + 100 × 1) = 10100 + timetable fare 100 × 1 = 100;  10400
  let kind = "";
  assert.equal(planned(TRANSIT, query, { onPlan: (plan) => kind = plan.node?.kind ?? "" }), 10400);
  assert.equal(kind, "Defer", "the plan has a deferred part");
  // the primary answer: two trips, 2 × 1 = 2
  assert.equal(actual(TRANSIT, query, { trips: many(2, (i) => ({ headsign: `H${i}` })) }), 2);
});
Deno.test("list_size is adjustable, also per subgraph", () => {
  const query = "{ trips { headsign ... @defer { fare } } }";
  // list_size 4: 4 × (1 + operator 1 + depots 4 × 1) = 4 × 6 = 24
  assert.equal(estimated(TRANSIT, query, {}, 4), 24);
  // agencies' list_size 2, the rest 100: timetable 100 × (1 + 1) = 200
  //   + agencies _entities 2 × (1 + depots 2 × 1) = 6 + timetable fare 100 × 1 = 100;  306
  assert.equal(planned(TRANSIT, query, { subgraphListSize: { agencies: 2 } }), 306);
});
Deno.test("__typename costs nothing: estimate 100, actual 3", () => {
  const query = "query Agencies { operators { __typename id name } }";
  assert.equal(estimated(TRANSIT, query), 100);
  const data = { operators: OPERATORS.map((o) => ({ __typename: "Operator", ...o })) };
  assert.equal(actual(TRANSIT, query, data), 3);
});

// ---------------------------------------------------------------------------------------------
// The music catalog: @cost weights (catalog) and composable @listSize (charts).
const MUSIC = compose({
  catalog: read("music_catalog.graphql"),
  charts: read("music_charts.graphql"),
});
const COST_LINK = '@link(url: "https://specs.apollo.dev/cost/v0.1", import: ["@listSize"])';
assert.ok(MUSIC.includes(COST_LINK), "compose links the cost spec as expected");
/** The same supergraph with `@cost` and `@listSize` imported under other names. */
const MUSIC_IMPORTED_AS = MUSIC
  .replaceAll(/@cost\b/g, "@price").replaceAll(/@listSize\b/g, "@bound")
  .replace(
    '@link(url: "https://specs.apollo.dev/cost/v0.1", import: ["@bound"])',
    '@link(url: "https://specs.apollo.dev/cost/v0.1", import: [{ name: "@cost", as: "@price" }, { name: "@listSize", as: "@bound" }])',
  );
/** The same supergraph with the whole spec linked `as: "demand"` (`@demand`, `@demand__listSize`). */
const MUSIC_LINKED_AS = MUSIC
  .replaceAll(/@cost\b/g, "@demand").replaceAll(/@listSize\b/g, "@demand__listSize")
  .replace(
    '@link(url: "https://specs.apollo.dev/cost/v0.1", import: ["@demand__listSize"])',
    '@link(url: "https://specs.apollo.dev/cost/v0.1", as: "demand")',
  );
for (const renamed of [MUSIC_IMPORTED_AS, MUSIC_LINKED_AS]) {
  assert.ok(!renamed.includes("@cost(") && !renamed.includes("@listSize("), "renamed throughout");
  assert.ok(!renamed.includes('import: ["@'), "the link is rewritten");
}

const WEIGHTED = `fragment Rows on ChartPage { entries { title } }
{
  royalties
  streams(region: "EU")
  mood
  licenceCheck(terms: { territory: "NO", years: 2 })
  masterHash
  remaster { id }
  genres
  chart(top: 8) { ...Rows }
}`;
const WEIGHTED_ANSWER = {
  royalties: 1200,
  streams: 88,
  mood: "CALM",
  licenceCheck: true,
  masterHash: "ab12",
  remaster: { id: "s1" },
  genres: ["jazz", "folk", "dub", "ska"],
  chart: { entries: many(5, (i) => ({ title: `T${i}` })) },
};
// royalties @cost 7 + streams (Int 0 + region @cost 4) + mood (enum Mood @cost 12)
// + licenceCheck (Boolean 0 + terms 1 + territory @cost 6 + years 0) + masterHash (scalar
// Fingerprint @cost 25) + remaster (StudioSession @cost 35 in place of 1) + genres (300 × 0)
// = 7 + 4 + 12 + 7 + 25 + 35 + 0 = 90, plus chart:
const WEIGHTS = 90;

for (
  const [name, sdl] of [
    ["@cost and @listSize", MUSIC],
    ["renamed by import as:", MUSIC_IMPORTED_AS],
    ["renamed by link as:", MUSIC_LINKED_AS],
  ] as const
) {
  Deno.test(`custom weights (${name}): estimate and planned 99, actual 96`, () => {
    // chart (not a list) 1 + entries sized by top: 8 × (Track 1) = 9;  90 + 9 = 99
    assert.equal(estimated(sdl, WEIGHTED), WEIGHTS + 9);
    // two parallel fetches: catalog 90 + charts 9
    assert.equal(planned(sdl, WEIGHTED), WEIGHTS + 9);
    // the weights again (a scalar's @cost counts once it is answered), genres 4 × 0,
    // chart 1 + five entries × 1 = 6;  90 + 6 = 96
    assert.equal(actual(sdl, WEIGHTED, WEIGHTED_ANSWER), WEIGHTS + 6);
  });
}
Deno.test("a slicing argument's default sizes the list: estimate and planned 111, actual 96", () => {
  const query = WEIGHTED.replace("chart(top: 8)", "chart");
  // chart 1 + entries sized by top's default 20: 20 × 1 = 21;  90 + 21 = 111
  assert.equal(estimated(MUSIC, query), WEIGHTS + 21);
  assert.equal(planned(MUSIC, query), WEIGHTS + 21);
  assert.equal(actual(MUSIC, query, WEIGHTED_ANSWER), WEIGHTS + 6);
});
Deno.test("variables: a weighted input and a slicing argument from variables, 99, 99 and 96", () => {
  const query = WEIGHTED
    .replace("{\n  royalties", "query Weighted($terms: LicenceTerms, $top: Int) {\n  royalties")
    .replace('licenceCheck(terms: { territory: "NO", years: 2 })', "licenceCheck(terms: $terms)")
    .replace("chart(top: 8)", "chart(top: $top)");
  const variables = { terms: { territory: "NO", years: 2 }, top: 8 };
  // the same values as the literal document: 90 + 9 = 99; actual 90 + 6 = 96
  assert.equal(estimated(MUSIC, query, variables), WEIGHTS + 9);
  assert.equal(planned(MUSIC, query, { variables }), WEIGHTS + 9);
  assert.equal(actual(MUSIC, query, WEIGHTED_ANSWER, variables), WEIGHTS + 6);
});
Deno.test("actual cost: a null keeps its field's @cost (the field was resolved), a plain null 0", () => {
  // remaster null: StudioSession's @cost 35; royalties null: its @cost 7; mood null: Mood's 12
  const query = "{ remaster { id } royalties mood }";
  assert.equal(actual(MUSIC, query, { remaster: null, royalties: null, mood: null }), 35 + 7 + 12);
  // a list of nulls: each item its type's weight (Track has none: 0)
  assert.equal(actual(MUSIC, "{ recent(first: 2) { title } }", { recent: [null, null] }), 0);
});
Deno.test("requireOneSlicingArgument (default true): one is used; none or two are refused", () => {
  // recent(first: 3): 3 × Track 1 = 3
  assert.equal(estimated(MUSIC, "{ recent(first: 3) { title } }"), 3);
  const refused = (query: string, found: number) =>
    assert.throws(
      () => estimated(MUSIC, query),
      (e: unknown) =>
        e instanceof CostError && e.code === "COST_QUERY_PARSE_FAILURE" &&
        e.message.includes(`gives ${found}`),
    );
  refused("{ recent { title } }", 0);
  refused("{ recent(first: 3, last: 7) { title } }", 2);
});
Deno.test("requireOneSlicingArgument: false: the largest slicing argument, else list_size", () => {
  // recentEither(first: 3, last: 7) and (first: 7, last: 3): max(3, 7) = 7 × 1 = 7
  assert.equal(estimated(MUSIC, "{ recentEither(first: 3, last: 7) { title } }"), 7);
  assert.equal(estimated(MUSIC, "{ recentEither(first: 7, last: 3) { title } }"), 7);
  // none: no assumedSize, so list_size, 100 × 1
  assert.equal(estimated(MUSIC, "{ recentEither { title } }"), 100);
});
Deno.test("sizedFields: a page's list takes the slicing argument, else list_size", () => {
  // playlist (not a list) 1 + name 0 + tracks 9 × 1 = 10
  assert.equal(estimated(MUSIC, "{ playlist(limit: 9) { name tracks { title } } }"), 10);
  // no limit and no assumedSize: tracks 100 × 1;  1 + 100 = 101
  assert.equal(estimated(MUSIC, "{ playlist { tracks { title } } }"), 101);
});
Deno.test("a custom JSON scalar's object value in a variable costs as a scalar", () => {
  const sdl = `scalar Metadata
input TagInput { payload: Metadata }
type Query { tag(input: TagInput): String }`;
  const query = "query Tag($m: Metadata) { tag(input: { payload: $m }) }";
  // String 0 + input 1 + payload (a scalar, whatever its JSON holds) 0 = 1
  const variables = { m: { "dotted.key": { inner: [1, 2] }, empty: null } };
  assert.equal(estimated(sdl, query, variables), 1);
});
Deno.test("a subscription is scored like a query: estimated and planned 1", () => {
  const sdl = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.9")
type Query { stops: [String] }
type Subscription { arrivals(stop: ID!): Arrival }
type Arrival { line: String minutes: Int }`;
  const query = 'subscription Board { arrivals(stop: "s1") { line minutes } }';
  // no root cost for a subscription; Arrival 1 + scalars 0 = 1
  const supergraph = compose({ departures: sdl });
  assert.equal(estimated(supergraph, query), 1);
  assert.equal(planned(supergraph, query), 1);
});

// ---------------------------------------------------------------------------------------------
// List sizes composition refuses but a router reads (plain SDL): a list's length as the size,
// paths into input objects, sizedFields paths into nested types.
const LISTS = read("music_lists.graphql");
const LIST_CASES: readonly (readonly [string, string, Vars, number])[] = [
  // a list argument's length is the size: 4 isrcs × Track 1 = 4
  ["literal list of 4", '{ tracksByIsrc(isrcs: ["a", "b", "c", "d"]) { title } }', {}, 4],
  ["empty literal list", "{ tracksByIsrc(isrcs: []) { title } }", {}, 0],
  // six ids in $ids: 6 × 1 = 6
  [
    "variable list of 6",
    "query Q($ids: [ID!]!) { tracksByIsrc(isrcs: $ids) { title } }",
    { ids: many(6, String) },
    6,
  ],
  [
    "empty variable list",
    "query Q($ids: [ID!]!) { tracksByIsrc(isrcs: $ids) { title } }",
    { ids: [] },
    0,
  ],
  // no size given: assumedSize 40 × 1 = 40
  [
    "null variable: assumedSize",
    "query Q($ids: [ID!]) { tracksByIsrcOrSample(isrcs: $ids) { title } }",
    { ids: null },
    40,
  ],
  [
    "unset variable: assumedSize",
    "query Q($ids: [ID!]) { tracksByIsrcOrSample(isrcs: $ids) { title } }",
    {},
    40,
  ],
  ["one id beats assumedSize", '{ tracksByIsrcOrSample(isrcs: ["x"]) { title } }', {}, 1],
  // query.window.size 12: 12 × 1 + arguments (query 1 + window 1 + size 0) = 14
  ["nested path, literal", "{ browse(query: { window: { size: 12 } }) { title } }", {}, 14],
  // 3 × 1 + (query 1 + window 1; cursor, genre 0) = 5
  [
    "nested path among other fields",
    '{ browse(query: { window: { size: 3, cursor: "c9" }, genre: "jazz" }) { title } }',
    {},
    5,
  ],
  // from $q: 9 × 1 + (1 + 1) = 11, and 4 × 1 + 2 = 6
  [
    "nested path, variable",
    "query Q($q: BrowseQuery!) { browse(query: $q) { title } }",
    { q: { window: { size: 9 }, genre: "jazz" } },
    11,
  ],
  [
    "nested path, variable with the size only",
    "query Q($q: BrowseQuery!) { browse(query: $q) { title } }",
    { q: { window: { size: 4 } } },
    6,
  ],
  // the path ends early: assumedSize 30 × 1 + what the input holds (2, 1, 0)
  [
    "nested path without size: assumedSize",
    "query Q($q: BrowseQuery) { browseOrSample(query: $q) { title } }",
    { q: { window: {} } },
    32,
  ],
  [
    "nested path without window: assumedSize",
    "query Q($q: BrowseQuery) { browseOrSample(query: $q) { title } }",
    { q: {} },
    31,
  ],
  [
    "null input: assumedSize",
    "query Q($q: BrowseQuery) { browseOrSample(query: $q) { title } }",
    { q: null },
    30,
  ],
  // filter.era.decade.span.limit 15: 15 × 1 + four input objects × 1 = 19; from a variable 11 + 4
  [
    "four-level path, literal",
    "{ archive(filter: { era: { decade: { span: { limit: 15 } } } }) { title } }",
    {},
    19,
  ],
  [
    "four-level path, variable",
    "query Q($f: ArchiveFilter!) { archive(filter: $f) { title } }",
    { f: { era: { decade: { span: { limit: 11 } } } } },
    15,
  ],
  // station 1 + current 1 + its tracks sized by limit: 5 × 1 = 7
  ["sizedFields path", "{ station(limit: 5) { current { tracks { title } } } }", {}, 7],
  [
    "sizedFields path, variable",
    "query Q($n: Int) { station(limit: $n) { current { tracks { title } } } }",
    { n: 2 },
    4, // 1 + 1 + 2
  ],
  // limit's default 6: 1 + 1 + 6 = 8
  ["sizedFields path, default", "{ station { current { tracks { title } } } }", {}, 8],
  ["sized list not selected", "{ station(limit: 50) { listeners } }", {}, 1],
  ["intermediate type only", "{ station(limit: 50) { current { name } } }", {}, 2],
  // station's own tracks are not in its sizedFields: 100 × 1; 1 + 100 + (1 + 5) = 107
  [
    "a sibling list is not sized by the path",
    "{ station(limit: 5) { tracks { title } current { tracks { title } } } }",
    {},
    107,
  ],
  // both sized by limit 3: 1 + tracks 3 + (current 1 + tracks 3) = 8
  [
    "one level and a path together",
    "{ stationMixed(limit: 3) { tracks { title } current { tracks { title } } } }",
    {},
    8,
  ],
];
for (const [name, query, variables, expected] of LIST_CASES) {
  Deno.test(`list sizes: ${name}: ${expected}`, () => {
    assert.equal(estimated(LISTS, query, variables), expected);
  });
}
Deno.test("requireOneSlicingArgument: a list variable left unset gives none and is refused", () => {
  assert.throws(
    () => estimated(LISTS, "query Q($ids: [ID!]!) { tracksByIsrc(isrcs: $ids) { title } }"),
    (e: unknown) =>
      e instanceof CostError && e.code === "COST_QUERY_PARSE_FAILURE" && /gives 0/.test(e.message),
  );
});
Deno.test("a sizedFields path naming two fields at one level fails at schema load", () => {
  const sdl = LISTS.replace(
    'sizedFields: ["current { tracks }"]',
    'sizedFields: ["current { tracks name }"]',
  );
  assert.notEqual(sdl, LISTS);
  assert.throws(() => buildCostSchema(parse(sdl)), /names 2 fields at one level/);
});

// ---------------------------------------------------------------------------------------------
// The examples of docs/demand-control.md, on the schema shown there.
const DOCS = Deno.readTextFileSync(new URL("../../../docs/demand-control.md", import.meta.url));
const DOCS_SDL = DOCS.match(/```graphql\n([\s\S]*?)```/)?.[1] ?? "";
const SHOP = compose({ shop: DOCS_SDL });
const DOCS_CASES: readonly (readonly [string, number])[] = [
  // products' default first 5: 5 × (Product 1 + price @cost 2) = 15
  ["{ products { name price } }", 15],
  // first 20: 20 × 1 = 20
  ["{ products(first: 20) { upc } }", 20],
  // productPage 1 + edges sized by first 3: 3 × (ProductEdge 1 + node 1) = 7
  ["{ productPage(first: 3) { edges { node { name } } } }", 7],
  // search's assumedSize 4: 4 × (SearchResult 1 + price 2) = 12
  ['{ search(text: "lamp") { ... on Product { price } ... on Category { name } } }', 12],
  // 10 (mutation) + restock's @cost 5 + name 0 = 15
  ['mutation { restock(upc: "1", amount: 4) { name } }', 15],
];
for (const [query, expected] of DOCS_CASES) {
  Deno.test(`docs/demand-control.md: ${query} costs ${expected}`, () => {
    assert.ok(DOCS.includes(`\`${query}\` costs ${expected}`), "the docs show this figure");
    assert.equal(estimated(SHOP, query), expected);
    assert.equal(planned(SHOP, query), expected);
  });
}

// ---------------------------------------------------------------------------------------------
Deno.test("gw-router compose keeps @cost and @listSize, and the model reads them", () => {
  const link =
    'extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@cost", "@listSize"])';
  const supergraph = compose({
    a: `${link}
type Query { items(first: Int = 10 @cost(weight: 2)): [Item!]! @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false) @cost(weight: 3) }
type Item @key(fields: "id") @cost(weight: 5) { id: ID! }`,
  });
  const model = buildSupergraph(supergraph);
  const items = model.cost.types.get("Query")?.fields.get("items");
  assert.equal(items?.weight, 3);
  assert.equal(items?.arguments.get("first")?.weight, 2);
  assert.deepEqual(items?.listSizes, [{
    assumedSize: null,
    slicingArguments: ["first"],
    sizedFields: null,
    requireOneSlicingArgument: false,
  }]);
  assert.equal(model.cost.types.get("Query")?.fields.get("_service"), undefined);
  // Item's own @cost stands for the field of its type that has none.
  const plain = estimateOperation(model.cost, parse("{ items(first: 2) { id } }"), {
    variables: {},
    listSize: 10,
  });
  // items' @cost 3 per item × 2 + the argument's @cost 2.
  assert.equal(plain, 2 * 3 + 2);
});

Deno.test("a subgraph operation's argument the supergraph hides (@fromContext) costs 0, not a failure", () => {
  const schema = buildCostSchema(parse("type Query { cart: Cart } type Cart { total: Int }"));
  const plan = {
    kind: "QueryPlan" as const,
    node: {
      kind: "Fetch" as const,
      serviceName: "a",
      variableUsages: [],
      operationKind: "query" as const,
      operation: "query($c:String){cart{total(currency:$c) __typename}}",
    },
  };
  assert.equal(estimatePlan(schema, plan, { variables: { c: "EUR" }, listSize: 10 }).total, 1);
  // The client's own (validated) document has no such argument: there it is an error.
  assert.throws(
    () =>
      estimateOperation(schema, parse('{ cart { total(currency: "EUR") } }'), {
        variables: {},
        listSize: 10,
      }),
    CostError,
  );
});

const TREE =
  `directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
type Query { nodes(first: Int): [Node] @listSize(slicingArguments: ["first"]) }
type Node { id: ID label(keys: [String]): String children(first: Int): [Node] @listSize(slicingArguments: ["first"]) }`;

Deno.test("a negative slicing argument sizes its list 0, so it cannot lower the estimate", () => {
  // a: 0 × 1 = 0 (not -1000); b: 5 × 1 = 5
  const query = "{ a: nodes(first: -1000) { id } b: nodes(first: 5) { id } }";
  assert.equal(estimated(TREE, query), 5);
  const variable = "query Q($n: Int) { a: nodes(first: $n) { id } b: nodes(first: 5) { id } }";
  assert.equal(estimated(TREE, variable, { n: -2147483648 }), 5);
});
Deno.test("a list sized 0 costs 0 even when its selection's estimate overflows to Infinity", () => {
  // 35 levels of 2147483647 overflow a number (2^31^35 > 2^1024); × 0 must stay 0, not NaN
  let deep = "id";
  for (let i = 0; i < 35; i++) deep = `children(first: 2147483647) { ${deep} }`;
  const query = `{ a: nodes(first: 0) { ${deep} } b: nodes(first: 5) { id } }`;
  assert.equal(estimated(TREE, query), 5);
  assert.equal(estimated(TREE, `{ nodes(first: 1) { ${deep} } }`), Infinity);
});
Deno.test("actual cost: a field's arguments are scored once, not once per object of a list", () => {
  // 1000 Nodes × 1 = 1000; label's [String] argument 0. Its variable is read once: a large list
  // variable on a field inside a long list answer would otherwise be walked per object.
  let reads = 0;
  const variables = new Proxy({ k: many(10_000, (i) => `k${i}`) }, {
    get(target, name) {
      if (name === "k") reads++;
      return Reflect.get(target, name);
    },
  });
  const data = { nodes: many(1000, (i) => ({ label: `n${i}` })) };
  const query = "query Q($k: [String]) { nodes(first: 1000) { label(keys: $k) } }";
  assert.equal(actual(TREE, query, data, variables), 1000);
  assert.equal(reads, 1);
});
