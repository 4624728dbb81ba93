package memstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/selmem/selmem/internal/fsutil"
)

// Durability says how far a write must reach before the store acknowledges
// it.
type Durability string

const (
	// DurabilityFsync acknowledges a write once its objects, the journal
	// and the moved branch are flushed to stable storage (fsync), so a
	// power cut loses nothing acknowledged. The default.
	DurabilityFsync Durability = "fsync"
	// DurabilityOS acknowledges a write once the operating system has it:
	// it survives the process being killed, not a power cut. For tests and
	// throwaway homes.
	DurabilityOS Durability = "os"
)

// Validate reports whether d is a known durability level ("" is the
// default, fsync).
func (d Durability) Validate() error {
	switch d {
	case "", DurabilityFsync, DurabilityOS:
		return nil
	}
	return fmt.Errorf("durability %q is not known; use fsync or os", string(d))
}

// errHeadMoved reports that the branch moved between reading it and
// moving it: another writer committed. The write is retried on the new HEAD.
var errHeadMoved = errors.New("the branch moved while the write was prepared")

// errRefMissing reports a repository whose branch does not exist.
var errRefMissing = errors.New("the branch does not exist")

// refDamagedError reports a branch ref file that exists but does not name
// a readable commit.
type refDamagedError struct{ why string }

func (e *refDamagedError) Error() string { return "refs/heads/main is damaged: " + e.why }

// refFile is the path of a ref's loose file.
func (g *gitRepo) refFile(name plumbing.ReferenceName) string {
	return filepath.Join(g.gitDir, filepath.FromSlash(name.String()))
}

// reflogFile is the path of a ref's reflog.
func (g *gitRepo) reflogFile(name plumbing.ReferenceName) string {
	return filepath.Join(g.gitDir, "logs", filepath.FromSlash(name.String()))
}

// readRef returns the commit the branch names (see readNamedRef).
func (g *gitRepo) readRef() (plumbing.Hash, error) { return g.readNamedRef(branch) }

