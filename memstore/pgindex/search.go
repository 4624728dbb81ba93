package pgindex

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

// readableSQL restricts chunks c to the zones the principal may read:
// $27 true lets every chunk through, else c's zone must be one of $28
// (which always holds the empty string, the open zone).
const readableSQL = `($27::boolean OR c.zone = ANY ($28::text[]))`

// heldSQL is true when a chunk the principal may read holds the term %s,
// through the postings' zone index.
const heldSQL = `($27::boolean OR EXISTS (SELECT 1 FROM selmem_postings hp
		WHERE hp.term = %s AND hp.zone = ANY ($28::text[])))`

// filterSQL restricts a ranking to the chunks the principal may read and
// to the query's workspace, scope, types and, unless invalid chunks are
// included, to chunks valid at $10. Both rankings use it, so they see the
// same set of chunks.
const filterSQL = `
		AND ` + readableSQL + `
		AND ($6 = '' OR c.workspace = $6)
		AND ($7 = '' OR c.scope = $7)
		AND (coalesce(cardinality($8::text[]), 0) = 0 OR c.type = ANY ($8::text[]))
		AND ($9::boolean OR ((c.invalid_at IS NULL OR c.invalid_at > $10)
			AND (c.expires_at IS NULL OR c.expires_at > $10)))`

// scoreSQL scores the chunks whose ids the relation %s holds exactly:
// their BM25F over the query's terms with the current statistics, for
// those passing the query's filters that hold at least one of them. The
// terms are given as an array so that each (chunk, term) posting is looked
// up through the key rather than every posting of the chunk read.
const scoreSQL = `
	SELECT c.id, c.path, c.seq, c.type, sum(qi.idf * x.tf / ($15::float8 + x.tf)) AS score,
		bit_or(qi.words) AS words
	FROM %s s
	JOIN selmem_chunks c ON c.id = s.id
	JOIN selmem_postings p ON p.chunk_id = s.id AND p.term = ANY (ARRAY(SELECT term FROM qi))
	JOIN qi ON qi.term = p.term
	CROSS JOIN stats st
	CROSS JOIN LATERAL (SELECT
		CASE WHEN p.tf_heading > 0 THEN $17::float8 * p.tf_heading / (1 - $16::float8 + $16::float8 * c.len_heading / st.ah) ELSE 0 END
		+ CASE WHEN p.tf_path > 0 THEN $18::float8 * p.tf_path / (1 - $16::float8 + $16::float8 * c.len_path / st.ap) ELSE 0 END
		+ CASE WHEN p.tf_text > 0 THEN p.tf_text / (1 - $16::float8 + $16::float8 * c.len_text / st.at) ELSE 0 END AS tf) x
	WHERE x.tf > 0` + filterSQL + `
	GROUP BY c.id, c.path, c.seq, c.type
`

// windowSQL returns the rows (term, src, depth, chunk_id, impact) of a
// window of candidates: for every query term, its postings in from
// (selmem_postings p, perhaps joined) that the principal may read and that
// pass where, highest impact first, the first limit of them.
//
// A principal who may read everything ($27) and one who may not read
// through separate branches, of which only one runs: the first needs no
// zone and so reads the impact index alone, even in a generic plan.
func windowSQL(src int, from, where, limit string) string {
	return fmt.Sprintf(`
	SELECT qi.term, %[1]d AS src, qi.depth, p.chunk_id, p.impact FROM qi
	CROSS JOIN LATERAL (
		(SELECT p.chunk_id, p.impact FROM %[2]s
		WHERE $27::boolean AND p.term = qi.term AND %[3]s
		ORDER BY p.impact DESC, p.chunk_id
		LIMIT %[4]s)
		UNION ALL
		(SELECT p.chunk_id, p.impact FROM %[2]s
		WHERE NOT $27::boolean AND p.term = qi.term AND p.zone = ANY ($28::text[]) AND %[3]s
		ORDER BY p.impact DESC, p.chunk_id
		LIMIT %[4]s)
	) p`, src, from, where, limit)
}

