/**
 * Example variables for every operation in `operations/`, with the `data` the
 * demo graph answers for them (checked against Apollo Gateway 2.14 over the
 * same subgraphs). Used by the e2e tests of the router and its facets, and by
 * `deno task demo`'s banner. The data is deterministic: a fresh demo (see
 * `startDemoSubgraphs`) always answers exactly this; `AddReview` changes the
 * reviews store, so run it last or on its own demo. A subscription's example
 * names its `trigger`: its `data` is the first event once the trigger's
 * example ran (subscriptions are not answered over POST, nor by MCP).
 *
 * @module
 */

/** One example call of a demo operation. */
export interface OperationExample {
  /** The GraphQL operation name (= file name without `.graphql`). */
  readonly operationName: string;
  readonly variables: Readonly<Record<string, unknown>>;
  /** The expected `data` of the GraphQL response. */
  readonly data: unknown;
  /** Fields the operation touches that carry `@requiresScopes` / `@authenticated`. */
  readonly protectedFields: readonly string[];
  /**
   * Subscriptions only: the operation whose example makes the event (`data`
   * is the first event the subscription delivers once that example ran).
   */
  readonly trigger?: string;
}

/** Examples by operation name, in file-name order. */
export const OPERATION_EXAMPLES: Readonly<Record<string, OperationExample>> = Object.freeze({
  AddReview: {
    operationName: "AddReview",
    variables: { input: { productUpc: "2", authorId: "3", body: "Solid shelf.", rating: 4 } },
    data: {
      addReview: {
        id: "r8",
        rating: 4,
        body: "Solid shelf.",
        product: { upc: "2", name: "Walnut Bookshelf", averageRating: 4 },
      },
    },
    protectedFields: [],
  },
  GetProduct: {
    operationName: "GetProduct",
    variables: { upc: "1" },
    data: {
      product: {
        upc: "1",
        name: "Oak Dining Table",
        price: 899,
        category: "FURNITURE",
        quantity: 3,
        stockStatus: "LOW_STOCK",
        shippingEstimate: 0,
        reviews: [
          {
            rating: 5,
            body: "Sturdy and beautiful.",
            author: { username: "ada", name: "Ada Lovelace" },
          },
          {
            rating: 4,
            body: "Heavy, but worth it.",
            author: { username: "alan", name: "Alan Turing" },
          },
        ],
      },
    },
    protectedFields: [],
  },
  GetProductsByStock: {
    operationName: "GetProductsByStock",
    variables: { status: "LOW_STOCK" },
    data: {
      productsByStock: [
        {
          upc: "1",
          name: "Oak Dining Table",
          quantity: 3,
          warehouse: { name: "North Hub", city: "Stockholm" },
        },
        {
          upc: "6",
          name: "The Art of Computer Programming",
          quantity: 1,
          warehouse: { name: "North Hub", city: "Stockholm" },
        },
      ],
    },
    protectedFields: [],
  },
  GetUser: {
    operationName: "GetUser",
    variables: { id: "2" },
    data: {
      user: {
        id: "2",
        name: "Alan Turing",
        username: "alan",
        tier: "GOLD",
        reviews: [
          {
            rating: 4,
            body: "Heavy, but worth it.",
            product: { upc: "1", name: "Oak Dining Table" },
          },
          { rating: 4, body: "Holds an edge well.", product: { upc: "4", name: "Chef's Knife" } },
        ],
      },
    },
    protectedFields: [],
  },
  GetUserAccount: {
    operationName: "GetUserAccount",
    variables: { id: "1" },
    data: {
      user: {
        id: "1",
        name: "Ada Lovelace",
        email: "ada@example.com",
        orders: [
          {
            id: "o2",
            total: 199.99,
            paymentMethod: "VISA ****4242",
            items: [{ upc: "6", name: "The Art of Computer Programming" }],
          },
          {
            id: "o1",
            total: 944,
            paymentMethod: "VISA ****4242",
            items: [{ upc: "1", name: "Oak Dining Table" }, {
              upc: "3",
              name: "Cast Iron Skillet",
            }],
          },
        ],
      },
    },
    protectedFields: ["User.email", "User.orders", "Order.paymentMethod"],
  },
  ListProducts: {
    operationName: "ListProducts",
    variables: { filter: { category: "KITCHEN", maxPrice: 100 } },
    data: {
      products: [
        {
          upc: "3",
          name: "Cast Iron Skillet",
          price: 45,
          category: "KITCHEN",
          averageRating: 4,
          stockStatus: "IN_STOCK",
        },
        {
          upc: "4",
          name: "Chef's Knife",
          price: 89.5,
          category: "KITCHEN",
          averageRating: 4,
          stockStatus: "OUT_OF_STOCK",
        },
      ],
    },
    protectedFields: [],
  },
  OnReviewAdded: {
    operationName: "OnReviewAdded",
    variables: { productUpc: "2" },
    data: {
      reviewAdded: {
        id: "r8",
        rating: 4,
        body: "Solid shelf.",
        product: { upc: "2", name: "Walnut Bookshelf", price: 349 },
        author: { id: "3", username: "grace", name: "Grace Hopper" },
      },
    },
    protectedFields: [],
    trigger: "AddReview",
  },
  SearchCatalog: {
    operationName: "SearchCatalog",
    variables: { text: "ir" },
    data: {
      search: [
        { __typename: "Product", upc: "3", name: "Cast Iron Skillet", price: 45 },
        { __typename: "Brand", id: "b2", name: "Ironclad", country: "USA" },
      ],
    },
    protectedFields: [],
  },
});
