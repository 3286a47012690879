/* SPDX-License-Identifier: MIT */
/* live.js - profctl serve's live page (live.html): at / the processes the
 * caller may see, at /p/PID one process, every second: top's table from
 * /api/p/PID/top (the window's flat rows, as report --flat --format json),
 * a flame graph of /api/p/PID/report (report --format json, threads merged
 * by call path) and the timeline of /api/p/PID/trace (profctl trace's
 * JSON, drawn by timeline.js).  It computes no figure of its own beyond a
 * rate (a figure over the window's length) and a share.
 * window.liveStats says what each update took to draw, in all (draws) and
 * table, flame graph, timeline (parts): the benchmark and the tests read it; window.liveLast holds the JSON last drawn. */
(function () {
  "use strict";
  const $ = (s) => document.querySelector(s);
  const main = $("#main");
  const stats = (window.liveStats = { updates: 0, draws: [], parts: [], failed: 0 });

  function el(tag, cls, text) {
    const d = document.createElement(tag);
    if (cls) d.className = cls;
    if (text !== undefined) d.textContent = text;
    return d;
  }
  /* ns as top prints them: 3 significant digits and a unit */
  function fmtNs(ns) {
    if (ns === null || ns === undefined) return "-";
    const u = [[1e9, "s"], [1e6, "ms"], [1e3, "us"]];
    for (const [d, n] of u) if (ns >= d) return (ns / d).toPrecision(3) + n;
    return Math.round(ns) + "ns";
  }
  async function getJSON(url) {
    const r = await fetch(url, { cache: "no-store" });
    const j = await r.json();
    if (!r.ok) throw new Error(url + ": " + (j.error || r.status));
    return j;
  }
  function status(t) { $("#status").textContent = t; }

  /* --- the process list ---------------------------------------------------- */

  function processList() {
    const box = el("section");
    box.append(el("h2", "", "Profiled processes"));
    const table = el("table"), none = el("p", "empty", "none of yours runs profiled");
    table.id = "procs";
    none.hidden = true;
    box.append(table, none);
    main.append(box);
    async function tick() {
      try {
        const j = await getJSON("/api/processes");
        table.textContent = "";
        const head = el("tr");
        for (const h of ["pid", "command", "uid", "threads", "kernel"]) head.append(el("th", "", h));
        table.append(head);
        for (const p of j.processes) {
          const tr = el("tr"), a = el("a", "", String(p.pid));
          a.href = "/p/" + p.pid;
          const td = el("td");
          td.append(a);
          tr.append(td, el("td", "zone", p.comm), el("td", "", String(p.uid)),
                    el("td", "", String(p.threads)),
                    el("td", "", p.kernel < 0 ? "?" : String(p.kernel)));
          table.append(tr);
        }
        none.hidden = j.processes.length > 0;
        status(j.processes.length + " process(es)" + (j.profd ? ", through profd" : ""));
      } catch (e) {
        stats.failed++;
        status(String(e.message || e));
      }
      setTimeout(tick, 1000);
    }
    tick();
  }

  /* --- one process --------------------------------------------------------- */

  /* top's columns: key, head, what a cell shows of a flat row */
  const HIST = 24;
  const cols = [
    { k: "zone", head: "zone" },
    { k: "calls", head: "calls/s", rate: true, v: (z) => z.calls },
    { k: "pself", head: "%self", v: (z, t) => (t.selfSum ? 100 * z.self_ns / t.selfSum : 0),
      show: (v) => v.toFixed(1) },
    { k: "self_ns", head: "self/s", rate: true, ns: true, v: (z) => z.self_ns },
    { k: "total_ns", head: "total/s", rate: true, ns: true, v: (z) => z.total_ns },
    { k: "avg_ns", head: "avg/call", ns: true,
      v: (z) => (z.calls ? (z.total_ns - z.open_ns) / z.calls : 0) },
    { k: "max_ns", head: "max", ns: true, v: (z) => z.max_ns },
    { k: "oncpu_ns", head: "on-cpu/s", rate: true, ns: true, sched: true, v: (z) => z.oncpu_ns },
    { k: "preempted", head: "preempt/s", rate: true, sched: true, v: (z) => z.preempted },
    { k: "blocked", head: "blocked/s", rate: true, sched: true, v: (z) => z.blocked },
    { k: "migrated", head: "migr/s", rate: true, sched: true, v: (z) => z.migrated },
    { k: "hist", head: "self/s history" },
  ];

  function processPage(pid) {
    const st = {
      window: "1s", frozen: false, sort: "self_ns", dir: -1, hist: new Map(),
      search: "", zoom: [], tlView: null, busy: false,
    };
    $("#controls").hidden = false;
    $("#title").textContent = "pid " + pid;
    const topSec = el("section"), flameSec = el("section"), tlSec = el("section");
    topSec.append(el("h2", "", "Zones (top)"));
    const table = el("table");
    table.id = "top";
    topSec.append(table);
    flameSec.append(el("h2", "", "Flame graph (threads merged; click to zoom)"));
    const bar = el("div");
    bar.id = "flamebar";
    const search = el("input");
    search.id = "search";
    search.placeholder = "search zones";
    const crumbs = el("span"), matched = el("span");
    crumbs.id = "crumbs";
    matched.id = "matched";
    bar.append(search, " ", crumbs, matched);
    const flame = el("div");
    flame.id = "flame";
    flameSec.append(bar, flame);
    tlSec.append(el("h2", "", "Timeline (the event rings; with profd, the scheduler lanes)"));
    const pick = el("div");
    pick.id = "pick";
    pick.textContent = "Click a call for its details.";
    const tl = el("div");
    tl.id = "timeline";
    tlSec.append(pick, tl);
    main.append(topSec, flameSec, tlSec);

    const winSel = $("#window"), freeze = $("#freeze");
    function links() {
      const w = encodeURIComponent(st.window);
      $("#save").href = "/api/p/" + pid + "/save?window=" + w;
      $("#tracelink").href = "/api/p/" + pid + "/trace" + traceQuery(false);
    }
    /* the timeline's calls: the window's if it is a duration, else all the
     * rings hold; the page draws at most 2000 of them (the link has all) */
    function traceQuery(page) {
      const q = [];
      if (/^\d+s$/.test(st.window)) q.push("last=" + st.window);
      if (page) q.push("max=2000");
      return q.length ? "?" + q.join("&") : "";
    }
    winSel.value = st.window;
    winSel.onchange = () => { st.window = winSel.value; st.hist.clear(); links(); update(); };
    freeze.onclick = () => {
      st.frozen = !st.frozen;
      freeze.textContent = st.frozen ? "resume" : "freeze";
      freeze.classList.toggle("on", st.frozen);
      document.body.dataset.frozen = st.frozen ? "1" : "";
      if (!st.frozen) update();
    };
    search.oninput = () => { st.search = search.value; drawFlame(); };
    links();

    let last = null;
    window.liveLast = null;

    /* the table ----------------------------------------------------------- */
    function drawTop() {
      const t = last.top, p = t.flat.processes[0] || { zones: [] };
      const span = t.span_ns / 1e9 || 1;
      const zones = p.zones;
      t.selfSum = zones.reduce((a, z) => a + z.self_ns, 0);
      $("#title").textContent = "pid " + pid + " (" + (p.comm || "?") + ")" +
        (t.exited ? ", exited" : "");
      status((st.frozen ? "FROZEN - " : "") + "window " + st.window + ": " +
             fmtNs(t.span_ns) + (t.sched ? ", with profd's scheduler facts" : ""));
      for (const z of zones) {
        const key = z.zone;
        const h = st.hist.get(key) || [];
        if (!st.frozen) {
          h.push(z.self_ns / span);
          if (h.length > HIST) h.shift();
        }
        st.hist.set(key, h);
      }
      const shown = cols.filter((c) => !c.sched || t.sched);
      const sortCol = cols.find((c) => c.k === st.sort) || cols[3];
      const rows = zones.slice();
      const val = (z, c) => (c.k === "zone" ? z.zone : c.v ? c.v(z, t) : 0);
      rows.sort((a, b) => {
        const x = val(a, sortCol), y = val(b, sortCol);
        if (typeof x === "string") return st.dir * x.localeCompare(y);
        return st.dir * ((x === null ? -1 : x) - (y === null ? -1 : y));
      });
      table.textContent = "";
      const head = el("tr");
      for (const c of shown) {
        const th = el("th", c.k === "zone" ? "zone" : "", c.head);
        th.dataset.k = c.k;
        if (c.k === st.sort) th.className += " sorted";
        if (c.k !== "hist")
          th.onclick = () => {
            st.dir = st.sort === c.k ? -st.dir : c.k === "zone" ? 1 : -1;
            st.sort = c.k;
            drawTop();
          };
        head.append(th);
      }
      table.append(head);
      const bars = " ▁▂▃▄▅▆▇█";
      for (const z of rows) {
        const tr = el("tr");
        tr.dataset.zone = z.zone;
        /* no kernel facts for any call in the window: unknown, not 0 */
        const noFacts = z.calls && !z.kernel_calls;
        for (const c of shown) {
          if (c.k === "zone") { tr.append(el("td", "zone", z.zone)); continue; }
          if (c.k === "hist") {
            const h = st.hist.get(z.zone) || [], mx = Math.max(0, ...h);
            tr.append(el("td", "spark",
              h.map((v) => bars[mx > 0 && v > 0 ? 1 + Math.floor(7 * v / mx) : 0]).join("")));
            continue;
          }
          const v = c.v(z, t), td = el("td");
          td.dataset.k = c.k;
          if (v === null || (c.sched && noFacts)) {
            td.textContent = "-";
          } else {
            td.dataset.v = String(v);
            const shownV = c.rate ? v / span : v;
            td.textContent = c.show ? c.show(v) : c.ns ? fmtNs(shownV) :
              shownV.toFixed(c.rate && shownV < 10 ? 1 : 0);
          }
          tr.append(td);
        }
        table.append(tr);
      }
      if (!rows.length) {
        const tr = el("tr"), td = el("td", "empty", "no zone ended in this window");
        td.colSpan = shown.length;
        tr.append(td);
        table.append(tr);
      }
    }

    /* the flame graph: threads merged by call path --------------------------- */
    function mergeTree(rep) {
      const root = { name: "all", total: 0, self: 0, calls: 0, kids: new Map() };
      function add(into, n) {
        let k = into.kids.get(n.name);
        if (!k) {
          k = { name: n.name, total: 0, self: 0, calls: 0, kids: new Map() };
          into.kids.set(n.name, k);
        }
        k.total += n.total_ns;
        k.self += n.self_ns;
        k.calls += n.calls;
        for (const c of n.children || []) add(k, c);
      }
      const p = rep.processes[0];
      for (const th of (p && p.threads) || [])
        for (const n of th.nodes) { add(root, n); root.total += n.total_ns; }
      return root;
    }
    function drawFlame() {
      if (!last) return;
      let root = mergeTree(last.report);
      const path = [];
      for (const name of st.zoom) {
        const k = root.kids.get(name);
        if (!k) break;
        path.push(name);
        root = k;
      }
      st.zoom = path;
      crumbs.textContent = "";
      const all = el("a", "", "all");
      all.href = "#";
      all.onclick = (e) => { e.preventDefault(); st.zoom = []; drawFlame(); };
      crumbs.append(all);
      path.forEach((name, i) => {
        const a = el("a", "", name);
        a.href = "#";
        a.onclick = (e) => { e.preventDefault(); st.zoom = path.slice(0, i + 1); drawFlame(); };
        crumbs.append(" > ", a);
      });
      flame.textContent = "";
      const w = flame.clientWidth || 800, q = st.search.toLowerCase();
      let depthMax = 0, drawn = 0, nodes = 0, hit = 0;
      function color(name) {
        let h = 0;
        for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
        return "hsl(" + (h % 60 + 10) + ",75%," + (62 + h % 15) + "%)";
      }
      function put(n, x, width, depth, fullPath) {
        if (n.total <= 0) return;
        nodes++;
        depthMax = Math.max(depthMax, depth);
        const match = q && n.name.toLowerCase().includes(q);
        if (match && depth > 0) hit += n.total;
        if (width >= 0.5) {
          const d = el("div", "fg-node" + (match ? " fg-match" : q ? " fg-dim" : ""),
                       width > 30 ? n.name : "");
          d.style.left = x + "px";
          d.style.width = width + "px";
          d.style.top = depth * 18 + "px";
          d.style.background = depth ? color(n.name) : "#ddd";
          d.dataset.name = n.name;
          d.title = n.name + ": " + fmtNs(n.total) + " total, " + fmtNs(n.self) + " self, " +
            n.calls + " calls";
          d.onclick = () => { st.zoom = fullPath; drawFlame(); };
          flame.append(d);
          drawn++;
        }
        let cx = x;
        const kids = [...n.kids.values()].sort((a, b) => b.total - a.total);
        for (const k of kids) {
          const kw = n.total ? width * k.total / n.total : 0;
          /* a match inside a match is counted once */
          put(k, cx, kw, depth + 1, fullPath.concat([k.name]));
          cx += kw;
        }
      }
      put(root, 0, w, 0, path.slice());
      flame.style.height = (depthMax + 1) * 18 + 2 + "px";
      flame.dataset.nodes = String(nodes);
      flame.dataset.drawn = String(drawn);
      matched.textContent = q ? " matched: " + (root.total ? (100 * hit / root.total).toFixed(1) : 0) +
        "% of " + fmtNs(root.total) : "";
    }

    /* the timeline ------------------------------------------------------------ */
    function onCpu(e) {
      /* the call's time on a CPU: its overlap with its thread's runs */
      const sched = last.trace.traceEvents.filter((s) => s.cat === "sched" && s.ph === "X" &&
        s.tid === e.tid + 4294967296 * 2 && s.args && s.args.cpu !== undefined);
      if (!sched.length) return null;
      let on = 0;
      for (const s of sched)
        on += Math.max(0, Math.min(e.ts + e.dur, s.ts + s.dur) - Math.max(e.ts, s.ts));
      return on;
    }
    function showPick(e) {
      const a = e.args || {};
      const facts = e.cat === "zone"
        ? ["preempted", "blocked", "migrated"].map((k) => k + ": " + (a[k] ? "yes" : "no")).join(", ")
        : "";
      const on = e.cat === "zone" ? onCpu(e) : null;
      pick.textContent = e.name + " (" + (e.cat || "call") + "), " + fmtNs(e.dur * 1000) +
        (e.cat === "zone" ? ", on-CPU " + (on === null ? "unknown (no scheduler lanes: profd)"
                                                     : fmtNs(on * 1000)) + ", " + facts : "");
      pick.dataset.name = e.name;
    }
    function drawTimeline() {
      tl.textContent = "";
      profTimeline(tl, last.trace, {
        live: true, view: st.tlView, onpick: showPick,
        onview: (v) => { st.tlView = v ? v.slice() : null; },
      });
    }

    async function update() {
      if (st.busy) return;
      st.busy = true;
      const w = encodeURIComponent(st.window);
      try {
        const [top, report, trace] = await Promise.all([
          getJSON("/api/p/" + pid + "/top?window=" + w),
          getJSON("/api/p/" + pid + "/report?window=" + w),
          getJSON("/api/p/" + pid + "/trace" + traceQuery(true)),
        ]);
        if (!st.frozen) {
          const t0 = performance.now();
          last = { top, report, trace };
          window.liveLast = last;
          drawTop();
          const t1 = performance.now();
          drawFlame();
          const t2 = performance.now();
          drawTimeline();
          /* the layout the new elements need, in the measure too */
          void document.body.offsetHeight;
          const t3 = performance.now();
          stats.draws.push(t3 - t0);
          stats.parts.push([t1 - t0, t2 - t1, t3 - t2]);
          if (stats.parts.length > 600) stats.parts.shift();
          if (stats.draws.length > 600) stats.draws.shift();
          stats.updates++;
          document.body.dataset.updates = String(stats.updates);
        }
      } catch (e) {
        stats.failed++;
        status(String(e.message || e));
      } finally {
        st.busy = false;
      }
    }
    function loop() {
      if (!st.frozen) update();
      setTimeout(loop, 1000);
    }
    loop();
  }

  const m = /^\/p\/(\d+)$/.exec(location.pathname);
  if (m) processPage(Number(m[1]));
  else processList();
})();
