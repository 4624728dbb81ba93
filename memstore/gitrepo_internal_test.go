package memstore

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestGitRepo_ApplyChangesAsInOrder checks that applyChanges, which
// writes each tree once for a whole batch, builds the tree that making
// the changes one after another builds, in the cases where order
// matters (a file replaced by a directory and back, a directory removed
// and refilled, an emptied directory), and that it writes no tree the
// result does not hold.
func TestGitRepo_ApplyChangesAsInOrder(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	g := &s.git
	base := []change{
		{Path: "a/b/one.md", Content: []byte("1")},
		{Path: "a/b/two.md", Content: []byte("2")},
		{Path: "a/c.md", Content: []byte("c")},
		{Path: "f", Content: []byte("f")},
		{Path: "g/h/i.md", Content: []byte("i")},
	}
	put := func(p, text string) change { return change{Path: p, Content: []byte(text)} }
	del := func(p string) change { return change{Path: p, Delete: true} }
	for _, c := range []struct {
		name    string
		changes []change
	}{
		{"two files in sibling directories", []change{put("a/b/one.md", "x"), put("a/d/new.md", "y")}},
		{"a file becomes a directory", []change{put("f/inside.md", "z")}},
		{"a directory becomes a file", []change{put("a/b", "now a file")}},
		{"a file written, then a directory in its place", []change{put("f", "f2"), put("f/x.md", "x")}},
		{"a directory removed, then refilled", []change{del("a"), put("a/only.md", "o")}},
		{"a directory filled, then removed", []change{put("a/b/three.md", "3"), del("a/b")}},
		{"the last files of a directory removed", []change{del("g/h/i.md")}},
		{"everything removed", []change{del("a"), del("f"), del("g")}},
		{"a missing file removed", []change{del("nope/x.md"), put("n.md", "n")}},
		{"one path written twice", []change{put("a/c.md", "first"), put("a/c.md", "second")}},
		{"a file under a removed file", []change{del("f"), put("f/g.md", "g")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, err := g.applyChanges(plumbing.ZeroHash, base)
			if err != nil {
				t.Fatal(err)
			}
			g.keepObjects()
			got, err := g.applyChanges(root, c.changes)
			if err != nil {
				t.Fatal(err)
			}
			// Every tree written is one of the result's.
			held := map[plumbing.Hash]bool{}
			if !got.IsZero() {
				trees(t, g, got, held)
			}
			for _, h := range g.created {
				if o, err := g.repo.Storer.EncodedObject(plumbing.AnyObject, h); err == nil && o.Type() == plumbing.TreeObject && !held[h] {
					t.Errorf("tree %s was written but is not in the result", h)
				}
			}
			g.keepObjects()
			want := oneAtATime(t, g, root, c.changes)
			if got != want {
				t.Fatalf("batch tree %s, one at a time %s:\n%v\n%v", got, want, treeFiles(t, g, got), treeFiles(t, g, want))
			}
			g.keepObjects()
		})
	}
}

// treeFiles lists the files of tree root, for failure messages.
func treeFiles(t *testing.T, g *gitRepo, root plumbing.Hash) []string {
	if root.IsZero() {
		return nil
	}
	tree, err := object.GetTree(g.repo.Storer, root)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := subtreeFiles(tree, "")
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(fs))
}

// trees adds the hashes of tree h and of every tree below it to held.
func trees(t *testing.T, g *gitRepo, h plumbing.Hash, held map[plumbing.Hash]bool) {
	held[h] = true
	tree, err := object.GetTree(g.repo.Storer, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tree.Entries {
		if e.Mode == filemode.Dir {
			trees(t, g, e.Hash, held)
		}
	}
}

// FuzzGitRepo_ApplyChangesAsInOrder holds applyChanges to making its
// changes one after another, for any sequence of writes and removals over
// paths that nest in each other (each byte: an operation on one of them).
func FuzzGitRepo_ApplyChangesAsInOrder(f *testing.F) {
	f.Add([]byte{0, 1, 2})
	f.Add([]byte{5, 0x80 | 5, 6, 0x80 | 1})
	paths := []string{"a", "a/b", "a/b/c", "a/d", "f", "f/g", "h/i/j", "h/k"}
	ctx := context.Background()
	s, err := Open(ctx, f.TempDir(), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = s.Close(ctx) })
	g := &s.git
	base, err := g.applyChanges(plumbing.ZeroHash, []change{
		{Path: "a/b/c", Content: []byte("c")}, {Path: "a/d", Content: []byte("d")},
		{Path: "f", Content: []byte("f")}, {Path: "h/i/j", Content: []byte("j")},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 12 {
			ops = ops[:12]
		}
		var changes []change
		for i, op := range ops {
			p := paths[int(op&0x7f)%len(paths)]
			if op&0x80 != 0 {
				changes = append(changes, change{Path: p, Delete: true})
			} else {
				changes = append(changes, change{Path: p, Content: []byte{byte('0' + i)}})
			}
		}
		got, err := g.applyChanges(base, changes)
		if err != nil {
			t.Fatal(err)
		}
		want := oneAtATime(t, g, base, changes)
		g.keepObjects()
		if got != want {
			t.Fatalf("%v: batch tree %v, one at a time %v", changes, treeFiles(t, g, got), treeFiles(t, g, want))
		}
	})
}

// oneAtATime returns the tree root with changes made one after another
// (editOne), the reference applyChanges is held to.
func oneAtATime(t *testing.T, g *gitRepo, root plumbing.Hash, changes []change) plumbing.Hash {
	for _, ch := range changes {
		var leaf *object.TreeEntry
		if !ch.Delete {
			h, err := g.writeBlob(ch.Content)
			if err != nil {
				t.Fatal(err)
			}
			leaf = &object.TreeEntry{Mode: filemode.Regular, Hash: h}
		}
		var err error
		if root, err = editOne(g, root, strings.Split(ch.Path, "/"), leaf); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// editOne returns the hash of the tree dir (zero for none) with the entry
// at parts replaced by leaf (removed when nil), rewriting the trees along
// parts: one change at a time, as commits were made before applyChanges
// batched them, the reference the tests above hold the batch to.
func editOne(g *gitRepo, dir plumbing.Hash, parts []string, leaf *object.TreeEntry) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	if !dir.IsZero() {
		t, err := object.GetTree(g.repo.Storer, dir)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, t.Entries...)
	}
	name := parts[0]
	at := slices.IndexFunc(entries, func(e object.TreeEntry) bool { return e.Name == name })
	var next *object.TreeEntry
	if len(parts) == 1 {
		if leaf != nil {
			next = &object.TreeEntry{Name: name, Mode: leaf.Mode, Hash: leaf.Hash}
		}
	} else {
		var sub plumbing.Hash
		if at >= 0 && entries[at].Mode == filemode.Dir {
			sub = entries[at].Hash
		}
		h, err := editOne(g, sub, parts[1:], leaf)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if !h.IsZero() {
			next = &object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
		}
	}
	switch {
	case at >= 0 && next != nil:
		entries[at] = *next
	case at >= 0:
		entries = append(entries[:at], entries[at+1:]...)
	case next != nil:
		entries = append(entries, *next)
	}
	if len(entries) == 0 {
		return plumbing.ZeroHash, nil
	}
	return g.writeTree(entries)
}
