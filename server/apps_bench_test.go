package server_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// totalWatch runs in every document of the benchmark's tab: in a page
// with a #total element (the dashboard), it records on the root element
// the total shown and when it was shown (ms since the epoch), each time
// the DOM changes it. It also records when a message last arrived, before
// any script of the page reads it: in the view, from the host; in the
// artifact's frame, new data from the view (data-bench-got). It watches
// the DOM and the messages only, whatever the view's code.
const totalWatch = `(function () {
  if (window === window.top) return;
  addEventListener("message", function (e) {
    var now = String(performance.timeOrigin + performance.now());
    var fromHost = window.parent === window.top && e.source === window.parent;
    if (fromHost || (window.parent !== window.top && e.data && e.data.selmemView === "data")) {
      document.documentElement.setAttribute("data-bench-got", now);
    }
  }, true);
  var last = null;
  function check() {
    var el = document.getElementById("total");
    var text = el ? el.textContent.trim() : null;
    if (text === null || text === last) return;
    last = text;
    var root = document.documentElement;
    root.setAttribute("data-bench-total", text);
    root.setAttribute("data-bench-at", String(performance.timeOrigin + performance.now()));
  }
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true });
})();`

// BenchmarkApps_RefreshToView measures, at 10,000 rows, refresh_artifact
// to a rendered view: from sending the call over MCP (HTTP, a client that
// declared MCP Apps) until the dashboard in the view's frame, in a browser
// host (the official AppBridge), shows the new total. Two versions of the
// data alternate, so that every refresh commits. It reports p50 and p99
// of:
//   - the whole (call + render);
//   - the call (send to decoded result);
//   - the refresh as the server timed it (refresh-), and its loading,
//     profiling and commit; the call's rest is recording the run, reading
//     the view, encoding and sending the result, and decoding it;
//   - the rendering, from the host sending the result to the view until
//     the DOM shows the new total, measured in the browser; split into
//     deliver- (the host's message reaching the view), view- (the view
//     reading it and handing the data to the artifact's frame) and page-
//     (the page taking it and showing the total);
//   - show_artifact (the view read and sent without a refresh).
//
// Handing the decoded result to the host page over the DevTools protocol
// is left out: it stands for the host's own reading of the response,
// which the call includes.
func BenchmarkApps_RefreshToView(b *testing.B) {
	e := newAppsBench(b)
	page, cs, args := e.page, e.cs, e.args
	e.mount(appsViewer)
	gotAt := func(frame string) float64 {
		got, _ := browsertest.EvalInFrame[string](page, frame, `document.documentElement.getAttribute("data-bench-got") || ""`)
		at, _ := strconv.ParseFloat(got, 64)
		return at
	}
	var total, call, render, show, refreshed, loaded, profiled, committed, deliver, view, shown []float64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		next := (i + 1) % 2
		e.home.write("sales-w1.csv", e.versions[next], 0)
		b.StartTimer()
		t0 := time.Now()
		res, err := callRaw(b, cs, "refresh_artifact", args)
		c := msSince(t0)
		b.StopTimer()
		if err != nil || res.IsError {
			b.Fatalf("refresh_artifact: %v %v", err, res)
		}
		if !strings.Contains(toJSON(res.StructuredContent), `"outcome":"refreshed"`) {
			b.Fatalf("refresh %d did not commit: %s", i, toJSON(res.StructuredContent))
		}
		var out struct {
			Timings struct {
				Total   float64 `json:"total_ms"`
				Load    float64 `json:"load_ms"`
				Profile float64 `json:"profile_ms"`
				Commit  float64 `json:"commit_ms"`
			} `json:"timings"`
		}
		json.Unmarshal([]byte(toJSON(res.StructuredContent)), &out)
		refreshed = append(refreshed, out.Timings.Total)
		loaded, profiled, committed = append(loaded, out.Timings.Load), append(profiled, out.Timings.Profile), append(committed, out.Timings.Commit)
		browsertest.Eval[bool](page, "host.stage("+toJSON(res)+")")
		b.StartTimer()
		sent := browsertest.Eval[float64](page, "host.deliverStaged()")
		at := e.shownAt(e.totals[next])
		b.StopTimer()
		r := at - sent
		// A frame the view reloaded (the first refresh, before the page
		// said it renders in place) holds no message time: no split.
		if inView, inFrame := gotAt("view"), gotAt("selmem-view"); inView >= sent && inFrame >= inView {
			deliver, view, shown = append(deliver, inView-sent), append(view, inFrame-inView), append(shown, at-inFrame)
		}
		call, render, total = append(call, c), append(render, r), append(total, c+r)
		t2 := time.Now()
		if res, err := callRaw(b, cs, "show_artifact", args); err != nil || res.IsError {
			b.Fatalf("show_artifact: %v %v", err, res)
		}
		show = append(show, msSince(t2))
		b.StartTimer()
	}
	report := func(name string, xs []float64) { reportMs(b, name, xs) }
	report("call-", call)
	report("render-", render)
	report("", total)
	report("show-call-", show)
	report("refresh-", refreshed)
	report("refresh-load-", loaded)
	report("refresh-profile-", profiled)
	report("refresh-commit-", committed)
	report("deliver-", deliver)
	report("view-", view)
	report("page-", shown)
}