// readNamedRef returns the commit a ref names, read from its loose ref file
// or else from packed-refs. It returns errRefMissing when neither names the
// ref and a *refDamagedError when the loose file holds no hash.
func (g *gitRepo) readNamedRef(name plumbing.ReferenceName) (plumbing.Hash, error) {
	data, err := os.ReadFile(g.refFile(name))
	if err == nil {
		s := strings.TrimSpace(string(data))
		if !plumbing.IsHash(s) {
			why := "it is empty"
			if s != "" {
				why = "it does not hold a commit hash"
			}
			return plumbing.ZeroHash, &refDamagedError{why: why}
		}
		return plumbing.NewHash(s), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return plumbing.ZeroHash, err
	}
	packed, err := os.ReadFile(filepath.Join(g.gitDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return plumbing.ZeroHash, errRefMissing
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	sc := bufio.NewScanner(bytes.NewReader(packed))
	for sc.Scan() {
		hash, ref, ok := strings.Cut(sc.Text(), " ")
		if ok && ref == name.String() && plumbing.IsHash(hash) {
			return plumbing.NewHash(hash), nil
		}
	}
	return plumbing.ZeroHash, errRefMissing
}

// advance moves the branch from old (zero when it does not exist yet) to
// next with git's lockfile protocol: the new value is written to
// <ref>.lock, flushed, and renamed over the ref, so the ref is never seen
// empty or half written, and the directory is flushed so the rename
// survives a power cut. Callers hold the repository lock; errHeadMoved
// means the branch is no longer at old. The move is then recorded in the
// reflog.
func (g *gitRepo) advance(old, next plumbing.Hash, meta commitMeta) error {
	return g.advanceRef(branch, old, next, meta)
}

// advanceRef moves the ref name from old (zero when it does not exist yet)
// to next as advance moves the branch.
func (g *gitRepo) advanceRef(name plumbing.ReferenceName, old, next plumbing.Hash, meta commitMeta) error {
	m, err := g.prepareMove(name, old, next)
	if err != nil {
		return err
	}
	return m.finish(meta, false)
}

// writeRef points the ref name at next, whatever it names now (see
// advance), recording old as its previous value in the reflog.
func (g *gitRepo) writeRef(name plumbing.ReferenceName, old, next plumbing.Hash, meta commitMeta) error {
	m, err := g.lockRef(name, old, next)
	if err != nil {
		return err
	}
	return m.finish(meta, false)
}

// refMove is a move of a ref whose new value is written to the ref's lock
// file and not yet in place: finish makes it, abandon takes it back.
type refMove struct {
	g         *gitRepo
	name      plumbing.ReferenceName
	old, next plumbing.Hash
	ref, lock string
}

// prepareMove checks that the ref name is at old (zero when it does not
// exist yet; errHeadMoved when it is not) and writes next to its lock
// file, unflushed: the caller may flush the lock file (lockFile) with other
// files before finish. Callers hold the repository lock.
func (g *gitRepo) prepareMove(name plumbing.ReferenceName, old, next plumbing.Hash) (*refMove, error) {
	cur, err := g.readNamedRef(name)
	switch {
	case errors.Is(err, errRefMissing):
		cur = plumbing.ZeroHash
	case err != nil:
		return nil, err
	}
	if cur != old {
		return nil, errHeadMoved
	}
	return g.lockRef(name, old, next)
}

// lockRef writes next to the lock file of the ref name, whatever the ref
// names now, and returns the move to make.
func (g *gitRepo) lockRef(name plumbing.ReferenceName, old, next plumbing.Hash) (*refMove, error) {
	ref := g.refFile(name)
	if err := os.MkdirAll(filepath.Dir(ref), 0o755); err != nil {
		return nil, err
	}
	lock := ref + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		// Under the repository lock a leftover lock file belongs to a
		// writer that died; git would refuse until it is removed.
		if err := os.Remove(lock); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	_, err = f.WriteString(next.String() + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(lock)
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	return &refMove{g: g, name: name, old: old, next: next, ref: ref, lock: lock}, nil
}

// lockFile is the lock file holding the new value, for a caller that flushes
// it with other files before finish.
func (m *refMove) lockFile() string { return m.lock }

// finish flushes the lock file unless the caller has (flushed), renames it
// over the ref, flushes the ref's directory so that the rename survives a
// power cut, and records the move in the reflog. On failure the lock file
// is gone and the ref unchanged, except when the directory could not be
// flushed after the rename: that is an *unflushedMoveError.
func (m *refMove) finish(meta commitMeta, flushed bool) error {
	if m.g.sync && !flushed {
		if err := syncFile(m.lock); err != nil {
			m.abandon()
			return fmt.Errorf("write %s: %w", m.name, err)
		}
	}
	if err := os.Rename(m.lock, m.ref); err != nil {
		m.abandon()
		return fmt.Errorf("move %s: %w", m.name, err)
	}
	if m.g.sync {
		if err := m.g.flushRefDir(filepath.Dir(m.ref)); err != nil {
			return m.unflushed(meta, err)
		}
	}
	// After the move, so the reflog never names a commit the ref did not
	// reach.
	m.g.appendReflog(m.name, m.old, m.next, meta)
	return nil
}

// unflushedMoveError is a move of a ref that was made but whose directory
// could not be flushed (err), so that a power cut may or may not undo it.
// The ref was put back to its old value unless moved says otherwise. Either
// way the new commit's objects must stay: after a power cut the ref may
// name them.
type unflushedMoveError struct {
	name  plumbing.ReferenceName
	next  plumbing.Hash
	moved bool
	err   error
}

func (e *unflushedMoveError) Error() string {
	if e.moved {
		return fmt.Sprintf("%s names %s, but the disk did not confirm it (flush: %v), nor could it be taken back", e.name, e.next.String()[:12], e.err)
	}
	return fmt.Sprintf("the disk did not confirm the move of %s (flush: %v); it was taken back", e.name, e.err)
}

func (e *unflushedMoveError) Unwrap() error { return e.err }

// unflushed puts the ref back after its directory could not be flushed
// (err), so that the move fails as a whole while the process lives; when
// that fails too the move stands and the reflog records it.
func (m *refMove) unflushed(meta commitMeta, err error) error {
	var back error
	if m.old.IsZero() {
		back = os.Remove(m.ref)
	} else {
		var undo *refMove
		if undo, back = m.g.lockRef(m.name, m.next, m.old); back == nil {
			if back = syncFile(undo.lock); back == nil {
				back = os.Rename(undo.lock, undo.ref)
			}
			if back != nil {
				undo.abandon()
			}
		}
	}
	if back != nil {
		m.g.appendReflog(m.name, m.old, m.next, meta)
	}
	return &unflushedMoveError{name: m.name, next: m.next, moved: back != nil, err: err}
}

// abandon removes the lock file: the ref stays where it was.
func (m *refMove) abandon() { _ = os.Remove(m.lock) }

// deleteRef removes the ref name when it still names old: its loose file
// goes and the directory is flushed. Callers hold the repository lock;
// errHeadMoved means the ref no longer names old. A ref that is only in
// packed-refs (selmem never packs) cannot be deleted.
func (g *gitRepo) deleteRef(name plumbing.ReferenceName, old plumbing.Hash) error {
	cur, err := g.readNamedRef(name)
	if err != nil {
		return err
	}
	if cur != old {
		return errHeadMoved
	}
	ref := g.refFile(name)
	if err := os.Remove(ref); err != nil {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	_ = os.Remove(g.reflogFile(name))
	if g.sync {
		if err := syncDir(filepath.Dir(ref)); err != nil {
			return fmt.Errorf("flush %s: %w", name, err)
		}
	}
	return nil
}

// listRefs returns the loose refs below prefix (e.g. "refs/drafts/") with
// the commits they name, sorted by name. Files that do not hold a hash
// (a torn write of a ref nobody acknowledged) are skipped.
func (g *gitRepo) listRefs(prefix string) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	out := map[plumbing.ReferenceName]plumbing.Hash{}
	root := filepath.Join(g.gitDir, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		rel, err := filepath.Rel(g.gitDir, p)
		if err != nil {
			return err
		}
		name := plumbing.ReferenceName(filepath.ToSlash(rel))
		if h, err := g.readNamedRef(name); err == nil {
			out[name] = h
		}
		return nil
	})
	return out, err
}

// appendReflog records a move of the branch in git's reflog format. The
// reflog is a recovery aid, not the authority: a failure is ignored.
func (g *gitRepo) appendReflog(name plumbing.ReferenceName, old, next plumbing.Hash, meta commitMeta) {
	p := g.reflogFile(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	subject := strings.ReplaceAll(meta.Subject, "\n", " ")
	fmt.Fprintf(f, "%s %s %s <%s> %d +0000\tcommit: %s\n", old, next, meta.Name, meta.Email, meta.When.Unix(), subject)
}

// reflogHeads returns the commits the reflog says the branch moved to,
// newest last. Torn or malformed lines are skipped.
func (g *gitRepo) reflogHeads() []plumbing.Hash {
	data, err := os.ReadFile(g.reflogFile(branch))
	if err != nil {
		return nil
	}
	var out []plumbing.Hash
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && plumbing.IsHash(f[1]) {
			out = append(out, plumbing.NewHash(f[1]))
		}
	}
	return out
}

// putObject stores obj unless the repository has it already, remembering
// the loose objects it creates so that they can be flushed (objectPaths) or
// taken back (dropObjects).
func (g *gitRepo) putObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	h := obj.Hash()
	if err := g.repo.Storer.HasEncodedObject(h); err == nil {
		return h, nil
	}
	if g.failObject != nil {
		if err := g.failObject(); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	if _, err := g.repo.Storer.SetEncodedObject(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	g.created = append(g.created, h)
	return h, nil
}

// objectFile is the path of the loose object h.
func (g *gitRepo) objectFile(h plumbing.Hash) string {
	s := h.String()
	return filepath.Join(g.gitDir, "objects", s[:2], s[2:])
}

// objectPaths lists the loose objects created since the last keepObjects
// or dropObjects and the directories naming them: what must reach stable
// storage before a ref names them.
func (g *gitRepo) objectPaths() []string {
	dirs := map[string]bool{}
	var paths []string
	for _, h := range g.created {
		p := g.objectFile(h)
		paths = append(paths, p)
		if d := filepath.Dir(p); !dirs[d] {
			dirs[d] = true
			paths = append(paths, d)
		}
	}
	if len(paths) > 0 {
		paths = append(paths, filepath.Join(g.gitDir, "objects"))
	}
	return paths
}

// keepObjects forgets the objects created so far: a commit names them now.
func (g *gitRepo) keepObjects() { g.created = nil }

// dropObjects removes the loose objects created since the last keepObjects,
// and the temporary files of objects never finished: a write that failed
// leaves no object behind. Callers hold the repository lock.
func (g *gitRepo) dropObjects() {
	for _, h := range g.created {
		_ = os.Remove(g.objectFile(h))
	}
	g.created = nil
	g.dropTempObjects()
}

// dropTempObjects removes the files go-git writes a loose object into
// before renaming it into place (objects/pack/tmp_obj_*), which a write
// that fails half way (a full disk) or is killed leaves behind. Objects
// are written only under the repository lock, which callers hold, so no
// other write is filling one.
func (g *gitRepo) dropTempObjects() {
	tmps, _ := filepath.Glob(filepath.Join(g.gitDir, "objects", "pack", "tmp_obj_*"))
	for _, p := range tmps {
		_ = os.Remove(p)
	}
}

// syncFile flushes the file or directory at p to stable storage.
func syncFile(p string) error { return fsutil.Sync(p) }

// syncDir flushes a directory's entries (a rename or a new file in it).
func syncDir(dir string) error { return syncFile(dir) }

// flushRefDir is syncDir of the directory of a ref just moved.
func (g *gitRepo) flushRefDir(dir string) error {
	if g.failFlush != nil {
		if err := g.failFlush(dir); err != nil {
			return err
		}
	}
	return syncDir(dir)
}

// syncAll flushes the files and directories at paths at once: the file
// system's journal commits concurrent flushes together, so a batch costs
// little more than one.
func syncAll(paths []string) error {
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Go(func() { errs[i] = syncFile(p) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// recoverRef finds the commit a branch whose ref is missing or damaged
// should name, and says where it came from. The newest commit selmem meant
// to name is, in order: the commit of a leftover write journal, the last
// entry of the reflog, or (for repositories written before selmem kept a
// reflog) the tip with the longest history among all commits. It must be
// whole — its history and every file in it readable — or recoverRef fails
// rather than fall back to an older commit and silently drop writes. The
// zero hash means the repository holds no commit and never did.
func (g *gitRepo) recoverRef(journalCommit plumbing.Hash) (plumbing.Hash, string, error) {
	r := recovery{g: g, depths: map[plumbing.Hash]int{}, trees: map[plumbing.Hash]bool{}}
	if !journalCommit.IsZero() && r.whole(journalCommit) {
		return journalCommit, "the write journal", nil
	}
	if heads := g.reflogHeads(); len(heads) > 0 {
		last := heads[len(heads)-1]
		if !r.whole(last) {
			return plumbing.ZeroHash, "", fmt.Errorf("the newest commit in the reflog, %s, is incomplete", last.String()[:12])
		}
		return last, "the reflog", nil
	}
	iter, err := g.repo.Storer.IterEncodedObjects(plumbing.CommitObject)
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	var all []*object.Commit
	parents := map[plumbing.Hash]bool{}
	err = iter.ForEach(func(o plumbing.EncodedObject) error {
		c, err := object.DecodeCommit(g.repo.Storer, o)
		if err != nil {
			return nil // an unreadable commit cannot be a candidate
		}
		all = append(all, c)
		for _, p := range c.ParentHashes {
			parents[p] = true
		}
		return nil
	})
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	if len(all) == 0 {
		return plumbing.ZeroHash, "", nil
	}
	var best plumbing.Hash
	bestDepth := -1
	for _, c := range all {
		if parents[c.Hash] {
			continue // not a tip
		}
		if d := r.depth(c.Hash); d > bestDepth || d == bestDepth && c.Hash.String() < best.String() {
			best, bestDepth = c.Hash, d
		}
	}
	if best.IsZero() || !r.whole(best) {
		return plumbing.ZeroHash, "", fmt.Errorf("the newest of its %d commits is incomplete", len(all))
	}
	return best, fmt.Sprintf("a scan of %d commits", len(all)), nil
}

// recovery holds what recoverRef has learned about commits and trees.
type recovery struct {
	g      *gitRepo
	depths map[plumbing.Hash]int
	trees  map[plumbing.Hash]bool
}

// depth returns the length of h's first-parent history (0 when h cannot be
// read). It walks iteratively, so long histories cannot overflow the stack.
func (r *recovery) depth(h plumbing.Hash) int {
	var chain []plumbing.Hash
	base := 0
	for cur := h; ; {
		if d, ok := r.depths[cur]; ok {
			base = d
			break
		}
		c, err := object.GetCommit(r.g.repo.Storer, cur)
		if err != nil {
			break
		}
		chain = append(chain, cur)
		if len(c.ParentHashes) == 0 {
			break
		}
		cur = c.ParentHashes[0]
	}
	for i := len(chain) - 1; i >= 0; i-- {
		base++
		r.depths[chain[i]] = base
	}
	return r.depths[h]
}

// whole reports whether the commit h, every commit before it and every tree
// and file they name can be read.
func (r *recovery) whole(h plumbing.Hash) bool {
	seen := map[plumbing.Hash]bool{}
	todo := []plumbing.Hash{h}
	for len(todo) > 0 {
		cur := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[cur] {
			continue
		}
		seen[cur] = true
		c, err := object.GetCommit(r.g.repo.Storer, cur)
		if err != nil || !r.treeWhole(c.TreeHash) {
			return false
		}
		todo = append(todo, c.ParentHashes...)
	}
	return true
}

// treeWhole reports whether the tree h and everything below it is readable.
func (r *recovery) treeWhole(h plumbing.Hash) bool {
	if ok, seen := r.trees[h]; seen {
		return ok
	}
	t, err := object.GetTree(r.g.repo.Storer, h)
	if err != nil {
		r.trees[h] = false
		return false
	}
	ok := true
	for _, e := range t.Entries {
		if e.Mode.IsFile() {
			ok = r.g.repo.Storer.HasEncodedObject(e.Hash) == nil
		} else {
			ok = r.treeWhole(e.Hash)
		}
		if !ok {
			break
		}
	}
	r.trees[h] = ok
	return ok
}
