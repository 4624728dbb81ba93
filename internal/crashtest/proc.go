package crashtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Build compiles the selmem binary from the module at moduleDir into dir
// and returns its path.
func Build(ctx context.Context, moduleDir, dir string) (string, error) {
	bin := filepath.Join(dir, "selmem")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/selmem")
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build selmem: %w\n%s", err, out)
	}
	return bin, nil
}

// ModuleRoot walks up from dir to the directory holding go.mod.
func ModuleRoot(dir string) (string, error) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// env is the environment of every selmem process on home.
func env(home string) []string {
	return append(os.Environ(),
		"SELMEM_HOME="+home,
		"SELMEM_LOG_LEVEL=info",
		"SELMEM_AUTHOR=crashtest",
		// Rounds accumulate files in one workspace; keep its cap out of the way.
		"SELMEM_LIMITS_MAX_WORKSPACE_BYTES=1073741824",
	)
}

// logTail keeps the last lines of a process's log, for error messages,
// without holding a long run's whole log in memory.
type logTail struct {
	mu    sync.Mutex
	lines []string
}

const tailLines = 20

func (l *logTail) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	if len(l.lines) > 2*tailLines {
		l.lines = append(l.lines[:0], l.lines[len(l.lines)-tailLines:]...)
	}
}

// last returns the last n lines (n <= tailLines), joined.
func (l *logTail) last(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines[max(0, len(l.lines)-n):], "\n")
}

// server is a running `selmem serve --http`.
type server struct {
	cmd  *exec.Cmd
	url  string // the /mcp endpoint
	log  *logTail
	done chan struct{}
	err  error // exit status once done is closed
}

var addrRE = regexp.MustCompile(`msg="serving MCP" transport=http addr=(\S+)`)

// startServer starts `selmem serve --http 127.0.0.1:0` on home, learns the
// port from its log and waits for /healthz. Its stderr is also appended to
// logFile when set.
func startServer(ctx context.Context, bin, home, logFile string) (*server, error) {
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0")
	cmd.Env = env(home)
	s := &server{cmd: cmd, log: &logTail{}, done: make(chan struct{})}
	pr, pw := io.Pipe()
	out := []io.Writer{pw}
	closeLog := func() error { return nil }
	if logFile != "" {
		f, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		out, closeLog = append(out, f), f.Close
	}
	cmd.Stderr = io.MultiWriter(out...)
	if err := cmd.Start(); err != nil {
		_ = closeLog()
		return nil, err
	}
	go func() { s.err = cmd.Wait(); pw.Close(); _ = closeLog(); close(s.done) }()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.log.add(sc.Text())
			if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr) // a line too long for the scanner
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-s.done:
		return nil, fmt.Errorf("server exited before serving (%v):\n%s", s.err, s.log.last(tailLines))
	case <-time.After(60 * time.Second):
		s.kill()
		return nil, fmt.Errorf("server did not start within 60s:\n%s", s.log.last(tailLines))
	case <-ctx.Done():
		s.kill()
		return nil, ctx.Err()
	}
	s.url = base + "/mcp"
	client := &http.Client{Timeout: 5 * time.Second}
	for i := 0; ; i++ {
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if i > 200 {
			s.kill()
			return nil, fmt.Errorf("/healthz never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill SIGKILLs the server and waits for it to be gone.
func (s *server) kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// stop asks the server to shut down gracefully, and kills it after 30 s.
func (s *server) stop() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		if s.err != nil {
			return fmt.Errorf("%w; its last log lines:\n%s", s.err, s.log.last(5))
		}
		return nil
	case <-time.After(30 * time.Second):
		s.kill()
		return errors.New("server ignored SIGTERM for 30s; killed")
	}
}

// git runs the git CLI in dir and returns its stdout; stderr is in the error.
func git(ctx context.Context, dir string, stdin io.Reader, extraEnv []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
