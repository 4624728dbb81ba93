package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/pgindex"
	"github.com/selmem/selmem/server"
)

func (a *app) statusCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the memory's identity, its branch, the shared remote's branch and each index's lag",
		Long: `Show where this memory stands, without changing anything or catching up:

  memory   the memory's identity (replicas of one memory share it; with
           Postgres it names the memory's schema)
  branch   the commit the local branch names
  remote   with remote.url: the remote branch's commit (listed, not
           fetched) and how many commits this replica lacks
  index    each index backend: the commit it mirrors and its lag

Use --json for a machine-readable report.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := a.status(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			rep.print(a.stdout)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// statusReport is what selmem status prints.
type statusReport struct {
	Memory  string        `json:"memory"`
	Home    string        `json:"home"`
	Head    string        `json:"head"`
	Remote  *remoteReport `json:"remote,omitempty"`
	Indexes []indexReport `json:"indexes"`
}

// remoteReport is the shared remote's part of statusReport.
type remoteReport struct {
	URL    string `json:"url"`
	Branch string `json:"branch"`
	Head   string `json:"head,omitempty"`
	Behind int    `json:"behind"` // -1: the remote's commit is not fetched yet
	Error  string `json:"error,omitempty"`
}

// indexReport is one index backend's part of statusReport.
type indexReport struct {
	Backend string `json:"backend"`
	Commit  string `json:"commit,omitempty"`
	// Behind is the commits the index lacks of the local branch; -1 when
	// its commit is not in the local history (ahead: another replica
	// indexed a commit this one has not fetched; or a different history).
	Behind int    `json:"behind"`
	Error  string `json:"error,omitempty"`
}

func (a *app) status(ctx context.Context) (*statusReport, error) {
	var remote *memstore.Remote
	if a.cfg.Remote.URL != "" {
		remote = &memstore.Remote{URL: a.cfg.Remote.URL, Branch: a.cfg.Remote.Branch}
	}
	st, err := memstore.Inspect(ctx, a.cfg.Home, remote)
	if err != nil {
		return nil, err
	}
	rep := &statusReport{Memory: st.ID, Home: a.cfg.Home, Head: st.Head}
	if r := st.Remote; r != nil {
		rep.Remote = &remoteReport{URL: server.RedactURL(r.URL), Branch: r.Branch, Head: r.Head, Behind: r.Behind}
		if r.Err != nil {
			rep.Remote.Error = oneLine(r.Err.Error())
		}
	}
	emb, _, err := a.embedder()
	if err != nil {
		return nil, err
	}
	report := func(backend string, h memstore.IndexHealth, err error) {
		ir := indexReport{Backend: backend, Commit: h.State.Commit, Behind: h.Behind}
		if err != nil {
			ir.Error = oneLine(err.Error())
		}
		rep.Indexes = append(rep.Indexes, ir)
	}
	h, err := a.inspectSQLiteIndex(ctx, emb, st.Head)
	report("embedded", h, err)
	if a.cfg.Index.Backend == "postgres" {
		h, err := a.inspectPostgresIndex(ctx, emb, st)
		report("postgres", h, err)
	}
	return rep, nil
}

// inspectPostgresIndex reports what the memory's Postgres index mirrors
// compared with the local branch, without changing it.
func (a *app) inspectPostgresIndex(ctx context.Context, emb memstore.Embedder, st memstore.Status) (memstore.IndexHealth, error) {
	pool, err := a.openPool(ctx)
	if err != nil {
		return memstore.IndexHealth{Behind: -1}, err
	}
	defer pool.Close()
	pctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	rank := memstore.DefaultRanking()
	idx := pgindex.Open(pool, &pgindex.Options{Dim: emb.Dim(), EfSearch: a.cfg.Index.EfSearch,
		Schema: a.cfg.Index.Schema, Ranking: &rank})
	defer idx.Close()
	if err := idx.BindMemory(st.ID); err != nil {
		return memstore.IndexHealth{Behind: -1}, err
	}
	return memstore.CheckIndex(pctx, a.cfg.Home, idx, emb, st.Head)
}

// print writes the report for a person.
func (r *statusReport) print(w io.Writer) {
	fmt.Fprintf(w, "%-8s %s\n", "memory", r.Memory)
	fmt.Fprintf(w, "%-8s %s\n", "home", r.Home)
	fmt.Fprintf(w, "%-8s main at %s\n", "branch", shortHash(r.Head))
	if rm := r.Remote; rm != nil {
		state := lagState(rm.Error, rm.Head, rm.Behind, lagWords{failed: "unreachable", none: "the branch does not exist there yet",
			current: "this replica is up to date", unknown: "not fetched yet: this replica is behind", behind: "this replica is %d commit(s) behind"})
		fmt.Fprintf(w, "%-8s %s (%s) %s\n", "remote", rm.URL, rm.Branch, state)
	}
	for _, ix := range r.Indexes {
		state := lagState(ix.Error, ix.Commit, ix.Behind, lagWords{failed: "unreadable", none: "empty",
			current: "current", unknown: "not in the local history (ahead of this replica, or rebuilt on its next open)", behind: "%d commit(s) behind"})
		fmt.Fprintf(w, "%-8s %s %s\n", "index", ix.Backend, state)
	}
}

// lagWords say how a copy of the memory (the remote's branch, an index)
// stands against the local branch; behind is a format taking the count.
type lagWords struct{ failed, none, current, unknown, behind string }

// lagState describes a copy at commit, behind commits behind the local
// branch (-1 unknown), or the error that kept it from being read.
func lagState(errText, commit string, behind int, w lagWords) string {
	switch {
	case errText != "":
		return w.failed + ": " + errText
	case commit == "":
		return w.none
	case behind == 0:
		return "at " + shortHash(commit) + ", " + w.current
	case behind < 0:
		return "at " + shortHash(commit) + ", " + w.unknown
	}
	return "at " + shortHash(commit) + ", " + fmt.Sprintf(w.behind, behind)
}

// shortHash abbreviates a commit hash for people.
func shortHash(h string) string { return h[:min(12, len(h))] }
