/**
 * The browser side of the "Router" page, as text served at
 * `/playground/router.js` and `/playground/router.css` (the playground's CSP
 * allows no inline script or style). Plain DOM and SVG: no framework.
 *
 * @module
 */

/** The page's stylesheet. */
export const LIVE_VIEW_CSS = `
:root { color-scheme: light; --fg: #1f2430; --muted: #6b7280; --line: #e5e7eb; --bg: #f7f8fa;
  --a: #2563eb; --b: #db2777; --c: #059669; --d: #d97706; --e: #7c3aed; --f: #dc2626; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: baseline; gap: 24px; padding: 12px 20px; background: #fff; border-bottom: 1px solid var(--line); }
header h1 { font-size: 18px; margin: 0; }
header nav a { color: var(--a); text-decoration: none; margin-right: 12px; }
header nav a[aria-current] { color: var(--fg); font-weight: 600; }
header .status { margin-left: auto; color: var(--muted); }
main { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 16px; padding: 16px 20px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; min-height: 220px; }
section h2 { font-size: 13px; margin: 0 0 2px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.big { font-size: 26px; font-weight: 600; }
.big small { font-size: 13px; color: var(--muted); font-weight: 400; margin-left: 4px; }
svg { width: 100%; height: 130px; display: block; }
svg .grid { stroke: var(--line); stroke-width: 1; }
svg .axis { fill: var(--muted); font-size: 10px; }
svg path { fill: none; stroke-width: 2; }
.legend { display: flex; flex-wrap: wrap; gap: 10px; font-size: 12px; color: var(--muted); }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
table { width: 100%; border-collapse: collapse; font-size: 13px; }
td, th { padding: 4px 6px; border-bottom: 1px solid var(--line); text-align: right; }
td:first-child, th:first-child { text-align: left; }
th { color: var(--muted); font-weight: 500; }
.wide { width: 45%; }
.bar { height: 8px; background: var(--f); border-radius: 2px; }
.empty { color: var(--muted); padding: 24px 0; text-align: center; }
`;

