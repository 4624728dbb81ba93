package pgindex

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

// analysis is the full-text analysis of one chunk (memstore.Terms per
// field), as the embedded index computes it.
type analysis struct {
	terms []string
	tf    [][memstore.NumFields]int16
	lens  [memstore.NumFields]int
	words [][2]string // distinct (word, term)
}

func analyse(c *memstore.Chunk) analysis {
	var a analysis
	at := map[string]int{}
	seen := map[string]bool{}
	for f, text := range memstore.ChunkFields(cleanText(c.Heading), cleanText(c.Context), cleanText(c.Text)) {
		memstore.TermWords(text, func(word, term string) {
			a.lens[f]++
			k, ok := at[term]
			if !ok {
				k = len(a.terms)
				at[term] = k
				a.terms = append(a.terms, term)
				a.tf = append(a.tf, [memstore.NumFields]int16{})
			}
			if a.tf[k][f] < math.MaxUint8 { // saturates as the embedded index does
				a.tf[k][f]++
			}
			if !seen[word] {
				seen[word] = true
				a.words = append(a.words, [2]string{word, term})
			}
		})
	}
	return a
}

// lexStats are the corpus statistics of BM25.
type lexStats struct {
	n   int64
	sum [memstore.NumFields]float64
}

// avg returns the average length of field f, 1 when there is none (as the
// embedded index).
func (s lexStats) avg(f int) float64 {
	a := s.sum[f] / float64(max(s.n, 1))
	if a == 0 {
		return 1
	}
	return a
}

// impact is the BM25F term-frequency part of a term with frequencies tf
// in a chunk of field lengths lens, at statistics s.
func impact(r *memstore.Ranking, s lexStats, tf [memstore.NumFields]int16, lens [memstore.NumFields]int) float64 {
	w := r.FieldWeights()
	var x float64
	for f := range memstore.NumFields {
		if tf[f] > 0 {
			x += w[f] * float64(tf[f]) / (1 - r.B + r.B*float64(lens[f])/s.avg(f))
		}
	}
	return x / (r.K1 + x)
}

// removeStatsSQL subtracts the chunks matching a condition on c from the
// statistics; %s is the condition, over $1.. . The terms to update are
// also given as an array, so that they are found through the terms' key:
// joined alone, the planner may read every term to update a hundred.
const removeStatsSQL = `
WITH gone AS MATERIALIZED (SELECT id, len_heading, len_path, len_text FROM selmem_chunks c WHERE %s),
d AS MATERIALIZED (SELECT p.term, count(*) AS n FROM selmem_postings p JOIN gone g ON g.id = p.chunk_id GROUP BY p.term),
dfs AS (
	UPDATE selmem_terms t SET df = t.df - d.n
	FROM d
	WHERE t.term = d.term AND t.term = ANY (ARRAY(SELECT term FROM d))
	RETURNING 1
)
UPDATE selmem_lex_stats s
SET n = s.n - g.n, sum_heading = s.sum_heading - g.h, sum_path = s.sum_path - g.p, sum_text = s.sum_text - g.t
FROM (SELECT count(*) AS n, coalesce(sum(len_heading), 0) AS h, coalesce(sum(len_path), 0) AS p,
	coalesce(sum(len_text), 0) AS t FROM gone) g
WHERE s.id = 1`

// remove deletes the chunks matching where (a condition on c over args)
// and their postings, and takes them out of the statistics. The caller
// holds the "stats" lock (lockKey), which every write to the full-text
// statistics (selmem_terms, selmem_lex_stats) takes first. Postings have
// no foreign key to their chunk (see migration 004): every deletion of
// chunks goes through here, or truncates both tables.
func remove(ctx context.Context, tx pgx.Tx, where string, args ...any) error {
	if _, err := tx.Exec(ctx, fmt.Sprintf(removeStatsSQL, where), args...); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM selmem_postings p USING selmem_chunks c WHERE p.chunk_id = c.id AND (`+where+`)`, args...); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM selmem_chunks c WHERE `+where, args...)
	return err
}

// readStats reads the statistics.
func readStats(ctx context.Context, tx pgx.Tx) (lexStats, error) {
	var s lexStats
	err := tx.QueryRow(ctx, `SELECT n, sum_heading, sum_path, sum_text FROM selmem_lex_stats WHERE id = 1`).
		Scan(&s.n, &s.sum[0], &s.sum[1], &s.sum[2])
	return s, err
}

// addPostings writes the postings of the chunks of paths, just inserted
// with the analyses as, and adds them to the statistics. s holds the
// statistics before the insert.
func (ix *Index) addPostings(ctx context.Context, tx pgx.Tx, paths []string, chunks []*memstore.Chunk, as []analysis, s lexStats) error {
	if len(chunks) == 0 {
		return nil
	}
	type key struct {
		path string
		seq  int
	}
	ids := map[key]int64{}
	rows, err := tx.Query(ctx, `SELECT id, path, seq FROM selmem_chunks WHERE path = ANY ($1::text[])`, paths)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		var k key
		if err := rows.Scan(&id, &k.path, &k.seq); err != nil {
			rows.Close()
			return err
		}
		ids[k] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// The statistics as they will be, for the impacts.
	next := s
	for _, a := range as {
		next.n++
		for f := range memstore.NumFields {
			next.sum[f] += float64(a.lens[f])
		}
	}
	var post [][]any
	df := map[string]int32{}
	words := map[string]string{}
	for i, c := range chunks {
		id := ids[key{c.Path, c.Seq}]
		a := &as[i]
		zone := access.ZoneOf(c.Path)
		for k, term := range a.terms {
			tf := a.tf[k]
			post = append(post, []any{term, id, tf[0], tf[1], tf[2], float32(impact(&ix.rank, next, tf, a.lens)), zone})
			df[term]++
		}
		for _, w := range a.words {
			words[w[0]] = w[1]
		}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"selmem_postings"},
		[]string{"term", "chunk_id", "tf_heading", "tf_path", "tf_text", "impact", "zone"}, pgx.CopyFromRows(post)); err != nil {
		return err
	}
	terms, counts := sortedColumns(df)
	ws, wterms := sortedColumns(words)
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO selmem_terms (term, df) SELECT * FROM unnest($1::text[], $2::int[])
		ON CONFLICT (term) DO UPDATE SET df = selmem_terms.df + EXCLUDED.df`, terms, counts)
	b.Queue(`INSERT INTO selmem_words (word, term) SELECT * FROM unnest($1::text[], $2::text[])
		ON CONFLICT (word) DO NOTHING`, ws, wterms)
	b.Queue(`UPDATE selmem_lex_stats SET n = $1, sum_heading = $2, sum_path = $3, sum_text = $4 WHERE id = 1`,
		next.n, next.sum[0], next.sum[1], next.sum[2])
	return tx.SendBatch(ctx, b).Close()
}

// sortedColumns returns the keys of m in order and their values, as two
// arrays for unnest; sorted keys lock rows in one order.
func sortedColumns[V any](m map[string]V) ([]string, []V) {
	keys := slices.Sorted(maps.Keys(m))
	vals := make([]V, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	return keys, vals
}
