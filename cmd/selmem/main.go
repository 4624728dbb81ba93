// Command selmem is shared, selective, persistent memory for AI agents: an
// MCP server and a CLI over a git-backed memory with hybrid search.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/selmem/selmem/memstore"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1 // refused or failed; the reason is on stderr
	exitUsage  = 2
	// exitIncompatible: a refresh found data that no longer fits the
	// artifact; nothing changed, the artifact must be regenerated.
	exitIncompatible = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// exitError is a failure with its own exit code; its message goes to
// stderr as it is.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// usageError marks a command line that does not fit the command.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// run executes one command line and returns its exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return (&app{stdin: stdin, stdout: stdout, stderr: stderr}).run(ctx, args)
}

// run executes one command line with a's streams and returns its exit code.
func (a *app) run(ctx context.Context, args []string) int {
	stdin, stdout, stderr := a.stdin, a.stdout, a.stderr
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		fmt.Fprintf(stderr, "selmem: %v\nRun 'selmem --help' for usage.\n", err)
		return exitUsage
	}
	var xe exitError
	if errors.As(err, &xe) {
		fmt.Fprintln(stderr, xe.Error())
		return xe.code
	}
	var me *memstore.Error
	if errors.As(err, &me) {
		fmt.Fprintln(stderr, me.Error())
		return exitFailed
	}
	fmt.Fprintf(stderr, "selmem: %v\n", err)
	return exitFailed
}

// isCobraUsage recognises cobra's own errors for unknown commands.
func isCobraUsage(err error) bool {
	msg := err.Error()
	return len(msg) > 15 && msg[:15] == "unknown command"
}

// args wraps a cobra argument check so its failures are usage errors.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return usageError{err}
		}
		return nil
	}
}
