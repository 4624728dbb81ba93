package server_test

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads base/metrics in the Prometheus text format.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	return fams
}

// sample sums the values (a histogram's count) of the family's series whose
// labels include labels; found is false when none does.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (sum float64, found bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		match := true
		for k, v := range labels {
			has := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					has = true
				}
			}
			match = match && has
		}
		if !match {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum, found
}

// TestServe_Metrics: after a few tool calls over HTTP, /metrics shows the
// calls, errors and latencies per tool, the searches, the refresh run, each
// index's lag behind HEAD (moving with a commit made outside selmem) and
// the repository's size; http.metrics false leaves /metrics unserved.
func TestServe_Metrics(t *testing.T) {
	a := newAppsHome(t, salesV1())
	h := startHTTP(t, a.home, a.envs...)
	cs := connectHTTP(t, h.url, eras[0])

	if _, _, isErr := call(t, cs, "memory_create", map[string]any{"path": "/memories/workspaces/demo/task.md", "file_text": "# Rules\n- Amounts in EUR.\n"}); isErr {
		t.Fatal("memory_create failed")
	}
	for range 2 {
		if _, _, isErr := call(t, cs, "memory_search", map[string]any{"query": "amounts EUR"}); isErr {
			t.Fatal("memory_search failed")
		}
	}
	if _, _, isErr := call(t, cs, "memory_view", map[string]any{"path": "/memories/nope.md"}); !isErr {
		t.Fatal("memory_view of a missing file succeeded")
	}
	if _, _, isErr := call(t, cs, "refresh_artifact", map[string]any{"workspace": "demo", "artifact": "dash"}); isErr {
		t.Fatal("refresh_artifact failed")
	}

	fams := scrape(t, h.base)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"selmem_tool_calls_total", map[string]string{"tool": "memory_create", "outcome": "ok"}, 1},
		{"selmem_tool_calls_total", map[string]string{"tool": "memory_search", "outcome": "ok"}, 2},
		{"selmem_tool_calls_total", map[string]string{"tool": "memory_view", "outcome": "error"}, 1},
		{"selmem_tool_errors_total", map[string]string{"tool": "memory_view"}, 1},
		{"selmem_tool_call_duration_seconds", map[string]string{"tool": "memory_search"}, 2},
		{"selmem_search_duration_seconds", map[string]string{"index": "primary", "outcome": "ok"}, 2},
		{"selmem_search_fallbacks_total", nil, 0},
		// The home was refreshed once before the server started: the data is
		// the same, so the tool's run is unchanged.
		{"selmem_refreshes_total", map[string]string{"outcome": "unchanged"}, 1},
		{"selmem_index_lag_commits", map[string]string{"index": "primary"}, 0},
		{"selmem_index_lag_seconds", map[string]string{"index": "primary"}, 0},
		{"selmem_index_up", map[string]string{"index": "primary"}, 1},
	} {
		got, ok := sample(fams, c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if got, _ := sample(fams, "selmem_repository_size_bytes", nil); got <= 0 {
		t.Errorf("selmem_repository_size_bytes = %v", got)
	}

	// A commit made outside selmem: the index is one commit behind until
	// something catches it up.
	git := exec.Command("git", "-C", filepath.Join(a.home, "memory"), "-c", "user.name=t", "-c", "user.email=t@example.com",
		"commit", "--allow-empty", "-m", "outside")
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
	fams = scrape(t, h.base)
	if got, _ := sample(fams, "selmem_index_lag_commits", map[string]string{"index": "primary"}); got != 1 {
		t.Errorf("after an outside commit: selmem_index_lag_commits = %v, want 1", got)
	}
	if got, _ := sample(fams, "selmem_index_lag_seconds", map[string]string{"index": "primary"}); got < 0 {
		t.Errorf("after an outside commit: selmem_index_lag_seconds = %v, want >= 0", got)
	}

	off := startHTTP(t, t.TempDir(), "SELMEM_HTTP_METRICS=false")
	resp, err := http.Get(off.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("http.metrics false: /metrics answered %s, want 404", resp.Status)
	}
}
