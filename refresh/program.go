package refresh

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/selmem/selmem/refresh/lint"
)

// Program reads an artifact's program files at HEAD, by name relative to
// its directory (subdirectories included, the binding left out), and a key
// that changes whenever any of them does.
func (r *Refresher) Program(ctx context.Context, ws, artifact string) (files map[string]string, key string, err error) {
	files = map[string]string{}
	h := sha256.New()
	var walk func(dir, prefix string) error
	walk = func(dir, prefix string) error {
		entries, err := r.store.List(ctx, dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := prefix + e.Name
			if e.IsDir {
				if err := walk(e.Path, name+"/"); err != nil {
					return err
				}
				continue
			}
			if name == BindingName {
				continue
			}
			content, sha, err := r.store.Read(ctx, e.Path)
			if err != nil {
				return err
			}
			files[name] = string(content)
			h.Write([]byte(name + "\x00" + sha + "\x00"))
		}
		return nil
	}
	if err := walk(ArtifactDir(ws, artifact), ""); err != nil {
		return nil, "", err
	}
	return files, hex.EncodeToString(h.Sum(nil)), nil
}

// Lint checks an artifact's program against data: literal copies of the
// data's values in the program (see package lint).
func Lint(files map[string]string, t *Table) []string {
	cols := make([]lint.Column, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = lint.Column{Name: c.Name, Type: c.Type}
	}
	return findingStrings(lint.Program(files, lint.Snapshot{Columns: cols, Records: t.Records(), Rows: int(t.Rows)}))
}

// LintBound lints program files against snapshot sha as the data of
// artifact ws/artifact: only a snapshot the artifact retains (see
// Snapshots.Bound).
func (r *Refresher) LintBound(ws, artifact string, files map[string]string, sha string) ([]string, error) {
	data, err := r.snaps.Bound(ws, artifact, sha)
	if err != nil {
		return nil, err
	}
	var snap lint.Snapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		return nil, fmt.Errorf("refresh: snapshot %s is damaged: %w", sha[:12], err)
	}
	return findingStrings(lint.Program(files, snap)), nil
}

func findingStrings(findings []lint.Finding) []string {
	out := make([]string, len(findings))
	for i, f := range findings {
		out[i] = f.String()
	}
	return out
}

// Records are the table's rows as JSON-like values: int64 or float64
// numbers, booleans, strings and nil for missing values.
func (t *Table) Records() []map[string]any {
	out := make([]map[string]any, 0, t.Rows)
	for _, b := range t.batches {
		cols := b.Columns()
		for r := 0; r < int(b.NumRows()); r++ {
			rec := make(map[string]any, len(cols))
			for i, a := range cols {
				s, null := cell(a, r)
				var v any
				switch {
				case null:
				case t.Columns[i].Type == TypeInteger:
					if n, err := strconv.ParseInt(s, 10, 64); err == nil {
						v = n
					}
				case t.Columns[i].Type == TypeNumber:
					if f, err := strconv.ParseFloat(s, 64); err == nil {
						v = f
					}
				case t.Columns[i].Type == TypeBoolean:
					v = s[0] == 't' || s[0] == 'T'
				default:
					v = s
				}
				rec[t.Columns[i].Name] = v
			}
			out = append(out, rec)
		}
	}
	return out
}
