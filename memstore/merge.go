package memstore

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// fileDiff is one file that differs between a base and a side (a draft or
// a proposal): its blob in each, zero when absent.
type fileDiff struct {
	base, theirs plumbing.Hash
}

// fileHash returns the blob hash of the file rel in tree, zero when rel is
// absent or not a file.
func fileHash(tree *object.Tree, rel string) (plumbing.Hash, error) {
	e, err := tree.FindEntry(rel)
	if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !e.Mode.IsFile() {
		return plumbing.ZeroHash, nil
	}
	return e.Hash, nil
}

// filesBelow lists the files below dir in tree; none when dir is absent.
func filesBelow(tree *object.Tree, dir string) (map[string]plumbing.Hash, error) {
	files, err := subtreeFiles(tree, dir)
	if errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return map[string]plumbing.Hash{}, nil
	}
	return files, err
}

// changedFiles returns the files below dir that differ between the trees
// base and theirs.
func changedFiles(base, theirs *object.Tree, dir string) (map[string]fileDiff, error) {
	b, err := filesBelow(base, dir)
	if err != nil {
		return nil, err
	}
	t, err := filesBelow(theirs, dir)
	if err != nil {
		return nil, err
	}
	out := map[string]fileDiff{}
	for p, h := range b {
		if t[p] != h {
			out[p] = fileDiff{base: h, theirs: t[p]}
		}
	}
	for p, h := range t {
		if _, ok := b[p]; !ok {
			out[p] = fileDiff{theirs: h}
		}
	}
	return out, nil
}

// sortedPaths returns the keys of m in order.
func sortedPaths[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Conflict is a file changed both on the published branch and in a draft
// or proposal since they parted, differently.
type Conflict struct {
	Path             string // virtual path
	Published        string // the published version's content
	PublishedDeleted bool   // the published branch deleted the file
	Yours            string // the draft's or proposal's version
	YoursDeleted     bool   // the draft or proposal deletes the file
}

// ConflictError is a refused publish or approval: each conflicting file with
// both versions. Nothing was changed.
type ConflictError struct {
	What      string // "your draft of workspace sales", "proposal 260601-..."
	Conflicts []Conflict
}

// maxConflictShown is how much of each version a conflict message shows.
const maxConflictShown = 4000

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Error: %s conflicts with changes published since it began, in %d file(s); nothing was changed.\n", e.What, len(e.Conflicts))
	show := func(label, text string, deleted bool) {
		switch {
		case deleted:
			fmt.Fprintf(&b, "%s: (deleted)\n", label)
		case len(text) > maxConflictShown:
			fmt.Fprintf(&b, "%s (first %d of %d bytes):\n%s\n", label, maxConflictShown, len(text), text[:maxConflictShown])
		default:
			fmt.Fprintf(&b, "%s:\n%s\n", label, strings.TrimSuffix(text, "\n"))
		}
	}
	for _, c := range e.Conflicts {
		fmt.Fprintf(&b, "\n=== %s\n", c.Path)
		show("published version", c.Published, c.PublishedDeleted)
		show("your version", c.Yours, c.YoursDeleted)
	}
	return b.String()
}

// merge applies the side's changes diffs onto the published tree main, three
// ways, file by file: a file the published branch has not changed since the
// base takes the side's version; one both changed identically is left
// alone; one both changed differently is a conflict.
func (s *Store) merge(main *object.Tree, diffs map[string]fileDiff) ([]change, []Conflict, error) {
	var changes []change
	var conflicts []Conflict
	for _, p := range sortedPaths(diffs) {
		d := diffs[p]
		m, err := fileHash(main, p)
		if err != nil {
			return nil, nil, err
		}
		switch m {
		case d.theirs:
			continue
		case d.base:
			if d.theirs.IsZero() {
				changes = append(changes, change{Path: p, Delete: true})
				continue
			}
			content, err := s.git.blob(d.theirs)
			if err != nil {
				return nil, nil, err
			}
			changes = append(changes, change{Path: p, Content: content})
			continue
		}
		c := Conflict{Path: virtual(p), PublishedDeleted: m.IsZero(), YoursDeleted: d.theirs.IsZero()}
		for _, v := range []struct {
			h   plumbing.Hash
			out *string
		}{{m, &c.Published}, {d.theirs, &c.Yours}} {
			if v.h.IsZero() {
				continue
			}
			content, err := s.git.blob(v.h)
			if err != nil {
				return nil, nil, err
			}
			*v.out = string(content)
		}
		conflicts = append(conflicts, c)
	}
	return changes, conflicts, nil
}

// conflictError is the store error for a refused merge.
func conflictError(what string, conflicts []Conflict, hint string) error {
	ce := &ConflictError{What: what, Conflicts: conflicts}
	// The hint goes on a line of its own, after the versions.
	return &Error{Kind: ErrConflict, Msg: ce.Error() + "\n" + hint, Err: ce}
}

// moveRef makes the objects written so far durable, then moves the ref name
// from old to next with the lockfile protocol; on failure the new objects
// are taken back. It runs under the store's lock.
func (s *Store) moveRef(name plumbing.ReferenceName, old, next plumbing.Hash, meta commitMeta) error {
	var err error
	if s.git.sync {
		err = syncAll(s.git.objectPaths())
	}
	if err == nil {
		err = s.git.advanceRef(name, old, next, meta)
	}
	if err != nil {
		s.git.dropObjects()
		return err
	}
	s.git.keepObjects()
	return nil
}

// dropRef deletes the ref name, which must still name old.
func (s *Store) dropRef(name plumbing.ReferenceName, old plumbing.Hash) error {
	err := s.git.deleteRef(name, old)
	if err != nil && !errors.Is(err, errHeadMoved) && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return err
}

// regularEntry is a file entry for a tree edit (treeEdit.add).
func regularEntry(h plumbing.Hash) *object.TreeEntry {
	if h.IsZero() {
		return nil
	}
	return &object.TreeEntry{Mode: filemode.Regular, Hash: h}
}
