/**
 * Hot-path storage of the router's metrics. prom-client re-validates and
 * re-hashes the labels of every `inc`/`observe` (its `labels()` children
 * too) and allocates on each; per request that was most of the cost of
 * metrics (issue 16). Here a series is a plain cell found once per label
 * value by a walk down nested maps (no key strings built), and recording is a
 * number addition. prom-client still owns the registry and the exposition:
 * counters and gauges hand their cells to prom-client in `collect()` (run at
 * each scrape), and a histogram is a registered metric whose `get()` returns
 * prom-client's shape.
 *
 * @module
 */
import { Counter, Gauge, type Histogram, type Registry } from "prom-client";

/** A label value as recorded: numbers (status codes) print as prom-client prints them; null is empty. */
export type LabelKey = string | number | null;

/** The labels of one series, by label name. */
export type SeriesLabels = Readonly<Record<string, string>>;

/** One counter or gauge series. */
export interface ValueCell {
  /** Counters: added since the last scrape; gauges: the value. */
  value: number;
  readonly labels: SeriesLabels;
}

/** One histogram series. */
export interface HistogramCell {
  /** The histogram's upper bounds, ascending (`+Inf` implied). */
  readonly bounds: readonly number[];
  /** Observations per bucket, not cumulative; the last one is `+Inf`. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
  readonly labels: SeriesLabels;
}

/**
 * One level of a metric's series: `at(value)` goes one label down, `cell()`
 * (after the last label) is the series. Nodes are made once per distinct
 * label value; callers keep every label bounded, so the tree is bounded.
 */
export class SeriesNode<C> {
  readonly #children = new Map<LabelKey, SeriesNode<C>>();
  readonly #make: (values: readonly LabelKey[]) => C;
  readonly #values: readonly LabelKey[];
  #cell: C | undefined;

  /**
   * A node; use {@linkcode counterSeries}, {@linkcode gaugeSeries} or {@linkcode histogramSeries}.
   * @param make Makes the cell of a leaf from its label values.
   * @param values The label values above this node.
   */
  constructor(make: (values: readonly LabelKey[]) => C, values: readonly LabelKey[] = []) {
    this.#make = make;
    this.#values = values;
  }

  /**
   * The node one label down.
   * @param value The label's value.
   * @returns The node (made on first use).
   */
  at(value: LabelKey): SeriesNode<C> {
    let child = this.#children.get(value);
    if (child === undefined) {
      child = new SeriesNode(this.#make, [...this.#values, value]);
      this.#children.set(value, child);
    }
    return child;
  }

  /**
   * The series of the label values above (call on a node one level per label down).
   * @returns The cell (made on first use).
   */
  cell(): C {
    return this.#cell ??= this.#make(this.#values);
  }

  /** Forgets every series below (a registry reset). */
  clear(): void {
    this.#children.clear();
    this.#cell = undefined;
  }
}

/** Name, help, labels and registry of a metric. */
export interface SeriesConfig {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly registry: Registry;
}

function labelsOf(names: readonly string[], values: readonly LabelKey[]): SeriesLabels {
  const labels: Record<string, string> = {};
  for (const [i, name] of names.entries()) {
    const value = values[i];
    labels[name] = value === null || value === undefined ? "" : String(value);
  }
  return labels;
}

/** The cells of a counter or gauge, listed for the scrape, and the tree that finds them. */
function valueCells(
  labelNames: readonly string[],
): { readonly cells: ValueCell[]; readonly root: SeriesNode<ValueCell> } {
  const cells: ValueCell[] = [];
  const root = new SeriesNode((values) => {
    const cell = { value: 0, labels: labelsOf(labelNames, values) };
    cells.push(cell);
    return cell;
  });
  return { cells, root };
}

/**
 * A prom-client counter fed from cells: the hot path adds to `value`; each
 * scrape moves what was added into the counter.
 *
 * @example Two series
 * ```ts
 * import assert from "node:assert/strict";
 * import { Registry } from "prom-client";
 * import { counterSeries } from "./_series.ts";
 * const registry = new Registry();
 * const hits = counterSeries({ name: "hits_total", help: "Hits.", labelNames: ["cache"], registry });
 * hits.at("plan").cell().value += 2;
 * hits.at("parse").cell().value++;
 * assert.match(await registry.metrics(), /hits_total\{cache="plan"\} 2\nhits_total\{cache="parse"\} 1/);
 * ```
 * @param config Name, help, label names and registry.
 * @returns The root of its series.
 */
export function counterSeries(config: SeriesConfig): SeriesNode<ValueCell> {
  const { cells, root } = valueCells(config.labelNames);
  new Counter({
    name: config.name,
    help: config.help,
    labelNames: [...config.labelNames],
    registers: [config.registry],
    collect() {
      for (const cell of cells) {
        if (cell.value === 0) continue;
        this.inc(cell.labels, cell.value);
        cell.value = 0;
      }
    },
  });
  return root;
}

/**
 * A prom-client gauge fed from cells: the hot path moves `value`; each
 * scrape sets the gauge to it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Registry } from "prom-client";
 * import { gaugeSeries } from "./_series.ts";
 * const registry = new Registry();
 * const active = gaugeSeries({ name: "active", help: "Active.", labelNames: ["m"], registry });
 * const cell = active.at("GET").cell();
 * cell.value++;
 * cell.value++;
 * cell.value--;
 * assert.match(await registry.metrics(), /active\{m="GET"\} 1/);
 * ```
 * @param config Name, help, label names and registry.
 * @returns The root of its series.
 */
export function gaugeSeries(config: SeriesConfig): SeriesNode<ValueCell> {
  const { cells, root } = valueCells(config.labelNames);
  new Gauge({
    name: config.name,
    help: config.help,
    labelNames: [...config.labelNames],
    registers: [config.registry],
    collect() {
      for (const cell of cells) this.set(cell.labels, cell.value);
    },
  });
  return root;
}

/** Options of {@linkcode histogramSeries}. */
export interface HistogramSeriesConfig extends SeriesConfig {
  /** Upper bounds, ascending (`+Inf` is implied). */
  readonly buckets: readonly number[];
}

/**
 * Records one observation in a histogram cell (a value on a bound falls in its
 * bucket; NaN and infinities are dropped).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { observe } from "./_series.ts";
 * const cell = { bounds: [0.1, 1], counts: new Float64Array(3), sum: 0, count: 0, labels: {} };
 * observe(cell, 0.5);
 * observe(cell, 1);
 * observe(cell, 7);
 * assert.deepEqual([...cell.counts], [0, 2, 1]);
 * assert.equal(cell.sum, 8.5);
 * assert.equal(cell.count, 3);
 * ```
 * @param cell The series.
 * @param value The observed value.
 */
export function observe(cell: HistogramCell, value: number): void {
  // prom-client refused these (by throwing); one would poison the sum for good.
  if (!Number.isFinite(value)) return;
  const bounds = cell.bounds;
  let i = 0;
  while (i < bounds.length && value > (bounds[i] as number)) i++;
  cell.counts[i]! += 1;
  cell.sum += value;
  cell.count += 1;
}

/** One value of prom-client's histogram snapshot (`get()`), field for field. */
interface HistogramValue {
  value: number;
  metricName: string;
  exemplar: null | undefined;
  labels: Record<string, string | number>;
}

/**
 * The metric a registry reads: what prom-client's own `Histogram` gives
 * `registry.metrics()` and `getMetricsAsJSON()`, built from the cells.
 */
class CellHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  readonly #cells: HistogramCell[];
  readonly #root: SeriesNode<HistogramCell>;

