"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("infx-data").textContent);
  const PALETTE = ["#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b83280", "#2c7a7b",
    "#975a16", "#1a202c", "#e53e3e", "#0987a0", "#718096", "#d69e2e"];
  const DASHES = [[], [7, 4], [2, 3], [10, 3, 2, 3]];
  // a hollow box keeps a line's dash visible in the legend, where a filled one hides it
  const dashedLegend = (chart) => Chart.defaults.plugins.legend.labels.generateLabels(chart)
    .map((item) => ({ ...item, fillStyle: "rgba(0, 0, 0, 0)", lineWidth: 2 }));
  const SIDE_COLOURS = { A: "#c05621", B: "#2b6cb0" };
  const FAIL = "#c53030";
  const DAY = 86400000;
  const FILTERS = [
    ["model", "model"], ["hardware", "GPU"], ["framework", "framework"],
    ["precision", "precision"], ["seq", "ISL/OSL"], ["branch", "branch"],
  ];
  const app = document.getElementById("app");
  const number = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 4 });
  const state = { from: "", to: "", a: "", b: "", metric: "" };
  let charts = [];

  const points = DATA.points.map((row) => {
    const point = {};
    DATA.columns.forEach((name, i) => { point[name] = row[i]; });
    point.metrics = {};
    Object.keys(DATA.metrics).forEach((name, i) => {
      if (row[row.length - 1][i] !== null) point.metrics[name] = row[row.length - 1][i];
    });
    point.runInfo = DATA.runs[point.run];
    point.groupInfo = DATA.groups[point.group];
    point.time = Date.parse(point.runInfo.started);
    point.key = [point.group, point.tp, point.ep, point.conc, point.cell].join("|");
    return point;
  });

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => {
      if (k === "text") node.textContent = v; else node.setAttribute(k, v);
    });
    (children || []).forEach((child) => node.appendChild(child));
    return node;
  }

  function shown(metric, value) {
    return value * (DATA.metrics[metric] ? DATA.metrics[metric].scale : 1);
  }

  function axisTitle(metric) {
    const unit = DATA.metrics[metric] ? DATA.metrics[metric].unit : "";
    return unit ? `${metric} (${unit})` : metric;
  }

  function tag(point) {
    let text = `TP${point.tp}`;
    if (point.ep > 1) text += ` EP${point.ep}`;
    text += ` c${point.conc}`;
    if (point.cell) text += ` ${point.cell}`;
    return text;
  }

  function day(run) { return run.started.slice(0, 10); }

  function runName(run) {
    return `${run.label} · ${run.branch} · ${run.started.slice(0, 16).replace("T", " ")}`;
  }

  function uniq(values) { return [...new Set(values)].sort(); }

  function groupMatches(group) {
    return FILTERS.every(([field]) => field === "branch" || !state[field] ||
      String(group[field]) === state[field]);
  }

  function runMatches(run) {
    if (state.branch && run.branch !== state.branch) return false;
    if (state.from && day(run) < state.from) return false;
    if (state.to && day(run) > state.to) return false;
    return true;
  }

  function filtered() {
    return points.filter((p) => groupMatches(p.groupInfo) && runMatches(p.runInfo));
  }

  function choices(selected) {
    const runIds = uniq(selected.map((p) => p.run)).map(Number).sort(
      (x, y) => Date.parse(DATA.runs[y].started) - Date.parse(DATA.runs[x].started));
    const branches = uniq(runIds.map((i) => DATA.runs[i].branch));
    return { runIds, branches };
  }

  function side(choice, selected) {
    if (choice.startsWith("run:")) {
      const index = Number(choice.slice(4));
      return selected.filter((p) => p.run === index);
    }
    const branch = choice.slice(7);
    const latest = new Map();
    selected.filter((p) => p.runInfo.branch === branch).forEach((p) => {
      const seen = latest.get(p.key);
      if (!seen || seen.time <= p.time) latest.set(p.key, p);
    });
    return [...latest.values()];
  }

  function defaults(runIds) {
    const valid = new Set(runIds.map((i) => `run:${i}`));
    const branchOf = (choice) => choice.startsWith("branch:") ? choice.slice(7) : null;
    const ok = (choice) => valid.has(choice) ||
      (branchOf(choice) !== null && runIds.some((i) => DATA.runs[i].branch === branchOf(choice)));
    if (!ok(state.b)) state.b = runIds.length ? `run:${runIds[0]}` : "";
    if (!ok(state.a)) {
      const newest = DATA.runs[runIds[0]];
      const earlier = runIds.slice(1);
      const same = earlier.find((i) => newest && DATA.runs[i].branch === newest.branch);
      const pick = same !== undefined ? same : earlier[0];
      state.a = pick !== undefined ? `run:${pick}` : state.b;
    }
  }

  function select(id, label, options, value, onChange) {
    const input = el("select", { id, name: id });
    options.forEach(([v, text]) => {
      const option = el("option", { value: v, text });
      if (v === value) option.selected = true;
      input.appendChild(option);
    });
    input.addEventListener("change", () => { onChange(input.value); render(); });
    return el("label", {}, [document.createTextNode(label), input]);
  }

  function filterBar() {
    const bar = el("section", { id: "filters" });
    FILTERS.forEach(([field, label]) => {
      const values = field === "branch" ? uniq(DATA.runs.map((r) => r.branch))
        : uniq(DATA.groups.map((g) => String(g[field])));
      const options = [["", "all"], ...values.map((v) => [v, v])];
      bar.appendChild(select(`f-${field}`, label, options, state[field] || "",
        (v) => { state[field] = v; }));
    });
    [["from", "from"], ["to", "to"]].forEach(([field, label]) => {
      const input = el("input", { type: "date", id: `f-${field}`, value: state[field] });
      input.addEventListener("change", () => { state[field] = input.value; render(); });
      bar.appendChild(el("label", {}, [document.createTextNode(label), input]));
    });
    const shownRuns = DATA.runs.length;
    const note = DATA.latest > 0
      ? `latest ${DATA.latest} runs of each branch: ${shownRuns} of ${DATA.runs_stored} stored ` +
        `runs (infx db dashboard --runs 0 for all)`
      : `all ${shownRuns} stored runs`;
    bar.appendChild(el("span", { class: "muted", text: note }));
    return bar;
  }

  function runsTable(selected, runIds) {
    const head = el("tr", {}, ["run", "branch", "started (UTC)", "commit", "points", "failed"]
      .map((t) => el("th", { text: t })));
    const rows = runIds.map((i) => {
      const run = DATA.runs[i];
      const mine = selected.filter((p) => p.run === i);
      const failed = mine.filter((p) => p.verdict !== "pass").length;
      return el("tr", { "data-run": run.label }, [
        el("td", { text: run.label }), el("td", { text: run.branch }),
        el("td", { text: run.started.slice(0, 16).replace("T", " ") }),
        el("td", { text: run.commit.slice(0, 8) }),
        el("td", { class: "num", text: String(mine.length) }),
        el("td", { class: `num ${failed ? "fail" : "pass"}`, text: String(failed) }),
      ]);
    });
    return el("div", { class: "scroll" }, [el("table", { id: "runs-table" }, [head, ...rows])]);
  }

  function verdictCell(point, cls) {
    if (!point) return el("td", { class: cls, text: "–" });
    const cell = el("td", { class: `${cls} ${point.verdict === "pass" ? "pass" : "fail"}` });
    cell.appendChild(document.createTextNode(point.verdict));
    if (point.reason) {
      cell.title = point.reason;
      cell.appendChild(el("div", { class: "reason", text: point.reason }));
    }
    return cell;
  }

  function compare(selected, runIds, branches) {
    const options = [
      ...runIds.map((i) => [`run:${i}`, runName(DATA.runs[i])]),
      ...branches.map((b) => [`branch:${b}`, `branch ${b} (latest of each point)`]),
    ];
    const metrics = DATA.y_metrics.concat(Object.keys(DATA.metrics))
      .filter((m, i, all) => all.indexOf(m) === i && selected.some((p) => m in p.metrics));
    if (!metrics.includes(state.metric)) state.metric = metrics[0] || "";
    const pick = el("div", { id: "compare-pick" }, [
      select("pick-a", "A (before)", options, state.a, (v) => { state.a = v; }),
      select("pick-b", "B (after)", options, state.b, (v) => { state.b = v; }),
      select("pick-metric", "metric", metrics.map((m) => [m, axisTitle(m)]), state.metric,
        (v) => { state.metric = v; }),
    ]);
    const a = new Map(side(state.a, selected).map((p) => [p.key, p]));
    const b = new Map(side(state.b, selected).map((p) => [p.key, p]));
    const keys = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => {
      const px = a.get(x) || b.get(x);
      const py = a.get(y) || b.get(y);
      return px.groupInfo.label.localeCompare(py.groupInfo.label) || px.tp - py.tp ||
        px.ep - py.ep || px.conc - py.conc || px.cell.localeCompare(py.cell);
    });
    const metric = state.metric;
    const higher = DATA.metrics[metric] ? DATA.metrics[metric].higher : true;
    const head = el("tr", {}, ["config", "engine", "TP", "conc", "cell", `A ${axisTitle(metric)}`,
      `B ${axisTitle(metric)}`, "Δ %", "A verdict", "B verdict"].map((t) => el("th", { text: t })));
    const rows = keys.map((key) => {
      const pa = a.get(key);
      const pb = b.get(key);
      const any = pa || pb;
      const va = pa && metric in pa.metrics ? shown(metric, pa.metrics[metric]) : null;
      const vb = pb && metric in pb.metrics ? shown(metric, pb.metrics[metric]) : null;
      let delta = "";
      let cls = "num delta";
      if (va !== null && vb !== null && va !== 0) {
        const change = (vb - va) / Math.abs(va) * 100;
        delta = `${change >= 0 ? "+" : ""}${change.toFixed(1)}`;
        if (Math.abs(change) >= 0.05) cls += (change > 0) === higher ? " better" : " worse";
      }
      const engines = uniq([pa, pb].filter(Boolean).map((p) => p.engine)).join(" → ");
      return el("tr", { "data-key": key, "data-item": any.item }, [
        el("td", { class: "config", text: any.groupInfo.label }),
        el("td", { class: "engine", text: engines }),
        el("td", { class: "num tp", text: String(any.tp) + (any.ep > 1 ? ` EP${any.ep}` : "") }),
        el("td", { class: "num conc", text: String(any.conc) }),
        el("td", { class: "cell", text: any.cell }),
        el("td", { class: "num a", text: va === null ? "–" : number.format(va) }),
        el("td", { class: "num b", text: vb === null ? "–" : number.format(vb) }),
        el("td", { class: cls, text: delta || "–" }),
        verdictCell(pa, "va"), verdictCell(pb, "vb"),
      ]);
    });
    const table = rows.length
      ? el("div", { class: "scroll" }, [el("table", { id: "delta" }, [head, ...rows])])
      : el("p", { class: "muted", id: "delta", text: "No points in either choice." });
    return el("section", { id: "compare" }, [el("h2", { text: "Compare two runs" }), pick, table]);
  }

  function frontier(marks) {
    const best = [];
    [...marks].sort((p, q) => q.x - p.x || q.y - p.y).forEach((m) => {
      if (!best.length || m.y > best[best.length - 1].y) best.push(m);
    });
    return best.sort((p, q) => p.x - q.x);
  }

  const labelPlugin = {
    id: "infxLabels",
    afterDatasetsDraw(chart) {
      const ctx = chart.ctx;
      ctx.save();
      ctx.font = "10px system-ui, sans-serif";
      chart.data.datasets.forEach((dataset, i) => {
        if (!dataset.infxLabels || !chart.isDatasetVisible(i)) return;
        ctx.fillStyle = dataset.borderColor;
        ctx.textAlign = dataset.infxLabels === "above" ? "left" : "right";
        chart.getDatasetMeta(i).data.forEach((element, j) => {
          const dy = dataset.infxLabels === "above" ? -6 : 12;
          const dx = dataset.infxLabels === "above" ? 5 : -5;
          ctx.fillText(dataset.data[j].tag, element.x + dx, element.y + dy);
        });
      });
      ctx.restore();
    },
  };

  function ticks() {
    return { callback: (v) => number.format(v), maxTicksLimit: 7, maxRotation: 0 };
  }

  function tooltip(metricX, metricY) {
    return {
      callbacks: {
        label(context) {
          const p = context.raw.p;
          if (!p) return context.dataset.label;
          let text = `${p.runInfo.label} ${tag(p)} ${p.engine}: `;
          if (metricX) text += `${number.format(context.raw.x)} ${DATA.metrics[metricX].unit}, `;
          text += `${number.format(context.raw.y)} ${DATA.metrics[metricY].unit}; ${p.verdict}`;
          return p.reason ? `${text} (${p.reason})` : text;
        },
      },
    };
  }

  function figure(kind, caption, group) {
    const canvas = el("canvas", {});
    const fig = el("figure", { class: `chart ${kind}`, "data-group": group.label }, [
      el("figcaption", { text: caption }), el("div", { class: "box" }, [canvas]),
    ]);
    return { fig, canvas };
  }

  function paretoCharts(selected, container) {
    const sides = state.a === state.b ? [["B", state.b]] : [["A", state.a], ["B", state.b]];
    const chosen = sides.map(([name, choice]) => [name, choice, side(choice, selected)]);
    const groups = uniq(selected.map((p) => p.group)).map(Number);
    let drawn = 0;
    groups.forEach((g) => {
      const group = DATA.groups[g];
      const members = selected.filter((p) => p.group === g && DATA.x_metric in p.metrics);
      const yMetric = DATA.y_metrics.find((m) => members.length && members.every(
        (p) => m in p.metrics));
      if (!yMetric) return;
      const datasets = [];
      chosen.forEach(([name, choice, sidePoints]) => {
        const mine = sidePoints.filter((p) => p.group === g && DATA.x_metric in p.metrics);
        const marks = mine.map((p) => ({
          x: p.metrics[DATA.x_metric], y: shown(yMetric, p.metrics[yMetric]), p, tag: tag(p),
        }));
        const colour = SIDE_COLOURS[name];
        const title = `${name}: ${choice.startsWith("run:") ?
          DATA.runs[Number(choice.slice(4))].label : choice.slice(7) + " (latest)"}`;
        const passed = marks.filter((m) => m.p.verdict === "pass");
        datasets.push({
          type: "scatter", label: title, data: passed, borderColor: colour,
          backgroundColor: colour, pointRadius: 4, infxLabels: name === "B" ? "above" : "below",
        });
        const failed = marks.filter((m) => m.p.verdict !== "pass");
        if (failed.length) {
          datasets.push({
            type: "scatter", label: `${title}, failed`, data: failed, borderColor: FAIL,
            backgroundColor: FAIL, pointStyle: "crossRot", pointRadius: 7, borderWidth: 2,
            infxLabels: name === "B" ? "above" : "below",
          });
        }
        datasets.push({
          type: "line", label: `${title} frontier`, data: frontier(passed), borderColor: colour,
          borderWidth: 1.5, pointRadius: 0, fill: false, infxFrontier: name,
        });
      });
      const { fig, canvas } = figure("pareto", group.label, group);
      container.appendChild(fig);
      charts.push(new Chart(canvas, {
        data: { datasets },
        plugins: [labelPlugin],
        options: {
          animation: false, maintainAspectRatio: false, layout: { padding: { right: 48 } },
          scales: {
            x: { type: "linear", title: { display: true, text: `interactivity, median (${DATA.metrics[DATA.x_metric].unit})` }, ticks: ticks() },
            y: { type: "linear", beginAtZero: true, title: { display: true, text: axisTitle(yMetric) }, ticks: ticks() },
          },
          plugins: {
            legend: { labels: { filter: (item, data) => !data.datasets[item.datasetIndex].infxFrontier } },
            tooltip: tooltip(DATA.x_metric, yMetric),
          },
        },
      }));
      drawn += 1;
    });
    if (!drawn) container.appendChild(el("p", { class: "muted", text: "No point has both figures yet." }));
  }

  function trendBranch(selected) {
    if (state.branch) return state.branch;
    const runs = new Map();
    selected.forEach((p) => {
      if (!runs.has(p.runInfo.branch)) runs.set(p.runInfo.branch, new Set());
      runs.get(p.runInfo.branch).add(p.run);
    });
    const most = [...runs.entries()].sort((x, y) => y[1].size - x[1].size || x[0].localeCompare(y[0]));
    return most.length ? most[0][0] : "";
  }

  function trendCharts(selected, branch, container) {
    const groups = uniq(selected.map((p) => p.group)).map(Number);
    let drawn = 0;
    groups.forEach((g) => {
      const group = DATA.groups[g];
      const members = selected.filter((p) => p.group === g && p.runInfo.branch === branch);
      if (!members.length) return;
      const metric = members.some((p) => state.metric in p.metrics) ? state.metric
        : DATA.y_metrics.concat(["al"]).find((m) => members.some((p) => m in p.metrics));
      if (!metric) return;
      const series = new Map();
      members.filter((p) => metric in p.metrics).forEach((p) => {
        const key = tag(p);
        if (!series.has(key)) series.set(key, []);
        series.get(key).push({ x: p.time, y: shown(metric, p.metrics[metric]), p });
      });
      const order = new Map(members.map((p) => [tag(p), [p.tp, p.ep, p.conc, p.cell]]));
      const tags = [...order.keys()].sort((x, y) => {
        const [a, b] = [order.get(x), order.get(y)];
        return a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3].localeCompare(b[3]);
      });
      const entries = [...series.entries()].sort((x, y) =>
        tags.indexOf(tag(x[1][0].p)) - tags.indexOf(tag(y[1][0].p)) || x[0].localeCompare(y[0]));
      const loads = [...new Set(tags.map((t) => order.get(t).slice(2).join(" ")))];
      const sizes = [...new Set(tags.map((t) => order.get(t).slice(0, 2).join(" ")))];
      const datasets = entries.map(([label, data]) => {
        const p = data[0].p;
        // a line's colour is its load and its dash its parallelism, so ten lines need no ten colours
        const colour = PALETTE[loads.indexOf([p.conc, p.cell].join(" ")) % PALETTE.length];
        const dash = DASHES[sizes.indexOf([p.tp, p.ep].join(" ")) % DASHES.length];
        return {
          label, data: data.sort((x, y) => x.x - y.x), borderColor: colour, backgroundColor: colour,
          borderWidth: 1.5, borderDash: dash,
          pointRadius: (c) => (c.raw && c.raw.p.verdict !== "pass" ? 7 : 3),
          pointStyle: (c) => (c.raw && c.raw.p.verdict !== "pass" ? "crossRot" : "circle"),
          pointBorderColor: (c) => (c.raw && c.raw.p.verdict !== "pass" ? FAIL : colour),
          pointBorderWidth: (c) => (c.raw && c.raw.p.verdict !== "pass" ? 2 : 1),
        };
      });
      const times = members.map((p) => p.time);
      const span = Math.max(...times) - Math.min(...times);
      const { fig, canvas } = figure("trend", `${group.label}: ${metric} on ${branch}`, group);
      container.appendChild(fig);
      charts.push(new Chart(canvas, {
        type: "line",
        data: { datasets },
        options: {
          animation: false, maintainAspectRatio: false,
          scales: {
            x: {
              type: "time",
              time: { minUnit: span >= DAY ? "day" : "hour", tooltipFormat: "yyyy-MM-dd HH:mm", displayFormats: { hour: "MMM d HH:mm", day: "MMM d", week: "MMM d", month: "MMM yyyy" } },
              ticks: { maxRotation: 0, autoSkip: true, maxTicksLimit: 8 },
              title: { display: true, text: "run started (UTC)" },
            },
            y: { beginAtZero: false, title: { display: true, text: axisTitle(metric) }, ticks: ticks() },
          },
          plugins: { legend: { labels: { boxWidth: 22, boxHeight: 8, font: { size: 11 }, generateLabels: dashedLegend } }, tooltip: tooltip(null, metric) },
        },
      }));
      drawn += 1;
    });
    if (!drawn) container.appendChild(el("p", { class: "muted", text: "No runs yet." }));
  }

  function render() {
    charts.forEach((chart) => chart.destroy());
    charts = [];
    document.body.removeAttribute("data-ready");
    app.replaceChildren();
    const selected = filtered();
    const { runIds, branches } = choices(selected);
    defaults(runIds);
    app.appendChild(filterBar());
    app.appendChild(el("h2", { text: `Runs (${runIds.length})` }));
    app.appendChild(runsTable(selected, runIds));
    app.appendChild(compare(selected, runIds, branches));
    app.appendChild(el("h2", { text: "Throughput per GPU against interactivity (A and B)" }));
    const pareto = el("div", { class: "grid", id: "pareto" });
    app.appendChild(pareto);
    paretoCharts(selected, pareto);
    const branch = trendBranch(selected);
    app.appendChild(el("h2", {
      text: branch ? `Trends on ${branch} (the branch filter picks another)` : "Trends",
    }));
    const trends = el("div", { class: "grid", id: "trends" });
    app.appendChild(trends);
    trendCharts(selected, branch, trends);
    document.body.setAttribute("data-ready", "1");
  }

  document.getElementById("about").textContent =
    `${DATA.made}; ${DATA.points.length} points of ${DATA.runs.length} runs from ${DATA.source}`;
  render();
}());
