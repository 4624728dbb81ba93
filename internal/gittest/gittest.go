// Package gittest runs a real git server on loopback for tests: `git
// http-backend` behind net/http/cgi, serving one bare repository that
// accepts pushes. It owns nothing else; it needs the git binary.
package gittest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Server is a git smart-HTTP server for one bare repository.
type Server struct {
	// URL is the repository's clone URL.
	URL string
	// Dir is the bare repository on disk.
	Dir string

	down atomic.Bool
	srv  *httptest.Server

	mu     sync.Mutex
	pushes []Update
}

// Update is one ref update command a client sent to receive-pack: the ref
// and the values it expects (Old, the compare-and-swap's condition) and
// asks for (New), as 40-hex strings.
type Update struct {
	Ref, Old, New string
}

// Updates returns the ref update commands received so far, in order,
// whether the server applied them or not.
func (s *Server) Updates() []Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Update(nil), s.pushes...)
}

// record reads the commands at the start of a receive-pack request body
// and returns the body to pass on.
func (s *Server) record(r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	for rest := body; len(rest) >= 4; {
		n, err := strconv.ParseUint(string(rest[:4]), 16, 16)
		if err != nil || n == 0 || int(n) > len(rest) || n < 4 {
			break // flush packet: the commands are over
		}
		line := string(rest[4:n])
		rest = rest[n:]
		line, _, _ = strings.Cut(line, "\x00") // capabilities follow the first command
		f := strings.Fields(line)
		if len(f) == 3 {
			s.mu.Lock()
			s.pushes = append(s.pushes, Update{Old: f[0], New: f[1], Ref: f[2]})
			s.mu.Unlock()
		}
	}
	return nil
}

// NewServer starts a server for a new, empty bare repository whose default
// branch is main; it stops when the test ends. Without git it skips the
// test, or fails it under CI=true.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	gitBin := GitBinary(tb)
	root := tb.TempDir()
	dir := filepath.Join(root, "memory.git")
	run(tb, root, gitBin, "init", "--quiet", "--bare", "--initial-branch=main", dir)
	run(tb, dir, gitBin, "config", "http.receivepack", "true")
	home := tb.TempDir() // no user or system configuration leaks in
	h := &cgi.Handler{
		Path: gitBin,
		Args: []string{"http-backend"},
		Dir:  root,
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"HOME=" + home,
			"GIT_CONFIG_NOSYSTEM=1",
		},
		InheritEnv: []string{"PATH"},
		Stderr:     io.Discard, // refusals are reported to the client too
	}
	s := &Server{Dir: dir}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.down.Load() {
			http.Error(w, "the git server is down for this test", http.StatusServiceUnavailable)
			return
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			if err := s.record(r); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	tb.Cleanup(s.srv.Close)
	s.URL = s.srv.URL + "/memory.git"
	return s
}

// SetDown makes the server answer every request with 503 Service
// Unavailable (down) or serve the repository again (up).
func (s *Server) SetDown(down bool) { s.down.Store(down) }

// Git runs git with args in the bare repository and returns its output,
// trimmed; a failure fails the test.
func (s *Server) Git(tb testing.TB, args ...string) string {
	tb.Helper()
	return run(tb, s.Dir, GitBinary(tb), args...)
}

// Head returns the commit the bare repository's branch names, "" when
// the branch does not exist.
func (s *Server) Head(tb testing.TB, branch string) string {
	tb.Helper()
	out, err := exec.Command(GitBinary(tb), "-C", s.Dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// GitBinary returns the path of git; without it the test is skipped, or
// fails under CI=true.
func GitBinary(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("git is required: %v", err)
		}
		tb.Skipf("git is not installed: %v", err)
	}
	return p
}

func run(tb testing.TB, dir, gitBin string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(gitBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
