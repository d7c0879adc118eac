// Sorting, filtering and pagination of the report's tables. Each table's rows are a gzipped,
// base64-encoded JSON array in a non-executed <script>; they are unpacked once, then only the
// page on screen is made into DOM nodes (with textContent: a crawled URL is never parsed as HTML).
(function () {
  "use strict";
  var PAGE = 100;

  async function unpack(text) {
    var binary = atob(text.trim());
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function compare(a, b) {
    if (a === b) return 0;
    if (a === null || a === undefined) return 1;
    if (b === null || b === undefined) return -1;
    return a < b ? -1 : 1;
  }

  async function setUp(section) {
    var columns = JSON.parse(section.dataset.columns);
    var status = section.querySelector(".status");
    var rows = await unpack(section.querySelector("script.rows").textContent);
    var state = { query: "", picks: {}, sortBy: -1, dir: 1, page: 0, view: rows };

    var controls = el("div", { "class": "controls" });
    var search = el("input", { type: "search", placeholder: "Filter (text in any column)", "aria-label": "Filter" });
    controls.appendChild(search);
    columns.forEach(function (column, index) {
      if (column.kind !== "category") return;
      var counts = {};
      rows.forEach(function (row) { var v = row[index] || ""; counts[v] = (counts[v] || 0) + 1; });
      var select = el("select", { "data-col": String(index), "aria-label": column.name });
      select.appendChild(el("option", { value: "" }, "every " + column.name));
      Object.keys(counts).sort().forEach(function (v) {
        select.appendChild(el("option", { value: v }, (v || "(none)") + " (" + counts[v].toLocaleString() + ")"));
      });
      select.addEventListener("change", function () { state.picks[index] = select.value; refilter(); });
      controls.appendChild(select);
    });
    var nav = el("div", { "class": "controls nav" });
    var buttons = {};
    ["first", "previous", "next", "last"].forEach(function (name) {
      buttons[name] = el("button", { type: "button", "class": name }, name);
      nav.appendChild(buttons[name]);
    });
    var info = el("span", { "class": "pageinfo" });
    nav.appendChild(info);

    var table = el("table", { "class": "rows" });
    var headRow = el("tr");
    columns.forEach(function (column, index) {
      var th = el("th", { scope: "col", "aria-sort": "none", "class": "col-" + column.kind + " col-" + column.name });
      var button = el("button", { type: "button", "data-col": String(index) }, column.name);
      button.addEventListener("click", function () { sortBy(index); });
      th.appendChild(button);
      headRow.appendChild(th);
    });
    table.appendChild(el("thead")).appendChild(headRow);
    var body = table.appendChild(el("tbody"));

    function refilter() {
      var query = state.query.toLowerCase();
      var picks = Object.keys(state.picks).filter(function (k) { return state.picks[k] !== ""; });
      state.view = rows.filter(function (row) {
        for (var p = 0; p < picks.length; p++) if ((row[picks[p]] || "") !== state.picks[picks[p]]) return false;
        if (!query) return true;
        for (var c = 0; c < columns.length; c++) {
          if (columns[c].kind === "text" && row[c] && String(row[c]).toLowerCase().indexOf(query) !== -1) return true;
        }
        return false;
      });
      sortView();
      state.page = 0;
      draw();
    }

    function sortView() {
      if (state.sortBy < 0) return;
      var i = state.sortBy, dir = state.dir;
      state.view.sort(function (a, b) { return compare(a[i], b[i]) * dir; });
    }

    function sortBy(index) {
      state.dir = state.sortBy === index ? -state.dir : 1;
      state.sortBy = index;
      headRow.querySelectorAll("th").forEach(function (th, i) {
        th.setAttribute("aria-sort", i !== index ? "none" : state.dir > 0 ? "ascending" : "descending");
      });
      sortView();
      state.page = 0;
      draw();
    }

    function draw() {
      var pages = Math.max(1, Math.ceil(state.view.length / PAGE));
      state.page = Math.min(Math.max(0, state.page), pages - 1);
      var start = state.page * PAGE;
      var fragment = document.createDocumentFragment();
      state.view.slice(start, start + PAGE).forEach(function (row) {
        var tr = el("tr");
        columns.forEach(function (_, c) { tr.appendChild(el("td", {}, row[c] === null ? "" : String(row[c]))); });
        fragment.appendChild(tr);
      });
      body.replaceChildren(fragment);
      info.textContent = "page " + (state.page + 1) + " of " + pages + " \u00b7 " +
        state.view.length.toLocaleString() + " of " + rows.length.toLocaleString() + " rows";
      buttons.first.disabled = buttons.previous.disabled = state.page === 0;
      buttons.next.disabled = buttons.last.disabled = state.page >= pages - 1;
    }

    var timer = null;
    search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { state.query = search.value; refilter(); }, 150);
    });
    buttons.first.addEventListener("click", function () { state.page = 0; draw(); });
    buttons.previous.addEventListener("click", function () { state.page -= 1; draw(); });
    buttons.next.addEventListener("click", function () { state.page += 1; draw(); });
    buttons.last.addEventListener("click", function () { state.page = Infinity; draw(); });

    status.replaceWith(controls);
    section.appendChild(table);
    section.appendChild(nav);
    draw();
    section.dataset.ready = "1";
  }

  document.querySelectorAll("section.table").forEach(function (section) {
    setUp(section).catch(function (error) {
      section.querySelector(".status").textContent = "Could not read the rows: " + error;
    });
  });
})();
