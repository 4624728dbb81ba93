package memstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// RepoHealth is what CheckRepository found in a memory repository.
type RepoHealth struct {
	Head    string // the commit refs/heads/main names; "" when it names none
	ID      string // the memory's identity (Store.ID); "" when it cannot be read
	Commits int    // commits reachable from Head that were read
	Objects int    // trees and blobs of Head's tree that were read
	// Pending is set when an interrupted write left its journal behind;
	// the next Open (any selmem command) repairs the working files.
	Pending bool
	// Unrepaired names (as /memories/... paths) the files of a pending
	// repair whose working copies still differ from HEAD: the repair has
	// yet to succeed (on a full disk, say). Until it does, reads come from
	// HEAD and writes are refused. Empty for a write still settling.
	Unrepaired []string
	// Problems says, one sentence each, what is wrong. Empty when the
	// repository is sound.
	Problems []string
}

// CheckRepository examines the memory repository under home without
// changing it (a git fsck of what selmem relies on): .git/HEAD names
// refs/heads/main, the branch names a readable commit, every commit
// reachable from it can be read, and so can every tree and blob of its
// tree. Open repairs what can be repaired; CheckRepository only reports.
// It returns an error only when there is no repository to check.
func CheckRepository(ctx context.Context, home string) (RepoHealth, error) {
	var h RepoHealth
	dir := filepath.Join(home, "memory")
	gitDir := filepath.Join(dir, ".git")
	if _, err := os.Stat(gitDir); errors.Is(err, fs.ErrNotExist) {
		return h, &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("Error: there is no memory repository at %s.", dir),
			Hint: "Run selmem init (or any selmem command) to create it, or point SELMEM_HOME at the existing memory."}
	} else if err != nil {
		return h, err
	}
	if data, err := os.ReadFile(filepath.Join(gitDir, "HEAD")); err != nil || string(data) != "ref: "+branch.String()+"\n" {
		h.Problems = append(h.Problems, ".git/HEAD does not name "+branch.String()+" (the next selmem command rewrites it).")
	}
	j, pending := readJournalFile(filepath.Join(gitDir, journalName))
	h.Pending = pending
	repo, closeRepo, err := openRepo(dir)
	if err != nil {
		h.Problems = append(h.Problems, fmt.Sprintf("the repository cannot be opened: %v.", err))
		return h, nil
	}
	defer closeRepo()
	g := gitRepo{repo: repo, gitDir: gitDir}
	head, err := g.readRef()
	if err != nil {
		h.Problems = append(h.Problems, fmt.Sprintf("%s cannot be read: %v (the next selmem command recovers it from the journal or the reflog).", branch, err))
		return h, nil
	}
	h.Head = head.String()
	h.ID, _ = memoryID(&g, false) // a damaged history is reported below
	top, err := object.GetCommit(repo.Storer, head)
	if err != nil {
		h.Problems = append(h.Problems, fmt.Sprintf("%s names commit %s, which cannot be read: %v.", branch, short(head), err))
		return h, nil
	}
	if err := checkTree(ctx, &g, top.TreeHash, &h); err != nil {
		return h, err
	}
	if pending {
		checkPending(dir, top, j, &h)
	}
	// Every commit of the history, for memory_history and memory_revert.
	seen := map[plumbing.Hash]bool{head: true}
	queue := []*object.Commit{top}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return h, err
		}
		c := queue[0]
		queue = queue[1:]
		h.Commits++
		if _, err := repo.Storer.EncodedObject(plumbing.TreeObject, c.TreeHash); err != nil {
			h.Problems = append(h.Problems, fmt.Sprintf("commit %s names tree %s, which cannot be read: %v.", short(c.Hash), short(c.TreeHash), err))
		}
		for _, p := range c.ParentHashes {
			if seen[p] {
				continue
			}
			seen[p] = true
			pc, err := object.GetCommit(repo.Storer, p)
			if err != nil {
				h.Problems = append(h.Problems, fmt.Sprintf("commit %s, a parent of %s, cannot be read: %v.", short(p), short(c.Hash), err))
				continue
			}
			queue = append(queue, pc)
		}
	}
	return h, nil
}

// checkTree reads the tree t and, recursively, everything it names.
func checkTree(ctx context.Context, g *gitRepo, t plumbing.Hash, h *RepoHealth) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tree, err := object.GetTree(g.repo.Storer, t)
	h.Objects++
	if err != nil {
		h.Problems = append(h.Problems, fmt.Sprintf("tree %s cannot be read: %v.", short(t), err))
		return nil
	}
	for _, e := range tree.Entries {
		switch e.Mode {
		case filemode.Dir:
			if err := checkTree(ctx, g, e.Hash, h); err != nil {
				return err
			}
		case filemode.Submodule:
		default:
			h.Objects++
			if err := readBlob(g, e.Hash); err != nil {
				h.Problems = append(h.Problems, fmt.Sprintf("the blob of %s (%s) cannot be read: %v.", e.Name, short(e.Hash), err))
			}
		}
	}
	return nil
}

