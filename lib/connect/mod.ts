/**
 * Connect RPC facet: every query and mutation of `operations_dir` is a unary
 * method `/<package>.<Service>/<Method>` callable over POST (all) and GET
 * (queries) with JSON in the proto3 JSON mapping of the generated `.proto`;
 * every subscription is a server-streaming method (`application/connect+json`,
 * enveloped messages, the end-of-stream message) fed by the engine through
 * {@linkcode ConnectSubscribe}; plus the `.proto` and OpenAPI generators. The
 * codecs, the model and the generators are pure; {@linkcode handleConnect} is
 * the edge.
 *
 * @module
 */
import { cacheKeyHeaders, type ConnectDeps, type ConnectState } from "./handler.ts";
import { buildContractModel } from "./model.ts";

export { type ConnectDeps, type ConnectState, handleConnect } from "./handler.ts";
export {
  cacheControl,
  type CodecResult,
  type ConnectCall,
  type ConnectHttpRequest,
  decodeCallMessage,
  isJsonContentType,
  matchesEtag,
  type MessageSource,
  resolveCall,
} from "./codec.ts";
export {
  codeOfGraphQLErrors,
  CONNECT_HTTP_STATUS,
  type ConnectCode,
  type ConnectErrorBody,
  connectErrorBody,
  connectErrorResponse,
  type ConnectFailure,
  connectFailure,
  connectStatus,
  failureOfRouterError,
} from "./errors.ts";
export { decodeRequestMessage, encodeResponseMessage, MessageDecodeError } from "./json.ts";
export {
  CONNECT_STREAM_JSON,
  decodeRequestEnvelope,
  encodeEndStream,
  encodeEnvelope,
  encodeStreamMessage,
  type EndStreamJson,
  endStreamJson,
  type EndStreamOptions,
  ENVELOPE_HEADER_BYTES,
  type EnvelopeResult,
  FLAG_COMPRESSED,
  FLAG_END_STREAM,
  isConnectStreamContentType,
  type RequestEnvelope,
  streamContentTypeFailure,
} from "./stream.ts";
export {
  connectStreamFailure,
  connectStreamResponse,
  type ConnectSubscribe,
  type ConnectSubscribeRequest,
  failureOfResultErrors,
  type StreamEnd,
  type StreamResponseOptions,
  type StreamResult,
} from "./stream_response.ts";
export {
  buildContractModel,
  type ContractModel,
  type ContractOperation,
  type EnumModel,
  type EnumValueModel,
  type FieldModel,
  type FieldType,
  jsonName,
  type MessageModel,
  type MethodModel,
  pascalCase,
  type ScalarKind,
  snakeCase,
  upperSnakeCase,
} from "./model.ts";
export {
  type GeneratedProto,
  generateProto,
  type GenerateProtoOptions,
  type LockedEnum,
  type LockedMessage,
  parseProtoLock,
  PROTO_LOCK_FILE,
  protoFieldType,
  type ProtoLock,
} from "./proto.ts";
export { generateOpenApi, type GenerateOpenApiOptions, type JsonObject } from "./openapi.ts";

/**
 * Builds the Connect state: the contract model of the registry's operations
 * against the API schema (who may call a method is decided per call, by the
 * state's authorization: `lib/auth`'s `authorizeOperation`). Operations that cannot
 * be methods (RPC-name clashes, types the mapping cannot express) are logged
 * and left out.
 *
 * @param deps Config, engine, operations, logger.
 * @returns The state, or null when Connect is disabled.
 */
export function buildConnectState(
  deps: Omit<ConnectDeps, "connect">,
): ConnectState | null {
  const c = deps.config.connect_rpc;
  if (!c.enabled) return null;
  const { apiSchema } = deps.engine.model;
  const contract = buildContractModel(apiSchema, deps.operations.operations);
  for (const skipped of contract.skipped) {
    deps.log.warn("Connect method skipped", { operation: skipped.name, reason: skipped.reason });
  }
  return {
    prefix: `/${c.package}.${c.service}/`,
    contract,
    maxMessageBytes: c.max_message_bytes,
    cacheMaxAge: c.get_cache_max_age,
    cacheKey: cacheKeyHeaders(deps.config),
  };
}
