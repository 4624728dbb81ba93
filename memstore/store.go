package memstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/selmem/selmem/memstore/gate"
)

// Root is the virtual directory every memory path lives under.
const Root = "/memories"

// Provenance sources a write may declare (front matter `source`, commit
// trailer `Source:`).
const (
	SourceUserConfirmed      = "user_confirmed"
	SourceRepeatedUserSignal = "repeated_user_signal"
	SourceTrustedToolResult  = "trusted_tool_result"
	SourceInferred           = "inferred"
)

// Log keys.
const (
	logKeyPath   = "path"
	logKeyCommit = "commit"
	logKeyErr    = "err"
	logKeyIndex  = "index" // 0 for the primary index, 1 for the fallback
)

// journalName is the file, inside .git, that lists the paths of a commit whose
// working files may not have been written yet. Open repairs them.
const journalName = "selmem-pending"

// Options configure a Store. The zero value is usable: no index, default
// limits, author "selmem".
type Options struct {
	Limits   gate.Limits // zero value: gate.DefaultLimits()
	Index    Index       // nil disables search
	Fallback Index       // optional local mirror searched when Index fails (e.g. SQLite beside Postgres)
	Embedder Embedder    // required when Index is set
	Logger   *slog.Logger
	Author   string           // default commit author; WriteOptions.Author overrides
	Now      func() time.Time // clock; nil means time.Now
}

// WriteOptions carry a write's provenance and its optimistic-concurrency
// precondition. A nil *WriteOptions is valid.
type WriteOptions struct {
	Tool        string   // the tool or command making the write, recorded as trailer Tool:
	Source      string   // one of the Source constants; trailer Source:
	Confidence  *float64 // in [0,1]; trailer Confidence:
	Author      string   // principal; trailer Author: and commit author
	ExpectedSHA string   // when set, the target file's current blob hash must equal it
}

// WriteResult describes an accepted write.
type WriteResult struct {
	Message string // the memory tool's result text
	Commit  string // the commit that recorded the write
	SHA     string // blob hash of the written file; "" for deletes and directory renames
}

// Store is the git-backed memory. Reads are concurrent; writes are
// serialised, and each accepted write is exactly one commit.
type Store struct {
	dir  string // the memory repository's working directory
	git  gitRepo
	opts Options
	log  *slog.Logger
	now  func() time.Time

	mu        sync.Mutex       // serialises writes, workspace totals, staging and the mirrors
	mirrors   []*mirror        // the primary index first, then the fallback
	staged    []change         // changes not yet in .git/index
	flusher   *time.Timer      // writes staged changes after a quiet period
	closeRepo func() error     // releases the repository's open pack files
	wsBytes   map[string]int64 // workspace name -> bytes of its files, filled lazily
	wsHead    plumbing.Hash    // the commit wsBytes was computed against
}

// Open opens the memory under home, creating home/memory as a git repository
// on first use. It repairs working files left behind by an interrupted write
// and, when an index is configured, reconciles the index with HEAD.
func Open(ctx context.Context, home string, opts *Options) (*Store, error) {
	s := &Store{dir: filepath.Join(home, "memory"), wsBytes: map[string]int64{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Limits == (gate.Limits{}) {
		s.opts.Limits = gate.DefaultLimits()
	}
	if err := s.opts.Limits.Validate(); err != nil {
		return nil, err
	}
	if s.opts.Author == "" {
		s.opts.Author = "selmem"
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.now = s.opts.Now
	if s.now == nil {
		s.now = time.Now
	}
	if (s.opts.Index == nil) != (s.opts.Embedder == nil) {
		return nil, errors.New("memstore: Index and Embedder must be set together")
	}
	if s.opts.Fallback != nil && s.opts.Index == nil {
		return nil, errors.New("memstore: Fallback needs Index")
	}
	repo, closeRepo, err := openRepo(s.dir)
	if err != nil {
		return nil, err
	}
	s.git = gitRepo{repo: repo}
	s.closeRepo = closeRepo
	if err := s.ensureRoot(); err != nil {
		return nil, err
	}
	if err := s.repairWorking(); err != nil {
		return nil, err
	}
	if err := s.restage(); err != nil {
		return nil, err
	}
	for _, idx := range []Index{s.opts.Index, s.opts.Fallback} {
		if idx == nil {
			continue
		}
		m := &mirror{store: s, idx: idx, emb: s.opts.Embedder, log: s.log}
		s.mirrors = append(s.mirrors, m)
		if err := m.sync(ctx, nil); err != nil {
			// The index is derived; the memory stays usable and the next
			// write, search or Reindex retries.
			s.log.Warn("index reconcile failed", logKeyIndex, len(s.mirrors)-1, logKeyErr, err)
		}
	}
	return s, nil
}

// openRepo opens the repository at dir, creating it on first use. Its
// storage keeps pack files open between reads (history walks read thousands
// of objects); the returned close function releases them.
func openRepo(dir string) (*git.Repository, func() error, error) {
	if _, err := os.Stat(filepath.Join(dir, ".git")); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, fmt.Errorf("create memory directory: %w", err)
		}
		_, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
			InitOptions: git.InitOptions{DefaultBranch: branch},
		})
		if err != nil {
			return nil, nil, fmt.Errorf("init memory repository: %w", err)
		}
	}
	st := filesystem.NewStorageWithOptions(osfs.New(filepath.Join(dir, ".git")), cache.NewObjectLRUDefault(),
		filesystem.Options{KeepDescriptors: true})
	repo, err := git.Open(st, osfs.New(dir))
	if err != nil {
		return nil, nil, fmt.Errorf("open memory repository: %w", err)
	}
	return repo, st.Close, nil
}

