/**
 * The plan executor: walks a {@linkcode PlanStep} tree, sends each fetch through
 * an injected subgraph client, builds deduplicated representations for entity
 * fetches, merges results in place at their paths and re-paths subgraph errors
 * to the client's response path. No graphql-js `execute` here.
 *
 * Over 600 lines: the fetch, batch, entity cache, merge and error paths share
 * the executor's per-request state (data, layers, error sinks, the answers
 * shared results compare); the pure pieces live beside it (`execute_types.ts`,
 * `_subgraph_answer.ts`, `_entity_part.ts`, `entity_batch.ts`, `entity_cache.ts`,
 * `_data.ts`, `_answer_keys.ts`, `subgraph_errors.ts`).
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import type { FetchRecord } from "../types.ts";
import { RouterError } from "../../errors.ts";
import {
  filterSubgraphError,
  malformedResponse,
  MAX_ERRORS_PER_FETCH,
  RAW_SUBGRAPH_ERRORS,
  wrapSubgraphErrors,
} from "./subgraph_errors.ts";
import { Layers } from "./_layers.ts";
import { notGraphQL } from "./_answer_faults.ts";
import { collect, collectPaths, collectWithAncestors, isObject, mergeInto } from "./_data.ts";
import { RepresentationIndex } from "./_rep_index.ts";
import type { FetchStep, PlanStep } from "../plan/mod.ts";
import type {
  ExecutedData,
  ExecutePlanOptions,
  PlanRun,
  SubgraphResponse,
} from "./execute_types.ts";
import {
  clientPath,
  jsonSize,
  parseOnce,
  sameType,
  selects,
  withoutPath,
} from "./_subgraph_answer.ts";

export type {
  ExecutedData,
  ExecutePlanOptions,
  PlanRun,
  SubgraphResponse,
  SubgraphSender,
} from "./execute_types.ts";
import { batchedChildren, batchVariable, type EntityBatch, partOfAnswer } from "./entity_batch.ts";
import { entityBody, type EntityPart, restrict } from "./_entity_part.ts";
import {
  cachedFetch,
  lookupEntities,
  lookupRoot,
  storeEntities,
  storeRoot,
} from "./entity_cache.ts";

type Json = Record<string, unknown>;

/** The headers of an answer served from the entity cache. */
const CACHED_HEADERS = new Headers();

/** Whether a merged answer may be stored: a 2xx GraphQL answer without errors. */
function storable(got: { readonly response: SubgraphResponse; readonly payload: Json } | null) {
  return got !== null && got.response.status >= 200 && got.response.status <= 299 &&
    got.payload.errors === undefined;
}

function pick(variables: Readonly<Record<string, unknown>>, names: readonly string[]): Json {
  const out: Json = {};
  for (const name of names) if (name in variables) out[name] = variables[name];
  return out;
}

/**
 * From this length on, a root answer run beside others is parsed only once its
 * siblings answered: a full collection during the wait would otherwise count
 * the parsed answer as live and let the heap grow to a multiple of it (an 8 MB
 * answer held 100 ms: peak RSS 600–720 → 294 MiB at the same CPU). Smaller
 * answers are parsed at once: their parse overlaps the wait.
 */
const PARSE_LATE_CHARS = 1 << 20;

/** Opens once each of a parallel group's children arrived (each counted once). */
class Gate {
  readonly #arrived = new Set<unknown>();
  readonly #size: number;
  readonly #open: Promise<void>;
  #resolve!: () => void;

  constructor(size: number) {
    this.#size = size;
    this.#open = new Promise((resolve) => this.#resolve = resolve);
  }

  arrive(child: unknown): Promise<void> {
    this.#arrived.add(child);
    if (this.#arrived.size >= this.#size) this.#resolve();
    return this.#open;
  }
}

class Executor {
  readonly data: Json = {};
  readonly layers: Layers;
  /** Errors per fetch, by the fetch's plan index (so the order never depends on timing). */
  readonly errorsByFetch: GraphQLFormattedError[][] = [];
  readonly #options: ExecutePlanOptions;

