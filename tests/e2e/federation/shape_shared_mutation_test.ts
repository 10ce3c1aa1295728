/**
 * Audit shape "mutations": a `@shareable` mutation field served by two
 * subgraphs (`openTab` in `ledger` and `notify`) must run in exactly one of
 * them, the one that serves its whole selection (`label` is only in
 * `notify`); root mutation fields of two subgraphs run one after another
 * in document order, each seeing the previous one's effect; a mutation's
 * result gets a `@requires` field of another subgraph. Mutations are not
 * compared with the monolith (its data is static); the differential test
 * walks the query root.
 *
 * @module
 */
import { equal } from "node:assert/strict";
import { type Area, type CaseRun, describeRequests, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const ITEMS = [{ id: "t1", title: "Tea", cost: 3 }, { id: "t2", title: "Cake", cost: 120 }];
const item = (id: unknown) => ITEMS.find((i) => i.id === id);
const pricey = (cost: number) => cost > 100;

/** Per-process state of the mutations (each run starts fresh). */
const tabs = new Map<string, { id: string; label: string }>();
const totals = new Map<string, number>();
const added: { id: string; title: string; cost: number }[] = [];

/** The monolith's data (queries only). */
export const root = {
  items: ITEMS.map((i) => ({ ...i, pricey: pricey(i.cost) })),
};

/** How many requests selected `openTab`. */
function openTabRuns(run: CaseRun): number {
  return run.requests.filter((r) => r.query.includes("openTab")).length;
}

/** The graph: `ledger` (items, totals, tabs), `notify` (tabs with labels, pricey items). */
export const area: Area = {
  name: "shape_shared_mutation",
  title: "audit mutations: a shareable mutation field runs once; mutation order and @requires",
  subgraphs: [
    {
      name: "ledger",
      typeDefs: fed2("@key", "@shareable") + `
        type Query {
          items: [Item!]!
        }
        type Mutation {
          addItem(title: String!, cost: Int!): Item!
          openTab(ref: String!): Tab! @shareable
          add(by: Int!, ref: String!): Int!
        }
        type Item @key(fields: "id") {
          id: ID!
          title: String!
          cost: Int!
        }
        type Tab @key(fields: "id") {
          id: ID!
        }
      `,
      resolvers: {
        Query: { items: () => ITEMS },
        Mutation: {
          addItem: (_: unknown, a: { title: string; cost: number }) => {
            const it = { id: `n${added.length + 1}`, title: a.title, cost: a.cost };
            added.push(it);
            return it;
          },
          openTab: (_: unknown, { ref }: { ref: string }) => {
            const tab = { id: `tab-${ref}`, label: `tab ${ref} (ledger)` };
            if (tabs.has(tab.id)) throw new Error(`tab ${tab.id} opened twice`);
            tabs.set(tab.id, tab);
            return tab;
          },
          add: (_: unknown, { by, ref }: { by: number; ref: string }) => {
            totals.set(ref, (totals.get(ref) ?? 0) + by);
            return totals.get(ref);
          },
        },
        Item: {
          __resolveReference: (ref: { id: string }) =>
            item(ref.id) ?? added.find((i) => i.id === ref.id) ?? null,
        },
        Tab: { __resolveReference: (ref: { id: string }) => tabs.get(ref.id) ?? null },
      },
    },
    {
      name: "notify",
      typeDefs: fed2("@key", "@shareable", "@external", "@requires") + `
        type Mutation {
          openTab(ref: String!): Tab! @shareable
          double(ref: String!): Int!
        }
        type Tab @key(fields: "id") {
          id: ID!
          label: String!
        }
        type Item @key(fields: "id") {
          id: ID!
          cost: Int! @external
          pricey: Boolean! @requires(fields: "cost")
        }
      `,
      resolvers: {
        Mutation: {
          openTab: (_: unknown, { ref }: { ref: string }) => {
            const tab = { id: `tab-${ref}`, label: `tab ${ref}` };
            if (tabs.has(tab.id)) throw new Error(`tab ${tab.id} opened twice`);
            tabs.set(tab.id, tab);
            return tab;
          },
          double: (_: unknown, { ref }: { ref: string }) => {
            totals.set(ref, (totals.get(ref) ?? 0) * 2);
            return totals.get(ref);
          },
        },
        Tab: { __resolveReference: (ref: { id: string }) => tabs.get(ref.id) ?? null },
        Item: {
          __resolveReference: (ref: { id: string; cost?: number }) => ref,
          pricey: (i: { cost?: number }) => {
            if (i.cost === undefined) throw new Error("cost was not provided");
            return pricey(i.cost);
          },
        },
      },
    },
  ],
  cases: [
    {
      name: "shareable mutation field runs once, in the subgraph serving its whole selection",
      query: `mutation { openTab(ref: "a") { id label } }`,
      monolith: false,
      check: (run) => equal(openTabRuns(run), 1, describeRequests(run)),
    },
    {
      name: "shareable mutation field with only its key selected runs once",
      query: `mutation { openTab(ref: "b") { id } }`,
      monolith: false,
      check: (run) => equal(openTabRuns(run), 1, describeRequests(run)),
    },
    {
      name: "root mutation fields of two subgraphs run in document order",
      query: `mutation {
        five: add(by: 5, ref: "r") ten: double(ref: "r") twelve: add(by: 2, ref: "r")
        last: double(ref: "r")
      }`,
      monolith: false,
    },
    {
      name: "a mutation's result with a @requires field of another subgraph",
      query: `mutation { addItem(title: "Pie", cost: 150) { id title cost pricey } }`,
      monolith: false,
    },
    {
      name: "query: @requires on a list",
      query: `{ items { title pricey } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root });