// withNeighbourSQL returns the rows (with the scores prev and next of
// their neighbours) of the %[3]s best chunks of relation %[1]s, keyed by
// id, by their score %[2]s plus the neighbour share ($19) of the better
// of the chunks whose ids are just before and after theirs, when the
// relation holds them. A file's chunks are written in order, so ids next
// to each other are mostly adjacent chunks of one file: a guess that
// only picks candidates, which are then scored by path and seq.
const withNeighbourSQL = `
	SELECT b.* FROM (
		SELECT r.*,
			CASE WHEN lag(r.id) OVER w = r.id - 1 THEN lag(r.%[2]s) OVER w END AS prev,
			CASE WHEN lead(r.id) OVER w = r.id + 1 THEN lead(r.%[2]s) OVER w END AS next
		FROM %[1]s r WINDOW w AS (ORDER BY r.id)
	) b
	ORDER BY b.%[2]s + $19::float8 * greatest(b.prev, b.next, 0) DESC, b.id
	LIMIT %[3]s
`

// searchSQL is the hybrid search of memstore.Ranking in one statement, the
// embedded index's ranking computed from the same terms (memstore.Terms,
// computed in Go on both sides) and the same statistics:
//
//   - the query's terms: the terms of its words that some chunk holds, and
//     for each word no chunk holds (of at least $25 bytes) the $24 most
//     frequent terms of the indexed words it or its stem begins ($31, $32:
//     memstore.TypoPrefixes beyond the word itself), of the indexed words
//     that are one of its edit variants ($3, $4: memstore.EditVariants) and
//     of the indexed terms one edit from its stem ($33, $34:
//     memstore.TypoStemVariants), at weight $23; for a word spelled right
//     (memstore.Query.Spelled), only the edit variants that are its other
//     spellings, and no stem variants; and, whatever its length, the terms
//     of its words of like meaning ($37, $38: memstore.Query.Related) that
//     a chunk the principal may read holds, at weight $39; and likewise
//     the terms of its associated words ($40, $41:
//     memstore.Query.Associated), at weight $42, kept only when the query
//     has a term that is not related. A term standing in for several
//     words has the highest of their weights, and is related (or
//     associated) only when it stands in through related or associated
//     words (associated words) alone. When the index holds none of the
//     query's words and $45 (memstore.Ranking.StandInMajority), the
//     stand-ins count only when more than half the words keep one;
//   - candidates: for every term, its postings, highest impact first (its
//     BM25F part at the statistics of their writing): $30 for the rarest
//     term, whose chunks are the likeliest to rank first, $13 for the
//     others. Without a workspace, scope or type filter they come from the
//     impact index alone (only the principal's zones restrict them, the
//     validity filter applies when scoring). With a workspace, from the
//     zone index alone, in the zone of the workspace's directory ($36),
//     where the store writes its chunks (the other filters apply when
//     scoring), plus the workspace's chunks among the best eighth of the
//     window in the other zones, through the chunks: a safety net that
//     does not count in the bounds. With only a scope or type filter,
//     through the chunks, so that the filter does not empty the window.
//     A term with fewer postings than its window contributes all of
//     them. Each chunk read
//     gets an upper bound of its score: its impacts times the terms' IDF
//     where it was read, and for a term whose window was full but did not
//     reach it, the lowest impact read. The $35 best by that bound plus
//     Neighbour times the bound of their best adjacent chunk (by id: a
//     file's chunks are written in order) get their BM25F at the impacts'
//     statistics: the impacts read, plus those of the terms whose window
//     was full and did not reach them, looked up through the postings'
//     key (all the query's terms for a chunk read in the safety net,
//     whose windows do not count in the bounds). A chunk every full
//     window reached, as every chunk when every window held all its
//     term's postings, needs no lookup. The $26 best by that, with the
//     neighbour share likewise, are scored exactly;
//   - full-text score: BM25F of every candidate over all the query's
//     terms with the current statistics, and of the chunks just before and
//     after the $29 best (the chunks the neighbour share lifts most),
//     plus, for a chunk of one of the types $44 (or of any type when $44
//     is empty: memstore.Ranking.NeighbourTypes), Neighbour ($19) times
//     the best score of its scored neighbours; the best $11 form the
//     full-text ranking (candidates are picked as if every chunk took
//     the share: a chunk's type is known only once it is read);
//   - vector ranking: the $14 nearest chunks, found exactly among at
//     most exactNearest chunks (the workspace's, or the index's when the
//     search has none) and through the HNSW index among more, and
//     every chunk the full-text ranking scored, their distances computed
//     exactly (HNSW is approximate and misses some; with a lexical
//     embedder the chunks sharing the query's words are the likeliest to
//     be near), the best $11 by cosine distance; run only when the
//     vector's weight is not 0. With $43, a query the index holds every
//     word's term of ranks only the full-text ranking's chunks by
//     distance;
//   - fusion: 1/(RRFK + text rank) + w/(RRFK + vector rank), w = $20 when
//     the index holds every word's term, $21 otherwise;
//   - relevance floor: of the hits the full-text ranking does not hold,
//     only those with a vector similarity of at least $22; with $46
//     (memstore.Ranking.GuessShare), of the full-text hits of a query the
//     index holds none of the words of that hold the terms standing in
//     for no more than half its words (words: a bit per word, the
//     first memstore.MaxGuessWords), only those with a vector similarity
//     of at least $47.
//
// Parameters: $1 the query's words, $2 their terms, $3 and $4 edit
// variants (the 1-based index of their word, the variant), $5 vector (NULL:
// none), $6 workspace, $7 scope, $8 types, $9 include invalid, $10 now, $11
// candidates, $12 limit, $13 postings per term, $14 nearest pool, $15 K1,
// $16 B, $17 heading weight, $18 path weight, $19 neighbour share, $20
// vector weight, $21 unknown vector weight, $22 minimum similarity, $23
// fuzzy weight, $24 fuzzy terms per word, $25 fuzzy minimum word length,
// $26 candidates scored exactly, $27 whether the principal may read
// everything, $28 the zones it may read (the open zone, empty, first), $29
// chunks whose neighbours are scored, $30 postings of the rarest term, $31
// and $32 stem prefixes, $33 and $34 stem edit variants (each with the
// 1-based index of its word), $35 candidates whose terms are looked up,
// $36 the zone of $6's directory, $37 and $38 related terms (each with the
// 1-based index of its word), $39 their weight, $40 and $41 associated
// terms (likewise), $42 their weight, $43 whether the vector ranking of a
// query the index knows reorders the full-text ranking alone, $44 the
// types whose chunks take the neighbour share (empty: every type), $45
// whether stand-ins need a majority of a query whose words the index lacks,
// $46 whether full-text hits can be guesses, $47 the vector similarity a
// guess needs.
//
// The principal's filter applies wherever chunks or terms are picked: a
// word counts as known, and a typo variant as a stand-in, only when a
// chunk the principal may read holds its term, and both rankings' candidates
// pass readableSQL; a neighbour shares its chunk's file, hence its zone.
// The statistics (document frequencies, averages) stay global.
var searchSQL = `
WITH stats AS (
	SELECT n,
		CASE WHEN sum_heading = 0 THEN 1 ELSE sum_heading / greatest(n, 1) END AS ah,
		CASE WHEN sum_path = 0 THEN 1 ELSE sum_path / greatest(n, 1) END AS ap,
		CASE WHEN sum_text = 0 THEN 1 ELSE sum_text / greatest(n, 1) END AS at
	FROM selmem_lex_stats WHERE id = 1
),
qw AS (
	SELECT w.word, w.term, w.i FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS w (word, term, i)
),
known AS MATERIALIZED (
	SELECT DISTINCT qw.term, t.df FROM qw JOIN selmem_terms t ON t.term = qw.term AND t.df > 0
	WHERE ` + fmt.Sprintf(heldSQL, "qw.term") + `
),
missing AS MATERIALIZED (
	SELECT DISTINCT ON (qw.word) qw.word, qw.i FROM qw
	WHERE NOT EXISTS (SELECT 1 FROM known k WHERE k.term = qw.term)
	ORDER BY qw.word, qw.i
),
fuzzy_words AS (
	SELECT m.i, w.term FROM missing m
	JOIN selmem_words w ON w.word ~>=~ m.word AND w.word ~<~ (m.word || chr(1114111)) AND w.word <> m.word
	WHERE octet_length(m.word) >= $25
	UNION
	SELECT m.i, w.term FROM missing m
	JOIN unnest($3::int[], $4::text[]) AS v (i, word) ON v.i = m.i
	JOIN selmem_words w ON w.word = v.word
	WHERE octet_length(m.word) >= $25
	UNION
	SELECT m.i, w.term FROM missing m
	JOIN unnest($31::int[], $32::text[]) AS sp (i, prefix) ON sp.i = m.i
	JOIN selmem_words w ON w.word ~>=~ sp.prefix AND w.word ~<~ (sp.prefix || chr(1114111)) AND w.word <> m.word
	WHERE octet_length(m.word) >= $25
	UNION
	SELECT m.i, sv.term FROM missing m
	JOIN unnest($33::int[], $34::text[]) AS sv (i, term) ON sv.i = m.i
	WHERE octet_length(m.word) >= $25
),
fuzzy AS (
	SELECT f.i, f.term, t.df, row_number() OVER (PARTITION BY f.i ORDER BY t.df DESC, f.term) AS rn
	FROM fuzzy_words f
	-- LIMIT keeps the lookup per stand-in, through the key: as a join the
	-- planner hashes every term, tens of milliseconds at a million chunks
	-- even for queries without a typo.
	CROSS JOIN LATERAL (SELECT t.df FROM selmem_terms t WHERE t.term = f.term AND t.df > 0 LIMIT 1) t
	WHERE ` + fmt.Sprintf(heldSQL, "f.term") + `
),
related AS (
	SELECT DISTINCT m.i, r.term, t.df, r.associated FROM missing m
	JOIN (
		SELECT i, term, false AS associated FROM unnest($37::int[], $38::text[]) AS x (i, term) WHERE $39::float8 > 0
		UNION ALL
		SELECT i, term, true FROM unnest($40::int[], $41::text[]) AS x (i, term) WHERE $42::float8 > 0
	) r ON r.i = m.i
	CROSS JOIN LATERAL (SELECT t.df FROM selmem_terms t WHERE t.term = r.term AND t.df > 0 LIMIT 1) t
	WHERE ` + fmt.Sprintf(heldSQL, "r.term") + `
),
standins AS MATERIALIZED (
	SELECT term, max(df) AS df, max(weight) AS weight, bool_and(related) AS related,
		bool_and(associated) AS associated, bit_or(words) AS words FROM (
		SELECT term, df, 1.0::float8 AS weight, false AS related, false AS associated, 0::int8 AS words FROM known
		UNION ALL
		SELECT term, df, $23::float8, false, false, ` + fmt.Sprintf(wordBitSQL, "i") + ` FROM fuzzy WHERE rn <= $24 AND $23::float8 > 0
		UNION ALL
		SELECT term, df, CASE WHEN associated THEN $42::float8 ELSE $39::float8 END, true, associated,
			` + fmt.Sprintf(wordBitSQL, "i") + ` FROM related
	) x GROUP BY term
),
-- The missing words that keep a stand-in.
covered AS (
	SELECT count(DISTINCT i) AS n FROM (
		SELECT i FROM fuzzy WHERE rn <= $24 AND $23::float8 > 0
		UNION ALL
		SELECT i FROM related WHERE NOT associated OR EXISTS (SELECT 1 FROM standins WHERE NOT related)
	) x
),
qt AS MATERIALIZED (
	SELECT term, df, weight, related, words FROM standins
	WHERE (NOT associated OR EXISTS (SELECT 1 FROM standins WHERE NOT related))
	AND (NOT $45::boolean OR EXISTS (SELECT 1 FROM known)
		OR 2 * (SELECT n FROM covered) > (SELECT count(*) FROM missing))
),
qi AS MATERIALIZED (
	SELECT qt.term, qt.words, qt.weight * ln(1 + (s.n - qt.df + 0.5) / (qt.df + 0.5)) AS idf,
		CASE WHEN row_number() OVER (ORDER BY qt.df, qt.term) = 1 THEN $30::int ELSE $13::int END AS depth
	FROM qt, stats s
),
-- How many words a full-text hit must hold stand-ins for not to be a
-- guess: more than half, when the index holds none of the query's words.
guess AS (
	SELECT CASE WHEN $46::boolean AND NOT EXISTS (SELECT 1 FROM known) AND count(*) <= ` + strconv.Itoa(memstore.MaxGuessWords) + `
		THEN count(*) / 2 + 1 ELSE 0 END AS cover
	FROM missing
),
vw AS (
	SELECT CASE WHEN k.known THEN $20::float8 ELSE $21::float8 END AS w, $43::boolean AND k.known AS rerank
	FROM (SELECT NOT EXISTS (SELECT 1 FROM missing) AND EXISTS (SELECT 1 FROM qt) AS known) k
),
lists AS MATERIALIZED (` +
	windowSQL(0, "selmem_postings p", `$6 = '' AND $7 = '' AND coalesce(cardinality($8::text[]), 0) = 0`, "qi.depth") + `
	UNION ALL` +
	windowSQL(1, "selmem_postings p", `$6 <> '' AND p.zone = $36`, "qi.depth") + `
	UNION ALL
	SELECT l.* FROM (` + windowSQL(2, "selmem_postings p", `$6 <> '' AND p.zone <> $36`, "qi.depth / 8") + `
	) l
	-- LIMIT keeps the lookup per posting, through the key, in a generic
	-- plan too: as a join the planner may hash every chunk.
	CROSS JOIN LATERAL (SELECT 1 FROM selmem_chunks c WHERE c.id = l.chunk_id` + filterSQL + `
		LIMIT 1) c
	UNION ALL` +
	windowSQL(3, "selmem_postings p JOIN selmem_chunks c ON c.id = p.chunk_id",
		`$6 = '' AND NOT ($7 = '' AND coalesce(cardinality($8::text[]), 0) = 0)`+filterSQL, "qi.depth") + `
),
cuts AS MATERIALIZED (
	SELECT qi.term, qi.idf, coalesce(max(x.cut), 0) AS cut
	FROM qi LEFT JOIN (
		SELECT l.term, CASE WHEN count(*) < min(l.depth) THEN 0 ELSE min(l.impact) END AS cut
		FROM lists l WHERE l.src <> 2
		GROUP BY l.term, l.src
	) x ON x.term = qi.term
	GROUP BY qi.term, qi.idf
),
bounds AS MATERIALIZED (
	SELECT l.chunk_id AS id, sum(k.idf * greatest(l.impact - k.cut, 0)) AS bound,
		sum(k.idf * l.impact) AS seen,
		coalesce(sum(k.idf * l.impact) FILTER (WHERE k.cut = 0), 0) AS seen_whole,
		count(*) FILTER (WHERE k.cut > 0) AS seen_cut,
		bool_or(l.src = 2) AS aside
	FROM lists l JOIN cuts k ON k.term = l.term
	GROUP BY l.chunk_id
),
cut AS MATERIALIZED (
	SELECT count(*) AS n, coalesce(array_agg(term), '{}') AS terms FROM cuts WHERE cut > 0
),
coarse AS MATERIALIZED (` + fmt.Sprintf(withNeighbourSQL, "bounds", "bound", "$35") + `),
probed AS MATERIALIZED (
	SELECT b.id, CASE
		WHEN NOT b.aside AND b.seen_cut = ct.n THEN b.seen
		WHEN b.aside THEN (SELECT coalesce(sum(qi.idf * p.impact), 0)
			FROM selmem_postings p JOIN qi ON qi.term = p.term
			WHERE p.chunk_id = b.id AND p.term = ANY (ARRAY(SELECT term FROM qi)))
		ELSE b.seen_whole + (SELECT coalesce(sum(qi.idf * p.impact), 0)
			FROM selmem_postings p JOIN qi ON qi.term = p.term
			WHERE p.chunk_id = b.id AND p.term = ANY (ct.terms))
		END AS approx
	FROM coarse b CROSS JOIN cut ct
),
cand AS MATERIALIZED (` + fmt.Sprintf(withNeighbourSQL, "probed", "approx", "$26") + `),
own AS MATERIALIZED (` + fmt.Sprintf(scoreSQL, "cand") + `),
seeds AS (
	SELECT o.path, o.seq FROM own o ORDER BY o.score DESC, o.path, o.seq LIMIT $29
),
adjacent AS MATERIALIZED (
	SELECT DISTINCT c.id FROM seeds s
	JOIN selmem_chunks c ON c.path = s.path AND (c.seq = s.seq - 1 OR c.seq = s.seq + 1)
	WHERE NOT EXISTS (SELECT 1 FROM cand WHERE cand.id = c.id)
),
scored AS MATERIALIZED (
	SELECT * FROM own
	UNION ALL
	` + fmt.Sprintf(scoreSQL, "adjacent") + `
),
text_hits AS MATERIALIZED (
	SELECT t.id, t.path, t.seq, row_number() OVER (ORDER BY t.score DESC, t.path, t.seq) AS rank,
		bit_count(t.words::bit(64)) < (SELECT cover FROM guess) AS guess
	FROM (
		SELECT o.id, o.path, o.seq, o.words, o.score + CASE WHEN cardinality($44::text[]) = 0 OR o.type = ANY ($44::text[])
			THEN $19::float8 * coalesce(max(nb.score), 0) ELSE 0 END AS score
		FROM scored o LEFT JOIN scored nb ON nb.path = o.path AND (nb.seq = o.seq - 1 OR nb.seq = o.seq + 1)
		GROUP BY o.id, o.path, o.seq, o.type, o.score, o.words
		ORDER BY score DESC, o.path, o.seq
		LIMIT $11
	) t
),
exact AS MATERIALIZED (
	SELECT CASE WHEN $6 = '' THEN (SELECT n FROM stats)
		ELSE (SELECT count(*) FROM (SELECT 1 FROM selmem_chunks c WHERE c.workspace = $6
			LIMIT ` + strconv.Itoa(exactNearest+1) + `) x) END <= ` + strconv.Itoa(exactNearest) + ` AS exact
),
-- Two exact branches, so that a search in a workspace reads its chunks
-- through the workspace index, which an OR of parameters would not.
nearest AS MATERIALIZED (` +
	nearestSQL(`(SELECT exact FROM exact) AND $6 <> '' AND c.workspace = $6`, exactOrderSQL) + `
	UNION ALL` +
	nearestSQL(`(SELECT exact FROM exact) AND $6 = ''`, exactOrderSQL) + `
	UNION ALL` +
	nearestSQL(`NOT (SELECT exact FROM exact)`, `c.embedding <=> $5::halfvec`) + `
),
vector_hits AS (
	SELECT v.id, row_number() OVER (ORDER BY v.distance, v.path, v.seq) AS rank, 1 - v.distance AS sim
	FROM (
		SELECT id, path, seq, distance FROM (
			SELECT id, path, seq, distance FROM nearest
			UNION
			SELECT c.id, c.path, c.seq, c.embedding <=> $5::halfvec
			FROM scored t JOIN selmem_chunks c ON c.id = t.id
			WHERE $5::halfvec IS NOT NULL AND (SELECT w FROM vw) > 0 AND c.embedding IS NOT NULL
			AND (NOT (SELECT rerank FROM vw) OR EXISTS (SELECT 1 FROM text_hits th WHERE th.id = t.id))
		) u
		ORDER BY distance, path, seq
		LIMIT $11
	) v
),
fused AS (
	SELECT coalesce(t.id, v.id) AS id,
		coalesce(t.rank, 0) AS text_rank,
		coalesce(v.rank, 0) AS vector_rank,
		t.guess,
		coalesce(1.0::float8 / (` + strconv.Itoa(memstore.RRFK) + ` + t.rank), 0)
		+ coalesce((SELECT w FROM vw) / (` + strconv.Itoa(memstore.RRFK) + ` + v.rank), 0) AS score,
		v.sim
	FROM text_hits t FULL OUTER JOIN vector_hits v ON v.id = t.id
)
SELECT c.path, c.seq, c.workspace, c.scope, c.type, c.heading, c.start_line, c.end_line,
	c.context, c.body, c.source, c.confidence, c.valid_from, c.invalid_at, c.expires_at, c.commit,
	f.score, f.text_rank, f.vector_rank
FROM fused f
JOIN selmem_chunks c ON c.id = f.id
WHERE CASE WHEN f.text_rank > 0 THEN NOT f.guess OR f.sim >= $47::float8 ELSE f.sim >= $22::float8 END
ORDER BY f.score DESC, c.path, c.seq
LIMIT $12`

