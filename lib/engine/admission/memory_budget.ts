/**
 * The memory budget of in-flight work (issue 15): the bytes of subgraph
 * answers that running operations hold, counted as the answers stream in.
 * Each operation opens a {@linkcode BudgetTicket}; every chunk read for it is
 * charged before the next one is read. When the budget is spent, a read waits
 * (backpressure reaches the subgraph through TCP) until bytes are released,
 * except for the oldest open operation, which always proceeds: it finishes
 * and frees its bytes, so waiting never deadlocks and the held bytes stay
 * within the budget plus one operation's answers. The admission gate admits
 * no new operation while the budget is spent. One operation's answers over
 * `maxTicketBytes` (`engine.max_response_bytes`) fail that operation with
 * the error of `tooLarge` (`RESPONSE_TOO_LARGE`).
 *
 * Issue 34: what an answer costs while it lives is more than its bytes: the
 * text decoded from them, the parsed data, and the rendered response. Each
 * byte read is charged {@linkcode ANSWER_COST_PER_BYTE} bytes (`costPerByte`),
 * the caller keeps its ticket open until the response is rendered, and a
 * rendered answer that waits for a slow client keeps costing its bytes
 * (`keep`) until taken (those are bounded by `max_unsent_answer_bytes`: the
 * held bytes stay within the budget, one running operation's cost and the
 * answers being taken). A read
 * that waits for room waits at most `maxWaitMs` (`max_queue_wait`, the
 * admission queue's bound): past it the wait ends with the `overloaded` error
 * (503 `SERVICE_OVERLOADED` + `Retry-After`) and the ticket is marked
 * `refused`, so no request waits on memory without end.
 *
 * Pure: no I/O; timers are injected.
 *
 * @module
 */
import { onAbort } from "../../cancellation.ts";

/**
 * Heap bytes an answer costs per byte of its text while it lives, measured
 * (`Deno.memoryUsage().heapUsed` around `JSON.parse` and `JSON.stringify` of
 * 14–18 MB answers: lists of 40 000 to 300 000 objects): the text itself (1),
 * the parsed data (1.2–2.0), the rendered response (1.0). The bytes read and
 * the encoded response are short-lived and left out.
 */
export const ANSWER_COST_PER_BYTE = 4;

/** One operation's share of the budget. */
export interface BudgetTicket {
  /** Answer bytes charged so far (what `maxTicketBytes` bounds). */
  readonly bytes: number;
  /** True once a charge went over `maxTicketBytes`. */
  readonly exceeded: boolean;
  /** True once one of its reads waited for room past `maxWaitMs`. */
  readonly refused: boolean;
  /** Releases the ticket's bytes (idempotent). Later charges to it count nothing. */
  close(): void;
  /**
   * The operation is done and its rendered answer of `bytes` waits for its
   * client: the ticket now costs those bytes until {@linkcode close}, and no
   * longer counts as a running operation (the oldest running one proceeds).
   */
  keep(bytes: number): void;
}

/** Options of {@linkcode MemoryBudget.charge}. */
export interface ChargeOptions {
  /**
   * The operations waiting on this read: a shared subgraph answer serves
   * several. Bytes are charged to the first open one; the read proceeds when
   * any of them is the oldest open operation.
   */
  readonly tickets: Iterable<BudgetTicket>;
  /** A wait ends with the signal's reason when it aborts. */
  readonly signal?: AbortSignal;
}

