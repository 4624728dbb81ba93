// Command crash runs selmem's crash-consistency harness (internal/crashtest)
// against the real binary, built from this module: MCP clients over HTTP and
// `selmem create` processes write to one home, the server is SIGKILLed at a
// random moment, restarted, and every acknowledged write is looked for.
//
//	go run ./bench/crash -rounds 20 -clients 16 -cli 2 -cli-writes 40
//	go run ./bench/crash -mode cli -cli 2 -cli-writes 40 -rounds 1
//	go run ./bench/crash -mode mix -duration 5s
//
// It prints one line per round, then a table and the totals, and exits 1
// when any invariant broke (2 when the harness itself could not run).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/selmem/selmem/internal/crashtest"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		mode      = flag.String("mode", "kill", "kill (SIGKILL the server mid-write), cli (CLI processes only, no server) or mix (server and CLI, graceful stop)")
		rounds    = flag.Int("rounds", 10, "rounds on one home")
		clients   = flag.Int("clients", 16, "MCP HTTP clients per round")
		cli       = flag.Int("cli", 2, "selmem create processes writing in parallel per round")
		cliWrites = flag.Int("cli-writes", 40, "writes per CLI process per round (fewer when the round ends first)")
		killMin   = flag.Duration("kill-min", 200*time.Millisecond, "earliest kill after the round starts")
		killMax   = flag.Duration("kill-max", 3*time.Second, "latest kill after the round starts")
		killCLI   = flag.Float64("kill-cli", 0.5, "probability that a kill round also SIGKILLs the CLI processes in flight")
		duration  = flag.Duration("duration", 3*time.Second, "how long MCP clients write in a mix round")
		samples   = flag.Int("samples", 20, "files per round checked by memory_search and memory_str_replace (and older files by memory_view)")
		seed      = flag.Uint64("seed", 0, "random seed (0: from the clock); printed, so a run can be repeated")
		keep      = flag.Bool("keep", false, "keep the home and server logs for inspection")
		bin       = flag.String("bin", "", "selmem binary to test (default: build ./cmd/selmem of this module)")
	)
	flag.Parse()
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	work, err := os.MkdirTemp("", "selmem-crash-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if !*keep {
		defer os.RemoveAll(work)
	}
	if *bin == "" {
		wd, _ := os.Getwd()
		root, err := crashtest.ModuleRoot(wd)
		if err == nil {
			*bin, err = crashtest.Build(ctx, root, work)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	home := filepath.Join(work, "home")
	fmt.Printf("seed %d, home %s\n", *seed, home)
	rep, err := crashtest.Run(ctx, crashtest.Config{
		Bin: *bin, Home: home, WorkDir: work, Mode: crashtest.Mode(*mode),
		Rounds: *rounds, Clients: *clients, CLIProcs: *cli, CLIWrites: *cliWrites,
		KillMin: *killMin, KillMax: *killMax, KillCLI: *killCLI, Duration: *duration,
		Samples: *samples, Seed: *seed, Log: os.Stdout,
	})
	if rep != nil {
		fmt.Println()
		rep.Write(os.Stdout)
	}
	if *keep {
		fmt.Printf("kept %s (home and server logs)\n", work)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if rep.Broken() {
		return 1
	}
	return 0
}