// BenchmarkApps_FirstView measures, at 10,000 rows, what a host that shows
// each tool call's result in a view of its own does after refresh_artifact
// returns: it mounts a new view (the viewer the tool names) and hands it
// the result, and the view loads the artifact's page with the data. It
// reports p50 and p99 from handing over the result until the page shows
// the new total (measured in the browser).
func BenchmarkApps_FirstView(b *testing.B) {
	e := newAppsBench(b)
	var render []float64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		next := (i + 1) % 2
		e.home.write("sales-w1.csv", e.versions[next], 0)
		res, err := callRaw(b, e.cs, "refresh_artifact", e.args)
		if err != nil || res.IsError {
			b.Fatalf("refresh_artifact: %v %v", err, res)
		}
		e.mount(appsViewer)
		browsertest.Eval[bool](e.page, "host.stage("+toJSON(res)+")")
		b.StartTimer()
		sent := browsertest.Eval[float64](e.page, "host.deliverStaged()")
		at := e.shownAt(e.totals[next])
		b.StopTimer()
		render = append(render, at-sent)
		b.StartTimer()
	}
	reportMs(b, "first-render-", render)
}

// appsBench is what the MCP Apps benchmarks share: a home whose dashboard
// reads a 10,000-row file with two versions (alternate them so that every
// refresh commits, and know each one's total), selmem over HTTP with a
// client that declared MCP Apps, and the browser host.
type appsBench struct {
	b        *testing.B
	home     *appsHome
	versions []string
	totals   []string
	cs       *mcp.ClientSession
	page     *browsertest.Page
	args     map[string]any
}

func newAppsBench(b *testing.B) *appsBench {
	browsertest.Require(b)
	const n = 10_000
	rows := [][]saleRow{salesRows(n, 1), salesRows(n, 2)}
	e := &appsBench{b: b, args: map[string]any{"workspace": "demo", "artifact": "dash"}}
	for _, r := range rows {
		e.versions = append(e.versions, salesCSV(r, false))
		_, total, _ := expectDashboard(r)
		e.totals = append(e.totals, total)
	}
	e.home = newAppsHomeCSV(b, e.versions[0])
	h := startHTTP(b, e.home.home, e.home.envs...)
	e.cs = connectApps(b, h.url, eras[0], true)
	host := appsHost(b)
	e.page = browsertest.NewFramesInProcess(b).NewPage(b)
	e.page.AddScript(totalWatch)
	e.page.Navigate(host.URL + "/")
	e.page.WaitFor(`document.body.getAttribute("data-host") === "ready"`)
	return e
}

// mount has the host page show the view uri in a new frame.
func (e *appsBench) mount(uri string) {
	if !browsertest.Eval[bool](e.page, "host.mount("+readView(e.b, e.cs, uri)+")") {
		e.b.Fatalf("mount %s", uri)
	}
}

// shownAt waits until the view's page shows the total want and returns
// when it did (ms since the epoch, the browser's clock).
func (e *appsBench) shownAt(want string) float64 {
	deadline := time.Now().Add(browsertest.Timeout)
	for {
		got, err := browsertest.EvalInFrame[[]string](e.page, "selmem-view",
			`[document.documentElement.getAttribute("data-bench-total") || "", document.documentElement.getAttribute("data-bench-at") || ""]`)
		if err == nil && got[0] == want {
			at, _ := strconv.ParseFloat(got[1], 64)
			return at
		}
		if time.Now().After(deadline) {
			e.b.Fatalf("the view did not show the total %s (shows %v, %v)", want, got, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// reportMs reports the median and p99 of xs (milliseconds) as name+"p50-ms"
// and name+"p99-ms".
func reportMs(b *testing.B, name string, xs []float64) {
	if len(xs) == 0 {
		return
	}
	slices.Sort(xs)
	b.ReportMetric(xs[len(xs)/2], name+"p50-ms")
	b.ReportMetric(xs[min(len(xs)-1, len(xs)*99/100)], name+"p99-ms")
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }
