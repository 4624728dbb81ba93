package memstore

import (
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// branch is the branch every write commits to.
const branch = plumbing.ReferenceName("refs/heads/main")

// change is one edit of a commit: set Path to Content, or remove Path (a file
// or a whole directory) when Delete is true.
type change struct {
	Path    string // repository-relative slash path
	Content []byte
	Delete  bool
}

// gitRepo builds commits directly from objects: it writes blobs, rebuilds
// only the trees on the changed paths and moves the branch. It never touches
// the worktree index, so a write costs the same in a repository of ten files
// or ten thousand. It is not safe for concurrent writes: Store serialises
// them within the process and, through the repository lock, across
// processes.
type gitRepo struct {
	repo    *git.Repository
	gitDir  string          // the repository's .git directory
	sync    bool            // flush objects and refs to stable storage (DurabilityFsync)
	created []plumbing.Hash // loose objects written since the last keepObjects or dropObjects
	// failFlush, set by tests, is asked before a ref's directory is
	// flushed after a move: an error fails the flush as a disk error would.
	failFlush func(dir string) error
	// failObject, set by tests, is asked before each new object is
	// written: an error fails the write as a full disk would.
	failObject func() error
}

// headCommit returns the branch's commit. The branch always exists once
// Open has returned.
func (g *gitRepo) headCommit() (*object.Commit, error) {
	h, err := g.readRef()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", branch, err)
	}
	c, err := object.GetCommit(g.repo.Storer, h)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", branch, h, err)
	}
	return c, nil
}

// headTree returns the tree of the branch's commit.
func (g *gitRepo) headTree() (*object.Tree, error) {
	c, err := g.headCommit()
	if err != nil {
		return nil, err
	}
	return c.Tree()
}

// readFile returns the content of the file rel in tree, or ok=false when rel
// is absent or a directory.
func readFile(tree *object.Tree, rel string) (content []byte, ok bool, err error) {
	f, err := tree.File(rel)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	r, err := f.Reader()
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	content, err = io.ReadAll(r)
	return content, err == nil, err
}

// entryKind reports whether rel is a file, a directory or absent in tree.
func entryKind(tree *object.Tree, rel string) (isFile, isDir bool, err error) {
	if rel == "" {
		return false, true, nil
	}
	e, err := tree.FindEntry(rel)
	if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return e.Mode.IsFile(), e.Mode == filemode.Dir, nil
}

// commitMeta is what a commit records besides its tree.
type commitMeta struct {
	Subject  string
	Trailers []trailer
	Name     string // author name
	Email    string
	When     time.Time
}

type trailer struct{ Key, Value string }

func (m commitMeta) message() string {
	var b strings.Builder
	b.WriteString(m.Subject)
	b.WriteString("\n")
	if len(m.Trailers) > 0 {
		b.WriteString("\n")
		for _, t := range m.Trailers {
			fmt.Fprintf(&b, "%s: %s\n", t.Key, t.Value)
		}
	}
	return b.String()
}

// commit writes the objects for changes on top of parent, and returns the new
// commit's hash without moving the branch.
func (g *gitRepo) commit(parent *object.Commit, changes []change, meta commitMeta) (plumbing.Hash, error) {
	var root plumbing.Hash
	var parents []plumbing.Hash
	if parent != nil {
		root = parent.TreeHash
		parents = []plumbing.Hash{parent.Hash}
	}
	root, err := g.applyChanges(root, changes)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return g.commitTree(root, parents, meta)
}

// applyChanges writes the objects for changes on top of the tree root (zero
// for none) and returns the new root tree, zero when it is empty. The
// changes are made in order, and each tree along their paths is written
// once, however many of them it holds.
func (g *gitRepo) applyChanges(root plumbing.Hash, changes []change) (plumbing.Hash, error) {
	edits := &treeEdit{}
	for _, c := range changes {
		var leaf *object.TreeEntry
		if !c.Delete {
			h, err := g.writeBlob(c.Content)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			leaf = &object.TreeEntry{Mode: filemode.Regular, Hash: h}
		}
		edits.add(strings.Split(c.Path, "/"), leaf)
	}
	root, err := g.writeEdits(root, edits)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("rebuild trees: %w", err)
	}
	return root, nil
}

// commitTree writes a commit of the tree root (zero: the empty tree) with
// the given parents.
func (g *gitRepo) commitTree(root plumbing.Hash, parents []plumbing.Hash, meta commitMeta) (plumbing.Hash, error) {
	if root.IsZero() {
		h, err := g.writeTree(nil)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		root = h
	}
	sig := object.Signature{Name: meta.Name, Email: meta.Email, When: meta.When}
	c := &object.Commit{
		Author:       sig,
		Committer:    sig,
		Message:      meta.message(),
		TreeHash:     root,
		ParentHashes: parents,
	}
	obj := g.repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return g.putObject(obj)
}

func (g *gitRepo) writeBlob(content []byte) (plumbing.Hash, error) {
	obj := g.repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(content)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(content); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return g.putObject(obj)
}

func (g *gitRepo) writeTree(entries []object.TreeEntry) (plumbing.Hash, error) {
	sort.Sort(object.TreeEntrySorter(entries))
	t := &object.Tree{Entries: entries}
	obj := g.repo.Storer.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return g.putObject(obj)
}

// treeEdit is what a batch of edits does to one directory, as if they were
// made one after another: entries replaced (leaves; nil removes one) and
// directories with edits below them (dirs), never both for one name. A
// directory begun afresh ignores what the tree held under its name: an
// earlier edit of the batch replaced or removed that entry.
type treeEdit struct {
	leaves map[string]*object.TreeEntry
	dirs   map[string]*treeEdit
	fresh  bool
}

// add records that the entry at parts becomes leaf (is removed when nil),
// after the edits added before it.
func (e *treeEdit) add(parts []string, leaf *object.TreeEntry) {
	name := parts[0]
	if len(parts) == 1 {
		if e.leaves == nil {
			e.leaves = map[string]*object.TreeEntry{}
		}
		e.leaves[name] = leaf
		delete(e.dirs, name)
		return
	}
	sub := e.dirs[name]
	if sub == nil {
		_, replaced := e.leaves[name]
		delete(e.leaves, name)
		sub = &treeEdit{fresh: replaced}
		if e.dirs == nil {
			e.dirs = map[string]*treeEdit{}
		}
		e.dirs[name] = sub
	}
	sub.add(parts[1:], leaf)
}

// empty reports whether e edits nothing.
func (e *treeEdit) empty() bool { return len(e.leaves) == 0 && len(e.dirs) == 0 }

// writeEdits returns the hash of the tree dir (zero for none) with e's
// edits made, writing each changed tree once. An emptied directory
// disappears, as in git; the zero hash is returned for an empty tree.
func (g *gitRepo) writeEdits(dir plumbing.Hash, e *treeEdit) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	if !dir.IsZero() && !e.fresh {
		t, err := object.GetTree(g.repo.Storer, dir)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, t.Entries...)
	}
	set := func(name string, next *object.TreeEntry) {
		i := slices.IndexFunc(entries, func(x object.TreeEntry) bool { return x.Name == name })
		switch {
		case i >= 0 && next != nil:
			entries[i] = *next
		case i >= 0:
			entries = slices.Delete(entries, i, i+1)
		case next != nil:
			entries = append(entries, *next)
		}
	}
	for name, leaf := range e.leaves {
		var next *object.TreeEntry
		if leaf != nil {
			next = &object.TreeEntry{Name: name, Mode: leaf.Mode, Hash: leaf.Hash}
		}
		set(name, next)
	}
	for name, sub := range e.dirs {
		var base plumbing.Hash
		if i := slices.IndexFunc(entries, func(x object.TreeEntry) bool { return x.Name == name }); i >= 0 && entries[i].Mode == filemode.Dir {
			base = entries[i].Hash
		}
		h, err := g.writeEdits(base, sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		var next *object.TreeEntry
		if !h.IsZero() {
			next = &object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
		}
		set(name, next)
	}
	if len(entries) == 0 {
		return plumbing.ZeroHash, nil
	}
	return g.writeTree(entries)
}

// subtreeFiles lists every file below dir in tree as repository-relative
// paths with their contents' blob hashes.
func subtreeFiles(tree *object.Tree, dir string) (map[string]plumbing.Hash, error) {
	files := map[string]plumbing.Hash{}
	t := tree
	if dir != "" {
		var err error
		t, err = tree.Tree(dir)
		if err != nil {
			return nil, err
		}
	}
	w := object.NewTreeWalker(t, true, nil)
	defer w.Close()
	for {
		name, e, err := w.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if e.Mode.IsFile() {
			files[path.Join(dir, name)] = e.Hash
		}
	}
}

// blob returns the content of the blob h.
func (g *gitRepo) blob(h plumbing.Hash) ([]byte, error) {
	b, err := object.GetBlob(g.repo.Storer, h)
	if err != nil {
		return nil, err
	}
	r, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// blobSHA returns the git blob hash of content: the content hash that
// optimistic-concurrency writes compare against.
func blobSHA(content []byte) string {
	return plumbing.ComputeHash(plumbing.BlobObject, content).String()
}
