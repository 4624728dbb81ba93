package mcpsource

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// exitGrace is how long a command server has to exit after its input is
// closed, or to report its exit after its output ended, before it and its
// process group are killed.
const exitGrace = 2 * time.Second

// process is a running command server.
type process struct {
	cmd     *exec.Cmd
	stdin   *os.File // our end of its input
	stdout  *os.File // our end of its output
	done    chan struct{}
	waitErr error // valid once done is closed
	secrets []string
}

// environ is the environment of a command server: PATH and HOME, then the
// variables env names that are set. It also returns their values, which
// errors must not show.
func environ(env []string) (vars, secrets []string) {
	for _, name := range append([]string{"PATH", "HOME"}, env...) {
		if v, ok := os.LookupEnv(name); ok {
			vars = append(vars, name+"="+v)
			if name != "PATH" && name != "HOME" {
				secrets = append(secrets, v)
			}
		}
	}
	return vars, secrets
}

// start runs command with its own pipes (Wait never closes our ends while
// the session reads them) in its own process group.
func start(command, env []string) (*process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(command[0], command[1:]...)
	vars, secrets := environ(env)
	cmd.Env = vars
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, nil
	setGroup(cmd)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, done: make(chan struct{}), secrets: secrets}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// transport is the session's transport over the process's pipes, its
// output counted against b.
func (p *process) transport(b *budget) mcp.Transport {
	return &mcp.IOTransport{
		Reader:        &countingReadCloser{r: p.stdout, b: b},
		Writer:        p.stdin,
		MaxLineLength: -1, // b bounds it
	}
}

// exitedByItself waits up to exitGrace for the process to exit on its own
// (its output has ended) and reports whether it did.
func (p *process) exitedByItself() bool {
	select {
	case <-p.done:
		return true
	case <-time.After(exitGrace):
		return false
	}
}

// stop closes the process's input, gives it exitGrace to exit, then kills
// its process group, and waits for it. It is safe to call twice.
func (p *process) stop() {
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(exitGrace):
		killGroup(p.cmd)
		<-p.done
	}
	killGroup(p.cmd) // children it left behind
	p.stdout.Close()
}

// exitStatus describes how the process ended, once it has: "exit status
// 3", "signal: killed". It holds no command line.
func (p *process) exitStatus() string {
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	if p.waitErr != nil {
		return "an error"
	}
	return "exit status 0"
}

// startError explains a command that could not start, naming the program
// by its base name only.
func startError(command []string, err error) string {
	prog := command[0]
	for i := len(prog) - 1; i >= 0; i-- {
		if prog[i] == '/' {
			prog = prog[i+1:]
			break
		}
	}
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return fmt.Sprintf("the program %q was not found", prog)
	case errors.Is(err, os.ErrPermission):
		return fmt.Sprintf("the program %q may not be run (permission denied)", prog)
	}
	return fmt.Sprintf("the program %q could not be started", prog)
}

// budget bounds the bytes a session may read from its server, over all
// the streams it reads.
type budget struct {
	limit int64
	n     atomic.Int64
	over  atomic.Bool
}

// errOverBudget ends a session that read more than its budget.
var errOverBudget = errors.New("the server sent more than the size limit")

// countingReadCloser reads from r and fails once b is spent.
type countingReadCloser struct {
	r io.ReadCloser
	b *budget
}

func (c *countingReadCloser) Read(p []byte) (int, error) {
	if c.b.over.Load() {
		return 0, errOverBudget
	}
	n, err := c.r.Read(p)
	if c.b.n.Add(int64(n)) > c.b.limit {
		c.b.over.Store(true)
		return 0, errOverBudget
	}
	return n, err
}

func (c *countingReadCloser) Close() error { return c.r.Close() }
