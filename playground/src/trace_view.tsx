/**
 * The trace panel: plan tree, waterfall (phases and fetches on one time axis)
 * and the detail of the selected fetch; plus the paste box that loads a trace
 * JSON from elsewhere.
 *
 * @module
 */
import { useState } from "react";
import {
  findTrace,
  formatNanos,
  type PlanTreeNode,
  readTrace,
  type TraceFetch,
  type TraceModel,
  type WaterfallRow,
} from "../../lib/playground/trace_model.ts";

/** Props of {@linkcode TraceView}. */
export interface TraceViewProps {
  readonly trace: TraceModel | null;
  /** Where the trace came from, for the heading. */
  readonly source: string;
  readonly pasteOpen: boolean;
  readonly onPasted: (model: TraceModel) => void;
  readonly onClosePaste: () => void;
  /** Height in CSS pixels set with the splitter, or null for the default. */
  readonly height: number | null;
  /** Why the last traced operation shows no trace, if it asked for one. */
  readonly notice: string | null;
}

/** The trace panel. */
export function TraceView(props: TraceViewProps) {
  const { trace } = props;
  const [selection, setSelection] = useState<
    { trace: TraceModel; index: number } | null
  >(null);
  const selected = trace && selection?.trace === trace ? trace.fetches[selection.index] : undefined;
  const select = (index: number) => trace && setSelection({ trace, index });
  return (
    <section
      className="gw-trace"
      aria-label="Trace"
      style={props.height === null ? undefined : { height: `${props.height}px` }}
    >
      {props.pasteOpen && <PasteBox onPasted={props.onPasted} onClose={props.onClosePaste} />}
      {trace === null
        ? (
          <p className="gw-empty">
            {props.notice && <span className="gw-notice">{props.notice}</span>}
            No trace yet. Turn on <b>Trace</b> and run an operation, or use <b>Load trace JSON</b>
            {" "}
            to inspect a trace from elsewhere.
          </p>
        )
        : (
          <>
            <TraceHeading trace={trace} source={props.source} />
            <div className="gw-trace-body">
              <div className="gw-pane gw-plan">
                <h3>Plan</h3>
                {trace.plan
                  ? (
                    <ul className="gw-tree">
                      <PlanNodeView
                        node={trace.plan}
                        selected={selected}
                        onSelect={select}
                      />
                    </ul>
                  )
                  : <p className="gw-muted">The trace has no fetches.</p>}
              </div>
              <div className="gw-pane gw-waterfall-pane">
                <h3>Waterfall</h3>
                <Waterfall
                  trace={trace}
                  selected={selected}
                  onSelect={select}
                />
              </div>
              <div className="gw-pane gw-detail">
                {selected ? <FetchDetail fetch={selected} /> : (
                  <>
                    <p className="gw-muted">
                      Click a fetch to see its input, output and load stats.
                    </p>
                    {trace.request !== undefined && (
                      <details className="gw-request">
                        <summary>Inbound request</summary>
                        <pre className="gw-json">{pretty(trace.request)}</pre>
                      </details>
                    )}
                  </>
                )}
              </div>
            </div>
          </>
        )}
    </section>
  );
}

function TraceHeading(
  { trace, source }: { trace: TraceModel; source: string },
) {
  const facts = Object.entries(trace.info).filter(([key, value]) =>
    !key.startsWith("trace_start") &&
    (typeof value !== "object" || value === null)
  );
  return (
    <div className="gw-trace-heading">
      <strong>Trace</strong>
      {source && <span className="gw-muted">from {source}</span>}
      {trace.version && <span className="gw-chip">version {trace.version}</span>}
      {trace.startTime && <span className="gw-chip">started {trace.startTime}</span>}
      <span className="gw-chip" id="gw-fetch-count">
        {trace.fetches.length === 1 ? "1 fetch" : `${trace.fetches.length} fetches`}
      </span>
      <span className="gw-chip">total {formatNanos(trace.totalNs)}</span>
      {facts.map(([key, value]) => <span key={key} className="gw-chip">{key}: {String(value)}
      </span>)}
    </div>
  );
}

interface SelectProps {
  readonly selected: TraceFetch | undefined;
  readonly onSelect: (index: number) => void;
}

function PlanNodeView(
  { node, selected, onSelect }: { node: PlanTreeNode } & SelectProps,
) {
  if (node.kind === "Fetch") {
    const { fetch } = node;
    return (
      <li className="gw-tree-fetch">
        <button
          type="button"
          className={fetch === selected ? "gw-fetch gw-selected" : "gw-fetch"}
          data-fetch-index={fetch.index}
          onClick={() => onSelect(fetch.index)}
        >
          <span className={`gw-kind gw-kind-${fetch.kind}`}>{fetch.kind}</span>
          <span className="gw-subgraph">{fetch.subgraph}</span>
          <span className="gw-path">{fetch.path}</span>
        </button>
      </li>
    );
  }
  return (
    <li className="gw-tree-group" data-kind={node.kind}>
      <span className="gw-group-kind">{node.kind}</span>
      <ul>
        {node.children.map((child, i) => (
          <PlanNodeView
            key={i}
            node={child}
            selected={selected}
            onSelect={onSelect}
          />
        ))}
      </ul>
    </li>
  );
}

