package resources_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/resources"
)

// load reads workspace name from store at the test clock.
func load(tb testing.TB, store *memstore.Store, name string) resources.Workspace {
	tb.Helper()
	ws, err := resources.LoadWorkspace(context.Background(), store, name, now)
	if err != nil {
		tb.Fatal(err)
	}
	return ws
}

func TestCompose(t *testing.T) {
	t.Parallel()
	const (
		task    = "memory://workspaces/sales/task"
		output  = "memory://workspaces/sales/output"
		tools   = "memory://workspaces/sales/tools"
		orders  = "memory://workspaces/sales/schemas/orders"
		custs   = "memory://workspaces/sales/schemas/customers"
		rels    = "memory://workspaces/sales/schemas/relationships"
		noLimit = 0
	)
	allSchemas := []string{custs, orders, rels}
	manyURIs := []string{custs, orders}
	for i := 1; i <= 12; i++ {
		manyURIs = append(manyURIs, fmt.Sprintf("memory://workspaces/sales/schemas/source%02d", i))
	}
	manyURIs = append(manyURIs, rels)
	tests := []struct {
		name      string
		files     map[string]string
		workspace string
		budget    int
		omitted   []string
	}{
		{"full", fixture, "sales", resources.DefaultBudgetTokens, nil},
		{"unlimited", fixture, "sales", noLimit, nil},
		{"task-and-schemas-only", without(fixture, "/memories/workspaces/sales/tools/", "/memories/workspaces/sales/output.md"), "sales", resources.DefaultBudgetTokens, nil},
		{"empty", fixture, "empty", resources.DefaultBudgetTokens, nil},
		{"schema-headlines", longFixture, "sales", 1100, allSchemas},
		{"schema-pointer", manySchemas, "sales", 300, manyURIs},
		{"tool-names", longFixture, "sales", 1070, append([]string{tools}, allSchemas...)},
		{"output-cut", longFixture, "sales", 900, append([]string{output, tools}, allSchemas...)},
		{"task-cut", longFixture, "sales", 500, append([]string{task, output, tools}, allSchemas...)},
		{"small-over-budget", fixture, "sales", 40, append([]string{tools}, allSchemas...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := load(t, newStore(t, tt.files), tt.workspace)
			text, omitted := resources.Compose(ws, tt.budget, profiler.Tokens)
			if tt.budget > 0 && tt.name != "small-over-budget" {
				if n := profiler.Tokens(text); n > tt.budget {
					t.Errorf("composed %d tokens, over the budget of %d", n, tt.budget)
				}
			}
			if diff := cmp.Diff(tt.omitted, omitted); diff != "" {
				t.Errorf("omitted mismatch (-want +got):\n%s", diff)
			}
			if len(omitted) > 0 && !strings.Contains(text, "## Left out") {
				t.Error("text does not say what was left out")
			}
			for _, uri := range omitted {
				if !strings.Contains(text, uri) && !strings.Contains(text, strings.TrimSuffix(uri, "/"+uri[strings.LastIndex(uri, "/")+1:])) {
					t.Errorf("text names neither %s nor its collection", uri)
				}
			}
			golden(t, "compose-"+tt.name+".md", text)
		})
	}
}

// TestCompose_Budget sweeps budgets: the result fits whenever any form
// fits (the smallest form is what a budget of 1 gives), and never grows when
// the budget shrinks.
func TestCompose_Budget(t *testing.T) {
	t.Parallel()
	ws := load(t, newStore(t, longFixture), "sales")
	smallest, _ := resources.Compose(ws, 1, profiler.Tokens)
	floor := profiler.Tokens(smallest)
	prev := 0
	for budget := floor - 20; budget <= 1300; budget += 37 {
		text, _ := resources.Compose(ws, budget, profiler.Tokens)
		n := profiler.Tokens(text)
		if n > budget && budget >= floor {
			t.Errorf("budget %d: %d tokens, over budget though a %d-token form exists", budget, n, floor)
		}
		if n < prev {
			t.Errorf("budget %d: %d tokens, fewer than %d at a smaller budget", budget, n, prev)
		}
		prev = n
	}
}

