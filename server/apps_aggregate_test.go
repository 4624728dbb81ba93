package server_test

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/selmem/selmem/internal/browsertest"
)

// aggregateBinding is the view aggregate the tests below declare.
const aggregateBinding = "view:\n  aggregate:\n    group_by: [region]\n    measures:\n      - {col: amount, fn: sum}\n      - {fn: count, as: orders}\n"

// newAggregateHome is the dashboard demo/dash over 2,000 orders with a
// view cap (64 KiB) below its data (about 100 KiB) and, when declared,
// the aggregate sum of amount and count by region.
func newAggregateHome(t *testing.T, declared bool) (*appsHome, []saleRow) {
	t.Helper()
	rows := salesRows(2000, 3)
	a := newAppsHomeCSV(t, salesCSV(rows, false), "SELMEM_REFRESH_MAX_VIEW_BYTES=65536")
	if declared {
		a.cli("", "replace", "/memories/workspaces/demo/artifacts/dash/binding.yaml", "connector: weekly\n", "connector: weekly\n"+aggregateBinding)
	}
	return a, rows
}

// TestApps_Aggregate: beyond refresh.max_view_bytes a binding's declared
// aggregate replaces the data in the view (computed by selmem, no model),
// and the view says so; without one the view stays too large to inline.
func TestApps_Aggregate(t *testing.T) {
	a, rows := newAggregateHome(t, true)
	h := startHTTP(t, a.home, a.envs...)
	cs := connectApps(t, h.url, eras[0], true)
	args := map[string]any{"workspace": "demo", "artifact": "dash"}
	a.write("sales-w1.csv", salesCSV(rows, true), 0) // a new column: the refresh commits
	res, err := callRaw(t, cs, "refresh_artifact", args)
	if err != nil || res.IsError {
		t.Fatalf("refresh_artifact: %v %v", err, res)
	}
	_, s := resultView(t, res)
	if s.TooLarge || !s.Aggregate || !strings.HasPrefix(s.Note, "Showing an aggregate of the 2000 rows (sum of amount, count of rows by region; 4 groups)") {
		t.Errorf("view: too large %v, aggregate %v, note %q", s.TooLarge, s.Aggregate, s.Note)
	}
	var data struct {
		Columns []struct{ Name, Type string } `json:"columns"`
		Rows    int                           `json:"rows"`
		Values  []json.RawMessage             `json:"values"`
		Agg     struct {
			OfRows int `json:"of_rows"`
			Groups int `json:"groups"`
		} `json:"aggregate"`
	}
	if err := json.Unmarshal([]byte(s.Data), &data); err != nil {
		t.Fatalf("data: %v: %.300s", err, s.Data)
	}
	if got := fmt.Sprint(data.Columns); data.Rows != 4 || got != "[{region text} {amount number} {orders integer}]" || data.Agg.OfRows != 2000 || data.Agg.Groups != 4 {
		t.Errorf("aggregate: %d rows, columns %s, %+v", data.Rows, got, data.Agg)
	}
	// The sums are the data's, largest first.
	sum, count := map[string]float64{}, map[string]int{}
	for _, r := range rows {
		sum[r.region] += r.amount
		count[r.region]++
	}
	regions := []string{"EMEA", "AMER", "APAC", "LATAM"}
	sort.Slice(regions, func(i, j int) bool { return sum[regions[i]] > sum[regions[j]] })
	var names []string
	var amounts []float64
	var orders []int
	var numbers []json.RawMessage
	if err := json.Unmarshal([]byte(s.Numbers), &numbers); err != nil || len(numbers) != 3 {
		t.Fatalf("numbers: %v: %.300s", err, s.Numbers)
	}
	if err := json.Unmarshal(data.Values[0], &names); err != nil {
		t.Fatalf("region values: %v", err)
	}
	json.Unmarshal(numbers[1], &amounts)
	json.Unmarshal(numbers[2], &orders)
	for i, name := range regions {
		if i >= len(names) || names[i] != name || math.Abs(amounts[i]-sum[name]) > 1e-6 || orders[i] != count[name] {
			t.Errorf("group %d: %v %v %v; want %s %.2f %d", i, names, amounts, orders, name, sum[name], count[name])
		}
	}

	show, err := callRaw(t, cs, "show_artifact", args)
	if err != nil || show.IsError {
		t.Fatalf("show_artifact: %v %v", err, show)
	}
	if got := toJSON(show.StructuredContent); !strings.Contains(got, `"aggregate":true`) || !strings.Contains(toJSON(show.Content), "shows its aggregate") {
		t.Errorf("show_artifact: %s %s", got, toJSON(show.Content))
	}
	if _, s2 := resultView(t, show); s2.Data != s.Data || s2.Numbers != s.Numbers {
		t.Error("show_artifact shows another aggregate")
	}
	view := readView(t, cs, appsDashView)
	if !strings.Contains(view, `id=\"selmem-note\"\u003eShowing an aggregate`) || strings.Contains(view, "too large") {
		t.Errorf("the artifact's view does not say it shows an aggregate: %.400s", view)
	}

	t.Run("without one", func(t *testing.T) {
		a, _ := newAggregateHome(t, false)
		h := startHTTP(t, a.home, a.envs...)
		cs := connectApps(t, h.url, eras[0], true)
		res, err := callRaw(t, cs, "show_artifact", args)
		if err != nil || res.IsError {
			t.Fatalf("show_artifact: %v %v", err, res)
		}
		if _, s := resultView(t, res); !s.TooLarge || s.Aggregate || s.Data != "" || !strings.Contains(s.Program, "larger than this view") {
			t.Errorf("view: too large %v, aggregate %v, %d bytes of data", s.TooLarge, s.Aggregate, len(s.Data))
		}
	})
}