/** The budget (see {@linkcode createMemoryBudget}). */
export interface MemoryBudget {
  /** Opens a ticket for an operation about to run. */
  open(): BudgetTicket;
  /**
   * Charges bytes just read. Returns undefined when the next read may go on
   * at once, else a promise that resolves when it may.
   * @throws The `tooLarge` error when a ticket passes `maxTicketBytes`.
   */
  charge(bytes: number, options: ChargeOptions): Promise<void> | undefined;
  /**
   * Charges bytes about to be read (a declared length): waits first, while
   * they would not fit and no ticket is the oldest open one. Returns
   * undefined when charged at once.
   * @throws The `tooLarge` error when a ticket would pass `maxTicketBytes`.
   */
  reserve(bytes: number, options: ChargeOptions): Promise<void> | undefined;
  /** Bytes held by open tickets (their cost: answer bytes × `costPerByte`). */
  readonly used: number;
  /** True while the bytes held reach the budget (admission waits). */
  readonly spent: boolean;
  /** Reads waiting for bytes to be released. */
  readonly waiting: number;
  /** The per-operation limit, bytes. */
  readonly maxTicketBytes: number;
  /** The budget, bytes (0: none). */
  readonly maxBytes: number;
}

/** Options of {@linkcode createMemoryBudget}. */
export interface MemoryBudgetOptions {
  /** Bytes in flight for all operations; 0 or Infinity = no budget. */
  readonly maxBytes: number;
  /** Bytes for one operation; Infinity = no limit. */
  readonly maxTicketBytes: number;
  /** The error thrown when one operation passes `maxTicketBytes`. */
  readonly tooLarge: (limit: number) => Error;
  /** Called whenever bytes are released (the admission gate admits again). */
  readonly onRelease?: () => void;
  /** Bytes charged per answer byte. @default 1 */
  readonly costPerByte?: number;
  /** How long a read may wait for room, ms (`max_queue_wait`). @default Infinity */
  readonly maxWaitMs?: number;
  /** The error a read gets past `maxWaitMs`. @default an Error */
  readonly overloaded?: () => Error;
  /** Timer functions (tests inject fakes). @default setTimeout/clearTimeout */
  readonly setTimer?: (callback: () => void, ms: number) => number;
  readonly clearTimer?: (id: number) => void;
}

interface Ticket extends BudgetTicket {
  bytes: number;
  /** What it holds of the budget. */
  cost: number;
  exceeded: boolean;
  refused: boolean;
  open: boolean;
}

interface Waiter {
  readonly tickets: Iterable<BudgetTicket>;
  /** Answer bytes that must fit before it goes on (0: it only waits for room), charged when granted. */
  readonly needs: number;
  readonly charged: Ticket | null;
  readonly resolve: () => void;
  done: boolean;
}

/**
 * Creates a memory budget.
 *
 * @example The oldest operation proceeds, a younger one waits for its bytes
 * ```ts
 * import assert from "node:assert/strict";
 * import { createMemoryBudget } from "./memory_budget.ts";
 * const budget = createMemoryBudget({
 *   maxBytes: 100,
 *   maxTicketBytes: Infinity,
 *   tooLarge: () => new RangeError("too large"),
 * });
 * const older = budget.open();
 * const younger = budget.open();
 * assert.equal(budget.charge(80, { tickets: [older] }), undefined);
 * assert.equal(budget.charge(80, { tickets: [older] }), undefined); // the oldest never waits
 * const wait = budget.charge(10, { tickets: [younger] });
 * assert.ok(wait instanceof Promise);
 * assert.equal(budget.spent, true);
 * older.close();
 * await wait;
 * assert.equal(budget.used, 10);
 * ```
 * @param options Budget, per-operation limit, its error, release hook.
 * @returns The budget.
 */
