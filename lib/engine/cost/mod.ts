/**
 * Demand control's cost rules (pure): the static estimate of an operation
 * ({@linkcode estimateOperation}), of a query plan's subgraph operations
 * ({@linkcode estimatePlan}, what the router enforces) and the actual cost of an answer
 * ({@linkcode actualCost}), following the IBM GraphQL Cost Directives specification as
 * Apollo Router implements it. The pipeline (`pipeline/demand_control.ts`) applies them.
 *
 * @module
 */
export { CostError } from "./cost_error.ts";
export { estimateOperation, type EstimateOptions, fragmentsOf } from "./estimate.ts";
export { type CostEstimate, estimatePlan, type PlanEstimateOptions } from "./planned.ts";
export { actualCost } from "./actual.ts";
