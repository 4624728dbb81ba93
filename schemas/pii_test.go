package schemas_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/schemas"
)

// storedFiles returns the content of every file committed at HEAD of the
// store's git repository.
func storedFiles(t *testing.T, home string) map[string]string {
	t.Helper()
	repo := filepath.Join(home, "memory")
	out, err := exec.Command("git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, p := range strings.Fields(string(out)) {
		b, err := exec.Command("git", "-C", repo, "show", "HEAD:"+p).Output()
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(b)
	}
	return files
}

// TestSave_NoPersonalData stores the profile of a table of invented
// personal data and secrets at a budget large enough for sample rows and
// checks that no value reached the repository.
func TestSave_NoPersonalData(t *testing.T) {
	ctx := context.Background()
	s, home := openStore(t)
	values := [][]string{
		{"Maria Garcia", "maria.garcia@example.com", "+44 20 7946 0123", "123-45-6789", "4111 1111 1111 1111", "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"},
		{"James Smith", "james.smith@example.org", "(415) 555-0142", "234-56-7890", "5500-0055-5555-5559", "npm_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"},
		{"Aisha Okafor", "aisha.okafor@example.net", "07700 900123", "345-67-8901", "378282246310005", "npm_Mm1Nn2Bb3Vv4Cc5Xx6Zz7Ll8Kk9Jj0Hh1Gg2"},
	}
	var b strings.Builder
	b.WriteString("id,full_name,email,phone,ssn,card,token,notes\n")
	for i, r := range values {
		b.WriteString(strings.Join([]string{strconv.Itoa(i + 1), r[0], r[1], `"` + r[2] + `"`, r[3], r[4], r[5],
			`"Spoke with ` + r[0] + ` at ` + r[1] + `"`}, ",") + "\n")
	}
	path := filepath.Join(t.TempDir(), "people.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &memstore.WriteOptions{Tool: "test", Source: memstore.SourceTrustedToolResult}
	if _, err := schemas.Save(ctx, s, "crm", "people", profile(t, path, "people"), "file:people.csv", 20000, w); err != nil {
		t.Fatal(err)
	}
	files := storedFiles(t, home)
	if _, ok := files["workspaces/crm/schemas/people.md"]; !ok {
		t.Fatalf("people.md not stored; files: %v", files)
	}
	for p, text := range files {
		for _, r := range values {
			for _, v := range r {
				if strings.Contains(text, v) {
					t.Errorf("%s holds %q:\n%s", p, v, text)
				}
			}
		}
	}
	if md := files["workspaces/crm/schemas/people.md"]; !strings.Contains(md, "Sample rows") || !strings.Contains(md, "<email>") {
		t.Errorf("people.md has no masked sample rows:\n%s", md)
	}
}

// TestSave_ThroughGate shows that a stored profile passes the store's
// write gate: a profile built by hand with a raw token in its catalog
// (which Profile never produces) is refused.
func TestSave_ThroughGate(t *testing.T) {
	s, _ := openStore(t)
	tp := &profiler.TableProfile{Name: "leak", Rows: 1, Columns: []*profiler.ColumnProfile{{
		Name: "note", Type: profiler.TypeCategorical, Count: 1, Distinct: 1,
		Top: []profiler.ValueCount{{Value: "ghp_" + "R8xTq2LmZ7vK4pW9sYb3NcH6jD1fG5aE0uQw", Count: 1}},
	}}}
	w := &memstore.WriteOptions{Tool: "test", Source: memstore.SourceTrustedToolResult}
	_, err := schemas.Save(context.Background(), s, "crm", "leak", tp, "file:leak.csv", 0, w)
	if !errors.Is(err, memstore.ErrRejected) {
		t.Errorf("Save with a raw token: %v, want ErrRejected from the write gate", err)
	}
}
