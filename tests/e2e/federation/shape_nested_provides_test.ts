/**
 * Audit shape "nested provides": a root field's `@provides` reaches two
 * levels into a self-referencing entity list (`tags { id label children {
 * id label } }`). Inside the provided selection the providing subgraph
 * answers alone; beyond it (`children { children { … } }`) the planner
 * must go to the subgraph that owns the nested list (`tree`) and come back
 * for `label`. A do-nothing subgraph listed first (`index`) also resolves
 * `Product` and must not be used.
 *
 * @module
 */
import { equal, ok } from "node:assert/strict";
import { type Area, type CaseRun, describeRequests, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const TAGS: Record<string, { label: string; children: string[] }> = {
  g1: { label: "music", children: ["g2", "g3"] },
  g2: { label: "jazz", children: ["g4"] },
  g3: { label: "rock", children: [] },
  g4: { label: "bebop", children: [] },
};
const PRODUCTS = [{ id: "r1", tags: ["g1", "g2"] }, { id: "r2", tags: ["g3"] }];
const product = (id: string) => PRODUCTS.find((p) => p.id === id);

/** A tag of the monolith, its children computed on demand (the graph has a cycle-free depth). */
function tagOf(id: string): Record<string, unknown> {
  const t = TAGS[id]!;
  return { id, label: t.label, children: () => t.children.map(tagOf) };
}

/** The monolith's data. */
export const root = {
  products: PRODUCTS.map((p) => ({ id: p.id, tags: p.tags.map(tagOf) })),
};

/** `taxonomy` answers its root field with everything the provides covers, no more. */
const provided = (id: string) => ({
  id,
  label: TAGS[id]!.label,
  children: TAGS[id]!.children.map((c) => ({ id: c, label: TAGS[c]!.label })),
});

/** Only `taxonomy` was asked, once. */
function onlyTaxonomy(run: CaseRun): void {
  equal(run.requests.length, 1, describeRequests(run));
  equal(run.requests[0]!.subgraph, "taxonomy", describeRequests(run));
}

/** The graph: `index` (bare Product), `taxonomy` (root, labels, provides), `tree` (tag lists). */
export const area: Area = {
  name: "shape_nested_provides",
  title: "audit nested-provides: @provides two levels into a self-referencing entity list",
  subgraphs: [
    {
      name: "index",
      typeDefs: fed2("@key") + `
        type Product @key(fields: "id") {
          id: ID!
        }
      `,
      resolvers: {
        Product: { __resolveReference: (ref: { id: string }) => product(ref.id) ? ref : null },
      },
    },
    {
      name: "taxonomy",
      typeDefs: fed2("@key", "@shareable", "@external", "@provides") + `
        type Query {
          products: [Product]
            @shareable
            @provides(fields: "tags { id label children { id label } }")
        }
        type Product @key(fields: "id") {
          id: ID!
          tags: [Tag] @external
        }
        type Tag @key(fields: "id") {
          id: ID!
          label: String
          children: [Tag] @external
        }
      `,
      resolvers: {
        Query: {
          products: () => PRODUCTS.map((p) => ({ id: p.id, tags: p.tags.map(provided) })),
        },
        Product: { __resolveReference: (ref: { id: string }) => product(ref.id) ? ref : null },
        Tag: {
          __resolveReference: (ref: { id: string }) =>
            TAGS[ref.id] === undefined ? null : { id: ref.id, label: TAGS[ref.id]!.label },
        },
      },
    },
    {
      name: "tree",
      typeDefs: fed2("@key", "@shareable") + `
        type Product @key(fields: "id") {
          id: ID!
          tags: [Tag] @shareable
        }
        type Tag @key(fields: "id") {
          id: ID!
          children: [Tag] @shareable
        }
      `,
      resolvers: {
        Product: {
          __resolveReference: (ref: { id: string }) => product(ref.id) ?? null,
          tags: (p: { tags: string[] }) => p.tags.map((id) => ({ id })),
        },
        Tag: {
          __resolveReference: (ref: { id: string }) => TAGS[ref.id] ? ref : null,
          children: (t: { id: string }) => TAGS[t.id]!.children.map((id) => ({ id })),
        },
      },
    },
  ],
  cases: [
    {
      name: "the whole provided selection comes from the providing subgraph alone",
      query: `{ products { id tags { id label children { id label } } } }`,
      check: onlyTaxonomy,
    },
    {
      name: "provided nested fields without their key fields, under aliases",
      query: `{ products { t: tags { l: label c: children { n: label } } } }`,
      check: onlyTaxonomy,
    },
    {
      name: "a level beyond the provides goes to the list's owner and back for labels",
      query: `{ products { tags { label children { label children { id label } } } } }`,
      check: (run) => {
        ok(run.requests.some((r) => r.subgraph === "tree"), describeRequests(run));
        ok(run.requests.every((r) => r.subgraph !== "index"), describeRequests(run));
      },
    },
  ],
};

registerArea(area);
registerDifferential({ area, root, generator: { maxDepth: 4 } });
