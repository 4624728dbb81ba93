package memstore

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Search over a draft. The index mirrors the published branch only. For a
// principal with open drafts in the searched scope, the files their drafts
// change are chunked, embedded and ranked in a scratch index
// (Options.ScratchIndex) made for the one search, and the hits are fused
// with the published ones by score (both are reciprocal-rank-fusion scores
// of the same ranking); published hits of files a draft changes or deletes
// are dropped. Without a scratch index the draft's files are left out of
// the results rather than shown as published.

// draftSearchPaths returns the open drafts of the principal in ctx that the
// query's scope covers, and the virtual paths they change.
func (s *Store) draftSearchPaths(ctx context.Context, q Query) ([]*draftState, map[string]fileDiff, error) {
	if q.Scope != "" && q.Scope != ScopeWorkspace {
		return nil, nil, nil
	}
	user := s.principal(ctx).User
	if checkRefPart("user", user) != nil {
		return nil, nil, nil
	}
	refs, err := s.git.listRefs(draftsPrefix + user + "/")
	if err != nil || len(refs) == 0 {
		return nil, nil, err
	}
	var drafts []*draftState
	changed := map[string]fileDiff{}
	for _, name := range sortedRefs(refs) {
		ws := strings.TrimPrefix(name.String(), draftsPrefix+user+"/")
		if q.Workspace != "" && ws != q.Workspace {
			continue
		}
		d, err := s.loadDraft(user, ws)
		if err != nil || d == nil {
			return nil, nil, err
		}
		diffs, err := d.changes()
		if err != nil {
			return nil, nil, err
		}
		if len(diffs) == 0 {
			continue
		}
		drafts = append(drafts, d)
		for p, fd := range diffs {
			changed[p] = fd
		}
	}
	return drafts, changed, nil
}

// draftDepth is how deep the published ranking is searched when a draft
// may replace some of its hits.
func draftDepth(limit int, changed map[string]fileDiff) int {
	return min(2*limit+len(changed), 4*MaxSearchLimit)
}

// searchDrafts fuses the drafts' changed files into the published hits of
// q, best first, up to q.Limit.
func (s *Store) searchDrafts(ctx context.Context, q Query, published []Hit, drafts []*draftState, changed map[string]fileDiff) ([]Hit, error) {
	hits := make([]Hit, 0, len(published))
	for _, h := range published {
		if _, ok := changed[strings.TrimPrefix(h.Path, Root+"/")]; !ok {
			hits = append(hits, h)
		}
	}
	if s.opts.ScratchIndex != nil {
		own, err := s.searchScratch(ctx, q, drafts, changed)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			// The published hits still answer; the draft's files are left
			// out rather than shown as published.
			s.log.Warn("search over a draft failed", logKeyErr, err)
		}
		hits = append(hits, own...)
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	return hits, nil
}

// searchScratch ranks the drafts' versions of the changed files in a
// scratch index.
func (s *Store) searchScratch(ctx context.Context, q Query, drafts []*draftState, changed map[string]fileDiff) ([]Hit, error) {
	dir, err := os.MkdirTemp("", "selmem-draft-search-*")
	if err != nil {
		return nil, fmt.Errorf("draft search: %w", withoutPath(err))
	}
	defer os.RemoveAll(dir)
	idx, err := s.opts.ScratchIndex(dir)
	if err != nil {
		return nil, fmt.Errorf("draft search: open the scratch index: %w", err)
	}
	defer idx.Close()
	m := &mirror{store: s, idx: idx, emb: s.opts.Embedder, log: s.log}
	if err := idx.Reset(ctx, IndexState{Embedder: m.emb.ID(), Dim: m.emb.Dim()}); err != nil {
		return nil, fmt.Errorf("draft search: %w", err)
	}
	var files []fileRef
	for _, p := range sortedPaths(changed) {
		if h := changed[p].theirs; !h.IsZero() {
			files = append(files, fileRef{rel: p, hash: h})
		}
	}
	if err := m.index(ctx, drafts[0].tip.Hash.String(), files, nil); err != nil {
		return nil, fmt.Errorf("draft search: %w", err)
	}
	return idx.Search(ctx, q)
}