  /** Subgraph objects may be shared with other requests (and never change). */
  readonly #shared: boolean;
  /**
   * The shared subgraph answers merged, by fetch index (`answers` of
   * {@linkcode ExecutedData}); null once a fetch was answered otherwise.
   */
  answers: (object | undefined)[] | null;
  /** A lower bound of the JSON size of the subgraph errors forwarded so far. */
  errorBytes = 0;
  /**
   * The plan's only fetch, a root fetch run by {@linkcode executePlan}: its
   * answer is merged whole, not cut to its keys (nothing else is merged).
   */
  sole: FetchStep | null = null;
  /** Fetches started (deferred branches share one: it runs once). */
  readonly #runs = new Map<FetchStep, Promise<void>>();
  /**
   * Root fetches run side by side, by the gate a big answer waits at before it
   * is parsed ({@linkcode PARSE_LATE_CHARS}): until every sibling answered (or
   * ended), so that it is parsed when it can be merged and shaped at once, not
   * held parsed (and kept live through the collector's runs) while a slower
   * sibling waits.
   */
  readonly #gates = new Map<FetchStep, Gate>();

  constructor(options: ExecutePlanOptions) {
    this.#options = options;
    this.#shared = options.sharedResponses !== false;
    this.layers = new Layers(this.data, { inPlace: !this.#shared });
    this.answers = this.#shared ? [] : null;
  }

  async run(step: PlanStep): Promise<void> {
    switch (step.kind) {
      case "Fetch": {
        let running = this.#runs.get(step);
        if (!running) this.#runs.set(step, running = this.#fetch(step));
        return await running;
      }
      case "Sequence":
        for (const s of step.steps) await this.run(s);
        return;
      case "Parallel": {
        const children = this.#options.batchEntityFetches === false
          ? step.steps
          : batchedChildren(step);
        const gate = new Gate(new Set(children).size);
        for (const c of children) {
          if (c.kind === "Fetch" && c.representations === null) this.#gates.set(c, gate);
        }
        await Promise.all(
          children.map((c) =>
            (c.kind === "Batch" ? this.#runBatch(c) : this.run(c)).finally(() => gate.arrive(c))
          ),
        );
        return;
      }
    }
  }

  #runBatch(batch: EntityBatch): Promise<void> {
    // A fetch already started by another part of the plan (a deferred branch) is not sent again;
    // fetches through the entity cache are looked up one by one.
    if (
      batch.steps.some((s) => this.#runs.has(s)) ||
      cachedFetch(this.#options.entityCache, batch.steps[0]!)
    ) {
      return Promise.all(batch.steps.map((s) => this.run(s))).then(() => {});
    }
    const running = this.#sendBatch(batch);
    for (const s of batch.steps) this.#runs.set(s, running);
    return running;
  }

  /** The objects an entity fetch starts from, and the types each may send (merged fetches). */
  #candidates(step: FetchStep): { candidates: Json[]; types: (ReadonlySet<string> | null)[] } {
    const candidates: Json[] = [];
    // A merged fetch sends, from each of its paths, only the types planned there.
    let types: (ReadonlySet<string> | null)[] = [null];
    if (step.targets) {
      types = [];
      for (const target of step.targets) {
        const before = candidates.length;
        collect(this.layers, this.data, target.path, 0, candidates);
        for (let i = before; i < candidates.length; i++) types.push(target.types);
      }
    } else collect(this.layers, this.data, step.path, 0, candidates);
    return { candidates, types };
  }

  async #fetch(step: FetchStep): Promise<void> {
    if (!step.representations) return this.#send(step, null);
    if (step.contextVariables) {
      // `@fromContext` values differ per ancestor: one request per distinct set of values.
      const groups = new Map<string, { values: Json; objects: Json[] }>();
      const found: Json[][] = [];
      collectWithAncestors(this.layers, this.data, step.path, { index: 0, at: [], out: found });
      for (const at of found) {
        const values: Json = {};
        for (const v of step.contextVariables) {
          let value: unknown = at[v.path.length];
          for (const key of v.read) value = isObject(value) ? this.layers.get(value, key) : null;
          values[v.name] = value ?? null;
        }
        const key = JSON.stringify(values);
        const group = groups.get(key);
        if (group) group.objects.push(at[step.path.length]!);
        else groups.set(key, { values, objects: [at[step.path.length]!] });
      }
      await Promise.all(
        [...groups.values()].map((g) =>
          this.#send(step, { candidates: g.objects, types: [null], extra: g.values })
        ),
      );
      return;
    }
    await this.#send(step, { ...this.#candidates(step), extra: null });
  }

  /** Each distinct representation of the objects an entity fetch starts from, once. */
  #represent(
    step: FetchStep,
    candidates: readonly Json[],
    types: readonly (ReadonlySet<string> | null)[],
  ): EntityPart {
    const objects: Json[] = [];
    const indexes: number[] = [];
    const typenames: string[] = [];
    // Each distinct representation once; its JSON is both the dedup key and the body part.
    const index = new RepresentationIndex(this.layers, {
      selections: step.representations!,
      sendTypename: step.sendTypename,
      shared: this.#shared,
    });
    for (let c = 0; c < candidates.length; c++) {
      const object = candidates[c]!;
      const layer = this.layers.layerOf(object);
      const typename = layer !== undefined && "__typename" in layer
        ? layer.__typename
        : object.__typename;
      if (typeof typename !== "string") continue;
      if (step.targets && !types[c]?.has(typename)) continue;
      const at = index.indexOf(object, typename, layer);
      if (at === null) continue;
      objects.push(object);
      indexes.push(at);
      typenames.push(typename);
    }
    return { objects, indexes, typenames, representations: index.json };
  }

  /** Sends one request of a fetch (entity fetches: for the given objects) and merges it. */
  async #send(
    step: FetchStep,
    batch: {
      readonly candidates: readonly Json[];
      readonly types: readonly (ReadonlySet<string> | null)[];
      /** Variables added to the client's (`@fromContext` values). */
      readonly extra: Json | null;
    } | null,
  ): Promise<void> {
    const options = this.#options;
    const variables = pick(options.variables, step.variableUsages);
    if (batch?.extra) Object.assign(variables, batch.extra);
    const variablesJson = JSON.stringify(variables);
    const answered = options.answered?.step === step ? options.answered.response : null;
    const cache = options.entityCache;
    const cached = answered === null && cachedFetch(cache, step);
    // Not through the cache: the client answer cannot be cached either.
    if (cache !== undefined && !cached && answered === null) cache.policy.uncacheable();
    if (step.representations && batch) {
      const entity = this.#represent(step, batch.candidates, batch.types);
      if (entity.representations.length === 0) return;
      if (cached) return await this.#cachedEntities(step, entity, variablesJson);
      await this.#exchange(step, entityBody(step, entity.representations, variablesJson), {
        entity,
        given: answered,
      });
      return;
    }
    const body = `{"query":${step.queryJson},"variables":${variablesJson}}`;
    if (!cached) {
      await this.#exchange(step, body, { entity: null, given: answered });
      return;
    }
    const lookup = await lookupRoot(cache!, { step, variablesJson, rootType: "Query" });
    const given = lookup.body === null ? null : {
      status: 200,
      headers: CACHED_HEADERS,
      body: lookup.body,
      deduplicated: false,
      // Shared by every request this entry serves (parsed once), or its own.
      parsed: lookup.holder ?? {},
    };
    if (given !== null && lookup.holder === null) this.answers = null;
    const got = await this.#exchange(step, body, {
      entity: null,
      given,
      ...(given ? { mark: "hit" as const } : {}),
    });
    if (given !== null) return;
    storeRoot(cache!, { ...lookup, type: "Query" }, {
      subgraph: step.subgraph,
      headers: got?.response.headers ?? CACHED_HEADERS,
      ok: storable(got),
      payload: got?.payload,
    });
  }

  /**
   * An entity fetch through the entity cache: the cached entities merged, the
   * subgraph asked only for the missing ones, and those stored.
   */
  async #cachedEntities(step: FetchStep, entity: EntityPart, variablesJson: string) {
    const cache = this.#options.entityCache!;
    const lookup = await lookupEntities(cache, {
      step,
      representations: entity.representations,
      variablesJson,
    });
    const missing = new Set(lookup.missing);
    if (missing.size < entity.representations.length) {
      // Answered wholly by entries others are served too: identical requests share the
      // result, as with a shared answer; in part: this request's data is its own.
      if (lookup.holder !== null) {
        this.#answered(step, { parsed: lookup.holder } as SubgraphResponse);
      } else this.answers = null;
      const hit = restrict(entity, (at) => !missing.has(at));
      const payload = {
        data: { _entities: lookup.hits.filter((_, at) => !missing.has(at)) },
      };
      const observer = this.#options.observer;
      if (observer) {
        const body = JSON.stringify(payload);
        this.#record(step, entityBody(step, hit.representations, variablesJson), {
          objects: this.#rawInput(hit),
          startNs: observer.now(),
          response: { status: 200, headers: CACHED_HEADERS, body, deduplicated: false },
          mark: "hit",
        });
      }
      this.#merge(step, payload, hit);
    }
    if (missing.size === 0) return;
    const part = restrict(entity, (at) => missing.has(at));
    const got = await this.#exchange(step, entityBody(step, part.representations, variablesJson), {
      entity: part,
      given: null,
      ...(missing.size < entity.representations.length ? { mark: "partial" as const } : {}),
    });
    const data = got?.payload.data;
    const entities = isObject(data) && Array.isArray(data._entities) ? data._entities : null;
    storeEntities(cache, lookup, {
      subgraph: step.subgraph,
      headers: got?.response.headers ?? CACHED_HEADERS,
      ok: storable(got),
      entities,
    });
  }

  /**
   * Sends one request (or takes the answer given: a subscription event, a cache
   * hit), records it, and merges its GraphQL answer. Null: it failed.
   */
  async #exchange(
    step: FetchStep,
    body: string,
    how: {
      readonly entity: EntityPart | null;
      readonly given: SubgraphResponse | null;
      /** The trace's mark: served from the entity cache (`hit`), or only its misses sent. */
      readonly mark?: "hit" | "partial";
    },
  ): Promise<{ readonly response: SubgraphResponse; readonly payload: Json } | null> {
    const options = this.#options;
    const { entity, given } = how;
    const observer = options.observer;
    const startNs = observer?.now() ?? 0;
    // Trace only: snapshot the raw input now; parallel siblings merge into `objects` meanwhile.
    const objects = this.#rawInput(entity);
    const mark = how.mark === undefined ? {} : { mark: how.mark };
    let response: SubgraphResponse;
    try {
      response = given ??
        await options.send(step.subgraph, body, step.node.operationKind === "query");
    } catch (error) {
      this.#gates.get(step)?.arrive(step);
      const message = this.#failed(step, error);
      if (observer) {
        this.#record(step, body, { objects, startNs, response: null, message, ...mark });
      }
      return null;
    }
    if (observer) this.#record(step, body, { objects, startNs, response, ...mark });
    const gate = this.#gates.get(step);
    if (gate) {
      // A big answer waits (its parse no longer overlaps the wait: latency for memory).
      if (response.body.length >= PARSE_LATE_CHARS) await gate.arrive(step);
      else gate.arrive(step);
    }
    this.#answered(step, response);
    const payload = parseOnce(response, step, { cut: step !== this.sole });
    if (!this.#graphQLAnswer(step, response, payload)) return null;
    this.#merge(step, payload, entity);
    return { response, payload };
  }

  /** Sends the fetches of a batch as one request and merges each part's share. */
  async #sendBatch(batch: EntityBatch): Promise<void> {
    const options = this.#options;
    const parts = batch.steps.map((step) => {
      const { candidates, types } = this.#candidates(step);
      return this.#represent(step, candidates, types);
    });
    if (parts.every((p) => p.representations.length === 0)) return;
    const variablesJson = JSON.stringify(pick(options.variables, batch.variableUsages));
    const rest = variablesJson === "{}" ? "" : `,${variablesJson.slice(1, -1)}`;
    const representations = parts.map((p, i) =>
      `"${batchVariable(i)}":[${p.representations.join(",")}]`
    );
    const body = `{"query":${batch.queryJson},"variables":{${representations.join(",")}${rest}}}`;
    const first = batch.steps[0]!;
    const observer = options.observer;
    const startNs = observer?.now() ?? 0;
    const rawInputs = parts.map((p) => this.#rawInput(p));
    let response: SubgraphResponse;
    try {
      response = await options.send(batch.subgraph, body, true);
    } catch (error) {
      // One request failed: said once, at the first fetch.
      const message = this.#failed(first, error);
      if (observer) {
        batch.steps.forEach((s, i) =>
          this.#record(s, body, { objects: rawInputs[i]!, startNs, response: null, message })
        );
      }
      return;
    }
    if (observer) {
      batch.steps.forEach((s, i) =>
        this.#record(s, body, { objects: rawInputs[i]!, startNs, response })
      );
    }
    for (const step of batch.steps) this.#answered(step, response);
    const payload = parseOnce(response, batch);
    if (!this.#graphQLAnswer(first, response, payload)) return;
    batch.steps.forEach((step, i) => this.#merge(step, partOfAnswer(payload, i), parts[i]!));
  }

  /** Trace only: the objects an entity request started from, as they were when it was sent. */
  #rawInput(entity: EntityPart | null): Json[] {
    if (!this.#options.observer || entity === null || entity.objects.length === 0) return [];
    return this.layers.materialize(entity.objects) as Json[];
  }

  /** Records why a request failed as the fetch's error; returns the message. */
  #failed(step: FetchStep, error: unknown): string {
    // The client's own errors (an answer over the size limit) say what was wrong.
    const own = error instanceof RouterError ? error : null;
    const code = own !== null
      ? own.code
      : error instanceof DOMException && error.name === "TimeoutError"
      ? "DEADLINE_EXCEEDED"
      : "SUBGRAPH_UNREACHABLE";
    const message = own !== null
      ? own.message
      : code === "DEADLINE_EXCEEDED"
      ? `The subgraph "${step.subgraph}" did not answer in time`
      // The cause (it names the subgraph's URL, host and port) is not for clients.
      : `Cannot reach the subgraph "${step.subgraph}"`;
    this.#sink(step).push({ message, extensions: { code, serviceName: step.subgraph } });
    // Why a fetch failed is this request's own (its deadline, its client gone).
    this.answers = null;
    return message;
  }

  /**
   * Whether an answer is a GraphQL response (else the fetch's error says what it
   * is); a non-2xx status is reported at the fetch whatever the body.
   */
  #graphQLAnswer(
    step: FetchStep,
    response: SubgraphResponse,
    payload: unknown,
  ): payload is Json {
    if (!isObject(payload) || (!("data" in payload) && !("errors" in payload))) {
      this.#sink(step).push(notGraphQL(step.subgraph, response, payload));
      return false;
    }
    const status = response.status;
    if (status < 200 || status > 299) {
      // Apollo Router's rule (safer than Cosmo's, which serves a 5xx's data as a
      // success): the data and errors are kept, and the fetch is reported failed.
      this.#sink(step).push({
        message: `The subgraph "${step.subgraph}" answered HTTP ${status}, an error status`,
        extensions: { code: "SUBGRAPH_ERROR", serviceName: step.subgraph, statusCode: status },
      });
    }
    return true;
  }

  /** Merges a fetch's GraphQL answer: its data at its path or objects, its errors re-pathed. */
  #merge(step: FetchStep, payload: Json, entity: EntityPart | null): void {
    const options = this.#options;
    const malformed = malformedResponse(payload, { entities: step.representations !== null });
    if (malformed !== null) {
      this.#sink(step).push({
        message:
          `The subgraph "${step.subgraph}" answered a malformed GraphQL response: ${malformed}`,
        extensions: { code: "SUBGRAPH_ERROR", serviceName: step.subgraph },
      });
      return;
    }
    const data = payload.data;
    if (!step.representations || entity === null) {
      if (isObject(data)) {
        mergeInto(this.layers, this.data, data, options.abstractNames);
      }
      this.#rewrite(step);
      this.#errors(payload.errors, step, null);
      return;
    }
    const { objects, indexes, typenames } = entity;
    const sent = entity.representations.length;
    const entities = isObject(data) ? data._entities : undefined;
    if (Array.isArray(entities) && entities.length !== sent) {
      // Merged by position, a list of another length would give objects other entities' data.
      this.#sink(step).push({
        message:
          `The subgraph "${step.subgraph}" answered ${entities.length} entities for ${sent} representations`,
        extensions: { code: "SUBGRAPH_ERROR", serviceName: step.subgraph },
      });
      return;
    }
    /** Representations answered with an entity of another type (errors of their own). */
    let foreign: Set<number> | null = null;
    if (Array.isArray(entities)) {
      for (let i = 0; i < objects.length; i++) {
        const at = indexes[i]!;
        const entity = entities[at];
        if (!isObject(entity)) continue;
        // Another type's fields (a Brand's `name` for a Product) would be this
        // object's data, silently wrong: the entity is not merged.
        if (!sameType(entity.__typename, typenames[i]!, options.abstractNames)) {
          (foreign ??= new Set()).add(at);
          continue;
        }
        mergeInto(this.layers, objects[i]!, entity, options.abstractNames);
      }
    }
    this.#rewrite(step);
    let errors = payload.errors;
    if (foreign !== null) {
      // Placed like the subgraph's entity errors (first: never cut by the error cap).
      const own = [...foreign].map((at) => ({
        message:
          `The subgraph "${step.subgraph}" answered an entity of another type than its representation's`,
        path: ["_entities", at],
        extensions: { code: "SUBGRAPH_ERROR", serviceName: step.subgraph },
      }));
      errors = Array.isArray(errors) ? [...own, ...errors] : own;
    }
    this.#errors(errors, step, { objects, indexes });
  }

  #rewrite(step: FetchStep): void {
    for (const rewrite of step.rewrites) {
      const objects: Json[] = [];
      const layers = this.layers;
      collect(layers, this.data, rewrite.path, 0, objects);
      for (const object of objects) {
        if (layers.get(object, "__typename") !== rewrite.type) continue;
        if (!layers.has(object, rewrite.from)) continue;
        layers.set(object, rewrite.to, layers.get(object, rewrite.from));
        layers.set(object, rewrite.from, undefined);
      }
    }
  }

  /** Notes the answer a fetch merged (a fetch sending several requests has no single one). */
  #answered(step: FetchStep, response: SubgraphResponse): void {
    const answers = this.answers;
    if (answers === null) return;
    if (response.parsed === undefined || answers[step.index] !== undefined) this.answers = null;
    else answers[step.index] = response.parsed;
  }

  #sink(step: FetchStep): GraphQLFormattedError[] {
    return (this.errorsByFetch[step.index] ??= []);
  }

  #errors(
    errors: unknown,
    step: FetchStep,
    entity: { objects: Json[]; indexes: number[] } | null,
  ): void {
    if (!Array.isArray(errors)) return;
    const policy = this.#options.subgraphErrors ?? RAW_SUBGRAPH_ERRORS;
    const sink: GraphQLFormattedError[] = [];
    let paths: Map<Json, (string | number)[]> | null = null;
    /** Positions the errors were placed at: an entity error goes to every object of its entity. */
    let positions = 0;
    /** The JSON size of the error being placed, without its path. */
    let size = 0;
    // One entity error is repeated at each object sharing the representation (a
    // thousand products of one brand): the copies are capped and counted like the
    // errors, and their bytes like the response's (a 1 MB answer made gigabytes).
    const forward = (error: GraphQLFormattedError): void => {
      positions++;
      if (sink.length >= MAX_ERRORS_PER_FETCH) return;
      this.#charge(size + 2 * (error.path?.length ?? 0));
      // The planner's aliases (`value__alias_0`) are named back as in the data.
      const path = error.path;
      const named = path === undefined ? path : clientPath(path, step.rewrites);
      sink.push(named === path || named === undefined ? error : { ...error, path: named });
    };
    // A subgraph cannot make the client's answer carry unbounded errors.
    for (const raw of errors.slice(0, MAX_ERRORS_PER_FETCH)) {
      if (!isObject(raw)) continue;
      const error = filterSubgraphError(raw, step.subgraph, policy) as unknown as Json;
      const path = Array.isArray(error.path) ? error.path as (string | number)[] : null;
      size = jsonSize(withoutPath(error));
      // A path must name what the fetch selected (a root field; an entity's field),
      // else it points nowhere in the client's response: the error keeps no path.
      if (path !== null && !selects(step, entity ? path.slice(2, 3) : path.slice(0, 1))) {
        forward(withoutPath(error));
        continue;
      }
      if (!entity || !path || path[0] !== "_entities" || typeof path[1] !== "number") {
        forward(
          entity && path?.[0] === "_entities"
            ? withoutPath(error)
            : (error as unknown as GraphQLFormattedError),
        );
        continue;
      }
      if (!paths) {
        paths = new Map();
        for (const target of step.targets ?? [step]) {
          collectPaths(this.layers, this.data, target.path, 0, [], paths);
        }
      }
      const index = path[1];
      let placed = false;
      for (let i = 0; i < entity.objects.length; i++) {
        if (entity.indexes[i] !== index) continue;
        const at = paths.get(entity.objects[i]!);
        if (!at) continue;
        forward(
          { ...error, path: [...at, ...path.slice(2)] } as unknown as GraphQLFormattedError,
        );
        placed = true;
      }
      if (!placed) forward(withoutPath(error));
    }
    if (errors.length > MAX_ERRORS_PER_FETCH || positions > sink.length) {
      const message = errors.length > MAX_ERRORS_PER_FETCH
        ? `The subgraph "${step.subgraph}" sent ${errors.length} errors; the first ${MAX_ERRORS_PER_FETCH} are forwarded`
        : `The subgraph "${step.subgraph}" sent errors for ${positions} positions in the response; the first ${MAX_ERRORS_PER_FETCH} are forwarded`;
      this.#charge(message.length + 40);
      sink.push({ message, extensions: { code: "SUBGRAPH_ERROR", serviceName: step.subgraph } });
    }
    if (sink.length === 0) return;
    if (policy.mode === "wrapped") {
      this.#sink(step).push(wrapSubgraphErrors(sink, step.subgraph, policy));
    } else this.#sink(step).push(...sink);
  }

  /** Counts forwarded error bytes toward the response's limit (`maxBytes`). */
  #charge(bytes: number): void {
    this.errorBytes += bytes;
    const limit = this.#options.maxBytes ?? Infinity;
    if (this.errorBytes <= limit) return;
    throw this.#options.tooLarge?.() ??
      new RangeError(`The response would exceed ${limit} bytes`);
  }

  #record(
    step: FetchStep,
    body: string,
    at: {
      readonly objects: Json[];
      readonly startNs: number;
      readonly response: SubgraphResponse | null;
      readonly message?: string;
      readonly mark?: "hit" | "partial";
    },
  ): void {
    const observer = this.#options.observer;
    if (!observer) return;
    const { objects, startNs, response, message: error } = at;
    const request = this.#options.describe?.(step.subgraph, body) ??
      { method: "POST", url: "", headers: new Headers(), body };
    const kind = !step.representations ? "Single" : objects.length === 1 ? "Entity" : "BatchEntity";
    const record: FetchRecord = {
      node: step.node,
      kind,
      subgraph: step.subgraph,
      path: [this.#options.operationKind, ...step.path].join("."),
      rawInputData: step.representations ? objects : null,
      request,
      ...(response
        ? {
          response: { status: response.status, headers: response.headers, body: response.body },
        }
        : {}),
      ...(error === undefined ? {} : { error }),
      deduplicated: response?.deduplicated ?? false,
      ...(at.mark === undefined ? {} : { cached: at.mark }),
      startNs,
      ...(response?.firstByteNs === undefined ? {} : { firstByteNs: response.firstByteNs }),
      endNs: observer.now(),
    };
    observer.fetch(record);
  }
}

