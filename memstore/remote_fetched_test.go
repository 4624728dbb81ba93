package memstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/selmem/selmem/internal/gittest"
	"github.com/selmem/selmem/memstore"
)

// storeObject writes o into st and returns its hash.
func storeObject(t *testing.T, st storer.EncodedObjectStorer, encode func(plumbing.EncodedObject) error) plumbing.Hash {
	t.Helper()
	o := st.NewEncodedObject()
	if err := encode(o); err != nil {
		t.Fatal(err)
	}
	h, err := st.SetEncodedObject(o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func storeBlob(t *testing.T, st storer.EncodedObjectStorer, data string) plumbing.Hash {
	t.Helper()
	return storeObject(t, st, func(o plumbing.EncodedObject) error {
		o.SetType(plumbing.BlobObject)
		w, err := o.Writer()
		if err != nil {
			return err
		}
		if _, err := w.Write([]byte(data)); err != nil {
			return err
		}
		return w.Close()
	})
}

// storeTree writes a tree of entries, in git's order, into st.
func storeTree(t *testing.T, st storer.EncodedObjectStorer, entries []object.TreeEntry) plumbing.Hash {
	t.Helper()
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	return storeObject(t, st, (&object.Tree{Entries: entries}).Encode)
}

// TestRemote_FetchedPathsAreChecked: a commit pushed to the remote with
// plain git whose tree holds what no selmem write may make (.git, a
// hidden file, a symlink) is not taken in, by a replica that syncs nor by
// one that starts from the remote; both say which commit, and the
// replica's writes fail with that, not with a message naming nothing.
func TestRemote_FetchedPathsAreChecked(t *testing.T) {
	tests := []struct {
		name  string
		entry func(t *testing.T, st storer.EncodedObjectStorer) object.TreeEntry
	}{
		{".git", func(t *testing.T, st storer.EncodedObjectStorer) object.TreeEntry {
			cfg := storeBlob(t, st, "[core]\n\tfsmonitor = \"touch /tmp/selmem-pwned; false\"\n")
			return object.TreeEntry{Name: ".git", Mode: filemode.Dir, Hash: storeTree(t, st, []object.TreeEntry{{Name: "config", Mode: filemode.Regular, Hash: cfg}})}
		}},
		{"hidden file", func(t *testing.T, st storer.EncodedObjectStorer) object.TreeEntry {
			return object.TreeEntry{Name: ".hidden", Mode: filemode.Regular, Hash: storeBlob(t, st, "hidden\n")}
		}},
		{"symlink", func(t *testing.T, st storer.EncodedObjectStorer) object.TreeEntry {
			return object.TreeEntry{Name: "link.md", Mode: filemode.Symlink, Hash: storeBlob(t, st, "/etc/passwd")}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			srv := gittest.NewServer(t)
			home := t.TempDir()
			s := mustReplica(t, home, srv.URL, replicaOpts{})
			mustCreate(t, s, "/memories/notes/one.md", "one\n")

			repo, err := gogit.PlainOpen(srv.Dir)
			if err != nil {
				t.Fatal(err)
			}
			st := repo.Storer
			head := plumbing.NewHash(srv.Head(t, "main"))
			parent, err := object.GetCommit(st, head)
			if err != nil {
				t.Fatal(err)
			}
			root, err := parent.Tree()
			if err != nil {
				t.Fatal(err)
			}
			tree := storeTree(t, st, append(append([]object.TreeEntry(nil), root.Entries...), tt.entry(t, st)))
			sig := object.Signature{Name: "someone", Email: "someone@example.com", When: time.Now()}
			bad := storeObject(t, st, (&object.Commit{Author: sig, Committer: sig, Message: "by hand\n", TreeHash: tree, ParentHashes: []plumbing.Hash{head}}).Encode)
			srv.Git(t, "update-ref", "refs/heads/main", bad.String(), head.String())

			want := "the remote's commit " + bad.String()[:12] + " holds a file selmem does not take in"
			refused := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, memstore.ErrConflict) || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %v, want ErrConflict saying %q", what, err, want)
				}
			}
			_, err = s.Sync(ctx)
			refused("sync", err)
			_, err = s.Create(ctx, "/memories/notes/two.md", "two\n", nil)
			refused("a write after it", err)
			for _, p := range []string{".hidden", "link.md"} {
				if _, err := os.Lstat(filepath.Join(home, "memory", p)); err == nil {
					t.Errorf("%s was taken into the working tree", p)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(home, "memory", ".git", "config")); strings.Contains(string(b), "pwned") {
				t.Error("the remote's .git/config was taken in")
			}
			_, err = openReplica(t, t.TempDir(), srv.URL, replicaOpts{})
			refused("a replica starting from the remote", err)
		})
	}
}
