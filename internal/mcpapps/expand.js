// selmem: runs in the artifact's frame, right after the injection point,
// when the view loads the page with data: the data came by column (see
// columnar.js), and this writes the snapshot's JSON at the injection point
// before the page's own scripts read it.
(function () {
  "use strict";
  var columns = document.getElementById("selmem-columns");
  var numbers = document.getElementById("selmem-numbers");
  var point = document.getElementById("selmem-data");
  point.textContent = JSON.stringify(selmemExpand(JSON.parse(columns.textContent), JSON.parse(numbers.textContent)));
  columns.remove();
  numbers.remove();
})();
