package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

// aclResult compares, for one mode, a principal allowed some workspaces
// with an unfiltered search, over the same queries in the same process.
type aclResult struct {
	mode                  string
	all, filtered         result // p50 and p99
	hitsAll, hitsFiltered float64
	violations            int // filtered hits outside the readable workspaces
}

// readableFilter returns the filter of a principal allowed n of the
// workspaces, spread evenly over them, and no user directory.
func readableFilter(n int) access.Filter {
	f := access.Filter{}
	for i := range n {
		f.Workspaces = append(f.Workspaces, fmt.Sprintf("ws%d", i*workspaces/n))
	}
	slices.Sort(f.Workspaces)
	return f
}

// measureACL runs every query of qs without its workspace restriction in
// every mode, cfg.aclRounds times, once unfiltered (Filter.All) and once
// with the filter of a principal allowed cfg.readable workspaces, the two
// in alternating order so that drift in the machine's load falls on both.
func measureACL(ctx context.Context, cfg config, ix memstore.Index, qs []memstore.Query) ([]aclResult, error) {
	f := readableFilter(cfg.readable)
	var out []aclResult
	for _, m := range modes {
		r := aclResult{mode: m.name}
		var latAll, latFiltered []time.Duration
		var nAll, nFiltered int
		for round := range cfg.aclRounds {
			for i, q := range qs {
				q = m.q(q)
				q.Workspace = ""
				all, filtered := q, q
				all.Filter, filtered.Filter = access.Filter{All: true}, f
				first, second := &all, &filtered
				if (i+round)%2 == 1 {
					first, second = second, first
				}
				for _, q := range []*memstore.Query{first, second} {
					t0 := time.Now()
					hits, err := ix.Search(ctx, *q)
					d := time.Since(t0)
					if err != nil {
						return nil, fmt.Errorf("%s search %q: %w", m.name, q.Text, err)
					}
					if q.Filter.All {
						latAll, nAll = append(latAll, d), nAll+len(hits)
						continue
					}
					latFiltered, nFiltered = append(latFiltered, d), nFiltered+len(hits)
					for _, h := range hits {
						if !f.Allows(h.Path) {
							r.violations++
						}
					}
				}
			}
		}
		r.all = result{p50: pct(latAll, 50), p99: pct(latAll, 99)}
		r.filtered = result{p50: pct(latFiltered, 50), p99: pct(latFiltered, 99)}
		r.hitsAll = float64(nAll) / float64(len(latAll))
		r.hitsFiltered = float64(nFiltered) / float64(len(latFiltered))
		out = append(out, r)
	}
	return out, nil
}

// printACL prints the access-filter comparison of every backend.
func printACL(out io.Writer, cfg config, names []string, acls map[string][]aclResult) {
	fmt.Fprintf(out, "\naccess filter: a principal allowed %d of %d workspaces vs unfiltered (Filter.All), same queries without workspace restriction,\n"+
		"%d rounds, each query filtered and unfiltered in alternating order\n", cfg.readable, workspaces, cfg.aclRounds)
	fmt.Fprintf(out, "%-10s %-10s %10s %10s %7s %10s %10s %9s %9s %10s\n", "backend", "mode", "all p50", "filt p50", "ratio",
		"all p99", "filt p99", "hits all", "hits filt", "violations")
	for _, name := range names {
		for _, r := range acls[name] {
			fmt.Fprintf(out, "%-10s %-10s %10.2f %10.2f %7.2f %10.2f %10.2f %9.1f %9.1f %10d\n", name, r.mode,
				ms(r.all.p50), ms(r.filtered.p50), float64(r.filtered.p50)/float64(max(r.all.p50, 1)),
				ms(r.all.p99), ms(r.filtered.p99), r.hitsAll, r.hitsFiltered, r.violations)
		}
	}
	fmt.Fprintln(out, "ratio: filtered p50 / unfiltered p50 (target <= 1.2); hits: mean hits per query; violations: filtered hits outside the readable workspaces")
}
