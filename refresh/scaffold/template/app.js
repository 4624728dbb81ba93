// selmem dashboard. Every number and name shown is computed from the
// snapshot at the injection point (<script id="selmem-data">); this file
// holds no data, so the dashboard stays right when the data is refreshed.
(function () {
  "use strict";

  var CHART_WIDTH = 640;
  var LABEL_WIDTH = 150;
  var VALUE_WIDTH = 90;
  var BAR_HEIGHT = 22;
  var BAR_GAP = 6;
  var MAX_BARS = 10;
  var SVG_NS = "http://www.w3.org/2000/svg";

  function byId(id) {
    return document.getElementById(id);
  }

  function fail(message) {
    byId("rows").textContent = "–";
    byId("total").textContent = "–";
    byId("insight").textContent = "";
    byId("chart").textContent = "";
    var el = byId("error");
    el.textContent = message;
    el.hidden = false;
    document.body.setAttribute("data-state", "error");
  }

  function readJSON(id, what) {
    var el = byId(id);
    var text = el ? el.textContent.trim() : "";
    if (text === "") {
      throw new Error("No " + what + " at #" + id + ".");
    }
    return JSON.parse(text);
  }

  // toNumber returns v as a finite number, or null when it is not one.
  function toNumber(v) {
    if (typeof v === "number") {
      return isFinite(v) ? v : null;
    }
    if (typeof v === "string" && v.trim() !== "") {
      var n = Number(v);
      return isFinite(n) ? n : null;
    }
    return null;
  }

  // Number formats are made once: toLocaleString with options builds one
  // per call.
  var WHOLE = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
  var FRACTION = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });

  function format(n) {
    return (Number.isInteger(n) ? WHOLE : FRACTION).format(n);
  }

  function label(v) {
    if (v === null || v === undefined || v === "") {
      return "(blank)";
    }
    return String(v);
  }

  function findColumn(data, name) {
    var cols = Array.isArray(data.columns) ? data.columns : [];
    for (var i = 0; i < cols.length; i++) {
      if (cols[i] && cols[i].name === name) {
        return cols[i];
      }
    }
    return null;
  }

  // columnOf returns a column's values in row order: read by column when
  // the data offers it (new data in a conversation), else from the records.
  function columnOf(data, records, name) {
    var values = typeof data.column === "function" ? data.column(name) : null;
    return values || records.map(function (r) { return r[name]; });
  }

  // summarise sums the measure (or counts rows) per category, over the
  // rows given (their number) and the category's and measure's values.
  function summarise(rows, categories, measures) {
    var groups = new Map();
    var total = 0;
    var counted = 0;
    for (var i = 0; i < rows; i++) {
      var v = measures ? toNumber(measures[i]) : 1;
      if (v === null) {
        continue;
      }
      total += v;
      counted++;
      if (categories) {
        var k = label(categories[i]);
        groups.set(k, (groups.get(k) || 0) + v);
      }
    }
    var ranked = Array.from(groups, function (e) {
      return { name: e[0], value: e[1] };
    });
    ranked.sort(function (a, b) {
      return b.value - a.value || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    });
    return { total: total, counted: counted, ranked: ranked };
  }

  function percent(part, whole) {
    return Math.round((part / whole) * 100);
  }

  function insight(s, category, measureLabel) {
    if (s.counted === 0) {
      return "No rows have a value for " + measureLabel + ".";
    }
    if (!category) {
      return "The average " + measureLabel + " is " + format(s.total / s.counted) +
        " across " + format(s.counted) + " rows.";
    }
    var first = s.ranked[0];
    if (s.ranked.length === 1) {
      return first.name + " is the only " + category + ", with " + format(first.value) +
        " " + measureLabel + ".";
    }
    var second = s.ranked[1];
    var allPositive = s.ranked.every(function (g) { return g.value >= 0; });
    if (allPositive && s.total > 0) {
      return first.name + " leads with " + percent(first.value, s.total) + "% of " + measureLabel +
        ", ahead of " + second.name + " (" + percent(second.value, s.total) + "%), across " +
        format(s.ranked.length) + " " + category + " values.";
    }
    return first.name + " leads with " + format(first.value) + " " + measureLabel +
      ", ahead of " + second.name + " (" + format(second.value) + ").";
  }

  function svgElement(name, attrs, text) {
    var el = document.createElementNS(SVG_NS, name);
    Object.keys(attrs).forEach(function (k) {
      el.setAttribute(k, String(attrs[k]));
    });
    if (text !== undefined) {
      el.textContent = text;
    }
    return el;
  }

  function chart(container, ranked, measureLabel) {
    container.textContent = "";
    if (ranked.length === 0) {
      var p = document.createElement("p");
      p.className = "empty";
      p.textContent = "Nothing to chart.";
      container.appendChild(p);
      return;
    }
    var bars = ranked.slice(0, MAX_BARS);
    var rest = ranked.slice(MAX_BARS);
    if (rest.length > 0) {
      bars.push({
        name: "(" + rest.length + " more)",
        value: rest.reduce(function (sum, g) { return sum + g.value; }, 0)
      });
    }
    var scale = bars.reduce(function (m, g) { return Math.max(m, Math.abs(g.value)); }, 0) || 1;
    var plotWidth = CHART_WIDTH - LABEL_WIDTH - VALUE_WIDTH;
    var rowHeight = BAR_HEIGHT + BAR_GAP;
    var svg = svgElement("svg", {
      viewBox: "0 0 " + CHART_WIDTH + " " + bars.length * rowHeight,
      role: "img",
      "aria-label": measureLabel + " by " + container.getAttribute("data-category")
    });
    bars.forEach(function (g, i) {
      var y = i * rowHeight;
      var width = (Math.abs(g.value) / scale) * plotWidth;
      var row = svgElement("g", { "class": "row" });
      row.appendChild(svgElement("text", {
        "class": "bar-label", x: LABEL_WIDTH - BAR_GAP, y: y + BAR_HEIGHT / 2,
        "text-anchor": "end", "dominant-baseline": "middle"
      }, g.name));
      var bar = svgElement("rect", {
        "class": g.value < 0 ? "bar neg" : "bar", x: LABEL_WIDTH, y: y,
        width: width, height: BAR_HEIGHT
      });
      bar.appendChild(svgElement("title", {}, g.name + ": " + format(g.value)));
      row.appendChild(bar);
      row.appendChild(svgElement("text", {
        "class": "bar-value", x: LABEL_WIDTH + width + BAR_GAP, y: y + BAR_HEIGHT / 2,
        "dominant-baseline": "middle"
      }, format(g.value)));
      svg.appendChild(row);
    });
    container.appendChild(svg);
  }

  // render shows data: the snapshot given, else the one at the injection
  // point.
  function render(data) {
    var config = readJSON("selmem-config", "dashboard configuration");
    data = data || readJSON("selmem-data", "data");
    // Data read by column does not build its records (see columnOf).
    var byColumn = typeof data.column === "function";
    var records = byColumn ? [] : Array.isArray(data.records) ? data.records : [];
    var rows = byColumn ? data.rows || 0 : records.length;
    var missing = [config.category, config.measure].filter(function (name) {
      return name && !findColumn(data, name);
    });
    if (missing.length > 0) {
      fail("The data has no column " + missing.map(JSON.stringify).join(" or ") +
        ", which this dashboard was made for; it needs to be regenerated.");
      return;
    }
    var measureLabel = config.measure || "rows";
    var s = summarise(rows,
      config.category ? columnOf(data, records, config.category) : null,
      config.measure ? columnOf(data, records, config.measure) : null);
    byId("rows").textContent = format(typeof data.rows === "number" ? data.rows : records.length);
    byId("total").textContent = format(s.total);
    byId("insight").textContent = insight(s, config.category, measureLabel);
    var container = byId("chart");
    container.setAttribute("data-category", config.category || "");
    if (config.category) {
      chart(container, s.ranked, measureLabel);
    } else {
      container.textContent = "No category column to chart.";
    }
    document.body.setAttribute("data-state", "ready");
  }

  function show(data) {
    byId("error").hidden = true;
    try {
      render(data);
    } catch (e) {
      fail("The dashboard could not read its data: " + e.message);
    }
  }

  show();
  // In a conversation (an MCP Apps view), new data arrives as the event
  // selmem:data: render it in place instead of reloading the page.
  window.addEventListener("selmem:data", function (e) {
    e.preventDefault();
    show(e.detail);
  });
})();
