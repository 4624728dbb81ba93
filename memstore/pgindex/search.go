package pgindex

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/selmem/selmem/memstore"
)

// filterSQL restricts a ranking to the query's workspace, scope, types and,
// unless invalid chunks are included, to chunks valid at $7. Both rankings
// use it, so they see the same set of chunks.
const filterSQL = `
		AND ($3 = '' OR c.workspace = $3)
		AND ($4 = '' OR c.scope = $4)
		AND (coalesce(cardinality($5::text[]), 0) = 0 OR c.type = ANY ($5::text[]))
		AND ($6::boolean OR ((c.invalid_at IS NULL OR c.invalid_at > $7)
			AND (c.expires_at IS NULL OR c.expires_at > $7)))`

// searchSQL is the hybrid search: a full-text ranking and a vector ranking,
// each of depth $8, fused by reciprocal rank fusion, best $9 first. Both
// rank one pool of candidates, gathered by three bounded scans.
//
// Full-text score: ts_rank_cd over any term of the query (an OR of
// plainto_tsquery's lexemes, so user text never fails to parse and partial
// matches count), normalised into [0, 1), plus 1 when the chunk matches the
// whole websearch_to_tsquery query (all terms, phrases, exclusions), so
// complete matches come first. Vector score: exact cosine distance. Ties go
// by path, seq.
//
// The pool:
//   - all_words: up to $10 chunks matching the whole query, through the
//     GIN index. They are the only ones that can reach the top of the
//     full-text ranking when there are enough of them; when a query's words
//     are common and more than $10 chunks match, these are the first $10 in
//     table order and the ranking is approximate.
//   - nearest: the $11 nearest chunks through the HNSW index, scored for
//     full text too. With the built-in embedder, nearness means shared words
//     and word parts, so when few chunks match every word these are the
//     partial matches, found without scanning every chunk that holds one
//     common word of the query (a GIN scan costs a microsecond per matching
//     chunk, a hundred milliseconds for a word in a sixth of a million).
//   - some_words: when all_words holds fewer than $8 chunks, up to $10
//     chunks matching some but not all words, in table order; for a query
//     with a vector only while the table holds fewer than $12 chunks (by
//     the planner's count), since the scan costs as much as the GIN scan of
//     the query's most common word.
//
// The vector ranking thereby also sees the full-text matches, exactly
// scored: HNSW, an approximate search, misses some of them, most of all for
// short queries whose vectors lie far from every chunk's.
//
// Parameters: $1 text, $2 vector (NULL: no vector ranking), $3 workspace,
// $4 scope, $5 types, $6 include invalid, $7 now, $8 candidates, $9 limit,
// $10 full-text pool size per scan, $11 nearest pool size, $12 the table
// size from which searches with a vector skip some_words.
var searchSQL = `
WITH all_words AS MATERIALIZED (
	SELECT c.id, c.path, c.seq, ` + textScoreSQL + ` AS score, c.embedding <=> $2::halfvec AS distance
	FROM selmem_chunks c
	WHERE $1 <> ''
	AND c.tsv @@ websearch_to_tsquery('english', $1)
	AND c.tsv @@ ` + anyTermSQL + filterSQL + `
	LIMIT $10
),
nearest AS MATERIALIZED (
	SELECT c.id, c.path, c.seq,
		CASE WHEN $1 <> '' AND c.tsv @@ ` + anyTermSQL + ` THEN ` + textScoreSQL + ` END AS score,
		c.embedding <=> $2::halfvec AS distance
	FROM selmem_chunks c
	WHERE $2::halfvec IS NOT NULL
	AND c.embedding IS NOT NULL` + filterSQL + `
	ORDER BY c.embedding <=> $2::halfvec
	LIMIT $11
),
some_words AS MATERIALIZED (
	SELECT c.id, c.path, c.seq, ` + textScoreSQL + ` AS score, c.embedding <=> $2::halfvec AS distance
	FROM selmem_chunks c
	WHERE $1 <> ''
	AND ($2::halfvec IS NULL
		OR (SELECT reltuples FROM pg_class WHERE oid = 'selmem_chunks'::regclass) < $12::float4)
	AND (SELECT count(*) FROM all_words) < $8
	AND c.tsv @@ ` + anyTermSQL + `
	AND NOT c.tsv @@ websearch_to_tsquery('english', $1)` + filterSQL + `
	LIMIT $10
),
pool AS (
	SELECT * FROM all_words
	UNION
	SELECT * FROM nearest
	UNION
	SELECT * FROM some_words
),
text_hits AS (
	SELECT t.id, row_number() OVER (ORDER BY t.score DESC, t.path, t.seq) AS rank
	FROM (
		SELECT id, path, seq, score FROM pool
		WHERE score IS NOT NULL
		ORDER BY score DESC, path, seq
		LIMIT $8
	) t
),
vector_hits AS (
	SELECT v.id, row_number() OVER (ORDER BY v.distance, v.path, v.seq) AS rank
	FROM (
		SELECT id, path, seq, distance FROM pool
		WHERE distance IS NOT NULL
		ORDER BY distance, path, seq
		LIMIT $8
	) v
),
fused AS (
	SELECT coalesce(t.id, v.id) AS id,
		coalesce(t.rank, 0) AS text_rank,
		coalesce(v.rank, 0) AS vector_rank,
		coalesce(1.0::float8 / (` + strconv.Itoa(memstore.RRFK) + ` + t.rank), 0)
		+ coalesce(1.0::float8 / (` + strconv.Itoa(memstore.RRFK) + ` + v.rank), 0) AS score
	FROM text_hits t FULL OUTER JOIN vector_hits v ON v.id = t.id
)
SELECT c.path, c.seq, c.workspace, c.scope, c.type, c.heading, c.start_line, c.end_line,
	c.context, c.body, c.source, c.confidence, c.valid_from, c.invalid_at, c.expires_at, c.commit,
	f.score, f.text_rank, f.vector_rank
FROM fused f
JOIN selmem_chunks c ON c.id = f.id
ORDER BY f.score DESC, c.path, c.seq
LIMIT $9`

