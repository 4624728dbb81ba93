package memstore

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"
)

// Status is what Inspect found: the memory's identity and branch, and
// where the shared remote's branch is.
type Status struct {
	ID   string // the memory's identity (Store.ID)
	Head string // the commit the local branch names
	// Remote is set when a remote was given to Inspect.
	Remote *RemoteHead
}

// RemoteHead is the shared remote's branch as Inspect saw it.
type RemoteHead struct {
	URL, Branch string
	Head        string // "" when the branch does not exist there yet
	// Behind is the number of commits of Head the local branch lacks: 0
	// when up to date or ahead, -1 when Head has not been fetched yet.
	Behind int
	Err    error // the remote could not be listed
}

// Inspect reads the memory under home without changing it or opening it
// as a Store (which would catch it up): its identity, its branch, and,
// when remote is not nil, the remote branch's commit (listed, not
// fetched) and how far the local branch is behind it.
func Inspect(ctx context.Context, home string, remote *Remote) (Status, error) {
	var st Status
	dir := filepath.Join(home, "memory")
	repo, closeRepo, err := openRepo(dir)
	if err != nil {
		return st, err
	}
	defer closeRepo()
	g := gitRepo{repo: repo, gitDir: filepath.Join(dir, ".git")}
	head, err := g.readRef()
	if err != nil {
		return st, fmt.Errorf("read %s: %w", branch, err)
	}
	st.Head = head.String()
	if st.ID, err = memoryID(&g, false); err != nil {
		return st, err
	}
	if remote == nil {
		return st, nil
	}
	r, err := newReplica(*remote, slog.New(slog.DiscardHandler), time.Now)
	if err != nil {
		return st, err
	}
	rh := &RemoteHead{URL: remote.URL, Branch: r.cfg.Branch, Behind: -1}
	st.Remote = rh
	h, err := r.remoteHead(ctx)
	if err != nil {
		rh.Err = err
		return st, nil
	}
	if h.IsZero() {
		rh.Behind = 0
		return st, nil
	}
	rh.Head = h.String()
	if rh.Behind, err = commitsBehind(ctx, home, head, h); err != nil {
		return st, err
	}
	if rh.Behind < 0 {
		if _, err := repo.CommitObject(h); err == nil {
			rh.Behind = 0 // the remote's commit is in the local history: ahead
		}
	}
	return st, nil
}