// wordBitSQL is the bit of the query's word whose 1-based index is %s,
// among the first memstore.MaxGuessWords, for the words a term stands in
// for (memstore.Ranking.GuessShare).
var wordBitSQL = `CASE WHEN %[1]s <= ` + strconv.Itoa(memstore.MaxGuessWords) + ` THEN 1::int8 << (%[1]s - 1)::int ELSE 0 END`

// exactNearest is how many chunks a search compares its vector with one
// by one, as the embedded index does, rather than through the HNSW index,
// which is approximate and, under a filter, may miss most of them.
const exactNearest = 5000

// nearestSQL returns a branch of the vector ranking: the $14 chunks that
// pass the query's filters and where, nearest first as order sorts them.
func nearestSQL(where, order string) string {
	return `
	(SELECT c.id, c.path, c.seq, c.embedding <=> $5::halfvec AS distance
	FROM selmem_chunks c
	WHERE $5::halfvec IS NOT NULL AND (SELECT w FROM vw) > 0 AND NOT (SELECT rerank FROM vw) AND ` + where + `
	AND c.embedding IS NOT NULL` + filterSQL + `
	ORDER BY ` + order + `
	LIMIT $14)`
}

// exactOrderSQL orders chunks by distance without the HNSW index, which
// orders only by the bare distance: every chunk is compared.
const exactOrderSQL = `(c.embedding <=> $5::halfvec) + 0`

