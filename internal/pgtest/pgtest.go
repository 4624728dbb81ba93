package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultBinDir is where the PostgreSQL 15 server binaries are looked for
// when $SELMEM_PG_BIN is not set (Debian's layout).
const DefaultBinDir = "/usr/lib/postgresql/15/bin"

// EnvBinDir names the environment variable that overrides DefaultBinDir.
const EnvBinDir = "SELMEM_PG_BIN"

// howToEnable is appended to every skip or CI failure caused by a missing
// server or extension.
const howToEnable = "install PostgreSQL 15 server and pgvector: sudo scripts/install-pgvector.sh"

// ErrUnavailable marks a missing server binary or pgvector: a reason to skip
// (or, under CI, to fail), as opposed to a broken cluster. Launch's error
// wraps it in that case.
var ErrUnavailable = errors.New("postgres unavailable")

// Cluster is a throwaway PostgreSQL cluster listening on 127.0.0.1 only.
// Its methods are safe for concurrent use.
type Cluster struct {
	bin     string // directory holding initdb, pg_ctl, pg_config
	dir     string // temporary root, removed by close
	data    string // data directory
	sock    string // unix socket directory
	logPath string // server log
	port    int
	conf    []string            // extra postgresql.conf lines
	log     *slog.Logger        // never nil
	cred    *syscall.Credential // run server commands as this user; nil: as ourselves

	mu       sync.Mutex // serialises start/stop
	running  bool
	closed   bool
	watchdog *exec.Cmd

	dbSeq atomic.Int64
}

// shared is the one cluster of a test binary whose TestMain calls Main.
var shared struct {
	mu      sync.Mutex
	main    bool     // Main is running the tests
	cluster *Cluster // started on first use
	err     error    // start failure, reported to every later caller
}

// Main runs the tests of a package that uses the shared cluster, then stops
// the cluster and removes its files, and exits with the tests' code. Call it
// from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	shared.mu.Lock()
	shared.main = true
	shared.mu.Unlock()

	code := m.Run()

	shared.mu.Lock()
	c := shared.cluster
	shared.cluster = nil
	shared.mu.Unlock()
	if c != nil {
		if err := c.close(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: removing test cluster: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// Start returns the test binary's shared cluster, starting it on first use.
// Without Main in TestMain it starts a cluster for tb alone, removed when tb
// finishes. It skips tb (fails it when CI=true) when PostgreSQL 15 or pgvector
// is not installed.
//
// Tests using the shared cluster must not Stop it; use NewCluster for that.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	shared.mu.Lock()
	if !shared.main {
		shared.mu.Unlock()
		return NewCluster(tb)
	}
	defer shared.mu.Unlock()
	if shared.cluster == nil && shared.err == nil {
		shared.cluster, shared.err = Launch(nil)
	}
	if shared.err != nil {
		fail(tb, shared.err)
	}
	return shared.cluster
}

// NewCluster starts a cluster for tb alone and removes it when tb finishes.
// Use it for tests that Stop and Restart the server. Like Start, it skips
// (or fails under CI=true) when PostgreSQL 15 or pgvector is missing.
func NewCluster(tb testing.TB) *Cluster {
	tb.Helper()
	c, err := Launch(nil)
	if err != nil {
		fail(tb, err)
	}
	tb.Cleanup(func() {
		if err := c.close(); err != nil {
			tb.Errorf("pgtest: removing test cluster: %v", err)
		}
	})
	return c
}

// DSN creates a fresh database, with the vector extension, in the shared
// cluster (see Start) and returns its connection string.
func DSN(tb testing.TB) string {
	tb.Helper()
	return Start(tb).NewDatabase(tb)
}

// fail skips or fails tb for a launch error.
func fail(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, ErrUnavailable) {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("pgtest: %v (CI=true, so not skipping); %s", err, howToEnable)
			return
		}
		tb.Skipf("pgtest: %v; to run these tests, %s", err, howToEnable)
		return
	}
	tb.Fatalf("pgtest: %v", err)
}

// NewDatabase creates a database t_<n> with the vector extension and returns
// its connection string. The database is dropped when tb finishes; if tb
// failed, the tail of the server log is logged.
func (c *Cluster) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t_%d", c.dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if err := c.exec(ctx, "postgres", "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("pgtest: create database %s: %v\n%s", name, err, c.LogTail(20))
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("pgtest: server log tail (%s):\n%s", c.logPath, c.LogTail(40))
		}
		if !c.isRunning() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// Best effort: the cluster is removed at the end anyway.
		_ = c.exec(ctx, "postgres", "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	if err := c.exec(ctx, name, "CREATE EXTENSION IF NOT EXISTS vector"); err != nil {
		tb.Fatalf("pgtest: create extension vector in %s: %v", name, err)
	}
	return c.dsn(name)
}

