package refresh

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/selmem/selmem/internal/fsutil"
)

// DefaultKeep is how many snapshots are kept per artifact by default.
const DefaultKeep = 10

// Snapshots is the content-addressed store of injected data, outside the
// git repository:
//
//	<dir>/objects/<first two hex digits>/<sha256>.json
//	<dir>/artifacts/<workspace>/<artifact>.refs   the artifact's snapshots, oldest first
//	<dir>/status/<workspace>/<artifact>.json      the last refresh run
//	<dir>/locks/…                                 per-artifact refresh locks
//
// Every file is written to a temporary name, flushed and renamed, so a
// reader never sees part of one; processes sharing a home serialise on
// file locks. An artifact's data is only a snapshot its refs file lists
// (Bound), whatever hash its binding names.
type Snapshots struct {
	dir  string
	keep int
}

// OpenSnapshots opens (creating) the snapshot store at dir, keeping keep
// snapshots per artifact (0: DefaultKeep).
func OpenSnapshots(dir string, keep int) (*Snapshots, error) {
	if keep <= 0 {
		keep = DefaultKeep
	}
	for _, d := range []string{"objects", "artifacts", "status", "locks"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("refresh: create the snapshot store: %w", err)
		}
	}
	return &Snapshots{dir: dir, keep: keep}, nil
}

// Hash is the snapshot name of data.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func (s *Snapshots) object(sha string) string {
	return filepath.Join(s.dir, "objects", sha[:2], sha+".json")
}

// Put stores data durably under its hash and returns the hash.
func (s *Snapshots) Put(data []byte) (string, error) {
	sha := Hash(data)
	p := s.object(sha)
	if _, err := os.Stat(p); err == nil {
		return sha, nil
	}
	if err := writeFile(p, data, true); err != nil {
		return "", fmt.Errorf("refresh: store the snapshot: %w", err)
	}
	return sha, nil
}

// Get reads a snapshot by its hash alone, whichever artifact retains it.
// One no longer retained is ErrNotFound, with a message that says so. An
// artifact's data is read with Bound.
func (s *Snapshots) Get(sha string) ([]byte, error) {
	if !sha256Hex.MatchString(sha) {
		return nil, errNotHash()
	}
	data, err := os.ReadFile(s.object(sha))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, s.gone(sha)
	}
	return data, err
}

// Bound reads snapshot sha as the data of artifact ws/artifact: only a
// snapshot the artifact retains (its refs file lists it) is. The binding
// that names sha is written in git, where whoever may write the artifact
// can name any hash, such as that of another workspace's snapshot; such a
// snapshot is ErrNotFound exactly as one no longer retained, so that the
// answer does not tell whether it exists elsewhere.
func (s *Snapshots) Bound(ws, artifact, sha string) ([]byte, error) {
	if err := s.retained(ws, artifact, sha); err != nil {
		return nil, err
	}
	return s.Get(sha)
}

// retained returns nil when artifact ws/artifact retains snapshot sha, and
// otherwise the error Get returns for a snapshot no longer retained. It is
// the check of Bound, for readers of data derived from a snapshot (a query
// database, a view's cache) that do not read the snapshot itself.
func (s *Snapshots) retained(ws, artifact, sha string) error {
	if !sha256Hex.MatchString(sha) {
		return errNotHash()
	}
	if CheckArtifact(ws, artifact) != nil || !slices.Contains(s.readRefs(s.refsFile(ws, artifact)), sha) {
		return s.gone(sha)
	}
	return nil
}

// gone is the error for snapshot sha no longer retained.
func (s *Snapshots) gone(sha string) error {
	return notFound(fmt.Sprintf("snapshot %s is no longer retained (only the last %d of each artifact are kept).", sha[:12], s.keep),
		"Refresh the artifact to load current data, or ask the user to raise refresh.keep_snapshots.")
}

func errNotHash() error { return invalid("the snapshot hash is not a SHA-256 hash.", "") }

func (s *Snapshots) refsFile(ws, artifact string) string {
	return filepath.Join(s.dir, "artifacts", ws, artifact+".refs")
}

// errVanished is Retain's refusal of a snapshot that is no longer stored.
var errVanished = errors.New("refresh: the snapshot was deleted before it was retained")

