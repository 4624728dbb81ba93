-- 005_irregular_forms: memstore.Stem stems an irregular inflection as its
-- base form ("ran" as "run", "children" as "child"), so the terms of
-- existing chunks and words are stale. They are computed in Go, so
-- existing chunks are removed and the index state cleared: the store's
-- mirror rebuilds the index.

TRUNCATE selmem_postings, selmem_chunks, selmem_terms, selmem_words;
UPDATE selmem_lex_stats SET n = 0, sum_heading = 0, sum_path = 0, sum_text = 0;
UPDATE selmem_index_state SET commit = '';