  constructor(
    config: HistogramSeriesConfig,
    store: { cells: HistogramCell[]; root: SeriesNode<HistogramCell> },
  ) {
    this.name = config.name;
    this.help = config.help;
    this.#cells = store.cells;
    this.#root = store.root;
  }

  get(): Promise<
    { name: string; help: string; type: string; values: HistogramValue[]; aggregator: string }
  > {
    const values: HistogramValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const cell of this.#cells) {
      let acc = 0;
      for (const [i, le] of cell.bounds.entries()) {
        acc += cell.counts[i] ?? 0;
        values.push({
          value: acc,
          metricName: bucket,
          exemplar: null,
          labels: { le, ...cell.labels },
        });
      }
      values.push(
        {
          value: cell.count,
          metricName: bucket,
          exemplar: null,
          labels: { le: "+Inf", ...cell.labels },
        },
        {
          value: cell.sum,
          metricName: `${this.name}_sum`,
          exemplar: undefined,
          labels: { ...cell.labels },
        },
        {
          value: cell.count,
          metricName: `${this.name}_count`,
          exemplar: undefined,
          labels: { ...cell.labels },
        },
      );
    }
    const { name, help, type, aggregator } = this;
    return Promise.resolve({ name, help, type, values, aggregator });
  }

  reset(): void {
    this.#cells.length = 0;
    this.#root.clear();
  }
}

/**
 * A histogram registered in a prom-client registry, recorded through cells
 * ({@linkcode observe}); the exposition is prom-client's.
 *
 * @example Buckets are cumulative in the exposition
 * ```ts
 * import assert from "node:assert/strict";
 * import { Registry } from "prom-client";
 * import { histogramSeries, observe } from "./_series.ts";
 * const registry = new Registry();
 * const seconds = histogramSeries({ name: "s", help: "S.", labelNames: ["r"], buckets: [0.1, 1], registry });
 * observe(seconds.at("/a").cell(), 0.5);
 * const text = await registry.metrics();
 * assert.match(text, /s_bucket\{le="0.1",r="\/a"\} 0\ns_bucket\{le="1",r="\/a"\} 1\n/);
 * assert.match(text, /s_sum\{r="\/a"\} 0.5\ns_count\{r="\/a"\} 1/);
 * ```
 * @param config Name, help, label names, buckets and registry.
 * @returns The root of its series.
 */
export function histogramSeries(config: HistogramSeriesConfig): SeriesNode<HistogramCell> {
  const cells: HistogramCell[] = [];
  const bounds = [...config.buckets];
  const size = bounds.length + 1;
  const root = new SeriesNode<HistogramCell>((values) => {
    const labels = labelsOf(config.labelNames, values);
    const cell = { bounds, counts: new Float64Array(size), sum: 0, count: 0, labels };
    cells.push(cell);
    return cell;
  });
  const metric = new CellHistogram(config, { cells, root });
  // The registry reads only `name`, `type`, `get()` and `reset()`; its types
  // list prom-client's own classes, hence the cast.
  config.registry.registerMetric(metric as unknown as Histogram<string>);
  return root;
}