// Typo tolerance, as the embedded index's (sqliteindex).
const (
	fuzzyMinLen = 4
	fuzzyMax    = 3
)

// searchArgs returns searchSQL's arguments for q, with defaults applied,
// and whether the query can match anything at all.
func (ix *Index) searchArgs(q memstore.Query) ([]any, bool) {
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
	words, terms := []string{}, []string{}
	vidx, variants := []int32{}, []string{}
	pidx, prefixes := []int32{}, []string{}
	sidx, stemVariants := []int32{}, []string{}
	ridx, related := []int32{}, []string{}
	aidx, associated := []int32{}, []string{}
	memstore.TermWords(cleanText(q.Text), func(word, term string) {
		if slices.Contains(words, word) {
			return
		}
		words = append(words, word)
		terms = append(terms, term)
		i := int32(len(words))
		for _, t := range q.Related[word] {
			ridx, related = append(ridx, i), append(related, t)
		}
		for _, t := range q.Associated[word] {
			aidx, associated = append(aidx, i), append(associated, t)
		}
		if len(word) < fuzzyMinLen {
			return
		}
		// The word's own prefix is searched as $1; its stem's beside it.
		for _, p := range memstore.TypoPrefixes(word, fuzzyMinLen)[1:] {
			pidx, prefixes = append(pidx, i), append(prefixes, p)
		}
		others, spelled := q.Spelled[word]
		for _, v := range memstore.EditVariants(word) {
			// A word in its own right is a typo only of its other
			// spellings.
			if !spelled || slices.Contains(others, memstore.Stem(v)) {
				vidx, variants = append(vidx, i), append(variants, v)
			}
		}
		if spelled {
			return
		}
		for _, v := range memstore.TypoStemVariants(word) {
			sidx, stemVariants = append(sidx, i), append(stemVariants, v)
		}
	})
	vec := vectorArg(q.Vector)
	zones, all := q.Filter.Zones()
	zones = append([]string{access.ZoneOpen}, zones...)
	r := &ix.rank
	neighbourTypes := r.NeighbourTypes
	if neighbourTypes == nil {
		neighbourTypes = []string{}
	}
	return []any{words, terms, vidx, variants, vec, q.Workspace, q.Scope, types, q.IncludeInvalid, now,
		cand, limit, ix.opts.TextPool, nearestPool(cand), r.K1, r.B, r.HeadingWeight, r.PathWeight, r.Neighbour,
		r.VectorWeight, r.UnknownVectorWeight, q.MinSimilarity, r.TypoWeight, fuzzyMax, fuzzyMinLen, ix.rescorePool(cand),
		all, zones, seedPool(cand), ix.rarestPool(), pidx, prefixes, sidx, stemVariants, ix.probePool(cand), workspaceZone(q.Workspace), ridx, related, r.RelatedWeight,
		aidx, associated, r.AssociatedWeight, r.Rerank, neighbourTypes, r.StandInMajority,
		r.GuessShare > 0, r.GuessShare * q.MinSimilarity}, len(words) > 0 || vec != nil
}

