-- 003_zones: every chunk and posting records its access zone
-- (access.ZoneOf of its path: "w:<workspace>", "u:<user>", or '' for org
-- and other paths), so that a search filters by what the principal may
-- read inside its query, before ranking and limit. The zone is computed in
-- Go, as the embedded index computes it, so existing chunks are removed
-- and the index state cleared: the store's mirror rebuilds the index.

TRUNCATE selmem_postings, selmem_chunks, selmem_terms, selmem_words;
UPDATE selmem_lex_stats SET n = 0, sum_heading = 0, sum_path = 0, sum_text = 0;
UPDATE selmem_index_state SET commit = '';

ALTER TABLE selmem_chunks ADD COLUMN zone text NOT NULL DEFAULT '';
CREATE INDEX selmem_chunks_zone_idx ON selmem_chunks (zone);

ALTER TABLE selmem_postings ADD COLUMN zone text NOT NULL DEFAULT '';
-- A filtered search reads a term's postings zone by zone: whether a
-- readable chunk holds the term, and the readable candidates. The zone
-- leads, so that unfiltered searches keep to the impact index, whose
-- order lets them stop early.
CREATE INDEX selmem_postings_zone_idx ON selmem_postings (zone, term, impact DESC, chunk_id);
