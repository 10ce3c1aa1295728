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
export { prepareOperation, type PrepareOptions } from "./prepare.ts";
export { type NormalizedOperation, normalizeOperation } from "./normalize.ts";
export { checkOperationLimits, DEFAULT_OPERATION_LIMITS, type OperationLimits } from "./limits.ts";
export { coerceVariables } from "./coerce_variables.ts";
export { filterOperation } from "./field_access.ts";
