/**
 * Mutations: root mutation fields run one after another in document order,
 * across subgraphs (proved by a shared counter), with entity fields after.
 *
 * @module
 */
import { deepStrictEqual } from "node:assert/strict";
import { type Area, describeRequests, fed2, registerArea } from "./_harness.ts";

/** One counter shared by both subgraphs: each mutation returns the value it saw. */
const state = { counter: 0, log: [] as string[] };
const step = async (name: string, by: number, delayMs: number) => {
  const before = state.counter;
  // a slow first mutation would be overtaken if mutations ran in parallel
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  state.counter = before + by;
  state.log.push(name);
  return { id: String(state.counter), before, after: state.counter };
};

/** The graph: `a` and `b` both mutate the counter; `audit` adds a field to Step. */
export const area: Area = {
  name: "mutations",
  title: "mutations",
  subgraphs: [
    {
      name: "a",
      typeDefs: fed2("@key", "@shareable") + `
        type Query {
          counter: Int!
        }
        type Mutation {
          add(by: Int!): Step!
          reset: Int!
        }
        type Step @key(fields: "id") {
          id: ID!
          before: Int!
          after: Int!
        }
      `,
      resolvers: {
        Query: { counter: () => state.counter },
        Mutation: {
          add: (_: unknown, a: { by: number }) => step(`add${a.by}`, a.by, 40),
          reset: () => {
            state.counter = 0;
            state.log = [];
            return 0;
          },
        },
        Step: { __resolveReference: (r: { id: string }) => r },
      },
    },
    {
      name: "b",
      typeDefs: fed2("@key") + `
        type Mutation {
          double: Step2!
        }
        type Step2 {
          before: Int!
          after: Int!
        }
        type Step @key(fields: "id") {
          id: ID!
          label: String!
        }
      `,
      resolvers: {
        Mutation: {
          double: async () => {
            const before = state.counter;
            await new Promise((resolve) => setTimeout(resolve, 1));
            state.counter = before * 2;
            state.log.push("double");
            return { before, after: state.counter };
          },
        },
        Step: {
          __resolveReference: (r: { id: string }) => r,
          label: (s: { id: string }) => `step ${s.id}`,
        },
      },
    },
  ],
  cases: [
    {
      name: "root mutation fields run in document order across subgraphs",
      query: `mutation {
        reset
        one: add(by: 1) { before after }
        two: double { before after }
        three: add(by: 3) { before after }
        four: double { after }
      }`,
      check: (run) => {
        deepStrictEqual(state.log, ["add1", "double", "add3", "double"], describeRequests(run));
      },
    },
    {
      name: "mutation results joined with entity fields of another subgraph",
      query:
        `mutation { reset first: add(by: 5) { id after label } second: add(by: 2) { id label } }`,
    },
    {
      name: "unaliased mutation fields in one operation",
      query: `mutation { reset add(by: 7) { after } } `,
    },
    {
      name: "mutation with variables, __typename on the Mutation root and entity fields",
      query: `mutation M($by: Int!) { __typename reset add(by: $by) { __typename id label } }`,
      variables: { by: 4 },
    },
  ],
};

registerArea(area);