// TestBrowser_AppsAggregate: in a browser host, a dashboard over data
// beyond the view's cap shows the aggregate: the same total and insight
// as over the whole data, one row per group, under a note saying it is
// an aggregate.
func TestBrowser_AppsAggregate(t *testing.T) {
	browsertest.Require(t)
	host := appsHost(t)
	a, rows := newAggregateHome(t, true)
	h := startHTTP(t, a.home, a.envs...)
	cs := connectApps(t, h.url, eras[0], true)
	a.write("sales-w1.csv", salesCSV(rows, true), 0)
	res, err := callRaw(t, cs, "refresh_artifact", map[string]any{"workspace": "demo", "artifact": "dash"})
	if err != nil || res.IsError {
		t.Fatalf("refresh_artifact: %v %v", err, res)
	}
	_, s := resultView(t, res)

	page := browsertest.NewFramesInProcess(t).NewPage(t)
	page.Navigate(host.URL + "/")
	page.WaitFor(`document.body.getAttribute("data-host") === "ready"`)
	if !browsertest.Eval[bool](page, "host.mount("+readView(t, cs, appsViewer)+")") {
		t.Fatal("mount")
	}
	caption := toJSON("Called <code>refresh_artifact</code>: the data is beyond the view's cap.")
	if !browsertest.Eval[bool](page, fmt.Sprintf("host.deliver(%s, %s, %s)", toJSON(map[string]any{"workspace": "demo", "artifact": "dash"}), toJSON(res), caption)) {
		t.Fatal("deliver")
	}
	page.WaitInFrame("view", `document.body.getAttribute("data-selmem-snapshot") === `+toJSON(s.Snapshot))
	page.WaitInFrame("selmem-view", `document.body && document.body.getAttribute("data-state") === "ready"`)
	note, err := browsertest.EvalInFrame[string](page, "view", `document.getElementById("selmem-note").hidden ? "" : document.getElementById("selmem-note").textContent`)
	if err != nil || !strings.HasPrefix(note, "Showing an aggregate of the 2000 rows") {
		t.Errorf("the view's note: %q, %v", note, err)
	}
	got, err := browsertest.EvalInFrame[map[string]string](page, "selmem-view",
		`({rows: document.getElementById("rows").textContent.trim(), total: document.getElementById("total").textContent.trim(), insight: document.getElementById("insight").textContent.trim()})`)
	if err != nil {
		t.Fatal(err)
	}
	_, total, insight := expectDashboard(rows)
	if got["rows"] != strconv.Itoa(4) || got["total"] != total || got["insight"] != insight {
		t.Errorf("the dashboard shows rows %q total %q insight %q; want 4 (groups) %q %q", got["rows"], got["total"], got["insight"], total, insight)
	}
}
