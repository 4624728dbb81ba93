package server

import (
	"context"
	"io/fs"
	"net/http"
	"path/filepath"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/refresh"
)

// PathMetrics serves the metrics in the Prometheus text format.
const PathMetrics = "/metrics"

// Label values.
const (
	indexPrimary  = "primary"
	indexFallback = "fallback"
	outcomeOK     = "ok"
	outcomeError  = "error"
)

// scrapeTimeout bounds what one scrape spends reading the indexes' state
// (a Postgres index that does not answer).
const scrapeTimeout = 5 * time.Second

// Metrics are selmem's Prometheus metrics, in a registry of their own: tool
// calls, searches, refreshes, and, at scrape time, each index's lag behind
// HEAD and the repository's size. A nil *Metrics measures nothing.
type Metrics struct {
	reg         *prometheus.Registry
	toolCalls   *prometheus.CounterVec
	toolErrors  *prometheus.CounterVec
	toolSeconds *prometheus.HistogramVec
	searches    *prometheus.HistogramVec
	fallbacks   prometheus.Counter
	refreshes   *prometheus.CounterVec
}

// NewMetrics returns the metrics, with the Go runtime's and the process's.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "selmem_tool_calls_total", Help: "MCP tool calls, by tool and outcome (error: the result had isError, or the call failed).",
		}, []string{"tool", "outcome"}),
		toolErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "selmem_tool_errors_total", Help: "MCP tool calls that ended in an error, by tool.",
		}, []string{"tool"}),
		toolSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "selmem_tool_call_duration_seconds", Help: "Duration of MCP tool calls, by tool.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 9), // 1 ms … 65 s
		}, []string{"tool"}),
		searches: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "selmem_search_duration_seconds", Help: "Duration of memory searches (query embedding included), by the index that answered and outcome.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14), // 1 ms … 8 s
		}, []string{"index", "outcome"}),
		fallbacks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "selmem_search_fallbacks_total", Help: "Searches the local fallback index answered because the primary index failed.",
		}),
		refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "selmem_refreshes_total", Help: "Artifact refresh runs, by outcome (refreshed, unchanged, incompatible, failed) and trigger.",
		}, []string{"outcome", "trigger"}),
	}
	m.reg.MustRegister(m.toolCalls, m.toolErrors, m.toolSeconds, m.searches, m.fallbacks, m.refreshes,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics; nil for nil metrics.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return nil
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// install measures every tool call of srv, as a tool handler middleware.
func (m *Metrics) install(srv *mcpserver.MCPServer) {
	if m == nil {
		return
	}
	srv.Use(func(next mcpserver.ToolHandlerFunc) mcpserver.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			start := time.Now()
			res, err := next(ctx, req)
			tool := req.Params.Name
			m.toolSeconds.WithLabelValues(tool).Observe(time.Since(start).Seconds())
			outcome := outcomeOK
			if err != nil || (res != nil && res.IsError) {
				outcome = outcomeError
				m.toolErrors.WithLabelValues(tool).Inc()
			}
			m.toolCalls.WithLabelValues(tool, outcome).Inc()
			return res, err
		}
	})
}

// Searched implements memstore.Observer.
func (m *Metrics) Searched(e memstore.SearchEvent) {
	index, outcome := indexPrimary, outcomeOK
	if e.Fallback {
		index = indexFallback
		m.fallbacks.Inc()
	}
	if e.Err != nil {
		outcome = outcomeError
	}
	m.searches.WithLabelValues(index, outcome).Observe(e.Duration.Seconds())
}

// Refreshed counts a recorded refresh run (refresh.Options.Recorded).
func (m *Metrics) Refreshed(st refresh.Status) {
	m.refreshes.WithLabelValues(st.Outcome, st.Trigger).Inc()
}

var _ memstore.Observer = (*Metrics)(nil)

// WatchStore adds the metrics read from store at scrape time: each index's
// lag behind HEAD and the size of the repository on disk.
func (m *Metrics) WatchStore(store *memstore.Store) {
	if m == nil {
		return
	}
	m.reg.MustRegister(&storeCollector{store: store})
}

var (
	descLagCommits = prometheus.NewDesc("selmem_index_lag_commits",
		"Commits the memory's HEAD is ahead of what the index records; -1 when unknown (nothing indexed, too far behind, or the index unreadable).",
		[]string{"index"}, nil)
	descLagSeconds = prometheus.NewDesc("selmem_index_lag_seconds",
		"Age of the oldest commit the index lacks; 0 when the index is current, -1 when unknown.",
		[]string{"index"}, nil)
	descIndexUp = prometheus.NewDesc("selmem_index_up",
		"1 when the index's state could be read at the last scrape, else 0.",
		[]string{"index"}, nil)
	descRemoteBehind = prometheus.NewDesc("selmem_remote_behind_commits",
		"Commits of the shared remote's branch this replica has not fetched yet, as of its last contact; -1 when unknown.",
		nil, nil)
	descRemoteContact = prometheus.NewDesc("selmem_remote_last_contact_seconds",
		"Seconds since this replica last reached the shared remote (fetch or push); -1 when never.",
		nil, nil)
	descRemoteUp = prometheus.NewDesc("selmem_remote_up",
		"1 when the last contact with the shared remote succeeded, else 0.",
		nil, nil)
	descRepoBytes = prometheus.NewDesc("selmem_repository_size_bytes",
		"Bytes of the memory's git directory on disk (objects, refs, the work index).",
		nil, nil)
)

// storeCollector reads the store's gauges when scraped.
type storeCollector struct{ store *memstore.Store }

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLagCommits
	ch <- descLagSeconds
	ch <- descIndexUp
	ch <- descRepoBytes
	ch <- descRemoteBehind
	ch <- descRemoteContact
	ch <- descRemoteUp
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	if lags, err := c.store.IndexLags(ctx); err == nil {
		now := time.Now()
		for _, l := range lags {
			name := indexName(l.Index)
			seconds := -1.0
			switch {
			case l.Commits == 0:
				seconds = 0
			case l.Commits > 0:
				seconds = now.Sub(l.Since).Seconds()
			}
			up := 1.0
			if l.Err != nil {
				up = 0
			}
			ch <- prometheus.MustNewConstMetric(descLagCommits, prometheus.GaugeValue, float64(l.Commits), name)
			ch <- prometheus.MustNewConstMetric(descLagSeconds, prometheus.GaugeValue, seconds, name)
			ch <- prometheus.MustNewConstMetric(descIndexUp, prometheus.GaugeValue, up, name)
		}
	}
	if rs, err := c.store.RemoteStatus(ctx); err == nil && rs.URL != "" {
		contact, up := -1.0, 0.0
		if !rs.LastContact.IsZero() {
			contact = time.Since(rs.LastContact).Seconds()
		}
		if rs.LastError == "" && !rs.LastContact.IsZero() {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(descRemoteBehind, prometheus.GaugeValue, float64(rs.Behind))
		ch <- prometheus.MustNewConstMetric(descRemoteContact, prometheus.GaugeValue, contact)
		ch <- prometheus.MustNewConstMetric(descRemoteUp, prometheus.GaugeValue, up)
	}
	ch <- prometheus.MustNewConstMetric(descRepoBytes, prometheus.GaugeValue, float64(dirBytes(filepath.Join(c.store.Dir(), ".git"))))
}

// dirBytes sums the sizes of the regular files under dir; what cannot be
// read is left out.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