/**
 * Starts running a plan in parts: the executor of {@linkcode executePlan}, kept between parts.
 * @param options Subgraph sender, variables, observer.
 * @returns The run.
 */
export function startPlan(options: ExecutePlanOptions): PlanRun {
  const executor = new Executor(options);
  const taken = new Set<number>();
  return {
    data: executor.data,
    layers: executor.layers,
    run: (step) => step ? executor.run(step) : Promise.resolve(),
    takeErrors(of) {
      const errors: GraphQLFormattedError[] = [];
      executor.errorsByFetch.forEach((list, index) => {
        if (!list || taken.has(index) || (of && !of(index))) return;
        taken.add(index);
        errors.push(...list);
      });
      return errors;
    },
    errorBytes: () => executor.errorBytes,
  };
}

/**
 * Executes a plan.
 *
 * @example A root fetch merged into the data
 * ```ts
 * import assert from "node:assert/strict";
 * import { executePlan } from "./execute.ts";
 * const step = {
 *   rewrites: [], index: 0, queryJson: JSON.stringify("{hello}"),
 *   kind: "Fetch" as const,
 *   node: { kind: "Fetch" as const, serviceName: "a", variableUsages: [], operation: "{hello}", operationKind: "query" as const },
 *   subgraph: "a", path: [], representations: null, sendTypename: new Map(), variableUsages: [],
 * };
 * const send = () => Promise.resolve({
 *   status: 200, headers: new Headers(), body: '{"data":{"hello":"hi"}}', deduplicated: false,
 * });
 * const result = await executePlan(step, { send, variables: {}, operationKind: "query" });
 * assert.deepEqual(result.data, { hello: "hi" });
 * ```
 * @param step The plan's executable root.
 * @param options Subgraph sender, variables, observer.
 * @returns Merged data and errors.
 */
export async function executePlan(
  step: PlanStep | null,
  options: ExecutePlanOptions,
): Promise<ExecutedData> {
  const executor = new Executor(options);
  if (step?.kind === "Fetch" && step.representations === null) executor.sole = step;
  if (step) await executor.run(step);
  const errors: GraphQLFormattedError[] = [];
  for (const list of executor.errorsByFetch) if (list) errors.push(...list);
  return {
    data: executor.data,
    errors,
    layers: executor.layers,
    answers: executor.answers,
    errorBytes: executor.errorBytes,
  };
}
