// pi-bench HTML report: the episode table (filter, sort, paging) and the episode viewer, rendered on demand.
// All data comes from the JSON block #pibench-data; text is only ever set with textContent.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("pibench-data").textContent);
  var PAGE = 200;
  var shown = PAGE;
  var sortKey = null, sortDir = 1;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "cls") node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }
  function text(s) { return document.createTextNode(s == null ? "" : String(s)); }

  var filters = {
    agent: document.getElementById("f-agent"), domain: document.getElementById("f-domain"),
    label: document.getElementById("f-label"), column: document.getElementById("f-column"),
    outcome: document.getElementById("f-outcome"), search: document.getElementById("f-search")
  };
  function fill(select, values, labels) {
    values.forEach(function (v, i) { select.appendChild(el("option", {value: String(v), text: labels ? labels[i] : v})); });
  }
  function uniq(key) {
    var seen = {}, out = [];
    data.episodes.forEach(function (e) { var v = e[key]; if (v && !seen[v]) { seen[v] = 1; out.push(v); } });
    return out.sort();
  }
  fill(filters.agent, data.contenders.map(function (c, i) { return i; }), data.contenders.map(function (c) { return c.label; }));
  fill(filters.domain, uniq("domain"));
  fill(filters.label, uniq("label"));
  fill(filters.column, uniq("column"));

  function outcome(e) { return e.status !== "completed" ? "error" : (e.passed ? "pass" : "fail"); }
  function matches(e) {
    if (filters.agent.value !== "" && String(e.c) !== filters.agent.value) return false;
    if (filters.domain.value && e.domain !== filters.domain.value) return false;
    if (filters.label.value && e.label !== filters.label.value) return false;
    if (filters.column.value && e.column !== filters.column.value) return false;
    if (filters.outcome.value && outcome(e) !== filters.outcome.value) return false;
    var q = filters.search.value.trim().toLowerCase();
    return !q || String(e.sid).toLowerCase().indexOf(q) >= 0;
  }
  function selected() {
    var rows = [];
    data.episodes.forEach(function (e, i) { if (matches(e)) rows.push(i); });
    if (sortKey) {
      rows.sort(function (a, b) {
        var x = sortValue(data.episodes[a]), y = sortValue(data.episodes[b]);
        return (x < y ? -1 : x > y ? 1 : a - b) * sortDir;
      });
    }
    return rows;
  }
  function sortValue(e) {
    if (sortKey === "agent") return data.contenders[e.c].label;
    if (sortKey === "outcome") return outcome(e);
    var v = e[sortKey];
    return v == null ? "" : v;
  }

  var body = document.getElementById("episodes-body");
  var count = document.getElementById("episodes-count");
  var more = document.getElementById("episodes-more");
  function render() {
    var rows = selected();
    body.textContent = "";
    rows.slice(0, shown).forEach(function (i) { body.appendChild(row(i)); });
    count.textContent = rows.length + " of " + data.episodes.length + " episodes" +
      (rows.length > shown ? " (first " + shown + " shown)" : "");
    more.hidden = rows.length <= shown;
  }
  function row(i) {
    var e = data.episodes[i];
    var o = outcome(e);
    var tr = el("tr", {cls: "episode", "data-index": String(i), tabindex: "0"}, [
      el("td", {text: data.contenders[e.c].label}), el("td", {text: e.sid}), el("td", {text: String(e.trial)}),
      el("td", {text: e.domain}), el("td", {text: e.label}), el("td", {text: e.column}),
      el("td", {text: e.decision}),
      el("td", {cls: o === "pass" ? "ok" : o === "error" ? "err" : "bad", text: o === "pass" ? "pass" : o === "error" ? "error" : "fail (" + e.failed + ")"}),
      el("td", {text: e.reason}), el("td", {text: (e.flags || []).join(", ")})
    ]);
    tr.addEventListener("click", function () { toggle(tr, i); });
    tr.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(tr, i); } });
    return tr;
  }
  function toggle(tr, i) {
    var next = tr.nextSibling;
    if (next && next.classList && next.classList.contains("detail")) { next.remove(); tr.classList.remove("open"); return; }
    tr.classList.add("open");
    var td = el("td", {colspan: "10"});
    td.appendChild(detail(i));
    tr.parentNode.insertBefore(el("tr", {cls: "detail"}, [td]), tr.nextSibling);
  }

  function note(e, c) { return ((data.notes || {})[e.run + ":" + e.sid] || {})[c.id] || ""; }
  function detail(i) {
    var e = data.episodes[i], d = data.details[i];
    var box = el("div", {cls: "episode-detail", "data-episode": e.sid + "#" + e.trial});
    if (d.error) box.appendChild(el("p", {cls: "err", text: "Error: " + d.error}));
    box.appendChild(el("p", {cls: "muted", text: "seed " + (e.seed == null ? "—" : e.seed) + ", " + (e.steps == null ? "?" : e.steps) + " steps, ended by " + e.reason}));
    if (!d.transcript) {
      box.appendChild(el("p", {cls: "err", text: "No transcript was recorded for this episode: its conversation, tool calls and state changes are not known."}));
    }
    box.appendChild(el("h3", {text: "Conversation"}));
    d.messages.forEach(function (m) { box.appendChild(message(m)); });
    box.appendChild(el("h3", {text: "Tool calls (" + d.trace.length + ")"}));
    box.appendChild(table(["#", "tool", "arguments", "result"], d.trace.map(function (t, k) {
      return [text(k + 1), el("span", {cls: t.error ? "bad" : "", text: t.tool + (t.blocked ? " (blocked)" : t.error ? " (error)" : "")}),
        el("pre", {text: t.arguments}), folded(t.result)];
    })));
    var failed = d.checks.filter(function (c) { return c.passed === false; });
    box.appendChild(el("h3", {text: "Failed checks (" + failed.length + " of " + d.checks.length + ")"}));
    box.appendChild(failed.length ? table(["check", "type", "detail", "clause (author's note)"], failed.map(function (c) {
      return [text(c.id), text(c.type), el("pre", {text: c.detail || ""}), text(note(e, c))];
    })) : d.checks.length ? el("p", {cls: "ok", text: "none"}) : el("p", {cls: "muted", text: "no check ran (an error row is not scored)"}));
    box.appendChild(el("h3", {text: "State changes (" + d.changes.length + ")"}));
    box.appendChild(d.changes.length ? table(["path", "change", "before", "after"], d.changes.map(function (c) {
      if (c.change === "more") return [text("…"), text(c.count + " more changes"), text(""), text("")];
      return [el("code", {text: c.path}), text(c.change), el("pre", {text: c.before == null ? "" : c.before}), el("pre", {text: c.after == null ? "" : c.after})];
    })) : el("p", {cls: "muted", text: d.transcript ? "the episode changed nothing in the database" : "not recorded"}));
    var hidden = el("div", {cls: "hidden-facts"}, [el("h3", {text: "Hidden facts (shown to the reader, never to the agent)"})]);
    hidden.appendChild(table(["fact", "value"], [
      [text("expected decision (label)"), text(e.label)], [text("leaderboard column"), text(e.column)],
      [text("recorded decision"), text(e.decision)], [text("pressure style"), text(e.style || "—")],
      [text("event flags"), text((e.flags || []).join(", ") || "none")]
    ]));
    hidden.appendChild(el("h3", {text: "All checks"}));
    hidden.appendChild(table(["check", "verdict", "clause (author's note)"], d.checks.map(function (c) {
      var v = c.passed === true ? "pass" : c.passed === false ? "fail" : "skipped";
      return [text(c.id), el("span", {cls: v === "pass" ? "ok" : v === "fail" ? "bad" : "muted", text: v}), text(note(e, c))];
    })));
    box.appendChild(hidden);
    return box;
  }
  function message(m) {
    var box = el("div", {cls: "msg " + (m.role === "user" ? "user" : m.role === "tool" ? "tool" : "assistant")},
      [el("div", {cls: "who", text: m.role + (m.name ? " · " + m.name : "") + (m.error ? " · error" : "")})]);
    if (m.content) box.appendChild(text(m.content));
    (m.calls || []).forEach(function (c) { box.appendChild(el("span", {cls: "call", text: "→ " + c.name + " " + c.arguments})); });
    (m.results || []).forEach(function (r) { box.appendChild(message(r)); });
    return box;
  }
  function folded(s) {
    if (s.length <= 300) return el("pre", {text: s});
    return el("details", {}, [el("summary", {text: s.slice(0, 120) + " … (" + s.length + " characters)"}), el("pre", {text: s})]);
  }
  function table(head, rows) {
    var t = el("table", {}, [el("thead", {}, [el("tr", {}, head.map(function (h) { return el("th", {text: h}); }))])]);
    var tb = el("tbody");
    rows.forEach(function (cells) { tb.appendChild(el("tr", {}, cells.map(function (c) { return el("td", {}, [c]); }))); });
    t.appendChild(tb);
    return t;
  }

  Object.keys(filters).forEach(function (k) {
    filters[k].addEventListener(k === "search" ? "input" : "change", function () { shown = PAGE; render(); });
  });
  more.addEventListener("click", function () { shown += PAGE; render(); });
  Array.prototype.forEach.call(document.querySelectorAll("th.sortable"), function (th) {
    th.addEventListener("click", function () {
      var key = th.getAttribute("data-key");
      sortDir = sortKey === key ? -sortDir : 1;
      sortKey = key;
      Array.prototype.forEach.call(document.querySelectorAll("th.sortable"), function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
      render();
    });
  });
  render();
  document.body.setAttribute("data-ready", "1");
})();