// rescorePool is how many full-text candidates, best by the BM25F their
// postings' impacts give, a search with cand candidates scores exactly:
// eight times cand. The impacts were computed with the statistics of their
// writing, so they rank nearly as the exact score does; the exact score
// corrects the drift since. The vectors reorder the whole full-text
// ranking (memstore.Ranking.Rerank), so its deeper ranks count too: at
// 1,000,000 chunks and TextPool 6000, twice cand returned 0.791 of the
// embedded index's hybrid top 10, eight times 0.806.
func (ix *Index) rescorePool(cand int) int { return 8 * cand }

// probePool is how many full-text candidates, best by their upper bound
// and their neighbours', a search with cand candidates looks up all the
// query's terms of: thirty-two times cand. The bound credits a chunk with
// every term whose postings were not read down to it, so most chunks
// read in one term's postings have the same bound; looking up which
// terms they hold tells them apart.
func (ix *Index) probePool(cand int) int { return 32 * cand }

// workspaceZone returns the access zone of workspace ws's directory, where
// the store writes its chunks; "" for no workspace.
func workspaceZone(ws string) string {
	if ws == "" {
		return ""
	}
	zones, _ := access.Filter{Workspaces: []string{ws}}.Zones()
	return zones[0]
}

// rarestPool is how many postings of the query's rarest term the full-text
// ranking reads: four times Options.TextPool. Chunks holding the rarest
// term are the likeliest to rank first, and its postings are the fewest.
func (ix *Index) rarestPool() int { return 4 * ix.opts.TextPool }

