/**
 * Stage 0 and the bounds around every stage, admission: whether and when a request may run,
 * and what the process holds for it.
 *
 * Takes a request's arrival (and its answer's bytes as they stream); gives a slot or a
 * `SERVICE_OVERLOADED` refusal with `Retry-After`, and keeps memory inside its budgets.
 *
 * - `queue.ts` — the admission gate: concurrent operations, a FIFO queue with a deadline;
 * - `adaptive_limit.ts` — how many operations run at once, sized by the event-loop delay;
 * - `cpu_share.ts` — the serving thread's CPU share of a sampling window ("busy"), within [0, 1];
 * - `memory_budget.ts` — bytes of subgraph answers in flight;
 * - `unsent_answers.ts` — bytes of answers handed to clients and not yet taken;
 * - `cache_cost.ts`, `_lru.ts` — caches bounded in bytes.
 *
 * @module
 */
export { type AdmissionGate, createAdmissionGate, overloaded } from "./queue.ts";
export {
  type AdaptiveLimit,
  type AdaptiveLimitOptions,
  createAdaptiveLimit,
} from "./adaptive_limit.ts";
export { cpuShare } from "./cpu_share.ts";
export {
  ANSWER_COST_PER_BYTE,
  type BudgetTicket,
  createMemoryBudget,
  type MemoryBudget,
} from "./memory_budget.ts";
export {
  createUnsentAnswers,
  STREAMED_ANSWER_BYTES,
  type UnsentAnswers,
} from "./unsent_answers.ts";
export { entryCost } from "./cache_cost.ts";
export { Lru } from "./_lru.ts";