// LogPath is the server's log file.
func (c *Cluster) LogPath() string { return c.logPath }

// Stop shuts the server down (pg_ctl stop -m fast), keeping its data
// directory and port for Restart.
func (c *Cluster) Stop(tb testing.TB) {
	tb.Helper()
	if err := c.stop(); err != nil {
		tb.Fatalf("pgtest: stop: %v\n%s", err, c.LogTail(20))
	}
}

// Restart starts the server again on the same port and data directory,
// stopping it first if it is running, and waits until it accepts
// connections.
func (c *Cluster) Restart(tb testing.TB) {
	tb.Helper()
	if err := c.stop(); err != nil {
		tb.Fatalf("pgtest: restart: %v\n%s", err, c.LogTail(20))
	}
	if err := c.start(); err != nil {
		tb.Fatalf("pgtest: restart: %v\n%s", err, c.LogTail(20))
	}
}

// LogTail returns up to the last n lines of the server log.
func (c *Cluster) LogTail(n int) string {
	b, err := os.ReadFile(c.logPath)
	if err != nil {
		return "(no server log: " + err.Error() + ")"
	}
	return tail(b, n)
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (c *Cluster) dsn(db string) string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=%s sslmode=disable connect_timeout=5", c.port, db)
}

// exec runs one statement in db over a short-lived connection.
func (c *Cluster) exec(ctx context.Context, db, sql string) error {
	conn, err := pgx.Connect(ctx, c.dsn(db))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

func (c *Cluster) isRunning() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running
}

// LaunchOptions configure Launch. The zero value and nil are valid.
type LaunchOptions struct {
	// Settings are extra postgresql.conf lines ("shared_buffers = 1GB"),
	// appended after pgtest's own, so they override them.
	Settings []string
	// Logger receives the cluster's start and removal; nil discards.
	Logger *slog.Logger
}

// Launch initialises a cluster in a new temporary directory and starts it,
// for programs other than tests (benchmarks, tools); tests use Start or
// NewCluster. The caller must Close it; should the process die first, a
// watchdog stops the server and removes its files. When the server binaries
// or pgvector are missing the error wraps ErrUnavailable.
func Launch(opts *LaunchOptions) (*Cluster, error) {
	var o LaunchOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	bin := os.Getenv(EnvBinDir)
	if bin == "" {
		bin = DefaultBinDir
	}
	for _, name := range []string{"initdb", "pg_ctl", "pg_config", "postgres"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			return nil, fmt.Errorf("%w: %s not found in %s", ErrUnavailable, name, bin)
		}
	}
	out, err := exec.Command(filepath.Join(bin, "pg_config"), "--sharedir").Output()
	if err != nil {
		return nil, fmt.Errorf("%w: pg_config --sharedir: %v", ErrUnavailable, err)
	}
	control := filepath.Join(strings.TrimSpace(string(out)), "extension", "vector.control")
	if _, err := os.Stat(control); err != nil {
		return nil, fmt.Errorf("%w: pgvector is not installed (%s missing)", ErrUnavailable, control)
	}

	c := &Cluster{bin: bin, conf: o.Settings, log: o.Logger}
	if os.Geteuid() == 0 {
		cred, err := postgresUser()
		if err != nil {
			return nil, err
		}
		c.cred = cred
	}
	if err := c.init(); err != nil {
		c.removeDir()
		return nil, err
	}
	if err := c.startWatchdog(); err != nil {
		c.removeDir()
		return nil, err
	}
	// A free port can be taken between probing and binding: retry.
	for attempt := 0; ; attempt++ {
		if c.port, err = freePort(); err != nil {
			break
		}
		if err = c.start(); err == nil || attempt == 2 {
			break
		}
	}
	if err != nil {
		err = fmt.Errorf("%w\n%s", err, c.LogTail(20))
		_ = c.close()
		return nil, err
	}
	c.log.Info("pgtest: cluster started", logKeyPort, c.port, logKeyDir, c.dir)
	return c, nil
}

// Log keys.
const (
	logKeyPort = "port"
	logKeyDir  = "dir"
	logKeyDB   = "db"
)

