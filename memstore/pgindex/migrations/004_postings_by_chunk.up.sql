-- 004_postings_by_chunk: a posting's primary key leads with its chunk.
-- Postings were keyed (term, chunk_id) with a second index on chunk_id;
-- one key (chunk_id, term) serves both uses: the exact scoring of a
-- candidate looks up (chunk, term) pairs, and deleting a chunk (the
-- cascade, the statistics update) reads its postings by chunk. A write
-- maintains one index fewer, and since chunk ids only grow, the key's
-- inserts append to its last page instead of landing all over the index.

ALTER TABLE selmem_postings DROP CONSTRAINT selmem_postings_pkey;
DROP INDEX IF EXISTS selmem_postings_chunk_idx;
ALTER TABLE selmem_postings ADD CONSTRAINT selmem_postings_pkey PRIMARY KEY (chunk_id, term);
