// minhashdup report: tooltips, highlighting, sorting and the side-by-side view.
// Every text from the scanned tree is inserted with textContent, never as HTML.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("data").textContent);
  const files = data.files, pairs = data.pairs;
  const chord = document.getElementById("chord");
  const tip = document.getElementById("tip");
  let sources = null;  // parsed on first use: the largest part of the page

  function fmt(j) { return j.toFixed(3); }
  function pairText(k) {
    const p = pairs[k];
    return files[p[0]] + "\n" + files[p[1]] + "\nJaccard " + fmt(p[2]) + (p[7] ? " (known)" : "");
  }
  function byFile() {
    const out = new Map();
    pairs.forEach(function (p, k) {
      [p[0], p[1]].forEach(function (f) { if (!out.has(f)) out.set(f, []); out.get(f).push(k); });
    });
    return out;
  }
  const pairsOf = byFile();

  function show(text, ev) {
    tip.textContent = text;
    tip.style.display = "block";
    tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - 540) + "px";
    tip.style.top = (ev.clientY + 14) + "px";
  }
  function hide() { tip.style.display = "none"; }

  if (chord && !data.view) {  // a chord per pair; the folder view is chords.js's
    const chordEls = new Map();
    chord.querySelectorAll("#chords path").forEach(function (el) { chordEls.set(Number(el.dataset.p), el); });
    chord.addEventListener("mouseover", function (ev) {
      const t = ev.target;
      if (t.dataset.p !== undefined) show(pairText(Number(t.dataset.p)), ev);
      else if (t.dataset.f !== undefined) {
        const f = Number(t.dataset.f), mine = pairsOf.get(f) || [];
        const best = Math.max.apply(null, mine.map(function (k) { return pairs[k][2]; }));
        show(files[f] + "\n" + mine.length + " pair" + (mine.length === 1 ? "" : "s") + ", Jaccard up to " + fmt(best) +
          " (click to highlight)", ev);
      }
    });
    chord.addEventListener("mouseout", hide);
    chord.addEventListener("click", function (ev) {
      const t = ev.target;
      chord.querySelectorAll(".on").forEach(function (el) { el.classList.remove("on"); });
      if (t.dataset.f !== undefined) {
        const f = Number(t.dataset.f);
        t.classList.add("on");
        (pairsOf.get(f) || []).forEach(function (k) { chordEls.get(k).classList.add("on"); });
        chord.classList.add("focus");
      } else if (t.dataset.p !== undefined) {
        openPair(Number(t.dataset.p));
      } else {
        chord.classList.remove("focus");
      }
    });
    const toggle = document.getElementById("show-rejected");
    if (toggle) toggle.addEventListener("change", function () {
      document.getElementById("rejected").classList.toggle("hidden", !toggle.checked);
    });
  }

  // Tables, filled from the data a page of rows at a time (tens of thousands of rows at once
  // would take seconds to lay out); a click on a header sorts every row by that column (again:
  // the other way). The chord diagram may narrow a table to some rows, with a caption.
  const PAGE_ROWS = 200, MAX_MEMBERS = 12;
  function cell(tr, text, numeric, colour) {
    const td = document.createElement("td");
    if (numeric) td.className = "num";
    if (colour) {
      const sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = colour;
      td.appendChild(sw);
    }
    td.appendChild(document.createTextNode(text));
    tr.appendChild(td);
  }
  function table(id, rows, draw, onClick) {
    const el = document.getElementById(id);
    if (!el) return null;
    const body = el.tBodies[0], pager = document.querySelector('p.pager[data-table="' + id + '"]');
    const where = pager.querySelector(".where"), go = {};
    pager.querySelectorAll("button").forEach(function (b) { go[b.dataset.go] = b; });
    let shown = rows, start = 0, caption = "", order = null;
    function fill() {
      const frag = document.createDocumentFragment();
      shown.slice(start, start + PAGE_ROWS).forEach(function (row) {
        const tr = document.createElement("tr");
        draw(tr, row);
        if (onClick) { tr.dataset.p = row.k; tr.addEventListener("click", function () { onClick(row.k); }); }
        frag.appendChild(tr);
      });
      body.replaceChildren(frag);
      const end = Math.min(start + PAGE_ROWS, shown.length);
      where.textContent = (caption ? caption + ": " : "") + (shown.length ? (start + 1) + "-" + end : "0") +
        " of " + shown.length + " rows";
      go.prev.disabled = start === 0;
      go.next.disabled = end >= shown.length;
      go.unfilter.hidden = shown === rows;
    }
    go.prev.addEventListener("click", function () { start = Math.max(0, start - PAGE_ROWS); fill(); });
    go.next.addEventListener("click", function () { start += PAGE_ROWS; fill(); });
    go.unfilter.addEventListener("click", function () { shown = rows; caption = ""; start = 0; fill(); });
    el.querySelectorAll("th").forEach(function (th) {
      th.addEventListener("click", function () {
        const col = Number(th.dataset.col), dir = th.dataset.dir === "desc" ? 1 : -1;
        th.dataset.dir = dir === 1 ? "asc" : "desc";
        order = function (a, b) {
          const x = a.sort[col], y = b.sort[col];
          return dir * (x < y ? -1 : x > y ? 1 : 0) || a.k - b.k;
        };
        rows.sort(order);
        if (shown !== rows) shown.sort(order);
        start = 0;
        fill();
      });
    });
    fill();
    return {
      // Only the rows whose k is in ks (in the table's order), under a caption.
      only: function (ks, text) {
        const wanted = new Set(ks);
        shown = rows.filter(function (row) { return wanted.has(row.k); });
        caption = text;
        start = 0;
        fill();
        el.scrollIntoView({ block: "start" });
      },
    };
  }
  const pairTable = table("pairs", pairs.map(function (p, k) {
    return { k: k, p: p, sort: [p[2], p[3], files[p[0]], files[p[1]], p[4], p[7]] };
  }), function (tr, row) {
    const p = row.p;
    cell(tr, fmt(p[2]) + (p.length > 9 ? " / " + fmt(p[9]) : ""), true, data.colours[row.k]);
    cell(tr, fmt(p[3]), true);
    cell(tr, files[p[0]] + (p[8] & 1 ? " (vendored)" : ""));
    cell(tr, files[p[1]] + (p[8] & 2 ? " (vendored)" : ""));
    cell(tr, String(p[4]), true);
    cell(tr, p[7] ? "known" : "");
  }, openPair);
  table("clusters", data.clusters.map(function (c, k) {
    return { k: k, c: c, sort: [k, c[0], c[1], c[3], files[c[4][0]]] };
  }), function (tr, row) {
    const c = row.c, names = c[4].slice(0, MAX_MEMBERS).map(function (f) { return files[f]; });
    if (c[4].length > MAX_MEMBERS) names.push("... and " + (c[4].length - MAX_MEMBERS) + " more");
    cell(tr, String(row.k + 1), true);
    cell(tr, String(c[0]), true);
    cell(tr, String(c[1]), true);
    cell(tr, fmt(c[2]) + "-" + fmt(c[3]), true);
    cell(tr, names.join("\n"));
    tr.lastChild.className = "path";
  });

  // Side by side: both files, lines inside shared token runs highlighted.
  const dialog = document.getElementById("sbs");
  function quoted(path) { return /^[\w@%+=:,./-]+$/.test(path) ? path : "'" + path.replace(/'/g, "'\\''") + "'"; }
  function side(el, fileIndex, ranges, other) {
    el.replaceChildren();
    const head = document.createElement("h3");
    head.textContent = files[fileIndex];
    el.appendChild(head);
    if (sources === null) sources = JSON.parse(document.getElementById("sources").textContent);
    const text = sources[fileIndex];
    if (text === undefined) {
      const note = document.createElement("div");
      note.className = "missing";
      note.textContent = "This file's text is not in the report (it embeds source up to a size cap). " +
        "To see the pair side by side:\n\nminhashdup compare " + quoted(files[fileIndex]) + " " + quoted(files[other]);
      el.appendChild(note);
      return;
    }
    const lines = text.split(/\r\n|\r|\n/);  // as pygments counts lines
    const shared = new Uint8Array(lines.length + 2);
    ranges.forEach(function (r) { for (let i = r[0]; i <= r[1] && i < shared.length; i++) shared[i] = 1; });
    const frag = document.createDocumentFragment();
    lines.forEach(function (line, i) {
      const row = document.createElement("div");
      row.className = shared[i + 1] ? "ln shared" : "ln";
      const num = document.createElement("span"), code = document.createElement("span");
      num.textContent = String(i + 1);
      code.textContent = line;
      row.append(num, code);
      frag.appendChild(row);
    });
    el.appendChild(frag);
  }
  function openPair(k) {
    if (!dialog) return;
    const p = pairs[k], runs = (data.runs[k] || []);
    document.getElementById("sbs-title").textContent =
      "Jaccard " + fmt(p[2]) + " \u00b7 " + p[4] + " common shingles \u00b7 " + runs.length + " shared runs";
    side(document.getElementById("sbs-a"), p[0], runs.map(function (r) { return [r[0], r[1]]; }), p[1]);
    side(document.getElementById("sbs-b"), p[1], runs.map(function (r) { return [r[2], r[3]]; }), p[0]);
    if (runs.length) {
      const first = runs[0];
      [["sbs-a", first[0]], ["sbs-b", first[2]]].forEach(function (x) {
        const row = document.getElementById(x[0]).children[x[1]];
        if (row) row.scrollIntoView({ block: "center" });
      });
    }
    if (!dialog.open) dialog.showModal();
  }
  const close = document.getElementById("sbs-close");
  if (close) close.addEventListener("click", function () { dialog.close(); });

  // The paired files without text, named when the reader opens the list.
  const noText = document.getElementById("no-text");
  if (noText) noText.querySelector("summary").addEventListener("click", function () {
    const names = noText.querySelector(".names");
    if (names.textContent) return;
    if (sources === null) sources = JSON.parse(document.getElementById("sources").textContent);
    const paired = new Set();
    pairs.forEach(function (p) { paired.add(p[0]); paired.add(p[1]); });
    names.textContent = Array.from(paired).sort(function (a, b) { return a - b; })
      .filter(function (f) { return sources[f] === undefined; }).map(function (f) { return files[f]; }).join("\n");
  });

  // What the folder view of the chord diagram (chords.js) uses.
  window.minhashdup = { data: data, show: show, hide: hide, openPair: openPair,
    listPairs: function (ks, text) { if (pairTable) pairTable.only(ks, text); } };

  // A link to one pair: report.html#pair=12 opens it side by side.
  const wanted = /^#pair=(\d+)$/.exec(window.location.hash);
  if (wanted && Number(wanted[1]) < pairs.length) openPair(Number(wanted[1]));

  // For the tests and the benchmark: when the script was done, and when the page had loaded.
  document.documentElement.dataset.ready = performance.now().toFixed(0);
  window.addEventListener("load", function () {
    document.documentElement.dataset.loaded = performance.now().toFixed(0);
  });
})();
