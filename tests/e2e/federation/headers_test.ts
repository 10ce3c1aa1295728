/**
 * Header propagation (DESIGN §4, Cosmo's shape): nothing is forwarded to
 * subgraphs unless a rule says so; `propagate` by name or pattern, with
 * `rename` and `default`; `set`; per-subgraph rules.
 *
 * The reference gateway has no header rules: it only confirms the data and
 * the "nothing forwarded by default" case.
 *
 * @module
 */
import { equal } from "node:assert/strict";
import {
  type Area,
  type CaseRun,
  describeRequests,
  fed2,
  registerArea,
  requestsTo,
} from "./_harness.ts";

const PRODUCTS = [{ id: "1", name: "Table" }, { id: "2", name: "Couch" }];
const QUERY = `{ products { name stock } }`;
const CLIENT = {
  "authorization": "Bearer abc",
  "x-tenant-id": "t1",
  "x-tenant-region": "eu",
  "x-user": "ada",
  "x-secret": "s3",
  "x-other": "nope",
};

/** The distinct values a subgraph received for a header over all its requests (at least one request). */
const received = (run: CaseRun, subgraph: string, header: string) => {
  const requests = requestsTo(run, subgraph);
  equal(requests.length > 0, true, `no request to ${subgraph}\n${describeRequests(run)}`);
  return [...new Set(requests.map((r) => r.headers.get(header)))];
};
const expectHeader = (run: CaseRun, subgraph: string, header: string, value: string | null) =>
  equal(
    JSON.stringify(received(run, subgraph, header)),
    JSON.stringify([value]),
    `${subgraph} got ${header}`,
  );

/** The graph: products (root) and inventory (entity fetch), so every rule is seen by two subgraphs. */
export const area: Area = {
  name: "headers",
  title: "header propagation",
  subgraphs: [
    {
      name: "products",
      typeDefs: fed2("@key") + `
        type Query {
          products: [Product!]!
        }
        type Product @key(fields: "id") {
          id: ID!
          name: String!
        }
      `,
      resolvers: { Query: { products: () => PRODUCTS } },
    },
    {
      name: "inventory",
      typeDefs: fed2("@key") + `
        type Product @key(fields: "id") {
          id: ID!
          stock: Int!
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (r: { id: string }) => r,
          stock: (p: { id: string }) => Number(p.id),
        },
      },
    },
  ],
  cases: [
    {
      name: "no rule: no client header is forwarded",
      query: QUERY,
      headers: CLIENT,
      check: (run) => {
        for (const subgraph of ["products", "inventory"]) {
          for (const header of Object.keys(CLIENT)) expectHeader(run, subgraph, header, null);
        }
      },
    },
    {
      name: "propagate named (case-insensitive) to every subgraph, nothing else",
      query: QUERY,
      headers: CLIENT,
      settings: { headers: { all: [{ op: "propagate", named: "Authorization" }] } },
      checkReference: false,
      check: (run) => {
        for (const subgraph of ["products", "inventory"]) {
          expectHeader(run, subgraph, "authorization", "Bearer abc");
          expectHeader(run, subgraph, "x-other", null);
          expectHeader(run, subgraph, "x-user", null);
        }
      },
    },
    {
      name: "propagate matching a regular expression",
      query: QUERY,
      headers: CLIENT,
      settings: { headers: { all: [{ op: "propagate", matching: "^X-Tenant-.*" }] } },
      checkReference: false,
      check: (run) => {
        for (const subgraph of ["products", "inventory"]) {
          expectHeader(run, subgraph, "x-tenant-id", "t1");
          expectHeader(run, subgraph, "x-tenant-region", "eu");
          expectHeader(run, subgraph, "x-other", null);
          expectHeader(run, subgraph, "authorization", null);
        }
      },
    },
    {
      name: "propagate named with rename",
      query: QUERY,
      headers: CLIENT,
      settings: {
        headers: { all: [{ op: "propagate", named: "x-user", rename: "x-subgraph-user" }] },
      },
      checkReference: false,
      check: (run) => {
        for (const subgraph of ["products", "inventory"]) {
          expectHeader(run, subgraph, "x-subgraph-user", "ada");
          expectHeader(run, subgraph, "x-user", null);
        }
      },
    },
    {
      name: "propagate named with a default when the client did not send it",
      query: QUERY,
      headers: CLIENT,
      settings: { headers: { all: [{ op: "propagate", named: "x-locale", default: "en" }] } },
      checkReference: false,
      check: (run) => {
        for (const subgraph of ["products", "inventory"]) {
          expectHeader(run, subgraph, "x-locale", "en");
        }
      },
    },
    {
      name: "propagate named with a default: the client's value wins",
      query: QUERY,
      headers: { ...CLIENT, "x-locale": "de" },
      settings: { headers: { all: [{ op: "propagate", named: "x-locale", default: "en" }] } },
      checkReference: false,
      check: (run) => {
        for (const subgraph of ["products", "inventory"]) {
          expectHeader(run, subgraph, "x-locale", "de");
        }
      },
    },
    {
      name: "set a fixed header",
      query: QUERY,
      headers: CLIENT,
      settings: { headers: { all: [{ op: "set", name: "x-router", value: "gw" }] } },
      checkReference: false,
      check: (run) => {
        for (const subgraph of ["products", "inventory"]) {
          expectHeader(run, subgraph, "x-router", "gw");
          expectHeader(run, subgraph, "authorization", null);
        }
      },
    },
    {
      name: "per-subgraph rules apply to that subgraph only, on top of the all rules",
      query: QUERY,
      headers: CLIENT,
      settings: {
        headers: {
          all: [{ op: "propagate", named: "x-tenant-id" }],
          subgraphs: {
            inventory: [
              { op: "propagate", named: "x-secret" },
              { op: "set", name: "x-only-inventory", value: "yes" },
            ],
          },
        },
      },
      checkReference: false,
      check: (run) => {
        expectHeader(run, "products", "x-tenant-id", "t1");
        expectHeader(run, "inventory", "x-tenant-id", "t1");
        expectHeader(run, "inventory", "x-secret", "s3");
        expectHeader(run, "inventory", "x-only-inventory", "yes");
        expectHeader(run, "products", "x-secret", null);
        expectHeader(run, "products", "x-only-inventory", null);
      },
    },
    {
      name: "propagate named with rename and default: the default goes out under the new name",
      query: QUERY,
      headers: CLIENT,
      settings: {
        headers: {
          all: [{ op: "propagate", named: "x-region", rename: "x-sub-region", default: "eu-1" }],
        },
      },
      checkReference: false,
      check: (run) => {
        for (const subgraph of ["products", "inventory"]) {
          expectHeader(run, subgraph, "x-sub-region", "eu-1");
          expectHeader(run, subgraph, "x-region", null);
        }
      },
    },
  ],
};

registerArea(area);
