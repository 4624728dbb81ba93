// Package scaffold generates small, dependency-free dashboards that follow
// selmem's data-injection contract, for demos, tests and `selmem artifact
// init`.
//
// A generated dashboard is a set of program files (index.html, app.js,
// style.css) with no data in them. index.html holds exactly one injection
// point (InjectionPoint); whoever serves the artifact fills it with the
// current snapshot as JSON, and app.js reads its data from there and from
// nowhere else: no CDN, no fetch, no literal values. It shows the row
// count (#rows), the total of a numeric measure (#total), a sentence
// computed from the data (#insight) and an inline SVG bar chart of the
// measure by a category (#chart). When the data lacks a column the program
// was generated for, it says so in #error and shows no numbers.
//
// OutputContract is the paragraph a workspace's output.md carries so that
// agents generating artifacts follow the same contract.
//
// The package owns the generated program only. Bindings, snapshots,
// injection and serving belong to package refresh; checking a program for
// hardcoded data belongs to package refresh/lint.
package scaffold
