/**
 * Audit shape "null keys": the key a subgraph needs (`num`) is only
 * reachable through a middle subgraph (`ledger`, entered by `sku`) that
 * answers `null` for one of the entities. The far subgraph (`crm`) must not
 * be sent a representation without its key: that order's `buyer` is null,
 * with no error, and the other orders are answered. A `null` order (no key
 * at all) is not fetched.
 *
 * @module
 */
import { type Area, fed2, registerArea } from "./_harness.ts";
import { registerDifferential } from "./_differential.ts";

const ORDERS = [
  { sku: "s1", num: "n1", buyer: { id: "u1", name: "Ann" } },
  { sku: "s2", num: "n2", buyer: { id: "u2", name: "Bea" } },
  { sku: "s3", num: "n3", buyer: { id: "u3", name: "Cy" } },
];
/** `ledger` does not know this order: it answers null for it. */
const UNKNOWN_TO_LEDGER = "s3";
const SLOTS: readonly (string | null)[] = ["s1", "s3", null, "s2"];
const bySku = (sku: unknown) => ORDERS.find((o) => o.sku === sku);
const byNum = (num: unknown) => ORDERS.find((o) => o.num === num);

/** The monolith's data (`Order.num` is not generated: ledger's null makes it unreachable). */
export const root = {
  slots: SLOTS.map((sku) => {
    if (sku === null) return { order: null };
    const o = bySku(sku)!;
    return sku === UNKNOWN_TO_LEDGER
      ? { order: { sku, buyer: null } }
      : { order: { sku, num: o.num, buyer: { ...o.buyer } } };
  }),
};

/** The graph: `shelf` (root, by `sku`), `ledger` (`sku` → `num`), `crm` (buyers, by `num`). */
export const area: Area = {
  name: "shape_null_key_hop",
  title: "audit null-keys: a key reached through a subgraph that answers null for an entity",
  subgraphs: [
    {
      name: "shelf",
      typeDefs: fed2("@key") + `
        type Query {
          slots: [Slot]
        }
        type Slot {
          order: Order
        }
        type Order @key(fields: "sku") {
          sku: ID!
        }
      `,
      resolvers: {
        Query: { slots: () => SLOTS.map((sku) => ({ order: sku === null ? null : { sku } })) },
        Order: {
          __resolveReference: (ref: { sku?: string }) => {
            if (bySku(ref.sku) === undefined) throw new Error("Invalid reference");
            return { sku: ref.sku };
          },
        },
      },
    },
    {
      name: "ledger",
      typeDefs: fed2("@key") + `
        type Order @key(fields: "num") @key(fields: "sku") {
          num: ID!
          sku: ID!
        }
      `,
      resolvers: {
        Order: {
          __resolveReference: (ref: { sku?: string; num?: string }) => {
            const o = "num" in ref ? byNum(ref.num) : bySku(ref.sku);
            if (o === undefined) throw new Error("Invalid reference");
            return o.sku === UNKNOWN_TO_LEDGER ? null : { num: o.num, sku: o.sku };
          },
        },
      },
    },
    {
      name: "crm",
      typeDefs: fed2("@key") + `
        type Order @key(fields: "num") {
          num: ID!
          buyer: Buyer
        }
        type Buyer {
          id: ID!
          name: String
        }
      `,
      resolvers: {
        Order: {
          __resolveReference: (ref: { num?: string | null }) => {
            const o = byNum(ref.num);
            if (o === undefined) throw new Error("Invalid reference: no num");
            return { num: o.num, buyer: o.buyer };
          },
        },
      },
    },
  ],
  cases: [
    {
      name: "entity the middle subgraph answers null for: buyer null, no error, others answered",
      query: `{ slots { order { sku buyer { name } } } }`,
    },
    {
      name: "only the far subgraph's field, under aliases",
      query: `{ s: slots { o: order { b: buyer { i: id } } } }`,
    },
  ],
};

registerArea(area);
registerDifferential({ area, root, generator: { exclude: ["Order.num"] } });
