package memstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/selmem/selmem/memstore/access"
)

// Commit is one entry of a path's history.
type Commit struct {
	Hash     string            `json:"commit"`
	Time     time.Time         `json:"time"`
	Author   string            `json:"author"`
	Subject  string            `json:"subject"`
	Trailers map[string]string `json:"trailers,omitempty"` // Tool, Source, Author, Confidence
	// Paths, set only in a history filtered for a principal who is not
	// the local owner, are the virtual paths the commit changed that the
	// principal may read. When it changed others too, Subject is cut to
	// its first word (the operation) so that it names none of them.
	Paths []string `json:"paths,omitempty"`
}

// DefaultHistoryLimit is the number of commits History returns when the
// limit is <= 0.
const DefaultHistoryLimit = 20

// HistoryOptions narrow a History. A nil *HistoryOptions is valid.
type HistoryOptions struct {
	Limit  int    // commits to return; <= 0 means DefaultHistoryLimit
	Author string // when set, only commits whose author is exactly this principal
}

// History lists the commits that changed the file or directory at p (all
// commits when p is the root), newest first, following first parents. A path
// that no longer exists still has a history.
//
// For a principal who is not the local owner, p must be readable, and only
// commits that changed a path the principal may read now are listed, each
// with only those paths (Commit.Paths). An org admin who filters by author
// sees every commit of that author (the audit of a principal's writes),
// still with only the paths the admin may read.
func (s *Store) History(ctx context.Context, p string, opts *HistoryOptions) ([]Commit, error) {
	var o HistoryOptions
	if opts != nil {
		o = *opts
	}
	rel, pr, _, err := s.readPath(ctx, p)
	if err != nil {
		return nil, err
	}
	limit := o.Limit
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	c, err := s.git.headCommit()
	if err != nil {
		return nil, err
	}
	// readable, for a restricted principal, says which changed paths it may
	// see; nil for the local owner.
	var readable func(vp string) bool
	audit := false
	if _, restricted := principalOf(ctx); restricted {
		f, err := s.ReadableFilter(ctx)
		if err != nil {
			return nil, err
		}
		readable = f.Allows
		audit = o.Author != "" && s.opts.Policy.IsAdmin(pr)
	}
	w := treeWalker{store: s.git.repo.Storer, trees: map[plumbing.Hash][]byte{}}
	var parts []string
	if rel != "" {
		parts = strings.Split(rel, "/")
	}
	var out []Commit
	exists := rel == ""
	for c != nil && len(out) < limit {
		// A filter that few commits pass walks the whole history: a
		// client that gives up stops it.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var parent *object.Commit
		if len(c.ParentHashes) > 0 {
			if parent, err = object.GetCommit(s.git.repo.Storer, c.ParentHashes[0]); err != nil {
				return nil, err
			}
		}
		var before plumbing.Hash
		if parent != nil {
			before = parent.TreeHash
		}
		touched := true
		if parts != nil {
			if touched, err = w.differs(c.TreeHash, before, parts); err != nil {
				return nil, err
			}
		}
		exists = exists || touched
		if touched && (o.Author == "" || c.Author.Name == o.Author) {
			info := commitInfo(c)
			keep := true
			if readable != nil {
				if keep, err = w.filterPaths(&info, c.TreeHash, before, rel, readable); err != nil {
					return nil, err
				}
			}
			if keep || audit {
				out = append(out, info)
			}
		}
		c = parent
		w.bound()
	}
	if !exists {
		return nil, notExist(virtual(rel), "Error: ")
	}
	return out, nil
}

// filterPaths sets info.Paths to the readable paths at or below dir that
// the commit (tree a, parent tree b) changed, cutting the subject when the
// commit changed any path the principal may not read. It reports whether
// any readable path at or below dir changed.
func (w *treeWalker) filterPaths(info *Commit, a, b plumbing.Hash, dir string, readable func(vp string) bool) (bool, error) {
	var changed []string
	if err := w.changedPaths(a, b, "", &changed); err != nil {
		return false, err
	}
	hidden := false
	for _, rel := range changed {
		vp := virtual(rel)
		switch {
		case !readable(vp):
			hidden = true
		case dir == "" || rel == dir || strings.HasPrefix(rel, dir+"/"):
			info.Paths = append(info.Paths, vp)
		}
	}
	if hidden {
		verb, _, _ := strings.Cut(info.Subject, " ")
		info.Subject = verb
	}
	return len(info.Paths) > 0, nil
}

// treeWalker compares one path across two trees, reading only the trees on
// that path and stopping at the first level whose hashes agree. Trees are
// scanned in their raw form for the one name wanted, not decoded.
type treeWalker struct {
	store interface {
		EncodedObject(plumbing.ObjectType, plumbing.Hash) (plumbing.EncodedObject, error)
	}
	trees map[plumbing.Hash][]byte
}

