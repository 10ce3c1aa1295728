/**
 * The playground page: a top bar with the trace toggle and options, GraphiQL
 * (operation, variables and headers editors, schema-aware help through
 * introspection of the router), and the trace panel below it.
 *
 * @module
 */
import { GraphiQL } from "graphiql";
import { useCallback, useMemo, useRef, useState } from "react";
import { findTrace, readTrace, type TraceModel } from "../../lib/playground/trace_model.ts";
import { TraceView } from "./trace_view.tsx";

/** Every ART option the router understands, with its short label, in bar order. */
const OPTION_LABELS: readonly (readonly [string, string])[] = [
  ["exclude_parse_stats", "parse"],
  ["exclude_normalize_stats", "normalize"],
  ["exclude_validate_stats", "validate"],
  ["exclude_planner_stats", "planner"],
  ["exclude_raw_input_data", "raw input"],
  ["exclude_input", "input"],
  ["exclude_output", "output"],
  ["exclude_load_stats", "load stats"],
  ["enable_predictable_debug_timings", "predictable timings"],
];

/** Every ART option the router understands, in the order the bar shows them. */
export const TRACE_OPTIONS: readonly string[] = OPTION_LABELS.map(([option]) => option);

const STORAGE_KEY = "gw-playground:trace";

interface TraceSettings {
  readonly enabled: boolean;
  readonly options: readonly string[];
}

function loadSettings(): TraceSettings {
  try {
    const value = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "null");
    if (
      value && typeof value.enabled === "boolean" &&
      Array.isArray(value.options)
    ) {
      return {
        enabled: value.enabled,
        options: value.options.filter((o: unknown) => TRACE_OPTIONS.includes(String(o))),
      };
    }
  } catch {
    // Storage unavailable or corrupt: start from the defaults.
  }
  return { enabled: true, options: [] };
}

/** The `X-GW-Trace` value for the settings: `true`, or the checked options. */
export function traceHeaderValue(settings: TraceSettings): string {
  return settings.options.length === 0 ? "true" : settings.options.join(",");
}

const DEFAULT_QUERY = `# GW Router playground
#
# Ctrl-Space completes from the router's schema;
# Ctrl-Enter runs the operation. With "Trace" on,
# the request carries X-GW-Trace and the panel
# below shows the plan and a waterfall of the
# phases and fetches. "Load trace JSON" opens a
# trace from elsewhere (e.g. production).

{
  __typename
}
`;

/** Props of {@linkcode App}. */
export interface AppProps {
  /** Same-origin path of the GraphQL endpoint. */
  readonly graphqlPath: string;
}

