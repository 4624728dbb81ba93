package memstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"
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
	rh := &RemoteHead{URL: remote.URL, Branch: remoteBranch(remote), Behind: -1}
	st.Remote = rh
	h, err := lsRemote(ctx, remote.URL, rh.Branch)
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

// remoteBranch is the remote's branch name, "main" by default.
func remoteBranch(r *Remote) string {
	if r.Branch == "" {
		return "main"
	}
	return r.Branch
}

// lsRemote returns the commit the branch names at the repository url, the
// zero hash when the branch does not exist there.
func lsRemote(ctx context.Context, url, name string) (plumbing.Hash, error) {
	r := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{url}})
	refs, err := r.ListContext(ctx, &git.ListOptions{})
	if err != nil && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return plumbing.ZeroHash, err
	}
	want := plumbing.NewBranchReferenceName(name)
	for _, ref := range refs {
		if ref.Name() == want {
			return ref.Hash(), nil
		}
	}
	return plumbing.ZeroHash, nil
}