export function createMemoryBudget(options: MemoryBudgetOptions): MemoryBudget {
  const max = options.maxBytes > 0 ? options.maxBytes : Infinity;
  const factor = options.costPerByte ?? 1;
  const maxWait = options.maxWaitMs ?? Infinity;
  const setTimer = options.setTimer ?? ((callback, ms) => Number(setTimeout(callback, ms)));
  const clearTimer = options.clearTimer ?? ((id) => clearTimeout(id));
  const open = new Set<Ticket>();
  let waiters: Waiter[] = [];
  let used = 0;
  const oldest = (): Ticket | undefined => open.values().next().value;
  function senior(tickets: Iterable<BudgetTicket>): boolean {
    const first = oldest();
    for (const ticket of tickets) if (ticket === first) return true;
    return false;
  }
  const fits = (bytes: number) => bytes === 0 ? used < max : used + bytes * factor <= max;
  function wait(
    tickets: Iterable<BudgetTicket>,
    reservation: { readonly needs: number; readonly charged: Ticket | null },
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      let offAbort: () => void = () => {};
      let timer: number | undefined;
      const waiter: Waiter = {
        tickets,
        ...reservation,
        resolve: () => {
          offAbort();
          if (timer !== undefined) clearTimer(timer);
          resolve();
        },
        done: false,
      };
      if (signal) {
        // A callback, not an event listener, on the request's path (cancellation.ts).
        offAbort = onAbort(signal, () => {
          if (waiter.done) return;
          waiter.done = true;
          if (timer !== undefined) clearTimer(timer);
          reject(signal.reason);
        });
      }
      if (Number.isFinite(maxWait)) {
        timer = setTimer(() => {
          timer = undefined;
          if (waiter.done) return;
          waiter.done = true;
          offAbort();
          const ticket = chargedTicket(tickets);
          if (ticket !== null) ticket.refused = true;
          reject(options.overloaded?.() ?? new Error("waited too long for memory"));
        }, maxWait);
      }
      waiters.push(waiter);
    });
  }
  function chargedTicket(tickets: Iterable<BudgetTicket>): Ticket | null {
    for (const ticket of tickets as Iterable<Ticket>) if (ticket.open) return ticket;
    return null;
  }
  function add(ticket: Ticket, bytes: number): void {
    if (!ticket.open) return;
    ticket.bytes += bytes;
    ticket.cost += bytes * factor;
    used += bytes * factor;
  }
  function wake(): void {
    if (waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const waiter of waiters) {
      if (waiter.done) continue;
      if (fits(waiter.needs) || senior(waiter.tickets)) {
        waiter.done = true;
        // Charged now, so the next waiter sees these bytes as used.
        if (waiter.charged !== null) add(waiter.charged, waiter.needs);
        waiter.resolve();
      } else still.push(waiter);
    }
    waiters = still;
  }
  return {
    open() {
      const ticket: Ticket = {
        bytes: 0,
        cost: 0,
        exceeded: false,
        refused: false,
        open: true,
        close() {
          if (!ticket.open) return;
          ticket.open = false;
          open.delete(ticket);
          used -= ticket.cost;
          wake();
          options.onRelease?.();
        },
        keep(bytes) {
          if (!ticket.open) return;
          open.delete(ticket);
          used += bytes - ticket.cost;
          ticket.cost = bytes;
          wake();
          options.onRelease?.();
        },
      };
      open.add(ticket);
      return ticket;
    },
    charge(bytes, { tickets, signal }) {
      const charged = chargedTicket(tickets);
      if (charged === null) return undefined;
      add(charged, bytes);
      if (charged.bytes > options.maxTicketBytes) {
        charged.exceeded = true;
        throw options.tooLarge(options.maxTicketBytes);
      }
      if (used <= max || senior(tickets)) return undefined;
      return wait(tickets, { needs: 0, charged: null }, signal);
    },
    reserve(bytes, { tickets, signal }) {
      const charged = chargedTicket(tickets);
      if (charged === null) return undefined;
      if (charged.bytes + bytes > options.maxTicketBytes) {
        charged.exceeded = true;
        throw options.tooLarge(options.maxTicketBytes);
      }
      if (fits(bytes) || senior(tickets)) {
        add(charged, bytes);
        return undefined;
      }
      return wait(tickets, { needs: bytes, charged }, signal);
    },
    get used() {
      return used;
    },
    get spent() {
      return used >= max;
    },
    get waiting() {
      return waiters.filter((w) => !w.done).length;
    },
    maxTicketBytes: options.maxTicketBytes,
    maxBytes: Number.isFinite(max) ? max : 0,
  };
}