// ensureRoot gives a new repository its first commit, so that history and
// the index always have a HEAD to refer to.
func (s *Store) ensureRoot() error {
	head, err := s.git.headCommit()
	if err != nil || head != nil {
		return err
	}
	h, err := s.git.commit(nil, nil, s.meta("Initialise selmem memory", nil, nil))
	if err != nil {
		return err
	}
	return s.git.advance(plumbing.ZeroHash, h)
}

// Dir returns the directory holding the memory repository's working files.
func (s *Store) Dir() string { return s.dir }

// Limits returns the limits the store's write gate enforces.
func (s *Store) Limits() gate.Limits { return s.opts.Limits }

// Close writes what is pending and releases the store. The index is owned
// by the caller and not closed.
func (s *Store) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.flusher != nil {
		s.flusher.Stop()
	}
	s.mu.Unlock()
	return errors.Join(s.Flush(), s.closeRepo())
}

// Head returns the hash of the current commit.
func (s *Store) Head() (string, error) {
	c, err := s.git.headCommit()
	if err != nil || c == nil {
		return "", err
	}
	return c.Hash.String(), nil
}

// Read returns the content of the file at the virtual path p and its blob
// hash (the value WriteOptions.ExpectedSHA compares against).
func (s *Store) Read(p string) (content []byte, sha string, err error) {
	rel, err := s.cleanPath(p)
	if err != nil {
		return nil, "", err
	}
	content, err = os.ReadFile(s.abs(rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", notExist(p, "")
		}
		return nil, "", err
	}
	return content, blobSHA(content), nil
}

// cleanPath canonicalises a virtual path through the gate.
func (s *Store) cleanPath(p string) (string, error) {
	rel, err := gate.Path(p, s.opts.Limits)
	if err != nil {
		return "", rejected(err)
	}
	if err := gate.NoSymlinks(s.dir, rel); err != nil {
		var r *gate.Rejection
		if errors.As(err, &r) {
			return "", rejected(err)
		}
		// A failed Lstat names host paths: log it, do not show it.
		s.log.Error("check path for symlinks", logKeyPath, rel, logKeyErr, err)
		return "", &Error{Kind: ErrInvalid, Msg: "Error: The path " + virtual(rel) + " cannot be checked right now.",
			Hint: "Retry; if it persists, the server's log says why.", Err: err}
	}
	return rel, nil
}

func (s *Store) abs(rel string) string { return filepath.Join(s.dir, filepath.FromSlash(rel)) }

// virtual turns a repository-relative path back into a /memories path.
func virtual(rel string) string {
	if rel == "" {
		return Root
	}
	return Root + "/" + rel
}

// rejected turns a gate refusal into the store's error.
func rejected(err error) error {
	var r *gate.Rejection
	if errors.As(err, &r) {
		return &Error{Kind: ErrRejected, Msg: "Error: " + r.Msg, Hint: r.Hint, Err: err}
	}
	return &Error{Kind: ErrRejected, Msg: "Error: the write was refused.", Err: err}
}

