// Hive Gateway, as bench/subscriptions/run.sh starts it: subscriptions to the
// subgraphs over GraphQL over WebSocket (graphql-transport-ws) on the routing
// URL's path, as GW does by default; everything else at its defaults.
export const gatewayConfig = {
  transportEntries: {
    "*.http": {
      options: { subscriptions: { kind: "ws", location: "/graphql" } },
    },
  },
};
