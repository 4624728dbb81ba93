package server_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/selmem/selmem/internal/browsertest"
)

// salesRows is n orders; seed changes every amount.
func salesRows(n int, seed uint64) []saleRow {
	r := rand.New(rand.NewPCG(seed, 7))
	regions := []string{"EMEA", "AMER", "APAC", "LATAM"}
	rows := make([]saleRow, n)
	for i := range rows {
		rows[i] = saleRow{regions[r.IntN(4)], []string{"basic", "pro", "team"}[i%3], float64(1000+r.IntN(90000)) / 100, 1 + r.IntN(9)}
	}
	return rows
}

// BenchmarkApps_RefreshToView measures, at 10,000 rows, the time from
// calling refresh_artifact over MCP (HTTP, a client that declared MCP
// Apps) to the view in a browser host having rendered the new data,
// alternating two versions so that every refresh commits: p50 and p99 of
// the whole, of the call and of the rendering (from handing the result to
// the view to its report of the rendered page), and of show_artifact (the
// view read and sent without a refresh), beside the baseline of
// loading the same artifact with the same data over HTTP in a tab of the
// same browser.
func BenchmarkApps_RefreshToView(b *testing.B) {
	browsertest.Require(b)
	const n = 10_000
	versions := []string{salesCSV(salesRows(n, 1), false), salesCSV(salesRows(n, 2), false)}
	a := newAppsHomeCSV(b, versions[0])
	h := startHTTP(b, a.home, a.envs...)
	cs := connectApps(b, h.url, eras[0], true)
	host := appsHost(b)
	browser := browsertest.NewFramesInProcess(b)
	page, served := browser.NewPage(b), browser.NewPage(b)
	page.Navigate(host.URL + "/")
	page.WaitFor(`document.body.getAttribute("data-host") === "ready"`)
	if !browsertest.Eval[bool](page, "host.mount("+readView(b, cs, appsViewer)+")") {
		b.Fatal("mount")
	}
	args := map[string]any{"workspace": "demo", "artifact": "dash"}
	var total, call, render, page0, show []float64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		a.write("sales-w1.csv", versions[(i+1)%2], 0)
		b.StartTimer()
		t0 := time.Now()
		res, err := callRaw(b, cs, "refresh_artifact", args)
		if err != nil || res.IsError {
			b.Fatalf("refresh_artifact: %v %v", err, res)
		}
		c := msSince(t0)
		r := browsertest.Eval[float64](page, "host.deliverTimed("+toJSON(res)+")")
		b.StopTimer()
		if !strings.Contains(toJSON(res.StructuredContent), `"outcome":"refreshed"`) {
			b.Fatalf("refresh %d did not commit: %s", i, toJSON(res.StructuredContent))
		}
		call, render, total = append(call, c), append(render, r), append(total, c+r)
		// What the view adds to a call: show_artifact reads and sends it
		// without refreshing.
		t2 := time.Now()
		if res, err := callRaw(b, cs, "show_artifact", args); err != nil || res.IsError {
			b.Fatalf("show_artifact: %v %v", err, res)
		}
		show = append(show, msSince(t2))
		// Baseline: the same artifact and data served over HTTP, loaded
		// in a tab of the same browser until it has rendered.
		t1 := time.Now()
		served.Navigate(h.base + "/artifacts/demo/dash/")
		served.WaitFor(`document.body.getAttribute("data-state") === "ready"`)
		page0 = append(page0, msSince(t1))
		b.StartTimer()
	}
	report := func(name string, xs []float64) {
		slices.Sort(xs)
		b.ReportMetric(xs[len(xs)/2], name+"p50-ms")
		b.ReportMetric(xs[min(len(xs)-1, len(xs)*99/100)], name+"p99-ms")
	}
	report("call-", call)
	report("render-", render)
	report("", total)
	report("http-page-", page0)
	report("show-call-", show)
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }
