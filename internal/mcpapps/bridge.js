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

  // render shows the artifact a tool result carries: its program with the
  // data placed at the injection point ("<" escaped, so the data cannot end
  // the script element).
  function render(view) {
    if (!view || typeof view.program !== "string") {
      return;
    }
    var html = view.program;
    if (typeof view.data === "string") {
      var json = view.data.replace(/</g, "\\u003c");
      html = html.split(POINT).join('<script type="application/json" id="selmem-data">' + json + "</" + "script>");
    }
    document.body.setAttribute("data-selmem-snapshot", view.snapshot || "");
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
