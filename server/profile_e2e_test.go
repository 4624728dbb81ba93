package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServe_ProfileSource checks profile_source end to end: the data roots
// come from SELMEM_PROFILE_DATA_ROOTS, and a file outside them is refused.
func TestServe_ProfileSource(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	var b strings.Builder
	b.WriteString("id,kind\n")
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&b, "%d,%s\n", i, []string{"a", "b"}[i%2])
	}
	data := filepath.Join(root, "items.csv")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := command(home)
	cmd.Env = append(cmd.Env, "SELMEM_PROFILE_DATA_ROOTS="+root)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: eras[0]})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	defer cs.Close()

	before := commits(t, home)
	text, sc, isErr := call(t, cs, "profile_source", map[string]any{"workspace": "shop", "name": "items", "source": map[string]any{"kind": "file", "path": data}})
	if isErr || !strings.Contains(text, "Profile stored at /memories/workspaces/shop/schemas/items.md (50 rows, 2 columns") {
		t.Fatalf("profile_source: isError %v:\n%s\nstderr:\n%s", isErr, text, stderr)
	}
	if c, _ := sc["commit"].(string); len(c) != 40 {
		t.Errorf("structured output %v has no commit", sc)
	}
	if got := commits(t, home) - before; got != 1 {
		t.Errorf("%d commits, want 1", got)
	}
	outside := filepath.Join(t.TempDir(), "x.csv")
	text, _, isErr = call(t, cs, "profile_source", map[string]any{"workspace": "shop", "name": "x", "source": map[string]any{"kind": "file", "path": outside}})
	if !isErr || !strings.Contains(text, "outside the data roots") {
		t.Errorf("outside the data roots: isError %v: %s", isErr, text)
	}
}
