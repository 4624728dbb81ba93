package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/selmem/selmem/bench/retrieval/devset"
)

// baselineStopWords are removed from baseline queries: the English stop
// word list of the Snowball project, the one Postgres' english
// configuration uses.
var baselineStopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you your yours yourself yourselves he him his
		himself she her hers herself it its itself they them their theirs themselves what which who whom this that these
		those am is are was were be been being have has had having do does did doing would should could ought a an the
		and but if or because as until while of at by for with about against between into through during before after
		above below to from up down in out on off over under again further then once here there when where why how all
		any both each few more most other some such no nor not only own same so than too very s t can will just don
		now d ll m o re ve y`) {
		m[w] = true
	}
	return m
}()

// evalBaseline ranks the index's chunks with plain BM25: an FTS5 table of
// heading and text per chunk (porter stemmer), queried with the OR of the
// query's words minus stop words, restricted to the query's workspace.
func evalBaseline(ctx context.Context, dbPath string, set devset.Set) (report, error) {
	src, err := sql.Open("sqlite", dbPath+"?mode=ro")
	if err != nil {
		return report{}, err
	}
	defer src.Close()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return report{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE b USING fts5(body, workspace UNINDEXED, tokenize = 'porter unicode61')`); err != nil {
		return report{}, err
	}
	rows, err := src.QueryContext(ctx, `SELECT id, path, heading, workspace, text FROM chunks`)
	if err != nil {
		return report{}, err
	}
	keys := map[int64]hitKey{}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return report{}, err
	}
	for rows.Next() {
		var id int64
		var path, heading, ws, text string
		if err := rows.Scan(&id, &path, &heading, &ws, &text); err != nil {
			return report{}, err
		}
		keys[id] = hitKey{path, heading}
		if _, err := tx.ExecContext(ctx, `INSERT INTO b (rowid, body, workspace) VALUES (?, ?, ?)`, id, heading+"\n"+text, ws); err != nil {
			return report{}, err
		}
	}
	if err := rows.Err(); err != nil {
		return report{}, err
	}
	rows.Close()
	if err := tx.Commit(); err != nil {
		return report{}, err
	}
	r := report{name: "bm25 baseline", results: make([]result, len(set.Queries))}
	for i, q := range set.Queries {
		start := time.Now()
		var hits []hitKey
		if expr := baselineQuery(q.Text); expr != "" {
			rows, err := db.QueryContext(ctx, `SELECT rowid FROM b WHERE b MATCH ? AND (? = '' OR workspace = ?) ORDER BY rank LIMIT 10`,
				expr, q.Workspace, q.Workspace)
			if err != nil {
				return r, fmt.Errorf("query %s: %w", q.ID, err)
			}
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					return r, err
				}
				hits = append(hits, keys[id])
			}
			if err := rows.Err(); err != nil {
				return r, err
			}
			rows.Close()
		}
		r.results[i] = judge(q, hits, time.Since(start))
	}
	return r, nil
}

// baselineQuery is the OR of text's words minus stop words, each quoted.
func baselineQuery(text string) string {
	var terms []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !baselineStopWords[w] {
			terms = append(terms, `"`+w+`"`)
		}
	}
	return strings.Join(terms, " OR ")
}
