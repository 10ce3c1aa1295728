/**
 * Audit shape "include skip": a field at the end of a `@requires` chain
 * (`badges.shown` ← `rating.premium` ← `catalog.cost`) under `@include` /
 * `@skip` with a variable and its default. When the condition drops the
 * field, neither subgraph of the chain may be asked (`guarded` fails if it
 * is ever resolved); when it keeps it, the whole chain runs. One engine
 * serves the operation with the default and with the opposite value (plan
 * cache).
 *
 * @module
 */
import { ok } from "node:assert/strict";
import { type Area, type CaseRun, describeRequests, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const ITEM = { id: "i1", cost: 699.99 };
const premiumOf = (cost: number) => cost > 500;

/** The monolith's data (`guarded` is never generated: it fails whenever it is resolved). */
export const root = {
  item: { ...ITEM, premium: premiumOf(ITEM.cost), shown: true, guarded: true },
};

/** Neither subgraph of the chain was asked. */
function chainNotAsked(run: CaseRun): void {
  ok(run.requests.every((r) => r.subgraph === "catalog"), describeRequests(run));
}
/** The whole chain ran. */
function chainAsked(run: CaseRun): void {
  ok(run.requests.some((r) => r.subgraph === "badges"), describeRequests(run));
  ok(run.requests.some((r) => r.subgraph === "rating"), describeRequests(run));
}

type Rep = { id: string; cost?: number; premium?: boolean };

/** The graph: `catalog` (root, cost), `rating` (premium), `badges` (fields requiring premium). */
export const area: Area = {
  name: "shape_conditional_requires",
  title: "audit include-skip: a requires chain under @include/@skip variables with defaults",
  subgraphs: [
    {
      name: "catalog",
      typeDefs: fed2("@key") + `
        type Query {
          item: Item
        }
        type Item @key(fields: "id") {
          id: ID!
          cost: Float!
        }
      `,
      resolvers: {
        Query: { item: () => ITEM },
        Item: { __resolveReference: (ref: Rep) => ref.id === ITEM.id ? ITEM : null },
      },
    },
    {
      name: "rating",
      typeDefs: fed2("@key", "@external", "@requires") + `
        type Item @key(fields: "id") {
          id: ID!
          cost: Float! @external
          premium: Boolean! @requires(fields: "cost")
        }
      `,
      resolvers: {
        Item: {
          __resolveReference: (ref: Rep) => ref,
          premium: (i: Rep) => {
            if (i.cost === undefined) throw new Error("cost is missing");
            return premiumOf(i.cost);
          },
        },
      },
    },
    {
      name: "badges",
      typeDefs: fed2("@key", "@external", "@requires") + `
        type Item @key(fields: "id") {
          id: ID!
          premium: Boolean! @external
          shown: Boolean! @requires(fields: "premium")
          guarded: Boolean! @requires(fields: "premium")
        }
      `,
      resolvers: {
        Item: {
          __resolveReference: (ref: Rep) => ref,
          shown: (i: Rep) => {
            if (typeof i.premium !== "boolean") throw new Error("premium is missing");
            return true;
          },
          guarded: () => {
            throw new Error("guarded must not be resolved");
          },
        },
      },
    },
  ],
  cases: [
    {
      name: "@include with a false default: the chain's subgraphs are not asked",
      query: `query ($on: Boolean = false) { item { cost guarded @include(if: $on) } }`,
      check: chainNotAsked,
    },
    {
      name: "@skip with a true default: the chain's subgraphs are not asked",
      query: `query ($off: Boolean = true) { item { cost guarded @skip(if: $off) } }`,
      check: chainNotAsked,
    },
    {
      name: "@include with a true default: the whole chain runs",
      query: `query ($on: Boolean = true) { item { cost shown @include(if: $on) } }`,
      check: chainAsked,
    },
    {
      name: "@skip with a false default: the whole chain runs",
      query: `query ($off: Boolean = false) { item { cost shown @skip(if: $off) } }`,
      check: chainAsked,
    },
    {
      name: "the same operation with the default overridden: the chain runs",
      query: `query ($on: Boolean = false) { item { cost shown @include(if: $on) } }`,
      variables: { on: true },
      check: chainAsked,
    },
    {
      name: "condition on a fragment around the chain's end, with its middle selected",
      query: `query ($on: Boolean = false) { item { premium ... @include(if: $on) { guarded } } }`,
      check: (run) => ok(run.requests.every((r) => r.subgraph !== "badges"), describeRequests(run)),
    },
  ],
};

registerArea(area);
registerDifferential({ area, root, generator: { exclude: ["Item.guarded"] } });
