// selmem: a view's data arrives by column, in two parts (see
// refresh.Columnar): d, the columns with the text values, and numbers, the
// number and boolean values and the dictionary codes. selmemExpand turns
// them back into the snapshot an artifact reads at its injection point:
// {columns, records, rows} and any other members. The
// records are built when first read, so a page that reads its data by
// column instead, with column(name) (not enumerable: the snapshot's JSON
// is unchanged), never builds ten thousand objects.
function selmemExpand(d, numbers) {
  "use strict";
  var cols = d.columns || [];
  var n = d.rows || 0;
  var raw = d.values || [];
  var nums = numbers || [];
  var decoded = [];
  // values returns column c's values, a dictionary-encoded column
  // decoded once.
  function values(c) {
    if (decoded[c]) {
      return decoded[c];
    }
    var v = raw[c];
    var out = v;
    if (v && v.dict) {
      var codes = nums[c] || [];
      out = new Array(codes.length);
      for (var i = 0; i < out.length; i++) {
        out[i] = codes[i] < 0 ? null : v.dict[codes[i]];
      }
    } else if (!Array.isArray(v)) {
      out = nums[c] || [];
    }
    decoded[c] = out;
    return out;
  }
  function records() {
    var vals = cols.map(function (col, c) { return values(c); });
    var recs = new Array(n);
    for (var r = 0; r < n; r++) {
      var rec = {};
      for (var c = 0; c < cols.length; c++) {
        rec[cols[c].name] = vals[c][r];
      }
      recs[r] = rec;
    }
    return recs;
  }
  var out = { columns: cols };
  // records becomes a plain member once read or set.
  function settle(v) {
    Object.defineProperty(out, "records", { value: v, writable: true, enumerable: true, configurable: true });
    return v;
  }
  Object.defineProperty(out, "records", {
    enumerable: true,
    configurable: true,
    get: function () { return settle(records()); },
    set: settle
  });
  out.rows = d.rows;
  Object.keys(d).forEach(function (k) {
    if (!(k in out) && k !== "values") {
      out[k] = d[k];
    }
  });
  // column returns the values of the column named name, in row order (the
  // same array on each call: read it, do not change it), or null when the
  // data has no such column.
  Object.defineProperty(out, "column", {
    value: function (name) {
      for (var c = 0; c < cols.length; c++) {
        if (cols[c] && cols[c].name === name) {
          return values(c);
        }
      }
      return null;
    }
  });
  return out;
}
