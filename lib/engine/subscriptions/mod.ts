/**
 * The engine's subscription room: everything a subscription is made of below the client's
 * protocol.
 *
 * Takes a planned subscription (its root fetch is the subgraph subscription) and a client;
 * gives a bounded stream of shaped results, one per upstream event, while the upstream stream
 * is shared with every identical subscription and the serving thread has room for its fan-out.
 *
 * - `subscribe.ts` — the engine's subscriptions: targets, limits, counts, starting one, the
 *   per-event runner and the key under which listeners share an event's execution;
 * - `event_stream.ts` — one client's subscription: its bounded buffer, too-slow and behind;
 * - `upstream_hub.ts` — identical upstream streams deduplicated and fanned out;
 * - `upstream_stream.ts` — one upstream stream from a subgraph (`graphql-ws`, `graphql-sse`);
 * - `fanout_capacity.ts` — whether the serving thread can take one more subscription.
 *
 * The client protocols (GraphQL over WebSocket, SSE, multipart HTTP, Connect server
 * streams) are the facets' translations and live with them (`lib/http/subscriptions.ts`,
 * `lib/http/subscriptions_ws.ts`, `lib/connect/stream_response.ts`).
 *
 * @module
 */
export {
  admissionRefusal,
  createSubscriptions,
  endSubscriptions,
  eventRunner,
  eventShareKey,
  type EventTrace,
  refusal,
  rootFetchOf,
  startSubscription,
  type SubscribeOptions,
  type SubscribeResult,
  type SubscriptionLimitCounts,
  type Subscriptions,
  type SubscriptionsOptions,
  type SubscriptionTargetOption,
  sumLimits,
} from "./subscribe.ts";
export {
  BEHIND_FACTOR,
  EventStream,
  type EventStreamOptions,
  type ResultSink,
  routerBehindError,
  tooSlowError,
} from "./event_stream.ts";
export { type HubListener, SubscriptionHub, type UpstreamEvent } from "./upstream_hub.ts";
export {
  openUpstream,
  type SubscriptionProtocol,
  type UpstreamFailure,
  type UpstreamTarget,
} from "./upstream_stream.ts";
export { createFanoutCapacity, type FanoutCapacity, MIN_ADMITTED } from "./fanout_capacity.ts";