// checkPending records in h.Unrepaired the paths the write journal j
// names whose working files differ from top, HEAD's commit. A journal
// whose files match already is a write settling (a running server removes
// it a moment later).
func checkPending(dir string, top *object.Commit, j journal, h *RepoHealth) {
	tree, err := top.Tree()
	if err != nil {
		return // checkTree reported it
	}
	for _, rel := range j.paths {
		if same, err := workingMatches(dir, tree, rel); err != nil || !same {
			h.Unrepaired = append(h.Unrepaired, virtual(rel))
		}
	}
}

// workingMatches reports whether the working files under dir at or below
// rel are those of tree.
func workingMatches(dir string, tree *object.Tree, rel string) (bool, error) {
	want, err := filesAt(tree, rel)
	if err != nil {
		return false, err
	}
	got := map[string]plumbing.Hash{}
	err = filepath.WalkDir(filepath.Join(dir, filepath.FromSlash(rel)), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		r, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		var h plumbing.Hash // not a regular file: like no file of tree
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h = plumbing.ComputeHash(plumbing.BlobObject, data)
		}
		got[filepath.ToSlash(r)] = h
		return nil
	})
	return maps.Equal(want, got), err
}

// readBlob reads a blob to its end, which decompresses and so checks it.
func readBlob(g *gitRepo, b plumbing.Hash) error {
	obj, err := g.repo.Storer.EncodedObject(plumbing.BlobObject, b)
	if err != nil {
		return err
	}
	r, err := obj.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(io.Discard, r)
	return err
}

func short(h plumbing.Hash) string { return h.String()[:12] }

// IndexHealth is what CheckIndex found in one index.
type IndexHealth struct {
	State IndexState // what the index says it mirrors
	// Behind is the number of commits HEAD is ahead of the index; -1 when
	// the index names a commit outside HEAD's history (or none).
	Behind int
	// Problems says, one sentence each, what is wrong; empty when the
	// index mirrors HEAD with the configured embedder.
	Problems []string
}

// maxBehind bounds the history CheckIndex walks to count the lag.
const maxBehind = 100_000

// IndexStater is what CheckIndex reads of an index: an Index, or an index
// file opened only to be looked at.
type IndexStater interface {
	State(ctx context.Context) (IndexState, error)
}

// CheckIndex compares what idx says it mirrors with head (the commit
// CheckRepository read) and with the configured embedder, without
// changing the index (Open would catch it up; CheckIndex only looks).
func CheckIndex(ctx context.Context, home string, idx IndexStater, emb Embedder, head string) (IndexHealth, error) {
	h := IndexHealth{Behind: -1}
	st, err := idx.State(ctx)
	if err != nil {
		return h, fmt.Errorf("read index state: %w", err)
	}
	h.State = st
	switch {
	case st.Commit == "":
		h.Problems = append(h.Problems, "the index is empty: nothing has been indexed yet.")
	case st.Commit == head:
		h.Behind = 0
	default:
		h.Behind, err = commitsBehind(ctx, home, plumbing.NewHash(st.Commit), plumbing.NewHash(head))
		if err != nil {
			return h, err
		}
		if h.Behind < 0 {
			h.Problems = append(h.Problems, fmt.Sprintf("the index mirrors commit %s, which is not in the history of HEAD (%s).", st.Commit[:min(12, len(st.Commit))], head[:12]))
		} else {
			h.Problems = append(h.Problems, fmt.Sprintf("the index is stale: it mirrors %s, %d commit(s) behind HEAD (%s).", st.Commit[:12], h.Behind, head[:12]))
		}
	}
	if st.Commit != "" && (st.Embedder != emb.ID() || st.Dim != emb.Dim()) {
		h.Problems = append(h.Problems, fmt.Sprintf("the index was built with embedder %s (dimension %d), the configuration names %s (dimension %d).",
			st.Embedder, st.Dim, emb.ID(), emb.Dim()))
	}
	return h, nil
}

// commitsBehind counts the commits walked from head back to from (in a
// linear history, how many commits from lags behind); -1 when from is not
// found within maxBehind commits of head's history.
func commitsBehind(ctx context.Context, home string, from, head plumbing.Hash) (int, error) {
	repo, closeRepo, err := openRepo(filepath.Join(home, "memory"))
	if err != nil {
		return 0, err
	}
	defer closeRepo()
	seen := map[plumbing.Hash]bool{}
	behind := 0
	found := false
	queue := []plumbing.Hash{head}
	for len(queue) > 0 && behind <= maxBehind {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		hsh := queue[0]
		queue = queue[1:]
		if seen[hsh] {
			continue
		}
		seen[hsh] = true
		if hsh == from {
			found = true
			continue
		}
		behind++
		c, err := object.GetCommit(repo.Storer, hsh)
		if err != nil {
			continue // CheckRepository reports unreadable commits
		}
		queue = append(queue, c.ParentHashes...)
	}
	if !found {
		return -1, nil
	}
	return behind, nil
}