// Retain records sha as the artifact's newest snapshot and deletes the
// artifact's snapshots beyond the newest keep that no artifact still
// retains, except hold (when not ""): the snapshot the artifact is bound to
// until the commit that binds sha lands, which the next Retain drops.
// added says sha was not retained by the artifact before (see Release).
//
// A snapshot is stored (Put) before it is retained, and in between a
// failed refresh of another artifact that loaded the same data may delete
// it (Discard). Retain then records nothing and returns errVanished: Put
// it again and retry.
func (s *Snapshots) Retain(ctx context.Context, ws, artifact, sha, hold string) (added bool, err error) {
	unlock, err := lockFile(ctx, filepath.Join(s.dir, "locks", "store.lock"))
	if err != nil {
		return false, err
	}
	defer unlock()
	if _, err := os.Stat(s.object(sha)); errors.Is(err, fs.ErrNotExist) {
		return false, errVanished
	}
	refs := s.readRefs(s.refsFile(ws, artifact))
	added = !slices.Contains(refs, sha)
	refs = append(slices.DeleteFunc(refs, func(r string) bool { return r == sha }), sha)
	var dropped, kept []string
	for i, r := range refs {
		if i < len(refs)-s.keep && r != hold {
			dropped = append(dropped, r)
		} else {
			kept = append(kept, r)
		}
	}
	if err := s.writeRefs(ws, artifact, kept); err != nil {
		return added, fmt.Errorf("refresh: record the snapshot: %w", err)
	}
	if len(dropped) == 0 {
		return added, nil
	}
	held := s.allRefs()
	for _, d := range dropped {
		if !held[d] {
			s.remove(d)
		}
	}
	return added, nil
}

// Release takes back the Retain that added sha, for a commit that failed:
// it forgets sha for the artifact and deletes it unless an artifact
// retains it.
func (s *Snapshots) Release(ctx context.Context, ws, artifact, sha string) {
	unlock, err := lockFile(ctx, filepath.Join(s.dir, "locks", "store.lock"))
	if err != nil {
		return
	}
	defer unlock()
	refs := s.readRefs(s.refsFile(ws, artifact))
	refs = slices.DeleteFunc(refs, func(r string) bool { return r == sha })
	if err := s.writeRefs(ws, artifact, refs); err != nil {
		return // sha stays retained: kept too long, never lost
	}
	if !s.allRefs()[sha] {
		s.remove(sha)
	}
}

// Discard deletes a snapshot that was stored for a refresh that then
// failed, unless an artifact retains it.
func (s *Snapshots) Discard(ctx context.Context, sha string) {
	unlock, err := lockFile(ctx, filepath.Join(s.dir, "locks", "store.lock"))
	if err != nil {
		return
	}
	defer unlock()
	if !s.allRefs()[sha] {
		s.remove(sha)
	}
}

// remove deletes a snapshot and its query database.
func (s *Snapshots) remove(sha string) {
	_ = os.Remove(s.object(sha))
	_ = os.Remove(s.queryFile(sha))
}

// readRefs reads a refs file; a missing one is empty.
func (s *Snapshots) readRefs(p string) []string {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	var refs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); sha256Hex.MatchString(l) {
			refs = append(refs, l)
		}
	}
	return refs
}

// allRefs is every snapshot some artifact retains.
func (s *Snapshots) allRefs() map[string]bool {
	held := map[string]bool{}
	root := filepath.Join(s.dir, "artifacts")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".refs") {
			for _, r := range s.readRefs(p) {
				held[r] = true
			}
		}
		return nil
	})
	return held
}

// lockArtifact serialises refreshes of one artifact across goroutines and
// processes.
func (s *Snapshots) lockArtifact(ctx context.Context, ws, artifact string) (func(), error) {
	return lockFile(ctx, filepath.Join(s.dir, "locks", ws, artifact+".lock"))
}

// lockWait bounds the wait for another refresh of the same artifact.
const lockWait = 5 * time.Minute

// lockFile takes an exclusive flock on the file p (created), waiting until
// ctx ends or lockWait passes. Each call opens its own descriptor, so two
// goroutines of one process exclude each other too.
func lockFile(ctx context.Context, p string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("refresh: open lock: %w", err)
	}
	if err := fsutil.Lock(ctx, f, lockWait); err != nil {
		f.Close()
		if errors.Is(err, fsutil.ErrLockTimeout) {
			return nil, fmt.Errorf("refresh: another refresh held the lock for over %s", lockWait)
		}
		return nil, err
	}
	return func() { fsutil.Unlock(f); f.Close() }, nil
}

// writeRefs replaces the artifact's refs file, durably.
func (s *Snapshots) writeRefs(ws, artifact string, refs []string) error {
	return writeFile(s.refsFile(ws, artifact), []byte(strings.Join(refs, "\n")+"\n"), true)
}

// writeFile writes data to p whole (see fsutil.WriteAtomic), flushed when
// sync, creating its directory.
func writeFile(p string, data []byte, sync bool) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return fsutil.WriteAtomic(p, data, sync)
}