function Waterfall(
  { trace, selected, onSelect }: { trace: TraceModel } & SelectProps,
) {
  const total = trace.totalNs;
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return (
    <div className="gw-wf" role="table" aria-label="Waterfall">
      <div className="gw-wf-row gw-wf-axis">
        <span className="gw-wf-label" />
        <div className="gw-wf-track">
          {ticks.map((t) => (
            <span
              key={t}
              className="gw-wf-tick"
              style={{ left: `${t * 100}%` }}
            >
              {formatNanos(t * total)}
            </span>
          ))}
        </div>
        <span className="gw-wf-dur" />
      </div>
      {trace.waterfall.map((row, i) => (
        <WaterfallBar
          key={i}
          row={row}
          kind={row.fetchIndex === null ? "phase" : trace.fetches[row.fetchIndex]?.kind ?? "Single"}
          total={total}
          selected={row.fetchIndex !== null &&
            row.fetchIndex === selected?.index}
          onSelect={onSelect}
        />
      ))}
    </div>
  );
}

function WaterfallBar(
  { row, kind, total, selected, onSelect }: {
    row: WaterfallRow;
    kind: string;
    total: number;
    selected: boolean;
    onSelect: (index: number) => void;
  },
) {
  const fetchIndex = row.fetchIndex;
  const recorded = row.startNs !== null;
  const left = ((row.startNs ?? 0) / total) * 100;
  const width = ((row.durationNs ?? 0) / total) * 100;
  const title = `${row.label}: starts at ${formatNanos(row.startNs)}, takes ${
    formatNanos(row.durationNs)
  }`;
  return (
    <div className="gw-wf-row" role="row" data-type={row.type}>
      <span className="gw-wf-label" title={row.label}>{row.label}</span>
      <div className="gw-wf-track">
        {recorded && (
          <button
            type="button"
            className={`gw-wf-bar gw-wf-${row.type} gw-wf-kind-${kind}${
              selected ? " gw-selected" : ""
            }`}
            data-type={row.type}
            data-fetch-index={fetchIndex ?? undefined}
            style={{ left: `${left}%`, width: `${width}%` }}
            title={title}
            aria-label={title}
            disabled={fetchIndex === null}
            onClick={() => fetchIndex !== null && onSelect(fetchIndex)}
          />
        )}
      </div>
      <span className="gw-wf-dur">
        {recorded ? formatNanos(row.durationNs) : "not recorded"}
      </span>
    </div>
  );
}

const DETAIL_TABS = [
  ["input", "Input"],
  ["rawInputData", "Raw input"],
  ["output", "Output"],
  ["loadStats", "Load stats"],
] as const;

type DetailTab = (typeof DETAIL_TABS)[number][0];

function FetchDetail({ fetch }: { fetch: TraceFetch }) {
  const [tab, setTab] = useState<DetailTab>("input");
  const value = fetch[tab];
  return (
    <div className="gw-fetch-detail" data-fetch-index={fetch.index}>
      <div className="gw-detail-head">
        <span className={`gw-kind gw-kind-${fetch.kind}`}>{fetch.kind}</span>
        <strong>{fetch.subgraph}</strong>
        <span className="gw-path">{fetch.path}</span>
        <span className="gw-muted">
          at {formatNanos(fetch.startNs)}, load {formatNanos(fetch.durationNs)}
        </span>
      </div>
      {fetch.error && <p className="gw-error">{fetch.error}</p>}
      <div className="gw-tabs" role="tablist">
        {DETAIL_TABS.map(([key, label]) => (
          <button
            key={key}
            type="button"
            role="tab"
            data-tab={key}
            aria-selected={tab === key}
            className={tab === key ? "gw-tab gw-tab-active" : "gw-tab"}
            onClick={() => setTab(key)}
          >
            {label}
          </button>
        ))}
      </div>
      <pre className="gw-json" data-tab-content={tab}>
        {value === undefined ? "(not in the trace: excluded by an option)" : pretty(value)}
      </pre>
    </div>
  );
}

function pretty(value: unknown): string {
  if (typeof value === "string") {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2);
}

function PasteBox(
  { onPasted, onClose }: {
    onPasted: TraceViewProps["onPasted"];
    onClose: () => void;
  },
) {
  const [text, setText] = useState("");
  const [error, setError] = useState("");
  const apply = () => {
    const found = findTrace(text);
    if (found === null) {
      setError(
        "Not a trace: paste the JSON of an ART trace or of a GraphQL response with extensions.trace",
      );
      return;
    }
    setError("");
    onPasted(readTrace(found));
  };
  return (
    <div className="gw-paste">
      <textarea
        id="gw-paste-input"
        spellCheck={false}
        placeholder="Paste a trace JSON (or a whole GraphQL response with extensions.trace)"
        value={text}
        onChange={(e) => setText(e.currentTarget.value)}
      />
      <div className="gw-paste-actions">
        <button
          type="button"
          id="gw-paste-apply"
          className="gw-button"
          onClick={apply}
        >
          Show trace
        </button>
        <button
          type="button"
          className="gw-button gw-secondary"
          onClick={onClose}
        >
          Cancel
        </button>
        {error && <span className="gw-error" id="gw-paste-error">{error}</span>}
      </div>
    </div>
  );
}