func (w *treeWalker) tree(h plumbing.Hash) ([]byte, error) {
	if t, ok := w.trees[h]; ok {
		return t, nil
	}
	raw, err := readRaw(w.store, plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	w.trees[h] = raw
	return raw, nil
}

// entry returns the hash of name in the tree h (zero when h is zero or name
// is absent).
func (w *treeWalker) entry(h plumbing.Hash, name string) (plumbing.Hash, error) {
	if h.IsZero() {
		return h, nil
	}
	raw, err := w.tree(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var out plumbing.Hash
	err = eachEntry(h, raw, func(n string, _ bool, x plumbing.Hash) error {
		if n == name {
			out = x
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return plumbing.ZeroHash, err
	}
	return out, nil
}

// errFound stops eachEntry at the entry wanted.
var errFound = errors.New("found")

// differs reports whether the entry at parts differs between trees a and b.
func (w *treeWalker) differs(a, b plumbing.Hash, parts []string) (bool, error) {
	for _, name := range parts {
		if a == b {
			return false, nil
		}
		var err error
		if a, err = w.entry(a, name); err != nil {
			return false, err
		}
		if b, err = w.entry(b, name); err != nil {
			return false, err
		}
	}
	return a != b, nil
}

// bound keeps the cache small: trees are mostly reused between a commit and
// its parent, so everything is dropped once the cache grows.
func (w *treeWalker) bound() {
	if len(w.trees) > 4096 {
		clear(w.trees)
	}
}

func commitInfo(c *object.Commit) Commit {
	subject, body, _ := strings.Cut(c.Message, "\n")
	out := Commit{Hash: c.Hash.String(), Time: c.Author.When.UTC(), Author: c.Author.Name, Subject: subject}
	for _, line := range strings.Split(body, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok || strings.ContainsAny(k, " \t") || k == "" {
			continue
		}
		if out.Trailers == nil {
			out.Trailers = map[string]string{}
		}
		out.Trailers[k] = strings.TrimSpace(v)
	}
	return out
}

// Revert makes a new commit that restores the file or directory at p to its
// content as of commit (a full or abbreviated hash). Deleted files come back;
// files added under a directory since then are removed.
func (s *Store) Revert(ctx context.Context, p, commit string, w *WriteOptions) (WriteResult, error) {
	return s.lockedWrite(ctx, func() (WriteResult, error) { return s.revertLocked(ctx, p, commit, w) })
}

func (s *Store) revertLocked(ctx context.Context, p, commit string, w *WriteOptions) (WriteResult, error) {
	rel, head, _, err := s.target(ctx, p, w)
	if err != nil {
		return WriteResult{}, err
	}
	vp := virtual(rel)
	if rel == "" {
		return WriteResult{}, &Error{Kind: ErrInvalid, Msg: "Error: Cannot revert the whole " + Root + " directory at once.",
			Hint: "Revert a workspace, directory or file inside it."}
	}
	// Its history: the published branch's, and in the caller's draft the
	// draft's too.
	heads := []*object.Commit{head}
	if d, err := s.routeChanges(ctx, []change{{Path: rel}}, w); err == nil && d.kind == toDraft && d.draft.tip != nil {
		heads = append(heads, d.draft.tip)
	}
	old, err := s.resolveCommit(commit, heads)
	if err != nil {
		return WriteResult{}, err
	}
	oldTree, err := old.Tree()
	if err != nil {
		return WriteResult{}, err
	}
	// The old content is read under the ACLs of its time: a workspace
	// deleted and created again under its name by somebody else, or one
	// whose readers changed, keeps its past from those who could not
	// read it then.
	if _, _, err := s.authorize(ctx, oldTree.Hash, access.ActRead, rel); err != nil {
		return WriteResult{}, err
	}
	isFile, isDir, err := entryKind(oldTree, rel)
	if err != nil {
		return WriteResult{}, err
	}
	short := old.Hash.String()[:12]
	if !isFile && !isDir {
		return WriteResult{}, &Error{Kind: ErrNotFound,
			Msg:  fmt.Sprintf("Error: The path %s did not exist at commit %s.", vp, short),
			Hint: "Pick a commit from its history (memory_history) at which it existed."}
	}
	files, err := s.filesUnder(oldTree, rel, isFile)
	if err != nil {
		return WriteResult{}, err
	}
	changes := []change{{Path: rel, Delete: true}}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		changes = append(changes, change{Path: p, Content: files[p]})
	}
	headTree, err := head.Tree()
	if err != nil {
		return WriteResult{}, err
	}
	if same, err := sameEntry(headTree, oldTree, rel); err != nil {
		return WriteResult{}, err
	} else if same {
		return WriteResult{}, &Error{Kind: ErrInvalid,
			Msg:  fmt.Sprintf("Error: %s is already as it was at commit %s.", vp, short),
			Hint: "Nothing to revert; pick an older commit from memory_history."}
	}
	hash, err := s.write(ctx, head, changes, "revert "+rel+" to "+short, "memory_revert", w)
	if err != nil {
		return WriteResult{}, err
	}
	res := WriteResult{Message: fmt.Sprintf("Restored %s to its content as of commit %s.", vp, short), Commit: hash}
	if isFile {
		res.SHA = blobSHA(files[rel])
	}
	return res, nil
}

func sameEntry(a, b *object.Tree, rel string) (bool, error) {
	ea, err := a.FindEntry(rel)
	if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	eb, err := b.FindEntry(rel)
	if err != nil {
		return false, err
	}
	return ea.Hash == eb.Hash, nil
}

// resolveCommit finds a commit of the histories of heads (one of them or
// an ancestor) by full or abbreviated hash (at least 4 hex digits). A
// commit off them, such as another principal's unpublished draft or
// proposal, is answered as one that does not exist.
func (s *Store) resolveCommit(ref string, heads []*object.Commit) (*object.Commit, error) {
	bad := &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("Error: No commit %q in the memory's history.", ref),
		Hint: "Use a commit hash (at least 4 hex digits) listed by memory_history."}
	if len(ref) < 4 || len(ref) > 40 || strings.Trim(strings.ToLower(ref), "0123456789abcdef") != "" {
		return nil, bad
	}
	h, err := s.git.repo.ResolveRevision(plumbing.Revision(ref))
	if err != nil {
		return nil, bad
	}
	c, err := object.GetCommit(s.git.repo.Storer, *h)
	if err != nil {
		return nil, bad
	}
	for _, h := range heads {
		if c.Hash == h.Hash {
			return c, nil
		}
		if ok, err := c.IsAncestor(h); err == nil && ok {
			return c, nil
		}
	}
	return nil, bad
}