// Close stops a cluster started by Launch and removes its files.
func (c *Cluster) Close() error {
	err := c.close()
	c.log.Info("pgtest: cluster removed", logKeyDir, c.dir)
	return err
}

// CreateDatabase creates database name with the vector extension and
// returns its connection string. name must be a plain SQL identifier.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	if err := c.exec(ctx, "postgres", "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	if err := c.exec(ctx, name, "CREATE EXTENSION IF NOT EXISTS vector"); err != nil {
		return "", fmt.Errorf("create extension vector in %s: %w", name, err)
	}
	c.log.Info("pgtest: database created", logKeyDB, name)
	return c.dsn(name), nil
}

// postgresUser returns the credential of the postgres OS user: PostgreSQL
// refuses to run as root.
func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs a postgres OS user to run the server: %v", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres uid %q: %v", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres gid %q: %v", u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// serverConf is appended to postgresql.conf: fast and throwaway, loopback only.
const serverConf = `
# pgtest: throwaway test cluster
listen_addresses = '127.0.0.1'
unix_socket_directories = '%s'
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 64MB
maintenance_work_mem = 128MB
max_connections = 200
max_wal_size = 1GB
checkpoint_timeout = 30min
log_min_messages = warning
log_min_error_statement = error
log_line_prefix = '%%m [%%p] %%d '
`

func (c *Cluster) init() error {
	dir, err := os.MkdirTemp("", "selmem-pgtest-")
	if err != nil {
		return err
	}
	c.dir = dir
	c.data = filepath.Join(dir, "data")
	c.sock = filepath.Join(dir, "sock")
	c.logPath = filepath.Join(dir, "server.log")
	if err := os.Mkdir(c.sock, 0o700); err != nil {
		return err
	}
	if c.cred != nil {
		for _, p := range []string{dir, c.sock} {
			if err := os.Chown(p, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
				return err
			}
		}
	}
	if out, err := c.run("initdb", "-D", c.data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, tail(out, 20))
	}
	f, err := os.OpenFile(filepath.Join(c.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, serverConf, c.sock)
	for _, line := range c.conf {
		if err == nil {
			_, err = fmt.Fprintln(f, line)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// run runs a server binary as the server's user, in the cluster directory.
func (c *Cluster) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "TZ=UTC"}
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.Bytes(), err
}

func (c *Cluster) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("cluster removed")
	}
	if c.running {
		return nil
	}
	out, err := c.run("pg_ctl", "start", "-D", c.data, "-l", c.logPath, "-w", "-t", "60",
		"-o", "-p "+strconv.Itoa(c.port))
	if err != nil {
		return fmt.Errorf("pg_ctl start on port %d: %v\n%s", c.port, err, tail(out, 10))
	}
	c.running = true
	return nil
}

func (c *Cluster) stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return nil
	}
	out, err := c.run("pg_ctl", "stop", "-D", c.data, "-m", "fast", "-w", "-t", "60")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, tail(out, 10))
	}
	c.running = false
	return nil
}

// close stops the server, ends the watchdog and removes the directory.
func (c *Cluster) close() error {
	err := c.stop()
	c.mu.Lock()
	c.closed = true
	wd := c.watchdog
	c.watchdog = nil
	c.mu.Unlock()
	if wd != nil {
		_ = wd.Process.Kill()
		_ = wd.Wait()
	}
	if rerr := c.removeDir(); err == nil {
		err = rerr
	}
	return err
}

func (c *Cluster) removeDir() error {
	if c.dir == "" {
		return nil
	}
	return os.RemoveAll(c.dir)
}

// watchdogScript stops the server and removes the cluster's directory once
// the test process is gone without cleaning up (a test timeout panics and
// exits without running cleanups). $1 is the test process id, $2 the data
// directory, $3 the cluster directory.
const watchdogScript = `
while kill -0 "$1" 2>/dev/null; do sleep 1; done
pid=$(head -n 1 "$2/postmaster.pid" 2>/dev/null) && kill -QUIT "$pid" 2>/dev/null
sleep 2
rm -rf "$3"
`

// startWatchdog starts the watchdog in its own process group, so an
// interrupt sent to the test's group does not end it before it cleans up.
func (c *Cluster) startWatchdog() error {
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "pgtest-watchdog",
		strconv.Itoa(os.Getpid()), c.data, c.dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start watchdog: %v", err)
	}
	c.watchdog = cmd
	return nil
}

// freePort asks the kernel for a free loopback TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