/** The page's script. */
export const LIVE_VIEW_JS = `"use strict";
(() => {
  const COLORS = ["var(--a)", "var(--b)", "var(--c)", "var(--d)", "var(--e)", "var(--f)"];
  const NS = "http://www.w3.org/2000/svg";
  const dataUrl = document.querySelector('meta[name="gw-live-data"]').content;
  const $ = (id) => document.getElementById(id);
  const fmt = (v, digits = 1) => v === null || v === undefined || Number.isNaN(v) ? "–" : Number(v).toFixed(digits);
  function el(tag, attrs, text) {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }
  // A line chart of several series over the same times; null values leave gaps.
  function chart(target, times, series, fixedMax) {
    const W = 400, H = 130, L = 34, B = 16, T = 6;
    const svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img" });
    const values = series.flatMap((s) => s.values.filter((v) => v !== null));
    const max = fixedMax ?? Math.max(1e-9, ...values) * 1.15;
    for (let i = 0; i <= 3; i++) {
      const y = T + (H - B - T) * (1 - i / 3);
      svg.append(el("line", { x1: L, x2: W, y1: y, y2: y, class: "grid" }));
      svg.append(el("text", { x: L - 4, y: y + 3, "text-anchor": "end", class: "axis" }, fmt(max * i / 3, max < 3 ? 2 : 0)));
    }
    if (times.length > 1) {
      const t0 = times[0], t1 = times[times.length - 1];
      svg.append(el("text", { x: L, y: H - 3, class: "axis" }, "-" + Math.round((t1 - t0) / 1000) + "s"));
      svg.append(el("text", { x: W, y: H - 3, "text-anchor": "end", class: "axis" }, "now"));
      series.forEach((s, index) => {
        let d = "", pen = false;
        s.values.forEach((v, i) => {
          if (v === null) { pen = false; return; }
          const x = L + (W - L) * (times[i] - t0) / Math.max(1, t1 - t0);
          const y = T + (H - B - T) * (1 - v / max);
          d += (pen ? "L" : "M") + x.toFixed(1) + " " + y.toFixed(1);
          pen = true;
        });
        svg.append(el("path", { d, stroke: s.color ?? COLORS[index % COLORS.length] }));
      });
    }
    target.replaceChildren(svg);
  }
  function legend(target, names) {
    target.replaceChildren(...names.map((name, i) => {
      const span = document.createElement("span");
      const swatch = document.createElement("i");
      swatch.style.background = COLORS[i % COLORS.length];
      span.append(swatch, name);
      return span;
    }));
  }
  function big(target, value, unit) {
    target.replaceChildren(value, Object.assign(document.createElement("small"), { textContent: unit }));
  }
  function render(points) {
    const times = points.map((p) => p.t);
    const last = points[points.length - 1];
    $("status").textContent = last ? "updated " + new Date(last.t).toLocaleTimeString() : "waiting for data…";
    big($("rps-now"), fmt(last?.rps ?? 0), "req/s");
    chart($("rps"), times, [{ values: points.map((p) => p.rps) }]);
    big($("lat-now"), fmt(last?.p99 ?? null), "ms p99 · " + fmt(last?.p50 ?? null) + " ms p50");
    chart($("lat"), times, [{ values: points.map((p) => p.p50) }, { values: points.map((p) => p.p99) }]);
    legend($("lat-legend"), ["p50", "p99"]);
    const codes = [...new Set(points.flatMap((p) => Object.keys(p.errors)))].sort();
    const totals = codes.map((c) => [c, points.reduce((n, p) => n + (p.errors[c] ?? 0), 0)]).sort((a, b) => b[1] - a[1]);
    big($("err-now"), String(totals.reduce((n, [, v]) => n + v, 0)), "GraphQL errors");
    const errTable = $("errors");
    if (totals.length === 0) errTable.replaceChildren(Object.assign(document.createElement("div"), { className: "empty", textContent: "No errors" }));
    else {
      const max = Math.max(...totals.map(([, v]) => v));
      const table = document.createElement("table");
      table.innerHTML = "<tr><th>code</th><th>count</th><th class='wide'></th></tr>";
      for (const [code, count] of totals) {
        const row = table.insertRow();
        row.insertCell().textContent = code;
        row.insertCell().textContent = String(count);
        const bar = document.createElement("div");
        bar.className = "bar";
        bar.style.width = (100 * count / max).toFixed(0) + "%";
        row.insertCell().append(bar);
      }
      errTable.replaceChildren(table);
    }
    const names = [...new Set(points.flatMap((p) => Object.keys(p.subgraphs)))].sort();
    chart($("sub"), times, names.map((n) => ({ values: points.map((p) => p.subgraphs[n]?.p50 ?? null) })));
    legend($("sub-legend"), names);
    const subTable = document.createElement("table");
    subTable.innerHTML = "<tr><th>subgraph</th><th>req/s</th><th>p50 ms</th><th>errors</th></tr>";
    for (const name of names) {
      const s = last?.subgraphs[name];
      const row = subTable.insertRow();
      row.insertCell().textContent = name;
      row.insertCell().textContent = fmt(s?.rps ?? 0);
      row.insertCell().textContent = fmt(s?.p50 ?? null);
      row.insertCell().textContent = s?.errorRate === null || s === undefined ? "–" : (100 * s.errorRate).toFixed(0) + " %";
    }
    $("sub-table").replaceChildren(subTable);
    const pct = (v) => v === null ? null : 100 * v;
    big($("cache-now"), fmt(pct(last?.cache.plan ?? null), 0), "% plan hits · " + fmt(pct(last?.cache.parse ?? null), 0) + " % parse");
    chart($("cache"), times, [{ values: points.map((p) => pct(p.cache.parse)) }, { values: points.map((p) => pct(p.cache.plan)) }], 100);
    legend($("cache-legend"), ["parse", "plan"]);
    big($("adm-now"), String(last?.admission.queued ?? 0), "queued · " + (last?.admission.inFlight ?? 0) + " in flight");
    chart($("adm"), times, [{ values: points.map((p) => p.admission.inFlight) }, { values: points.map((p) => p.admission.queued) }]);
    legend($("adm-legend"), ["in flight", "queued"]);
  }
  async function poll() {
    try {
      const response = await fetch(dataUrl, { cache: "no-store" });
      if (response.ok) {
        const body = await response.json();
        render(body.points);
        document.body.dataset.points = String(body.points.length);
      }
    } catch (error) {
      $("status").textContent = "router unreachable";
    }
    setTimeout(poll, 2000);
  }
  poll();
})();
`;
