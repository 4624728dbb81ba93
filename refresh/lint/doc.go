// Package lint checks an artifact's program for the smell of a generated
// dashboard that will show stale numbers after a refresh: values copied
// from the data into the code instead of read from the injection point.
//
// Program scans the program files (HTML, SVG, JavaScript, JSON; CSS is
// layout and is skipped) against the current snapshot and reports each
// literal that equals a number in the data or an aggregate of it (a
// column's total or mean, a row count, a per-category total), and each
// category or date value written into JavaScript strings or HTML text.
// It also checks that index.html holds exactly one empty injection point.
//
// The check is a heuristic that warns, never a gate. To keep it quiet on
// honest programs it ignores numbers that are layout or formatting rather
// than data: small numbers (|n| <= 10 with at most one decimal), years
// (1900–2100), powers of ten, numbers with a CSS unit or inside CSS,
// numbers in SVG geometry attributes and in JavaScript assignments to
// layout names (width, height, x, gap, fontSize, timeout, …). Category
// values are not reported in titles and headings (title, h1–h6, th, label,
// caption, legend), when they equal a column name, or when they are
// common words (Other, Total, Yes, …). Findings name the file, the line,
// the kind of value and its column, and quote a value only when it is
// short.
//
// The package parses program text only; it knows nothing of bindings,
// snapshots on disk or MCP.
package lint
