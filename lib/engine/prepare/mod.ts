/**
 * Stage 1, prepare: what happens to an operation before planning.
 *
 * Takes the request's text, operation name and variables with the API schema; gives a
 * validated document, a {@linkcode NormalizedOperation} (fragments inlined, `@skip`/`@include`
 * applied, abstract selections split), coerced variables, and the fields the caller may not see
 * removed — or a refusal with its stable code.
 *
 * - `prepare.ts` — parse (token cap) + validate (error cap) + operation selection;
 * - `limits.ts` — parser limits (depth, aliases, root fields, complexity), checked on text first;
 * - `normalize.ts` — the normalized operation the planner reads;
 * - `introspection.ts` — `__schema`/`__type` detection and the introspection guard;
 * - `coerce_variables.ts` — variable coercion with graphql-js's rules and messages;
 * - `field_access.ts` — `@authenticated`/`@requiresScopes` removal;
 * - `json_numbers.ts` — exact numbers in JSON (variables, subgraph answers), shared with execution;
 * - `reserved_alias.ts`, `override_labels.ts`, `_fragments.ts` — small rules and helpers.
 *
 * @module
 */
export { formatted, prepareOperation, type PrepareOptions } from "./prepare.ts";
export {
  type DeferredFragment,
  type NField,
  type NormalizedOperation,
  normalizeOperation,
  type NSelection,
  type TypeRef,
} from "./normalize.ts";
export {
  approximateDepth,
  checkJsonTextDepth,
  checkOperationLimits,
  checkTextDepth,
  checkVariableValues,
  type ComplexityLimit,
  countInputValues,
  DEFAULT_OPERATION_LIMITS,
  isLimitRefusal,
  MAX_DATA_DEPTH,
  MAX_TRACE_VALUES,
  measureDocument,
  type OperationLimits,
  operationLimitsOf,
  type OperationMeasure,
} from "./limits.ts";
export { coerceVariables } from "./coerce_variables.ts";
export {
  accessSignature,
  type FieldIdentity,
  type FilteredOperation,
  filterOperation,
  UNAUTHORIZED_FIELD_OR_TYPE,
  unauthorizedError,
  withPolicies,
} from "./field_access.ts";
export { isRawNumber, parseJsonExact } from "./json_numbers.ts";
export { findIntrospectionField, introspectionDocument, OfTypeDepthRule } from "./introspection.ts";
export { drawOverrideLabels, type OverrideLabel, overrideLabelsOf } from "./override_labels.ts";
