// selmem: a view's data arrives by column (see refresh.Frame.Columnar);
// selmemExpand turns it back into the snapshot an artifact reads at its
// injection point: {columns, records, rows} and any other members.
function selmemExpand(d) {
  "use strict";
  var cols = d.columns || [];
  var n = d.rows || 0;
  var vals = (d.values || []).map(function (v) {
    if (Array.isArray(v)) {
      return v;
    }
    var out = new Array(v.codes.length);
    for (var i = 0; i < out.length; i++) {
      out[i] = v.codes[i] < 0 ? null : v.dict[v.codes[i]];
    }
    return out;
  });
  var records = new Array(n);
  for (var r = 0; r < n; r++) {
    var rec = {};
    for (var c = 0; c < cols.length; c++) {
      rec[cols[c].name] = vals[c][r];
    }
    records[r] = rec;
  }
  var out = { columns: cols, records: records, rows: d.rows };
  Object.keys(d).forEach(function (k) {
    if (!(k in out) && k !== "values") {
      out[k] = d[k];
    }
  });
  return out;
}