func notExist(p, prefix string) error {
	return &Error{Kind: ErrNotFound, Msg: prefix + "The path " + p + " does not exist. Please provide a valid path."}
}

// meta builds a commit's metadata with its provenance trailers.
func (s *Store) meta(subject string, tool *string, w *WriteOptions) commitMeta {
	m := commitMeta{Subject: subject, Name: s.opts.Author, Email: "selmem@localhost", When: s.now()}
	if w == nil {
		w = &WriteOptions{}
	}
	if tool != nil && w.Tool == "" {
		m.Trailers = append(m.Trailers, trailer{"Tool", *tool})
	} else if w.Tool != "" {
		m.Trailers = append(m.Trailers, trailer{"Tool", w.Tool})
	}
	if w.Source != "" {
		m.Trailers = append(m.Trailers, trailer{"Source", w.Source})
	}
	if w.Confidence != nil {
		m.Trailers = append(m.Trailers, trailer{"Confidence", fmt.Sprintf("%g", *w.Confidence)})
	}
	author := w.Author
	if author == "" {
		author = s.opts.Author
	}
	m.Name = author
	if tool != nil || len(m.Trailers) > 0 {
		m.Trailers = append(m.Trailers, trailer{"Author", author})
	}
	return m
}

// validateWrite checks the provenance fields of w.
func validateWrite(w *WriteOptions) error {
	if w == nil {
		return nil
	}
	switch w.Source {
	case "", SourceUserConfirmed, SourceRepeatedUserSignal, SourceTrustedToolResult, SourceInferred:
	default:
		return &Error{Kind: ErrInvalid,
			Msg:  fmt.Sprintf("Error: source %q is not a known provenance.", w.Source),
			Hint: "Use one of user_confirmed, repeated_user_signal, trusted_tool_result, inferred."}
	}
	if c := w.Confidence; c != nil && (*c < 0 || *c > 1 || *c != *c) {
		return &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("Error: confidence %g is outside [0, 1].", *c),
			Hint: "Give a number between 0 and 1."}
	}
	for _, v := range []string{w.Tool, w.Author} {
		if strings.ContainsAny(v, "\r\n") {
			return &Error{Kind: ErrInvalid, Msg: "Error: tool and author must be single-line.",
				Hint: "Remove the line breaks."}
		}
	}
	return nil
}

// write is the single path every accepted change takes: gate, workspace cap,
// objects, branch, working files, index. It runs under s.mu.
func (s *Store) write(ctx context.Context, head *object.Commit, changes []change, subject, tool string, w *WriteOptions) (string, error) {
	lim := s.opts.Limits
	deltas := map[string]int64{}
	tree, err := head.Tree()
	if err != nil {
		return "", err
	}
	for _, c := range changes {
		ws := workspaceOf(c.Path)
		if c.Delete {
			continue
		}
		if err := gate.FilePath(c.Path); err != nil {
			return "", rejected(err)
		}
		if err := gate.Content(c.Path, c.Content, lim); err != nil {
			return "", rejected(err)
		}
		if ws == "" {
			continue
		}
		// The size of the file being replaced, read from the object header
		// rather than by loading the blob; absent files count as 0.
		old, err := tree.Size(c.Path)
		if err != nil && !errors.Is(err, object.ErrEntryNotFound) {
			return "", err
		}
		deltas[ws] += int64(len(c.Content)) - old
	}
	for ws, d := range deltas {
		if d <= 0 {
			continue
		}
		total, err := s.workspaceBytes(head.Hash, ws)
		if err != nil {
			return "", err
		}
		if total+d > lim.MaxWorkspaceBytes {
			return "", &Error{Kind: ErrRejected,
				Msg:  fmt.Sprintf("Error: workspace %q would hold %d bytes, over its cap of %d bytes.", ws, total+d, lim.MaxWorkspaceBytes),
				Hint: "Shorten the content, or delete notes and artifacts the workspace no longer needs. Nothing was written."}
		}
	}

	next, err := s.git.commit(head, changes, s.meta(subject, &tool, w))
	if err != nil {
		return "", fmt.Errorf("write commit: %w", err)
	}
	if err := s.writeJournal(changes); err != nil {
		return "", err
	}
	if err := s.git.advance(head.Hash, next); err != nil {
		_ = os.Remove(s.journalPath())
		return "", fmt.Errorf("move %s: %w", branch, err)
	}
	// From here on the write is acknowledged by git; the working files and
	// the index follow, and Open repairs both if the process dies first.
	if err := s.applyWorking(changes); err != nil {
		s.log.Error("update working files", logKeyCommit, next.String(), logKeyErr, err)
	} else {
		_ = os.Remove(s.journalPath())
	}
	s.stageLater(changes)
	s.noteSizes(head.Hash, next, deltas, changes)
	for i, m := range s.mirrors {
		if err := m.update(ctx, head.Hash, changes); err != nil {
			s.log.Warn("index update failed; the next write, search or open reconciles it",
				logKeyIndex, i, logKeyCommit, next.String(), logKeyErr, err)
		}
	}
	return next.String(), nil
}

