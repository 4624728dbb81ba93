// selmem: reports this page's height to the view around it, and hands it
// the links marked data-selmem-open, which the host opens.
(function () {
  function size() {
    parent.postMessage({ selmemView: "size", height: Math.ceil(document.documentElement.getBoundingClientRect().height) }, "*");
  }
  addEventListener("load", size);
  if (window.ResizeObserver) {
    new ResizeObserver(size).observe(document.documentElement);
  }
  document.addEventListener("click", function (e) {
    var a = e.target && e.target.closest ? e.target.closest("a[data-selmem-open]") : null;
    if (a) {
      e.preventDefault();
      parent.postMessage({ selmemView: "open", url: a.href }, "*");
    }
  }, true);
})();
