package scaffold

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// sales is the column set of testdata/sales-v1.json.
var sales = []Column{
	{Name: "order_id", Type: TypeText},
	{Name: "region", Type: TypeText},
	{Name: "day", Type: TypeDate},
	{Name: "units", Type: TypeInteger},
	{Name: "amount", Type: TypeNumber},
}

// TestDashboard_Golden compares the generated files with
// testdata/golden: index.html per case (golden/<case>.html), app.js and
// style.css once, since they do not depend on the columns.
func TestDashboard_Golden(t *testing.T) {
	tests := []struct {
		name    string
		title   string
		columns []Column
	}{
		{"sales", "Weekly sales", sales},
		{"count-only", "Tickets <by> team & \"status\"", []Column{{Name: "team", Type: TypeText}, {Name: "open", Type: TypeBoolean}}},
		{"no-category", "Latency", []Column{{Name: "ms", Type: TypeNumber}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := Dashboard(tt.title, tt.columns)
			if err != nil {
				t.Fatalf("Dashboard: %v", err)
			}
			if got, want := len(files), 3; got != want {
				t.Errorf("Dashboard returned %d files, want %d", got, want)
			}
			golden(t, tt.name+".html", files[FileIndex])
			golden(t, FileApp, files[FileApp])
			golden(t, FileStyle, files[FileStyle])
		})
	}
}

// golden compares got with testdata/golden/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("golden file missing (run go test ./refresh/scaffold -update): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from the golden file (-golden +got); run with -update if intended:\n%s", p, diff)
	}
}

func TestDashboard_Contract(t *testing.T) {
	files, err := Dashboard("Sales </script><script>alert(1)</script>", []Column{
		{Name: "region</script>", Type: TypeText}, {Name: "amount", Type: TypeNumber},
	})
	if err != nil {
		t.Fatal(err)
	}
	index := files[FileIndex]
	if got := strings.Count(index, InjectionPoint); got != 1 {
		t.Errorf("index.html holds the injection point %d times, want 1", got)
	}
	if got := strings.Count(strings.ToLower(index), "</script>"); got != 3 {
		t.Errorf("index.html has %d </script> tags, want 3 (config, data, app.js): hostile names must be escaped", got)
	}
	for name, content := range files {
		for _, banned := range []string{"https://", "fetch(", "XMLHttpRequest", "import(", "eval("} {
			if strings.Contains(content, banned) {
				t.Errorf("%s contains %q: the program must load nothing and read data only at the injection point", name, banned)
			}
		}
	}
	for _, id := range []string{`id="rows"`, `id="total"`, `id="insight"`, `id="chart"`, `id="error"`} {
		if !strings.Contains(index, id) {
			t.Errorf("index.html lacks %s", id)
		}
	}
}

func TestChoose(t *testing.T) {
	tests := []struct {
		name    string
		columns []Column
		want    Choice
	}{
		{"text and number", sales, Choice{Category: "region", Measure: "amount"}},
		{"integer when no number", []Column{{Name: "team", Type: TypeText}, {Name: "tickets", Type: TypeInteger}}, Choice{"team", "tickets"}},
		{"id columns last", []Column{{Name: "customer_id", Type: TypeText}, {Name: "id", Type: TypeInteger}, {Name: "qty", Type: TypeInteger}}, Choice{"customer_id", "qty"}},
		{"only an id", []Column{{Name: "id", Type: TypeInteger}}, Choice{"", "id"}},
		{"year never summed", []Column{{Name: "year", Type: TypeInteger}, {Name: "country", Type: TypeText}}, Choice{"country", ""}},
		{"date as category", []Column{{Name: "day", Type: TypeDate}, {Name: "visits", Type: TypeInteger}}, Choice{"day", "visits"}},
		{"boolean as category", []Column{{Name: "paid", Type: TypeBoolean}, {Name: "amount", Type: TypeNumber}}, Choice{"paid", "amount"}},
		{"nothing numeric", []Column{{Name: "name", Type: TypeText}}, Choice{"name", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Choose(tt.columns); got != tt.want {
				t.Errorf("Choose = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDashboard_Invalid(t *testing.T) {
	long := strings.Repeat("x", maxTitleRunes+1)
	tests := []struct {
		name    string
		title   string
		columns []Column
		want    string
	}{
		{"empty title", "  ", sales, "title is empty"},
		{"long title", long, sales, "at most"},
		{"no columns", "t", nil, "no columns"},
		{"unnamed column", "t", []Column{{Name: "", Type: TypeText}}, "has no name"},
		{"duplicate", "t", []Column{{Name: "a", Type: TypeText}, {Name: "a", Type: TypeNumber}}, "appears twice"},
		{"unknown type", "t", []Column{{Name: "a", Type: "money"}}, "unknown type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := Dashboard(tt.title, tt.columns)
			if err == nil {
				t.Fatalf("Dashboard succeeded with %d files, want an error", len(files))
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			var e *Error
			if !errors.As(err, &e) || e.Hint == "" {
				t.Errorf("error %v has no hint", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func TestOutputContract(t *testing.T) {
	c := OutputContract()
	for _, want := range []string{InjectionPoint, "never hardcode", "insight text", "data.json", "regenerat"} {
		if !strings.Contains(strings.ToLower(c), strings.ToLower(want)) {
			t.Errorf("OutputContract does not mention %q", want)
		}
	}
}