// nearestPool is how many chunks a search with cand candidates takes from
// the HNSW index: twice cand, since they also feed the full-text ranking.
func nearestPool(cand int) int { return 2 * cand }

// seedPool is how many of the best full-text candidates a search with cand
// candidates has its adjacent chunks scored for the neighbour share.
func seedPool(cand int) int { return 2 * cand }

// cleanText makes user text safe to send: Postgres text holds neither NUL
// bytes nor invalid UTF-8. Both become spaces.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, " ")
	return strings.ReplaceAll(s, "\x00", " ")
}

// sessionSQL sets search parameters for the current transaction only:
// $1 hnsw.ef_search, $2 hnsw.iterative_scan (pgvector >= 0.8 only). Plans
// are generic, made once per connection: planning searchSQL costs 6-8 ms,
// half a search at 10,000 chunks. Its filters' branches run or not by
// one-time tests of the parameters, each branch reading what a custom
// plan would, and its lookups by key are LATERAL with a LIMIT, which no
// estimate turns into a hash of a table. JIT is off: the statement's
// estimated cost often crosses jit_above_cost, and compiling costs tens of
// milliseconds, far more than the search itself. No parallel workers
// either: a plan's Gather starts them, about 15 ms, even for a branch its
// one-time filter then skips.
const (
	sessionSQL = `SELECT set_config('hnsw.ef_search', $1, true),
		set_config('plan_cache_mode', 'force_generic_plan', true),
		set_config('max_parallel_workers_per_gather', '0', true),
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
	args, ok := ix.searchArgs(q)
	if !ok {
		return nil, nil
	}
	cand := args[10].(int)
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
	args, ok := ix.searchArgs(q)
	if !ok {
		return "", invalid(op, "query has neither text nor vector")
	}
	ctx, cancel := context.WithTimeout(ctx, ix.opts.QueryTimeout)
	defer cancel()
	var lines []string
	err := pgx.BeginTxFunc(ctx, ix.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := ix.setSession(ctx, tx, args[10].(int)); err != nil {
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
