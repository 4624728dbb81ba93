package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/selmem/selmem/memstore"
)

// refFile is the embedded index's hits for one corpus and query set,
// written when sqlite runs with -ref and read back as the reference when
// it does not: at 1,000,000 chunks its load alone takes tens of minutes.
type refFile struct {
	Chunks     int                   `json:"chunks"`
	Seed       uint64                `json:"seed"`
	Workspaces int                   `json:"workspaces"`
	Queries    []string              `json:"queries"` // text and workspace, to check the file matches
	Hits       map[string][][]refHit `json:"hits"`    // by mode, then query
}

type refHit struct {
	Path string `json:"path"`
	Seq  int    `json:"seq"`
}

func queryKeys(qs []memstore.Query) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Workspace + "|" + q.Text
	}
	return out
}

// writeRef writes hits, the embedded index's by mode, to path.
func writeRef(path string, cfg config, qs []memstore.Query, hits map[string][][]key) error {
	f := refFile{Chunks: cfg.chunks, Seed: cfg.seed, Workspaces: workspaces, Queries: queryKeys(qs), Hits: map[string][][]refHit{}}
	for mode, byQuery := range hits {
		for _, ks := range byQuery {
			rh := make([]refHit, len(ks))
			for i, k := range ks {
				rh[i] = refHit{k.path, k.seq}
			}
			f.Hits[mode] = append(f.Hits[mode], rh)
		}
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// readRef reads the reference hits of path, checking that they are for
// this corpus and these queries.
func readRef(path string, cfg config, qs []memstore.Query) (map[string][][]key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-ref: %w", err)
	}
	var f refFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("-ref %s: %w", path, err)
	}
	keys := queryKeys(qs)
	if f.Chunks != cfg.chunks || f.Seed != cfg.seed || f.Workspaces != workspaces || len(f.Queries) < len(keys) {
		return nil, fmt.Errorf("-ref %s: for %d chunks, seed %d, %d workspaces, %d queries, not this run's",
			path, f.Chunks, f.Seed, f.Workspaces, len(f.Queries))
	}
	for i, k := range keys {
		if f.Queries[i] != k {
			return nil, fmt.Errorf("-ref %s: query %d differs", path, i)
		}
	}
	out := map[string][][]key{}
	for mode, byQuery := range f.Hits {
		for _, rh := range byQuery[:len(keys)] {
			ks := make([]key, len(rh))
			for i, h := range rh {
				ks[i] = key{h.Path, h.Seq}
			}
			out[mode] = append(out[mode], ks)
		}
	}
	return out, nil
}
