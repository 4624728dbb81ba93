package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// craftBundle writes a bundle whose refs/heads/main names a root commit of
// the tree root makes in st.
func craftBundle(t *testing.T, root func(put putFunc) (plumbing.Hash, error)) []byte {
	t.Helper()
	st := memory.NewStorage()
	put := func(obj plumbing.EncodedObject) (plumbing.Hash, error) { return st.SetEncodedObject(obj) }
	tree, err := root(put)
	if err != nil {
		t.Fatal(err)
	}
	sig := object.Signature{Name: "x", Email: "x@x"}
	obj := &plumbing.MemoryObject{}
	if err := (&object.Commit{Author: sig, Committer: sig, Message: "x\n", TreeHash: tree}).Encode(obj); err != nil {
		t.Fatal(err)
	}
	c, _ := put(obj)
	var hashes []plumbing.Hash
	iter, _ := st.IterEncodedObjects(plumbing.AnyObject)
	_ = iter.ForEach(func(o plumbing.EncodedObject) error { hashes = append(hashes, o.Hash()); return nil })
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s%s refs/heads/main\n\n", bundleSignature, c)
	if _, err := packfile.NewEncoder(&buf, st, false).Encode(hashes, 0); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// files is a root of plain files.
func files(m map[string]string) func(put putFunc) (plumbing.Hash, error) {
	return func(put putFunc) (plumbing.Hash, error) {
		b := map[string][]byte{}
		for k, v := range m {
			b[k] = []byte(v)
		}
		return buildTree(put, b)
	}
}

// withEntry is a root holding workspaces/w/ with one raw entry under tools/.
func withEntry(name string, mode filemode.FileMode) func(put putFunc) (plumbing.Hash, error) {
	return func(put putFunc) (plumbing.Hash, error) {
		blob := &plumbing.MemoryObject{}
		blob.SetType(plumbing.BlobObject)
		_, _ = blob.Write([]byte("kind: file\n"))
		bh, err := put(blob)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		tree := func(e object.TreeEntry) (plumbing.Hash, error) {
			obj := &plumbing.MemoryObject{}
			if err := (&object.Tree{Entries: []object.TreeEntry{e}}).Encode(obj); err != nil {
				return plumbing.ZeroHash, err
			}
			return put(obj)
		}
		h, err := tree(object.TreeEntry{Name: name, Mode: mode, Hash: bh})
		for _, dir := range []string{"tools", "w", "workspaces"} {
			if err != nil {
				return h, err
			}
			h, err = tree(object.TreeEntry{Name: dir, Mode: filemode.Dir, Hash: h})
		}
		return h, err
	}
}

func TestImportBundle_HostileTrees(t *testing.T) {
	tests := []struct {
		name   string
		bundle func(put putFunc) (plumbing.Hash, error)
		want   error
	}{
		{"two workspaces", files(map[string]string{"workspaces/a/task.md": "a\n", "workspaces/b/task.md": "b\n"}), ErrInvalid},
		{"a file beside the workspaces", files(map[string]string{"workspaces/a/task.md": "a\n", "org/rules.md": "x\n"}), ErrInvalid},
		{"a user directory", files(map[string]string{"users/olga/task.md": "a\n"}), ErrInvalid},
		{"a workspace name that is not a ref", files(map[string]string{"workspaces/a b/task.md": "a\n"}), ErrInvalid},
		{"dot-dot entry", withEntry("..", filemode.Regular), ErrInvalid},
		{"entry with a slash", withEntry("../../org/x.yaml", filemode.Regular), ErrInvalid},
		{"symbolic link", withEntry("link.yaml", filemode.Symlink), ErrRejected},
		{"submodule", withEntry("sub", filemode.Submodule), ErrRejected},
		{"a secret in a file", files(map[string]string{"workspaces/w/task.md": "- key: AKIA" + strings.Repeat("Z", 16) + "\n"}), ErrRejected},
	}
	s, err := Open(context.Background(), t.TempDir(), &Options{Durability: DurabilityOS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	head, _ := s.Head()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.ImportBundle(context.Background(), bytes.NewReader(craftBundle(t, tt.bundle)), nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("import = %v, want %v", err, tt.want)
			}
			if h, _ := s.Head(); h != head {
				t.Fatal("a refused import committed")
			}
		})
	}
}

// FuzzParseBundleHeader: the header parser never panics, and what it
// accepts is a well-formed header whose pack starts inside the input.
func FuzzParseBundleHeader(f *testing.F) {
	h := strings.Repeat("ab", 20)
	f.Add([]byte(bundleSignature + h + " refs/heads/main\n\nPACK"))
	f.Add([]byte(bundleSignature + h + " refs/heads/main\n" + h + " refs/tags/templates/w/1.0\n\n"))
	f.Add([]byte(bundleSignature + "-" + h + " x\n\n"))
	f.Add([]byte(bundleSignature + h + " refs/tags/templates/w/../x\n\n"))
	f.Add([]byte("# v3 git bundle\n@object-format=sha1\n\n"))
	f.Add([]byte(bundleSignature))
	f.Fuzz(func(t *testing.T, data []byte) {
		refs, off, err := parseBundleHeader(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		if len(refs) == 0 || off > len(data) || off < len(bundleSignature) || data[off-1] != '\n' || data[off-2] != '\n' {
			t.Fatalf("accepted %d refs, pack at %d of %d", len(refs), off, len(data))
		}
		var b strings.Builder
		b.WriteString(bundleSignature)
		for _, r := range refs {
			if !validRefName(r.Name.String()) {
				t.Fatalf("accepted ref %q", r.Name)
			}
			fmt.Fprintf(&b, "%s %s\n", r.Hash, r.Name)
		}
		b.WriteString("\n")
		if got := string(data[:off]); got != b.String() {
			t.Fatalf("header %q does not round-trip: %q", got, b.String())
		}
	})
}