func (s *Store) journalPath() string { return filepath.Join(s.dir, ".git", journalName) }

func (s *Store) writeJournal(changes []change) error {
	var b strings.Builder
	for _, c := range changes {
		b.WriteString(c.Path)
		b.WriteByte('\n')
	}
	return writeAtomic(s.journalPath(), []byte(b.String()))
}

// repairWorking makes the working files named in a leftover journal match
// HEAD again.
func (s *Store) repairWorking() error {
	data, err := os.ReadFile(s.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	tree, err := s.git.headTree()
	if err != nil {
		return err
	}
	var changes []change
	for _, rel := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if rel == "" {
			continue
		}
		files, err := subtreeFiles(tree, path.Dir(rel))
		if err != nil {
			files = nil // the directory is gone at HEAD
		}
		if err := os.RemoveAll(s.abs(rel)); err != nil {
			return err
		}
		for p := range files {
			if p == rel || strings.HasPrefix(p, rel+"/") {
				content, _, err := readFile(tree, p)
				if err != nil {
					return err
				}
				changes = append(changes, change{Path: p, Content: content})
			}
		}
		s.pruneEmpty(path.Dir(rel))
	}
	if err := s.applyWorking(changes); err != nil {
		return err
	}
	s.stageLater(changes)
	s.log.Info("repaired working files after an interrupted write", "files", len(changes))
	return os.Remove(s.journalPath())
}

// applyWorking brings the working files in line with changes. Files are
// replaced by rename, so a concurrent reader sees the old or the new content.
func (s *Store) applyWorking(changes []change) error {
	for _, c := range changes {
		p := s.abs(c.Path)
		if c.Delete {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
			s.pruneEmpty(path.Dir(c.Path))
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := writeAtomic(p, c.Content); err != nil {
			return err
		}
	}
	return nil
}

// pruneEmpty removes empty directories from rel up to the root, as git does
// not keep them.
func (s *Store) pruneEmpty(rel string) {
	for rel != "." && rel != "" && rel != "/" {
		if err := os.Remove(s.abs(rel)); err != nil {
			return
		}
		rel = path.Dir(rel)
	}
}

// writeAtomic writes data to a hidden temporary file beside p and renames it
// over p.
func writeAtomic(p string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), ".selmem-tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// workspaceOf returns the workspace a repository-relative path belongs to.
func workspaceOf(rel string) string {
	parts := strings.SplitN(rel, "/", 3)
	if len(parts) >= 2 && parts[0] == "workspaces" {
		return parts[1]
	}
	return ""
}

// workspaceBytes returns the total size of a workspace's files at head.
func (s *Store) workspaceBytes(head plumbing.Hash, ws string) (int64, error) {
	if s.wsHead != head {
		clear(s.wsBytes)
		s.wsHead = head
	}
	if n, ok := s.wsBytes[ws]; ok {
		return n, nil
	}
	var total int64
	err := filepath.WalkDir(s.abs("workspaces/"+ws), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.wsBytes[ws] = total
	return total, nil
}

// noteSizes carries the workspace totals over to the new head: deltas for
// file writes, a recount for workspaces touched by deletes.
func (s *Store) noteSizes(old, next plumbing.Hash, deltas map[string]int64, changes []change) {
	if s.wsHead != old {
		return
	}
	s.wsHead = next
	for ws, d := range deltas {
		if n, ok := s.wsBytes[ws]; ok {
			s.wsBytes[ws] = n + d
		}
	}
	for _, c := range changes {
		if c.Delete {
			delete(s.wsBytes, workspaceOf(c.Path))
		}
	}
}
