-- 002_bm25f: the full-text ranking of memstore.Ranking (BM25F over the
-- terms of memstore.Terms, computed by pgindex in Go) replaces ts_rank_cd
-- over the generated tsvector, so that Postgres ranks as the embedded index
-- does. Existing chunks have no postings: they are removed and the index
-- state cleared, so the store's mirror rebuilds the index.

DELETE FROM selmem_chunks;
UPDATE selmem_index_state SET commit = '';

DROP INDEX IF EXISTS selmem_chunks_tsv_idx;
ALTER TABLE selmem_chunks DROP COLUMN tsv;
ALTER TABLE selmem_chunks
	ADD COLUMN len_heading integer NOT NULL DEFAULT 0,
	ADD COLUMN len_path    integer NOT NULL DEFAULT 0,
	ADD COLUMN len_text    integer NOT NULL DEFAULT 0;

-- One row per term of a chunk: its frequency in each field, and its
-- impact (the BM25F term-frequency part at the statistics of the time it
-- was written), by which a common term's chunks are read best first.
CREATE TABLE selmem_postings (
	term       text     NOT NULL,
	chunk_id   bigint   NOT NULL REFERENCES selmem_chunks (id) ON DELETE CASCADE,
	tf_heading smallint NOT NULL,
	tf_path    smallint NOT NULL,
	tf_text    smallint NOT NULL,
	impact     real     NOT NULL,
	PRIMARY KEY (term, chunk_id)
);
CREATE INDEX selmem_postings_chunk_idx ON selmem_postings (chunk_id);
CREATE INDEX selmem_postings_impact_idx ON selmem_postings (term, impact DESC, chunk_id);

-- Document frequency of every term, over live chunks.
CREATE TABLE selmem_terms (
	term text    PRIMARY KEY,
	df   integer NOT NULL
);

-- The indexed words and their terms: the vocabulary typo tolerance
-- searches for words a query has and the index lacks.
CREATE TABLE selmem_words (
	word text PRIMARY KEY,
	term text NOT NULL
);
CREATE INDEX selmem_words_prefix_idx ON selmem_words (word text_pattern_ops);

-- Chunk count and summed field lengths, for BM25's averages.
CREATE TABLE selmem_lex_stats (
	id          integer PRIMARY KEY CHECK (id = 1),
	n           bigint           NOT NULL,
	sum_heading double precision NOT NULL,
	sum_path    double precision NOT NULL,
	sum_text    double precision NOT NULL
);
INSERT INTO selmem_lex_stats VALUES (1, 0, 0, 0, 0);
