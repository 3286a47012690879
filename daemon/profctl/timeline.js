/* SPDX-License-Identifier: MIT */
/* timeline.js - the timeline of a process's last calls (a Chrome trace, as
 * profctl trace writes it), drawn into an element: a lane per thread, its
 * zones nested downwards, its frames on a lane beside it, its messages as
 * red marks on its lane, each plot a lane of its own (a line); the wheel zooms
 * at the pointer, a drag pans, a double click shows everything.  Built into
 * trace.html and report.html (daemon/profctl/profctl.mk): no network. */
function profTimeline(root, data, opts) {
  "use strict";
  /* the live page's (serve): opts.view the range to show, opts.onview(range)
   * told when the user moves it (null: everything), opts.onpick(call) a click
   * on a call, opts.live no resize listener of its own (it redraws anyway) */
  opts = opts || {};
  const ev = (data && data.traceEvents) || [];
  const css = document.createElement("style");
  css.textContent = `
  .tl-legend span { display: inline-block; margin-right: 14px; }
  .tl-legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px;
                 vertical-align: -1px; }
  .tl-axis { position: relative; height: 18px; margin-left: 180px; border-bottom: 1px solid #ccc;
             overflow: hidden; }
  .tl-axis .tl-tick { position: absolute; top: 2px; font-size: 10px; color: #666;
                      border-left: 1px solid #ccc; padding-left: 2px; }
  .tl-track { display: flex; border-bottom: 1px solid #eee; }
  .tl-label { width: 172px; flex: none; padding: 2px 4px; overflow: hidden; white-space: nowrap;
              text-overflow: ellipsis; background: #fafafa; border-right: 1px solid #ddd; }
  .tl-lane { position: relative; flex: auto; overflow: hidden; cursor: grab; }
  .tl-bar { position: absolute; height: 16px; box-sizing: border-box; border: 1px solid #0002;
            font-size: 10px; line-height: 14px; overflow: hidden; white-space: nowrap;
            padding: 0 2px; color: #000; }
  .tl-bar.tl-frame { background: #cfd8e3; }
  .tl-mark { position: absolute; top: 0; bottom: 0; width: 2px; background: #c00; z-index: 1; }
  .tl-plot { position: absolute; left: 0; top: 0; }
  .tl-tip { position: fixed; display: none; background: #fff; border: 1px solid #999;
            padding: 4px 6px; pointer-events: none; box-shadow: 0 1px 4px #0003; z-index: 2; }
  .tl-help { color: #666; }`;
  root.append(css);

  const names = new Map(), tracks = new Map();
  let pname = "";
  for (const e of ev) {
    if (e.ph === "M" && e.name === "thread_name") names.set(e.tid, e.args.name);
    if (e.ph === "M" && e.name === "process_name") pname = e.args.name;
  }
  /* messages by thread, plot points by plot (annotations) */
  const marks = new Map(), plots = new Map();
  for (const e of ev) {
    if (e.ph === "i" && e.cat === "message") {
      if (!marks.has(e.tid)) marks.set(e.tid, []);
      marks.get(e.tid).push(e);
    }
    if (e.ph === "C" && e.args && typeof e.args.value === "number") {
      if (!plots.has(e.name)) plots.set(e.name, []);
      plots.get(e.name).push(e);
    }
    if (e.ph !== "X") continue;
    if (!tracks.has(e.tid)) tracks.set(e.tid, []);
    tracks.get(e.tid).push(e);
  }
  for (const pts of plots.values()) pts.sort((a, b) => a.ts - b.ts);
  /* depth of each call: calls end in order, so a stack of open ends works */
  for (const list of tracks.values()) {
    list.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    const ends = [];
    for (const e of list) {
      /* times are whole ns: a call that ends within half of one of this
       * one's start (a double of 3e10 us rounds by 4e-6) does not hold it */
      while (ends.length && ends[ends.length - 1] <= e.ts + 5e-4) ends.pop();
      e.depth = ends.length;
      ends.push(e.ts + e.dur);
    }
  }
  let t0 = Infinity, t1 = -Infinity;
  for (const list of tracks.values())
    for (const e of list) { t0 = Math.min(t0, e.ts); t1 = Math.max(t1, e.ts + e.dur); }
  for (const list of [...marks.values(), ...plots.values()])
    for (const e of list) { t0 = Math.min(t0, e.ts); t1 = Math.max(t1, e.ts); }
  if (!isFinite(t0)) { t0 = 0; t1 = 1; }
  const all = [t0, t1];
  let view = opts.view ? opts.view.slice() : [t0, t1];
  const moved = (v) => { if (opts.onview) opts.onview(v); };

  /* zones by name; the scheduler's runs by CPU, its time off the CPU grey */
  function fill(e) {
    if (e.cat === "frame") return "#cfd8e3";
    if (e.cat === "sched")
      return e.args && e.args.cpu !== undefined ? "hsl(" + (e.args.cpu * 53 % 360) + ",35%,55%)"
                                                 : "#e4e4e4";
    return color(e.name);
  }
  function color(name) {
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return "hsl(" + (h % 360) + ",60%,75%)";
  }
  function fmt(us) {
    if (us >= 1e6) return (us / 1e6).toFixed(3) + " s";
    if (us >= 1e3) return (us / 1e3).toFixed(3) + " ms";
    return us.toFixed(3) + " us";
  }
  function el(tag, cls, text) {
    const d = document.createElement(tag);
    if (cls) d.className = cls;
    if (text !== undefined) d.textContent = text;
    return d;
  }

  const other = (data && data.otherData) || {};
  root.append(el("div", "tl-title", pname + " (pid " + (other.pid || "?") + ")"));
  const legend = el("div", "tl-legend");
  const seen = new Set();
  for (const list of tracks.values())
    for (const e of list)
      if (!seen.has(e.name)) {
        seen.add(e.name);
        const s = el("span"), i = el("i");
        i.style.background = fill(e);
        s.append(i, e.name);
        legend.append(s);
      }
  legend.append(el("span", "tl-lost", (other.lost || 0) + " calls older than the rings hold" +
    (other.omitted ? "; " + other.omitted + " older calls left out of this page (profctl trace " +
     "has them)" : "")));
  root.append(legend);
  root.append(el("div", "tl-help",
    "Wheel: zoom at the pointer; drag: pan; double-click: everything. Each thread's zones " +
    "nest downwards; its frames (PROF_FRAME) are a lane of their own. With profd: a call " +
    "outlined red moved to another CPU, a dashed one was switched out (preempted or blocked); " +
    "a thread's scheduler lane shows its runs on each CPU and the time off the CPU (grey) between. " +
    "Red marks are a thread's messages (PROF_MESSAGE); a plot (PROF_PLOT) is a lane of its own."));
  const axis = el("div", "tl-axis");
  root.append(axis);
  const trackEls = el("div", "tl-tracks");
  root.append(trackEls);
  const tip = el("div", "tl-tip");
  root.append(tip);

  const lanes = [];
  for (const [tid, list] of tracks) {
    const depth = list.reduce((m, e) => Math.max(m, e.depth + 1), 1);
    const row = el("div", "tl-track");
    const label = el("div", "tl-label", names.get(tid) || "tid " + tid);
    label.title = label.textContent + " (" + list.length + " calls)";
    const lane = el("div", "tl-lane");
    lane.style.height = depth * 18 + 2 + "px";
    lane.dataset.tid = tid;
    row.append(label, lane);
    trackEls.append(row);
    lanes.push({ lane, list, marks: marks.get(tid) || [] });
  }
  /* a plot: its points joined, from its lowest value (bottom) to its highest */
  for (const [name, pts] of plots) {
    const row = el("div", "tl-track");
    const label = el("div", "tl-label", "plot " + name);
    label.title = label.textContent + " (" + pts.length + " points)";
    const lane = el("div", "tl-lane");
    lane.style.height = "40px";
    row.append(label, lane);
    trackEls.append(row);
    lanes.push({ lane, list: [], marks: [], plot: pts });
  }

  function draw() {
    const [a, b] = view;
    axis.textContent = "";
    const w = axis.clientWidth || 1;
    for (let k = 0; k <= 8; k++) {
      const d = el("div", "tl-tick", "+" + fmt((b - a) * k / 8 + (a - all[0])));
      d.style.left = (k / 8) * w + "px";
      axis.append(d);
    }
    /* every lane is as wide: measured once, before anything changes (a
     * width read after a lane's bars are in forces a layout a lane) */
    const lw = (lanes.length && lanes[0].lane.clientWidth) || 1, scale = lw / (b - a);
    for (const { lane, list, marks: ms, plot } of lanes) {
      lane.textContent = "";
      if (plot) drawPlot(lane, plot, a, scale, lw);
      for (const e of ms) {
        if (e.ts < a || e.ts > b) continue;
        const d = el("div", "tl-mark");
        d.style.left = (e.ts - a) * scale + "px";
        d.onmousemove = (m) => showTip(m, e.name + " at +" + fmt(e.ts - all[0]) +
          (e.args && e.args.zone ? " (in " + e.args.zone + ")" : ""));
        d.onmouseleave = () => { tip.style.display = "none"; };
        lane.append(d);
      }
      for (const e of list) {
        if (e.ts + e.dur < a || e.ts > b) continue;
        const x = (e.ts - a) * scale, wd = Math.max(1, e.dur * scale);
        const d = el("div", "tl-bar" + (e.cat === "frame" ? " tl-frame" : ""));
        d.style.left = x + "px";
        d.style.width = wd + "px";
        d.style.top = e.depth * 18 + 1 + "px";
        if (e.cat !== "frame") d.style.background = fill(e);
        /* the kernel's facts (profd) */
        if (e.args && e.args.migrated) d.style.borderColor = "#d00";
        if (e.args && (e.args.preempted || e.args.blocked)) d.style.borderStyle = "dashed";
        d.dataset.name = e.name;
        d.dataset.cat = e.cat || "";
        if (opts.onpick) d.onclick = () => opts.onpick(e);
        if (wd > 30) d.textContent = e.name;
        d.onmousemove = (m) => {
          const facts = e.args ? ["preempted", "blocked", "migrated"].filter(k => e.args[k]) : [];
          if (e.args && e.args.why) facts.push(e.args.why);
          if (e.args && e.args.value !== undefined) facts.push("value " + e.args.value);
          if (e.args && e.args.text !== undefined) facts.push("text " + e.args.text);
          if (e.args && e.args.waited) facts.push(e.args.waited);
          if (e.args && e.args.then) facts.push("then " + e.args.then);
          tip.style.display = "block";
          tip.style.left = m.clientX + 12 + "px";
          tip.style.top = m.clientY + 12 + "px";
          tip.textContent = e.name + ": " + fmt(e.dur) + " at +" + fmt(e.ts - all[0]) +
            (facts.length ? " (" + facts.join(", ") + ")" : "");
        };
        d.onmouseleave = () => { tip.style.display = "none"; };
        lane.append(d);
      }
    }
  }

  function showTip(m, text) {
    tip.style.display = "block";
    tip.style.left = m.clientX + 12 + "px";
    tip.style.top = m.clientY + 12 + "px";
    tip.textContent = text;
  }
  function drawPlot(lane, pts, a, scale, lw) {
    let lo = Infinity, hi = -Infinity;
    for (const p of pts) { lo = Math.min(lo, p.args.value); hi = Math.max(hi, p.args.value); }
    const span = hi > lo ? hi - lo : 1, ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("class", "tl-plot");
    svg.setAttribute("width", lw);
    svg.setAttribute("height", 40);
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", pts.map(p => ((p.ts - a) * scale).toFixed(1) + "," +
      (36 - (p.args.value - lo) / span * 32).toFixed(1)).join(" "));
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", color(pts[0].name));
    line.setAttribute("stroke-width", "2");
    svg.append(line);
    svg.onmousemove = (m) => {
      const t = a + (m.clientX - lane.getBoundingClientRect().left) / scale;
      let p = pts[0];
      for (const q of pts) if (q.ts <= t) p = q;
      showTip(m, pts[0].name + " = " + p.args.value + " at +" + fmt(p.ts - all[0]));
    };
    svg.onmouseleave = () => { tip.style.display = "none"; };
    lane.append(svg);
  }

  for (const { lane } of lanes) {
    lane.addEventListener("wheel", (m) => {
      m.preventDefault();
      const r = lane.getBoundingClientRect();
      const f = (m.clientX - r.left) / r.width, span = view[1] - view[0];
      const k = m.deltaY < 0 ? 0.8 : 1.25;
      const at = view[0] + f * span, ns = Math.max(span * k, 0.001);
      view = [at - f * ns, at - f * ns + ns];
      moved(view);
      draw();
    }, { passive: false });
    lane.addEventListener("mousedown", (m) => {
      const x0 = m.clientX, v0 = view.slice(), w = lane.clientWidth;
      const move = (mm) => {
        const dt = (mm.clientX - x0) / w * (v0[1] - v0[0]);
        view = [v0[0] - dt, v0[1] - dt];
        moved(view);
        draw();
      };
      const up = () => { removeEventListener("mousemove", move); removeEventListener("mouseup", up); };
      addEventListener("mousemove", move);
      addEventListener("mouseup", up);
    });
    lane.addEventListener("dblclick", () => { view = all.slice(); moved(null); draw(); });
  }
  if (!opts.live) addEventListener("resize", draw);
  draw();
}
