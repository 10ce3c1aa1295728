/**
 * `@inaccessible`: types, fields, enum values, arguments and input fields
 * are hidden from introspection, rejected in operations, and a hidden enum
 * value that would be output is an error.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";

const ITEMS = [
  { id: "1", name: "Lamp", internalCode: "L-1", status: "ACTIVE" },
  { id: "2", name: "Desk", internalCode: "D-2", status: "ARCHIVED" },
];

/** The graph: one subgraph with hidden members of every kind, one extending Item. */
export const area: Area = {
  name: "inaccessible",
  title: "@inaccessible",
  subgraphs: [
    {
      name: "main",
      typeDefs: fed2("@key", "@inaccessible") + `
        type Query {
          items: [Item!]!
          item(id: ID!, debug: Boolean @inaccessible): Item
          search(filter: Filter): [Item!]!
          secret: Secret @inaccessible
          boxes: [Box!]!
        }
        type Box @key(fields: "serial") {
          serial: ID! @inaccessible
          label: String!
        }
        type Item @key(fields: "id") {
          id: ID!
          name: String!
          internalCode: String @inaccessible
          status: Status
        }
        type Secret @inaccessible {
          value: String!
        }
        enum Status {
          ACTIVE
          ARCHIVED @inaccessible
        }
        input Filter {
          name: String
          status: Status
          hidden: String @inaccessible
        }
      `,
      resolvers: {
        Query: {
          items: () => ITEMS,
          boxes: () => [{ serial: "X1", label: "small" }, { serial: "X2", label: "big" }],
          item: (_: unknown, a: { id: string }) => ITEMS.find((i) => i.id === a.id) ?? null,
          search: (_: unknown, a: { filter?: { name?: string; status?: string } }) =>
            ITEMS.filter((i) =>
              (a.filter?.name === undefined || i.name === a.filter.name) &&
              (a.filter?.status === undefined || i.status === a.filter.status)
            ),
        },
        Item: { __resolveReference: (ref: { id: string }) => ITEMS.find((i) => i.id === ref.id) },
      },
    },
    {
      name: "extra",
      typeDefs: fed2("@key", "@inaccessible", "@external", "@requires") + `
        type Item @key(fields: "id") {
          id: ID!
          rank: Int!
          weight: Int @inaccessible
          internalCode: String @external
          codeLength: Int @requires(fields: "internalCode")
        }
        type Box @key(fields: "serial") {
          serial: ID! @inaccessible
          size: Int!
        }
      `,
      resolvers: {
        Item: {
          __resolveReference: (ref: { id: string }) => ref,
          rank: (i: { id: string }) => Number(i.id) * 10,
          weight: () => 5,
          codeLength: (i: { internalCode: string | null }) => i.internalCode?.length ?? -1,
        },
        Box: {
          __resolveReference: (ref: { serial: string }) => ref,
          size: (b: { serial: string }) => Number(b.serial.slice(1)) * 10,
        },
      },
    },
  ],
  cases: [
    {
      name: "hidden fields (of two subgraphs) absent from introspection",
      query: `{ __type(name: "Item") { fields { name } } }`,
    },
    {
      name: "hidden type absent from introspection",
      query: `{ __type(name: "Secret") { name } }`,
    },
    {
      name: "hidden root field and hidden argument absent from introspection",
      query: `{ __type(name: "Query") { fields { name args { name } } } }`,
    },
    {
      name: "hidden enum value absent from introspection",
      query: `{ __type(name: "Status") { enumValues(includeDeprecated: true) { name } } }`,
    },
    {
      name: "hidden input field absent from introspection",
      query: `{ __type(name: "Filter") { inputFields { name } } }`,
    },
    {
      name: "hidden field rejected in an operation",
      query: `{ items { id internalCode } }`,
    },
    {
      name: "hidden field of another subgraph rejected in an operation",
      query: `{ items { rank weight } }`,
    },
    {
      name: "hidden root field rejected in an operation",
      query: `{ secret { value } }`,
    },
    {
      name: "hidden argument rejected in an operation",
      query: `{ item(id: "1", debug: true) { name } }`,
    },
    {
      name: "hidden input field rejected in an operation",
      query: `{ search(filter: { hidden: "x" }) { name } }`,
    },
    {
      name: "hidden enum value rejected as an input literal",
      query: `{ search(filter: { status: ARCHIVED }) { name } }`,
    },
    {
      name: "hidden enum value rejected in variables",
      query: `query Q($f: Filter) { search(filter: $f) { name } }`,
      variables: { f: { status: "ARCHIVED" } },
    },
    {
      name: "hidden enum value in output is an error at its path (nullable field nulled)",
      query: `{ items { id status rank } }`,
      errors: "path",
      override: {
        note: "Apollo Gateway silently returns null for a hidden enum value; the feature " +
          "requires an error at the field's path (graphql-js serializes it as an error too)",
        response: {
          data: {
            items: [{ id: "1", status: "ACTIVE", rank: 10 }, { id: "2", status: null, rank: 20 }],
          },
          errors: [{
            message: 'Enum "Status" cannot represent value: "ARCHIVED"',
            path: ["items", 1, "status"],
          }],
        },
      },
    },
    {
      name: "visible members work across subgraphs",
      query: `{ search(filter: { status: ACTIVE }) { name status rank } }`,
    },
    {
      name: "hidden key field still joins the entity across subgraphs",
      query: `{ boxes { label size } }`,
    },
    {
      name: "hidden field still feeds a @requires",
      query: `{ items { id codeLength } }`,
    },
  ],
};

registerArea(area);
