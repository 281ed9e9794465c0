// nlcl site script (no dependencies, no network). jupyter-book loads every _static/*.js on every page.
//  * The claims dashboard (reproducibility page): filters, verdict buttons, sortable columns;
//    the filters can be set from the URL, e.g. reproducibility.html#status=not-reproduced; long
//    statements clamped to three lines, expanded by a click on them or on their "more" button.
//  * Chapter pages: the chapter's .py source joins the header's download menu.
(function () {
  "use strict";

  function setupDashboard(root) {
    var table = root.querySelector("table.nlcl-claims");
    if (!table) return;
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    var controls = root.querySelectorAll("[data-nlcl-filter]");
    var shown = root.querySelector(".nlcl-shown");

    function value(name) {
      var el = root.querySelector('[data-nlcl-filter="' + name + '"]');
      return el ? el.value.trim() : "";
    }

    function matches(row) {
      var f = {};
      ["paper", "chapter", "kind", "status", "profile", "text"].forEach(function (k) { f[k] = value(k); });
      if (f.paper && row.dataset.paper !== f.paper) return false;
      if (f.chapter && row.dataset.chapter !== f.chapter) return false;
      if (f.kind && row.dataset.kind !== f.kind) return false;
      var profiles = f.profile ? [f.profile] : ["ci", "full"];
      if (f.profile && row.dataset.profiles.split(" ").indexOf(f.profile) < 0) return false;
      if (f.status) {
        var any = profiles.some(function (p) { return row.dataset["status" + p.charAt(0).toUpperCase() + p.slice(1)] === f.status; });
        if (!any) return false;
      }
      if (f.text && row.textContent.toLowerCase().indexOf(f.text.toLowerCase()) < 0) return false;
      return true;
    }

    function apply() {
      var n = 0;
      rows.forEach(function (row) {
        var ok = matches(row);
        row.hidden = !ok;
        if (ok) n += 1;
      });
      if (shown) shown.textContent = n + " of " + rows.length + " claims shown";
      measure();
      var status = value("status");
      root.querySelectorAll("[data-nlcl-status]").forEach(function (b) {
        b.classList.toggle("nlcl-active", b.getAttribute("data-nlcl-status") === status);
      });
    }

    controls.forEach(function (el) {
      el.addEventListener(el.tagName === "INPUT" ? "input" : "change", apply);
    });
    root.querySelectorAll("[data-nlcl-status]").forEach(function (button) {
      button.addEventListener("click", function () {
        var select = root.querySelector('[data-nlcl-filter="status"]');
        if (select) select.value = button.getAttribute("data-nlcl-status");
        apply();
      });
    });

    // Sorting: click a heading; numbers sort as numbers, the rest as text; a second click reverses.
    var state = { column: -1, dir: 1 };
    var leafHeadings = Array.prototype.slice.call(table.tHead.querySelectorAll("th[data-nlcl-sort]"));
    leafHeadings.forEach(function (th) {
      th.classList.add("nlcl-sortable");
      th.setAttribute("title", "sort by this column");
      th.addEventListener("click", function () {
        var column = parseInt(th.getAttribute("data-nlcl-sort"), 10);
        state.dir = state.column === column ? -state.dir : 1;
        state.column = column;
        leafHeadings.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", state.dir > 0 ? "ascending" : "descending");
        function key(row) {
          var cell = row.cells[column];
          if (!cell) return "";
          var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent;
          var num = Number(raw);
          return raw.trim() !== "" && isFinite(num) ? num : raw.toLowerCase();
        }
        rows.sort(function (a, b) {
          var x = key(a), y = key(b);
          if (x === y) return 0;
          if (typeof x === "number" && typeof y === "number") return (x - y) * state.dir;
          if (typeof x === "number") return -1;
          if (typeof y === "number") return 1;
          return (x < y ? -1 : 1) * state.dir;
        });
        rows.forEach(function (row) { tbody.appendChild(row); });
      });
    });

    // Long statements: clamped by the stylesheet once .nlcl-js is set; those that overflow get a
    // "more" button, and a click on the text or the button expands (and collapses) them.
    var clamps = Array.prototype.slice.call(root.querySelectorAll(".nlcl-clamp"));
    root.classList.add("nlcl-js");
    function toggle(clamp, button) {
      var open = !clamp.classList.contains("nlcl-open");
      clamp.classList.toggle("nlcl-open", open);
      button.setAttribute("aria-expanded", open ? "true" : "false");
    }
    clamps.forEach(function (clamp) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "nlcl-more";
      button.hidden = true;
      button.setAttribute("aria-expanded", "false");
      button.setAttribute("aria-label", "show the whole statement");
      clamp.insertAdjacentElement("afterend", button);
      button.addEventListener("click", function () { toggle(clamp, button); });
      clamp.addEventListener("click", function (event) {
        if (event.target.closest("a") || !clamp.classList.contains("nlcl-clamped")) return;
        if (window.getSelection && String(window.getSelection())) return;  // selecting text
        toggle(clamp, button);
      });
    });
    function measure() {
      (clamps || []).forEach(function (clamp) {
        if (clamp.classList.contains("nlcl-open") || clamp.closest("tr[hidden]")) return;
        var over = clamp.scrollHeight > clamp.clientHeight + 1;
        clamp.classList.toggle("nlcl-clamped", over);
        clamp.nextElementSibling.hidden = !over;
      });
    }
    // MathJax changes the statements' height when it typesets them.
    function afterMath() {
      var mj = window.MathJax;
      if (mj && mj.startup && mj.startup.promise) mj.startup.promise.then(measure);
    }
    measure();
    afterMath();
    window.addEventListener("resize", measure);
    window.addEventListener("load", function () { measure(); afterMath(); });

    // Filters from the URL hash: #status=fail&chapter=tian-tokens
    function fromHash() {
      var hash = window.location.hash.replace(/^#/, "");
      if (hash.indexOf("=") < 0) return;
      hash.split("&").forEach(function (pair) {
        var kv = pair.split("=");
        var el = root.querySelector('[data-nlcl-filter="' + decodeURIComponent(kv[0]) + '"]');
        if (el) el.value = decodeURIComponent(kv[1] || "");
      });
    }
    fromHash();
    window.addEventListener("hashchange", function () { fromHash(); apply(); });
    apply();
  }

  function addSourceDownload() {
    var link = document.querySelector(".nlcl-rerun a.download[href$='.py']");
    var menu = document.querySelector(".dropdown-download-buttons .dropdown-menu");
    if (!link || !menu || menu.querySelector(".nlcl-download-py")) return;
    var template = menu.querySelector("li");
    if (!template) return;
    var item = template.cloneNode(true);
    item.classList.add("nlcl-download-py");
    var a = item.querySelector("a");
    a.setAttribute("href", link.getAttribute("href"));
    a.setAttribute("download", "");
    a.removeAttribute("onclick");
    a.setAttribute("title", "Download the chapter's source (.py, jupytext)");
    a.setAttribute("data-bs-original-title", "Download the chapter's source (.py, jupytext)");
    var text = item.querySelector(".btn__text-container");
    if (text) text.textContent = ".py";
    var icon = item.querySelector("i");
    if (icon) icon.className = "fas fa-file-code";
    menu.appendChild(item);
  }

  function init() {
    document.querySelectorAll(".nlcl-dashboard").forEach(setupDashboard);
    addSourceDownload();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
