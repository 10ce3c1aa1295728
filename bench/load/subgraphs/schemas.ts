// deno-lint-ignore-file no-explicit-any -- vendored from the shared benchmark harness
// The four Apollo Federation v2 subgraphs: accounts, inventory, products,
// reviews. Each one is a plain graphql-js schema built from its SDL plus the
// federation additions (_Any, _Entity, _Service, Query._entities,
// Query._service), with hand-written resolvers over data.ts.
import {
  buildSchema,
  type GraphQLFieldResolver,
  GraphQLObjectType,
  type GraphQLSchema,
} from "graphql";
import {
  IN_STOCK,
  PRODUCT_BY_UPC,
  PRODUCTS,
  REVIEW_BY_ID,
  type ReviewRow,
  reviewsByAuthor,
  reviewsByProduct,
  shippingEstimate,
  USER_BY_ID,
  USERS,
} from "./data.ts";

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", ' +
  'import: ["@key", "@external", "@requires", "@provides", "@shareable"])';

// Subgraph SDLs as returned by `_service { sdl }` (and fed to composition).
export const SDL: Record<string, string> = {
  accounts: `${LINK}

type Query {
  me: User
  user(id: ID!): User
  users: [User]
}

type User @key(fields: "id") {
  id: ID!
  name: String
  username: String @shareable
  birthday: Int
}
`,
  inventory: `${LINK}

type Product @key(fields: "upc") {
  upc: String!
  weight: Int @external
  price: Int @external
  inStock: Boolean
  shippingEstimate: Int @requires(fields: "price weight")
}
`,
  products: `${LINK}

type Query {
  topProducts(first: Int = 5): [Product]
}

type Product @key(fields: "upc") {
  upc: String!
  name: String
  price: Int
  weight: Int
}
`,
  reviews: `${LINK}

type Review @key(fields: "id") {
  id: ID!
  body: String
  product: Product
  author: User @provides(fields: "username")
}

type User @key(fields: "id") {
  id: ID!
  username: String @external
  reviews: [Review]
}

type Product @key(fields: "upc") {
  upc: String!
  reviews: [Review]
}
`,
};

// Definitions needed so graphql-js accepts the federation directives, plus
// the federation v2 subgraph additions.
const PRELUDE = `
scalar _Any
scalar FieldSet
scalar link__Import
enum link__Purpose { SECURITY EXECUTION }
directive @link(url: String, as: String, for: link__Purpose, import: [link__Import]) repeatable on SCHEMA
directive @key(fields: FieldSet!, resolvable: Boolean = true) repeatable on OBJECT | INTERFACE
directive @requires(fields: FieldSet!) on FIELD_DEFINITION
directive @provides(fields: FieldSet!) on FIELD_DEFINITION
directive @external(reason: String) on OBJECT | FIELD_DEFINITION
directive @shareable repeatable on OBJECT | FIELD_DEFINITION
type _Service { sdl: String }
`;

const ENTITY_TYPES: Record<string, string[]> = {
  accounts: ["User"],
  inventory: ["Product"],
  products: ["Product"],
  reviews: ["Review", "User", "Product"],
};

type Rep = { __typename: string; [k: string]: unknown };
type EntityResolver = (rep: Rep) => unknown;

// --- object builders (plain objects; the default field resolver reads them)

function reviewObj(r: ReviewRow): Record<string, unknown> {
  // Review as seen by the reviews subgraph. `author` carries the provided
  // `username`; `product` carries only the key.
  return {
    __typename: "Review",
    id: r.id,
    body: r.body,
    product: { __typename: "Product", upc: r.productUpc },
    author: {
      __typename: "User",
      id: r.authorId,
      username: USER_BY_ID.get(r.authorId)?.username ?? null,
    },
  };
}

const RESOLVERS: Record<
  string,
  {
    query: Record<string, GraphQLFieldResolver<unknown, unknown>>;
    entities: Record<string, EntityResolver>;
    fields?: Record<string, Record<string, GraphQLFieldResolver<any, unknown>>>;
  }
> = {
  accounts: {
    query: {
      me: () => ({ __typename: "User", ...USERS[0] }),
      user: (_s, args: any) => {
        const u = USER_BY_ID.get(String(args.id));
        return u ? { __typename: "User", ...u } : null;
      },
      users: () => USERS.map((u) => ({ __typename: "User", ...u })),
    },
    entities: {
      User: (rep) => {
        const u = USER_BY_ID.get(String(rep.id));
        return u ? { __typename: "User", ...u } : null;
      },
    },
  },
  inventory: {
    query: {},
    entities: {
      Product: (rep) => {
        const upc = String(rep.upc);
        if (!(upc in IN_STOCK)) return null;
        return {
          __typename: "Product",
          upc,
          inStock: IN_STOCK[upc],
          shippingEstimate: shippingEstimate(
            rep.price as number | null,
            rep.weight as number | null,
          ),
        };
      },
    },
  },
  products: {
    query: {
      topProducts: (_s, args: any) => {
        const n = typeof args.first === "number" ? Math.max(0, args.first) : 5;
        return PRODUCTS.slice(0, n).map((p) => ({ __typename: "Product", ...p }));
      },
    },
    entities: {
      Product: (rep) => {
        const p = PRODUCT_BY_UPC.get(String(rep.upc));
        return p ? { __typename: "Product", ...p } : null;
      },
    },
  },
  reviews: {
    query: {},
    entities: {
      Review: (rep) => {
        const r = REVIEW_BY_ID.get(String(rep.id));
        return r ? reviewObj(r) : null;
      },
      // A representation may reference any user/product; unknown ones simply
      // have no reviews.
      User: (rep) => ({
        __typename: "User",
        id: String(rep.id),
        username: USER_BY_ID.get(String(rep.id))?.username ?? null,
      }),
      Product: (rep) => ({ __typename: "Product", upc: String(rep.upc) }),
    },
    fields: {
      User: { reviews: (u: any) => reviewsByAuthor(u.id).map(reviewObj) },
      Product: { reviews: (p: any) => reviewsByProduct(p.upc).map(reviewObj) },
    },
  },
};

export function buildSubgraph(name: string): GraphQLSchema {
  const sdl = SDL[name];
  const entityTypes = ENTITY_TYPES[name];
  const r = RESOLVERS[name];
  if (sdl === undefined || entityTypes === undefined || r === undefined) {
    throw new Error(`unknown subgraph ${name}`);
  }
  const hasQuery = /\btype Query\b/.test(sdl);
  const exec = [
    PRELUDE,
    sdl,
    `union _Entity = ${entityTypes.join(" | ")}`,
    hasQuery ? "extend type Query {" : "type Query {",
    "  _entities(representations: [_Any!]!): [_Entity]!",
    "  _service: _Service!",
    "}",
  ].join("\n");
  const schema = buildSchema(exec);
  const query = schema.getQueryType()!.getFields();
  for (const [field, fn] of Object.entries(r.query)) query[field]!.resolve = fn;
  query._service!.resolve = () => ({ sdl });
  query._entities!.resolve = (_s, args: any) =>
    (args.representations as Rep[]).map((rep) => {
      const fn = rep && r.entities[rep.__typename];
      if (!fn) throw new Error(`unknown entity type ${rep?.__typename}`);
      return fn(rep);
    });
  for (const [typeName, fields] of Object.entries(r.fields ?? {})) {
    const t = schema.getType(typeName) as GraphQLObjectType;
    const tf = t.getFields();
    for (const [f, fn] of Object.entries(fields)) tf[f]!.resolve = fn;
  }
  return schema;
}

export const SUBGRAPH_NAMES = ["accounts", "inventory", "products", "reviews"];