// anyTermSQL is the OR of the query's lexemes.
const anyTermSQL = `replace(plainto_tsquery('english', $1)::text, ' & ', ' | ')::tsquery`

// textScoreSQL is the full-text score of a chunk matching anyTermSQL. Every
// scan computes it with this one expression, so a chunk found by two scans
// has two identical rows, which the pool's UNION merges.
const textScoreSQL = `ts_rank_cd(c.tsv, ` + anyTermSQL + `, 32)
		+ CASE WHEN c.tsv @@ websearch_to_tsquery('english', $1) THEN 1 ELSE 0 END`

// searchArgs returns searchSQL's arguments for q, with defaults applied.
func (ix *Index) searchArgs(q memstore.Query) []any {
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	cand := q.Candidates
	if cand <= 0 {
		cand = max(50, 4*limit)
	}
	now := q.Now
	if now.IsZero() {
		now = time.Now()
	}
	types := q.Types
	if types == nil {
		types = []string{}
	}
	return []any{cleanText(q.Text), vectorArg(q.Vector), q.Workspace, q.Scope, types, q.IncludeInvalid, now, cand, limit,
		max(ix.opts.TextPool, cand), nearestPool(cand), ix.opts.PartialScanBelow}
}

// nearestPool is how many chunks a search with cand candidates takes from
// the HNSW index: twice cand, since they also feed the full-text ranking.
func nearestPool(cand int) int { return 2 * cand }

// cleanText makes user text safe to send: Postgres text holds neither NUL
// bytes nor invalid UTF-8. Both become spaces.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, " ")
	return strings.ReplaceAll(s, "\x00", " ")
}

// sessionSQL sets search parameters for the current transaction only:
// $1 hnsw.ef_search, $2 hnsw.iterative_scan (pgvector >= 0.8 only). Plans
// are always custom, so the planner sees which filters are empty. JIT is
// off: the statement's estimated cost often crosses jit_above_cost, and
// compiling costs tens of milliseconds, far more than the search itself.
const (
	sessionSQL = `SELECT set_config('hnsw.ef_search', $1, true),
		set_config('plan_cache_mode', 'force_custom_plan', true),
		set_config('jit', 'off', true)`
	iterativeSQL = `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
		set_config('hnsw.max_scan_tuples', $1, true)`
)