// TestCompose_Deterministic checks byte-identical output across calls and
// after writes that do not touch the workspace's context.
func TestCompose_Deterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := newStore(t, fixture)
	first, _ := resources.Compose(load(t, store, "sales"), resources.DefaultBudgetTokens, profiler.Tokens)
	again, _ := resources.Compose(load(t, store, "sales"), resources.DefaultBudgetTokens, profiler.Tokens)
	if first != again {
		t.Fatal("two compositions of the same memory differ")
	}
	for _, p := range []string{
		"/memories/workspaces/sales/notes/later.md",
		"/memories/workspaces/sales/artifacts/report/binding.yaml",
		"/memories/workspaces/empty/task.md",
		"/memories/org/rules.md",
	} {
		if _, err := store.Create(ctx, p, "kind: note\n", nil); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
		got, _ := resources.Compose(load(t, store, "sales"), resources.DefaultBudgetTokens, profiler.Tokens)
		if got != first {
			t.Errorf("after writing %s the composition changed:\n%s", p, cmp.Diff(first, got))
		}
	}
}

// TestCompose_NoVolatileValues checks that front matter (with its
// timestamps and provenance) and commit data stay out of the context.
func TestCompose_NoVolatileValues(t *testing.T) {
	t.Parallel()
	store := newStore(t, fixture)
	text, _ := resources.Compose(load(t, store, "sales"), resources.DefaultBudgetTokens, profiler.Tokens)
	head, err := store.Head()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"valid_from", "invalid_at", "expires_at", "superseded_by", "confidence", "user_confirmed",
		"trusted_tool_result", "2026-01-02", "2026-02-01T08:00:00Z", "2026-03-01", "\n---\n", head, head[:7]} {
		if strings.Contains(text, bad) {
			t.Errorf("context contains %q", bad)
		}
	}
	if m := regexp.MustCompile(`\d{2}:\d{2}(:\d{2})?|\d{4}-\d{2}-\d{2}T`).FindString(text); m != "" {
		t.Errorf("context contains a time of day %q", m)
	}
}

func TestLoadWorkspace_Validity(t *testing.T) {
	t.Parallel()
	ws := load(t, newStore(t, fixture), "sales")
	names := func(items []resources.Item) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.Name)
		}
		return out
	}
	if got, want := names(ws.Tools), []string{"mail", "warehouse"}; !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v (crm expired)", got, want)
	}
	if got, want := names(ws.Schemas), []string{"customers", "orders", "relationships"}; !slices.Equal(got, want) {
		t.Errorf("schemas = %v, want %v (legacy invalidated, future not yet valid)", got, want)
	}

	at := now.Format("2006-01-02T15:04:05Z")
	after := now.Add(1e9).Format("2006-01-02T15:04:05Z")
	tests := []struct {
		name, header string
		inForce      bool
	}{
		{"no front matter", "", true},
		{"invalid_at now", "invalid_at: " + at, false},
		{"invalid_at later", "invalid_at: " + after, true},
		{"expires_at now", "expires_at: " + at, false},
		{"expires_at later", "expires_at: " + after, true},
		{"valid_from now", "valid_from: " + at, true},
		{"valid_from later", "valid_from: " + after, false},
		{"superseded but not invalidated", "superseded_by: /memories/workspaces/w/task2.md", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := "- rule\n"
			if tt.header != "" {
				body = "---\n" + tt.header + "\n---\n" + body
			}
			ws := load(t, newStore(t, map[string]string{"/memories/workspaces/w/task.md": body}), "w")
			if got := ws.Task != nil; got != tt.inForce {
				t.Errorf("task in force = %v, want %v", got, tt.inForce)
			}
			if ws.Task != nil && ws.Task.Text != "- rule" {
				t.Errorf("task text = %q, want the body without front matter", ws.Task.Text)
			}
		})
	}
}

func TestLoadWorkspace_Names(t *testing.T) {
	t.Parallel()
	store := newStore(t, fixture)
	for _, name := range []string{"missing", "..", "%2e%2e", "a/b", "sales/tools", ".git", "", `a\b`} {
		_, err := resources.LoadWorkspace(context.Background(), store, name, now)
		if !errors.Is(err, memstore.ErrNotFound) && !errors.Is(err, memstore.ErrRejected) {
			t.Errorf("LoadWorkspace(context.Background(), %q) = %v, want ErrNotFound or ErrRejected", name, err)
		}
	}
}
