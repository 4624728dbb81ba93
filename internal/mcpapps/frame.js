// selmem: runs in the artifact's frame of a view. It reports the page's
// height and hands the view the links marked data-selmem-open, which the
// host opens; it marks when the page shows its data (the performance mark
// "selmem:rendered", detail {snapshot}) and tells the view; and it hands
// new data to a page that renders in place: the event "selmem:data" on
// window, whose detail is the new snapshot (see selmemExpand), cancelable.
// A page that renders it calls preventDefault(); otherwise the view
// reloads the page with the data at its injection point.
(function () {
  function size() {
    parent.postMessage({ selmemView: "size", height: Math.ceil(document.documentElement.getBoundingClientRect().height) }, "*");
  }
  function rendered(snapshot) {
    performance.mark("selmem:rendered", { detail: { snapshot: snapshot } });
    parent.postMessage({ selmemView: "rendered", snapshot: snapshot }, "*");
  }
  document.addEventListener("DOMContentLoaded", function () {
    var el = document.getElementById("selmem-data");
    rendered(el ? el.getAttribute("data-snapshot") || "" : "");
  });
  addEventListener("load", size);
  if (window.ResizeObserver) {
    new ResizeObserver(size).observe(document.documentElement);
  }
  addEventListener("message", function (e) {
    var m = e.data;
    if (e.source !== parent || !m || m.selmemView !== "data" || !(m.data instanceof Uint8Array) || !(m.numbers instanceof Uint8Array)) {
      return;
    }
    var dec = new TextDecoder();
    var ev = new CustomEvent("selmem:data", { detail: selmemExpand(JSON.parse(dec.decode(m.data)), JSON.parse(dec.decode(m.numbers))), cancelable: true });
    if (window.dispatchEvent(ev)) {
      parent.postMessage({ selmemView: "reload", seq: m.seq }, "*");
      return;
    }
    rendered(m.snapshot);
  });
  document.addEventListener("click", function (e) {
    var a = e.target && e.target.closest ? e.target.closest("a[data-selmem-open]") : null;
    if (a) {
      e.preventDefault();
      parent.postMessage({ selmemView: "open", url: a.href }, "*");
    }
  }, true);
})();