/** The playground page. */
export function App({ graphqlPath }: AppProps) {
  const [settings, setSettings] = useState<TraceSettings>(loadSettings);
  const [trace, setTrace] = useState<TraceModel | null>(null);
  const [source, setSource] = useState<string>("");
  const [pasteOpen, setPasteOpen] = useState(false);
  const [traceHeight, setTraceHeight] = useState<number | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const settingsRef = useRef(settings);
  settingsRef.current = settings;

  const update = useCallback((next: TraceSettings) => {
    setSettings(next);
    try {
      localStorage.setItem(STORAGE_KEY, JSON.stringify(next));
    } catch {
      // Private mode: settings simply do not persist.
    }
  }, []);

  const fetcher = useMemo(() => {
    return async function fetcher(
      params: {
        query: string;
        operationName?: string | null;
        variables?: unknown;
      },
      opts?: { headers?: Record<string, unknown> },
    ) {
      const introspection = params.operationName === "IntrospectionQuery";
      const headers: Record<string, string> = {
        "content-type": "application/json",
        accept: "application/graphql-response+json, application/json",
      };
      for (const [name, value] of Object.entries(opts?.headers ?? {})) {
        headers[name] = String(value);
      }
      const current = settingsRef.current;
      if (current.enabled && !introspection) {
        headers["X-GW-Trace"] = traceHeaderValue(current);
      }
      const response = await fetch(graphqlPath, {
        method: "POST",
        headers,
        body: JSON.stringify(params),
        credentials: "same-origin",
      });
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return {
          errors: [{
            message: `HTTP ${response.status}: the router did not answer JSON`,
          }],
          extensions: { body: text.slice(0, 2000) },
        };
      }
      if (!introspection) {
        const found = findTrace(body);
        setTrace(found ? readTrace(found) : null);
        setNotice(
          found || !current.enabled
            ? null
            : "The response carried no trace. Outside dev mode (and without the force flag) " +
              "the router traces only requests with a valid X-GW-Token: add it under Headers.",
        );
        setSource(
          found ? `response of ${params.operationName || "the operation"}` : "",
        );
      }
      // deno-lint-ignore no-explicit-any
      return body as any;
    };
  }, [graphqlPath]);

  const toggleOption = (option: string) => {
    const options = settings.options.includes(option)
      ? settings.options.filter((o) => o !== option)
      : TRACE_OPTIONS.filter((o) => o === option || settings.options.includes(o));
    update({ ...settings, options });
  };

  const onPasted = (model: TraceModel) => {
    setTrace(model);
    setSource("pasted JSON");
    setNotice(null);
    setPasteOpen(false);
  };

  return (
    <div className="gw-app">
      <header className="gw-bar">
        <span className="gw-brand">GW Router</span>
        <label
          className="gw-toggle"
          title="Send X-GW-Trace with each operation"
        >
          <input
            type="checkbox"
            id="gw-trace-toggle"
            checked={settings.enabled}
            onChange={(e) => update({ ...settings, enabled: e.currentTarget.checked })}
          />
          Trace
        </label>
        <fieldset className="gw-options" disabled={!settings.enabled}>
          <span className="gw-options-title">exclude:</span>
          {OPTION_LABELS.map(([option, label]) => (
            <label
              key={option}
              className={option.startsWith("exclude_") ? "gw-option" : "gw-option gw-option-sep"}
              title={option}
            >
              <input
                type="checkbox"
                data-option={option}
                checked={settings.options.includes(option)}
                onChange={() => toggleOption(option)}
              />
              {label}
            </label>
          ))}
        </fieldset>
        <button
          type="button"
          id="gw-paste-toggle"
          className="gw-button"
          onClick={() => setPasteOpen(!pasteOpen)}
        >
          Load trace JSON
        </button>
      </header>
      <main className="gw-main">
        <div className="gw-graphiql">
          <GraphiQL
            fetcher={fetcher}
            defaultQuery={DEFAULT_QUERY}
            isHeadersEditorEnabled
          >
            <GraphiQL.Logo>GW Router</GraphiQL.Logo>
          </GraphiQL>
        </div>
        <Splitter onResize={setTraceHeight} />
        <TraceView
          height={traceHeight}
          notice={notice}
          trace={trace}
          source={source}
          pasteOpen={pasteOpen}
          onPasted={onPasted}
          onClosePaste={() => setPasteOpen(false)}
        />
      </main>
    </div>
  );
}

/**
 * The bar between GraphiQL and the trace panel: drag it (or use the arrow
 * keys) to give the trace more or less room.
 */
function Splitter({ onResize }: { onResize: (height: number) => void }) {
  const resizeTo = (clientY: number) => {
    const max = globalThis.innerHeight - 120;
    onResize(Math.round(Math.min(max, Math.max(80, globalThis.innerHeight - clientY))));
  };
  return (
    <div
      className="gw-splitter"
      role="separator"
      aria-orientation="horizontal"
      aria-label="Resize the trace panel"
      tabIndex={0}
      onPointerDown={(e) => {
        e.currentTarget.setPointerCapture(e.pointerId);
        e.preventDefault();
      }}
      onPointerMove={(e) => {
        if (e.currentTarget.hasPointerCapture(e.pointerId)) resizeTo(e.clientY);
      }}
      onKeyDown={(e) => {
        if (e.key !== "ArrowUp" && e.key !== "ArrowDown") return;
        const top = e.currentTarget.getBoundingClientRect().top;
        resizeTo(top + (e.key === "ArrowUp" ? -24 : 24));
        e.preventDefault();
      }}
    />
  );
}
