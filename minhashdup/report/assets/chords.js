// minhashdup report: the chord diagram by folders, for a page with more pairs than a chord per
// pair can show (html.py's CHORD_LIMIT). Files keep their path order around the circle; each arc
// on the rim is a folder at the depth the page chose or, inside a folder the reader opened, one
// of its subfolders or files. A chord joins two arcs: as wide as their pairs are many (the pairs
// of one group of identical files count once), coloured by the median Jaccard of its pairs; an
// arc with pairs inside it takes their colour. A click on a chord lists its pairs in the table,
// a click on a folder opens it, "up one level" closes the folder opened last.
// Every text from the scanned tree is inserted with textContent, never as HTML.
(function () {
  "use strict";
  const app = window.minhashdup, svg = document.getElementById("chord");
  if (!app || !svg || !app.data.view) return;
  const data = app.data, view = data.view, files = data.files, pairs = data.pairs, gid = data.gid;
  const NS = "http://www.w3.org/2000/svg", SIZE = 920, R = 320, GAP = 0.004, LABELS = 14;
  const STOPS = ["#3b0f70", "#3e4a89", "#26828e", "#35b779", "#b5de2b", "#fde725"];
  const low = data.params.threshold === undefined ? 0.5 : Number(data.params.threshold);
  const rel = files.map(function (f) { return f.replace(/\\/g, "/").replace(/^\.\//, "").slice(view.strip); });
  const levels = rel.map(function (r) { return r.split("/").length - 1; });  // folders above each file
  const rimEl = document.getElementById("rim"), chordsEl = document.getElementById("chords");
  const up = document.getElementById("chord-up"), where = document.getElementById("chord-where");
  const opened = [];  // what each click opened: an arc ("#" and its number) and, for one of one folder, that folder
  let nodes = [], links = [];

  function colour(v) {  // as svg.colour in Python: the similarity scale from the threshold to 1
    const x = low >= 1 ? 0 : Math.min(1, Math.max(0, (v - low) / (1 - low)));
    const pos = x * (STOPS.length - 1), i = Math.min(Math.floor(pos), STOPS.length - 2);
    const a = rgb(STOPS[i]), b = rgb(STOPS[i + 1]);
    return "#" + a.map(function (u, c) {
      return Math.round(u + (b[c] - u) * (pos - i)).toString(16).padStart(2, "0");
    }).join("");
  }
  function rgb(h) { return [1, 3, 5].map(function (s) { return parseInt(h.slice(s, s + 2), 16); }); }
  function folderOf(r, d) {
    const parts = r.split("/");
    parts.pop();
    return parts.slice(0, d).join("/") || ".";
  }
  function median(values) {
    values.sort(function (a, b) { return a - b; });
    const m = values.length >> 1;
    return values.length % 2 ? values[m] : (values[m - 1] + values[m]) / 2;
  }

  // The arcs: those the page starts with (view.arcs: runs of files, a folder or neighbouring
  // ones), and inside an opened one its folders at level view.fine, inside an opened folder its
  // subfolders and, at the bottom, its files one by one.
  const arcOf = new Int32Array(files.length);
  view.arcs.forEach(function (a, b) { arcOf.fill(b, a[0], a[1]); });
  function group() {
    const isOpen = new Set([].concat.apply([], opened)), nodeOf = new Int32Array(files.length);
    nodes = [];
    rel.forEach(function (r, i) {
      let d = view.fine, key = "#" + arcOf[i], file = false;
      if (isOpen.has(key)) {
        key = folderOf(r, d);
        while (isOpen.has(key)) {
          if (levels[i] > d) { d += 1; key = folderOf(r, d); } else { key = r; file = true; break; }
        }
      }
      const last = nodes[nodes.length - 1];
      if (last && last.key === key) last.last = i + 1;
      else nodes.push({ key: key, file: file, first: i, last: i + 1, inside: tally() });
      nodeOf[i] = nodes.length - 1;
    });
    return nodeOf;
  }
  function tally() { return { ks: [], js: [], count: 0, groups: new Set() }; }
  function add(t, k) {  // a pair into a chord's or an arc's tally; a group of identical files once
    const p = pairs[k], g = gid[p[0]];
    t.ks.push(k);
    t.js.push(p[2]);
    if (g && g === gid[p[1]]) {
      if (t.groups.has(g)) return;
      t.groups.add(g);
    }
    t.count += 1;
  }
  function link(nodeOf) {
    const byKey = new Map();
    pairs.forEach(function (p, k) {
      let u = nodeOf[p[0]], v = nodeOf[p[1]];
      if (u === v) { add(nodes[u].inside, k); return; }
      if (u > v) { const t = u; u = v; v = t; }
      const key = u * nodes.length + v;
      if (!byKey.has(key)) byKey.set(key, Object.assign(tally(), { u: u, v: v }));
      add(byKey.get(key), k);
    });
    links = Array.from(byKey.values());
    links.concat(nodes.map(function (n) { return n.inside; })).forEach(function (t) {
      t.median = t.js.length ? median(t.js) : 0;
      t.js = null;
    });
    links.sort(function (a, b) { return a.median - b.median || a.u - b.u || a.v - b.v; });  // strongest on top
  }

  function point(theta, r) { return [SIZE / 2 + r * Math.sin(theta), SIZE / 2 - r * Math.cos(theta)]; }
  function f1(x) { return x.toFixed(1); }
  function place() {
    const total = files.length, floor = total / (4 * nodes.length);
    const weights = nodes.map(function (n) { return Math.max(n.last - n.first, floor); });
    const sum = weights.reduce(function (a, b) { return a + b; }, 0);
    const span = 2 * Math.PI - GAP * nodes.length;
    let at = 0;
    nodes.forEach(function (n, i) {
      n.from = at;
      n.to = at + span * weights[i] / sum;
      n.mid = (n.from + n.to) / 2;
      at = n.to + GAP;
    });
  }
  function chordPath(t1, t2) {  // as svg.chord_path in Python
    const a = point(t1, R), b = point(t2, R);
    const apart = Math.abs(Math.atan2(Math.sin(t1 - t2), Math.cos(t1 - t2))) / Math.PI;
    const mid = Math.abs(t1 - t2) <= Math.PI ? (t1 + t2) / 2 : (t1 + t2) / 2 + Math.PI;
    const c = point(mid, R * (1 - apart) * 0.9);
    return "M" + f1(a[0]) + "," + f1(a[1]) + "Q" + f1(c[0]) + "," + f1(c[1]) + " " + f1(b[0]) + "," + f1(b[1]);
  }
  function el(tag, attrs, text) {
    const e = document.createElementNS(NS, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function arc(n, i) {
    const a = point(n.from, R + 8), b = point(n.to, R + 8), large = n.to - n.from > Math.PI ? 1 : 0;
    const stroke = n.inside.ks.length ? colour(n.inside.median) : (i % 2 ? "#7d7d8c" : "#b8b8c4");
    return el("path", { "class": "node", "data-n": i, stroke: stroke, "stroke-width": 10,
      d: "M" + f1(a[0]) + "," + f1(a[1]) + "A" + (R + 8) + "," + (R + 8) + " 0 " + large + " 1 " + f1(b[0]) + "," + f1(b[1]) });
  }
  function label(n) {
    const p = point(n.mid, R + 18), deg = (n.mid * 180 / Math.PI) % 360, flip = deg > 180;
    const full = name(n).replace(/\/$/, ""), parts = full.split("/");  // the first folder and the last
    const text = full.length <= 16 || parts.length < 3 ? full : parts[0] + "/.../" + parts[parts.length - 1];
    return el("text", { "class": "label", x: f1(p[0]), y: f1(p[1]), "text-anchor": flip ? "end" : "start",
      "dominant-baseline": "middle", transform: "rotate(" + f1(flip ? deg + 90 : deg - 90) + " " + f1(p[0]) + " " + f1(p[1]) + ")" },
      text + " (" + (n.last - n.first) + ")");
  }

  function draw() {
    const nodeOf = group();
    link(nodeOf);
    place();
    const top = links.reduce(function (m, l) { return Math.max(m, l.count); }, 1);
    const rim = document.createDocumentFragment(), chords = document.createDocumentFragment();
    nodes.forEach(function (n, i) { rim.appendChild(arc(n, i)); });
    nodes.map(function (n, i) { return i; })
      .sort(function (a, b) { return (nodes[b].last - nodes[b].first) - (nodes[a].last - nodes[a].first) || a - b; })
      .slice(0, LABELS).forEach(function (i) { rim.appendChild(label(nodes[i])); });
    links.forEach(function (l, c) {
      chords.appendChild(el("path", { "class": "fchord", "data-c": c, stroke: colour(l.median),
        "stroke-width": (1 + 9 * Math.sqrt(l.count / top)).toFixed(1), d: chordPath(nodes[l.u].mid, nodes[l.v].mid) }));
    });
    rimEl.replaceChildren(rim);
    chordsEl.replaceChildren(chords);
    up.hidden = opened.length === 0;
    where.textContent = opened.length ? "opened: " + opened.map(function (o) {
      return o[0][0] === "#" ? view.arcs[Number(o[0].slice(1))][2] : o[0];
    }).join(" > ") : "";
    const root = document.documentElement.dataset;
    root.view = "folders";
    root.arcs = String(nodes.length);
    root.chords = String(links.length);
  }

  function name(n) {
    if (n.key[0] === "#") {  // a folder, several (a .. b) or a range of one's files (folder/a.go .. b.go)
      const label = view.arcs[Number(n.key.slice(1))][2];
      return label.indexOf(" .. ") < 0 ? label + "/" : label;
    }
    return n.file ? n.key : n.key + "/";
  }
  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }
  function linkText(l) {
    return name(nodes[l.u]) + "\n" + name(nodes[l.v]) + "\n" + plural(l.ks.length, "pair") +
      (l.count < l.ks.length ? " (" + l.count + " counting each group of identical files once)" : "") +
      ", median Jaccard " + l.median.toFixed(3) + "\nclick to list them";
  }
  function nodeText(n) {
    const t = n.inside;
    return name(n) + " (" + plural(n.last - n.first, "file") + ")\n" + plural(t.ks.length, "pair") + " inside" +
      (t.ks.length ? ", median Jaccard " + t.median.toFixed(3) : "") + (n.file ? "\nclick to list its pairs" : "\nclick to open");
  }
  svg.addEventListener("mouseover", function (ev) {
    const d = ev.target.dataset;
    if (d.c !== undefined) app.show(linkText(links[Number(d.c)]), ev);
    else if (d.n !== undefined) app.show(nodeText(nodes[Number(d.n)]), ev);
  });
  svg.addEventListener("mouseout", app.hide);
  svg.addEventListener("click", function (ev) {
    const d = ev.target.dataset;
    app.hide();
    if (d.c !== undefined) {
      const l = links[Number(d.c)];
      app.listPairs(l.ks, "pairs between " + name(nodes[l.u]) + " and " + name(nodes[l.v]));
    } else if (d.n !== undefined) {
      const n = nodes[Number(d.n)];
      if (!n.file) {
        const arc = n.key[0] === "#" ? view.arcs[Number(n.key.slice(1))] : null;
        opened.push(arc && arc[3] ? [n.key, arc[3]] : [n.key]);
        draw();
        return;
      }
      const mine = [];
      pairs.forEach(function (p, k) { if (p[0] === n.first || p[1] === n.first) mine.push(k); });
      app.listPairs(mine, "pairs of " + n.key);
    }
  });
  up.addEventListener("click", function () { opened.pop(); draw(); });
  draw();
})();
