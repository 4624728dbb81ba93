// selmem's MCP Apps view bridge. The artifact renders in the frame
// #selmem-view; this script speaks the view's side of the MCP Apps protocol
// (ui/initialize, then tool results from the host) and re-renders the frame
// when a tool result carries an artifact's data. It opens no connection:
// everything arrives by postMessage from the host.
(function () {
  "use strict";
  var META = "selmem/view";
  var POINT = '<script type="application/json" id="selmem-data"></' + 'script>';
  var frame = document.getElementById("selmem-view");
  var note = document.getElementById("selmem-note");
  var host = window.parent;
  var nextId = 1;
  var pending = {};

  function send(message) {
    host.postMessage(message, "*");
  }
  function request(method, params) {
    var id = nextId++;
    send({ jsonrpc: "2.0", id: id, method: method, params: params });
    return new Promise(function (resolve, reject) {
      pending[id] = { resolve: resolve, reject: reject };
    });
  }
  function notify(method, params) {
    send({ jsonrpc: "2.0", method: method, params: params || {} });
  }

  // current is what the frame holds: the program (key) and whether it
  // has shown its data (ready); pending is the view sent to it since.
  var current = null;
  var seq = 0;

  function showNote(text) {
    note.textContent = text || "";
    note.hidden = !text;
  }

  // render shows the artifact a tool result carries. New data for the
  // program the frame already shows goes to the frame, which renders it
  // in place when the page can (see frame.js); anything else reloads the
  // frame: the program with the data at its injection point.
  function render(view) {
    if (!view || typeof view.program !== "string") {
      return;
    }
    showNote(view.note);
    if (typeof view.data === "string" && current && current.ready && current.key === view.program_key && current.live !== false) {
      current.pending = view;
      // The data goes as UTF-8 bytes whose buffers are transferred, not
      // copied: a window's message holding a large string costs the
      // receiving frame far more to read than encoding and decoding it.
      var enc = new TextEncoder();
      var data = enc.encode(view.data);
      var numbers = enc.encode(view.numbers || "null");
      frame.contentWindow.postMessage({ selmemView: "data", data: data, numbers: numbers, snapshot: view.snapshot || "", seq: ++seq }, "*", [data.buffer, numbers.buffer]);
      return;
    }
    reload(view);
  }

  // reload loads the program in the frame with the data placed at the
  // injection point. The frame's document carries the data by column, as
  // it came, and a script right after the injection point (EXPAND) writes
  // the snapshot's JSON there before the page's own scripts read it: a
  // frame's document several times the size takes Chromium far longer to
  // load than expanding the data in it. "<" is escaped, so that the data
  // cannot end its script element.
  function reload(view) {
    var html = view.program;
    if (typeof view.data === "string") {
      var snap = String(view.snapshot || "").replace(/[^0-9a-f]/g, "");
      var end = "</" + "script>";
      html = html.split(POINT).join(
        '<script type="application/json" id="selmem-columns">' + view.data.replace(/</g, "\\u003c") + end +
        '<script type="application/json" id="selmem-numbers">' + String(view.numbers || "null").replace(/</g, "\\u003c") + end +
        '<script type="application/json" id="selmem-data" data-snapshot="' + snap + '">' + end +
        "<script>" + EXPAND + end);
    } else {
      document.body.setAttribute("data-selmem-snapshot", view.snapshot || "");
    }
    current = { key: view.data ? view.program_key : null, ready: false, live: current && current.key === view.program_key ? current.live : undefined };
    frame.srcdoc = html;
  }

  // The artifact's frame reports its height and the links it wants opened
  // (see reporter.js); the view sizes the frame, tells the host, and has
  // the host open links (ui/open-link): the sandbox opens nothing itself.
  function fromFrame(m) {
    if (m.selmemView === "size" && typeof m.height === "number") {
      frame.style.height = m.height + "px";
      notify("ui/notifications/size-changed", { height: Math.ceil(document.documentElement.getBoundingClientRect().height) });
    } else if (m.selmemView === "open" && typeof m.url === "string") {
      request("ui/open-link", { url: m.url }).catch(function () {});
    } else if (m.selmemView === "rendered" && current) {
      current.ready = true;
      if (current.pending) {
        current.live = true;
        current.pending = null;
      }
      if (m.snapshot) {
        document.body.setAttribute("data-selmem-snapshot", m.snapshot);
      }
    } else if (m.selmemView === "reload" && current && current.pending && m.seq === seq) {
      var view = current.pending;
      current.live = false;
      reload(view);
    }
  }

  window.addEventListener("message", function (e) {
    var m = e.data;
    if (e.source === frame.contentWindow && m && m.selmemView) {
      fromFrame(m);
      return;
    }
    if (e.source !== host || !m || m.jsonrpc !== "2.0") {
      return;
    }
    if (m.method === undefined) {
      var p = pending[m.id];
      if (p) {
        delete pending[m.id];
        if (m.error) {
          p.reject(m.error);
        } else {
          p.resolve(m.result);
        }
      }
      return;
    }
    if (m.method === "ui/notifications/tool-result") {
      render(m.params && m.params._meta && m.params._meta[META]);
      return;
    }
    if (m.id === undefined) {
      return;
    }
    if (m.method === "ping" || m.method === "ui/resource-teardown") {
      send({ jsonrpc: "2.0", id: m.id, result: {} });
    } else {
      send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
    }
  });

  request("ui/initialize", {
    appInfo: { name: "selmem-artifact", version: "1.0.0" },
    appCapabilities: {},
    protocolVersion: "PROTOCOL_VERSION"
  }).then(function () {
    notify("ui/notifications/initialized");
  }, function () {});
})();