// efSearch is the hnsw.ef_search for a search with cand candidates: at
// least its nearest pool.
func (ix *Index) efSearch(cand int) int {
	return min(max(ix.opts.EfSearch, nearestPool(cand)), maxEfSearch)
}

// Search runs the full-text and vector rankings with q's filters and fuses
// them with reciprocal rank fusion, in one statement of a read-only
// transaction bounded by Options.QueryTimeout.
func (ix *Index) Search(ctx context.Context, q memstore.Query) ([]memstore.Hit, error) {
	const op = "Search"
	args := ix.searchArgs(q)
	if args[0] == "" && args[1] == nil {
		return nil, nil
	}
	cand := args[7].(int)
	ctx, cancel := context.WithTimeout(ctx, ix.opts.QueryTimeout)
	defer cancel()
	var hits []memstore.Hit
	err := ix.retryRead(ctx, func() error {
		return pgx.BeginTxFunc(ctx, ix.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
			b := &pgx.Batch{}
			b.Queue(sessionSQL, strconv.Itoa(ix.efSearch(cand)))
			if ix.iterative {
				b.Queue(iterativeSQL, strconv.Itoa(ix.opts.MaxScanTuples))
			}
			b.Queue(searchSQL, args...)
			br := tx.SendBatch(ctx, b)
			defer br.Close()
			if _, err := br.Exec(); err != nil {
				return err
			}
			if ix.iterative {
				if _, err := br.Exec(); err != nil {
					return err
				}
			}
			rows, err := br.Query()
			if err != nil {
				return err
			}
			hits, err = pgx.CollectRows(rows, scanHit)
			if err != nil {
				return err
			}
			return br.Close()
		})
	})
	if err != nil {
		return nil, ix.fail(ctx, op, err)
	}
	return hits, nil
}

// scanHit scans one row of searchSQL.
func scanHit(row pgx.CollectableRow) (memstore.Hit, error) {
	var h memstore.Hit
	var validFrom, invalidAt, expiresAt pgtype.Timestamptz
	var textRank, vectorRank int64
	err := row.Scan(&h.Path, &h.Seq, &h.Workspace, &h.Scope, &h.Type, &h.Heading, &h.StartLine, &h.EndLine,
		&h.Context, &h.Text, &h.Source, &h.Confidence, &validFrom, &invalidAt, &expiresAt, &h.Commit,
		&h.Score, &textRank, &vectorRank)
	if err != nil {
		return h, fmt.Errorf("scan hit: %w", err)
	}
	h.ValidFrom = timeOf(validFrom)
	h.InvalidAt = timeOf(invalidAt)
	h.ExpiresAt = timeOf(expiresAt)
	h.TextRank, h.VectorRank = int(textRank), int(vectorRank)
	return h, nil
}

// timeOf maps SQL NULL to the zero time.
func timeOf(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time
}

// ExplainSearch runs q's search statement under EXPLAIN (ANALYZE, BUFFERS),
// with Search's transaction settings, and returns the plan as text: which
// indexes the rankings use and where the time goes. Like Search, it only
// reads.
func (ix *Index) ExplainSearch(ctx context.Context, q memstore.Query) (string, error) {
	const op = "ExplainSearch"
	args := ix.searchArgs(q)
	if args[0] == "" && args[1] == nil {
		return "", invalid(op, "query has neither text nor vector")
	}
	ctx, cancel := context.WithTimeout(ctx, ix.opts.QueryTimeout)
	defer cancel()
	var lines []string
	err := pgx.BeginTxFunc(ctx, ix.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := ix.setSession(ctx, tx, args[7].(int)); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+searchSQL, args...)
		if err != nil {
			return err
		}
		lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return "", ix.fail(ctx, op, err)
	}
	return strings.Join(lines, "\n"), nil
}

// setSession applies Search's transaction settings for a search with cand
// candidates to tx, a statement at a time (Search sends them in its batch).
func (ix *Index) setSession(ctx context.Context, tx pgx.Tx, cand int) error {
	if _, err := tx.Exec(ctx, sessionSQL, strconv.Itoa(ix.efSearch(cand))); err != nil {
		return err
	}
	if !ix.iterative {
		return nil
	}
	_, err := tx.Exec(ctx, iterativeSQL, strconv.Itoa(ix.opts.MaxScanTuples))
	return err
}
