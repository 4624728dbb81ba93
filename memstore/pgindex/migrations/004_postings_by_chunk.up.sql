-- 004_postings_by_chunk: a posting's primary key leads with its chunk, and
-- postings no longer reference their chunk by a foreign key.
--
-- Postings were keyed (term, chunk_id) with a second index on chunk_id;
-- one key (chunk_id, term) serves both uses: the exact scoring of a
-- candidate looks up (chunk, term) pairs, and deleting a chunk (the
-- statistics update, the deletion of its postings) reads its postings by
-- chunk. A write maintains one index fewer, and since chunk ids only grow,
-- the key's inserts append to its last page instead of landing all over
-- the index.
--
-- The foreign key checked every posting written against its chunk, one
-- lookup per row: most of the time of writing a file's postings. pgindex
-- writes a chunk and its postings in one transaction and deletes them
-- together (or truncates both), so it keeps them consistent itself.

ALTER TABLE selmem_postings DROP CONSTRAINT IF EXISTS selmem_postings_chunk_id_fkey;
ALTER TABLE selmem_postings DROP CONSTRAINT selmem_postings_pkey;
DROP INDEX IF EXISTS selmem_postings_chunk_idx;
ALTER TABLE selmem_postings ADD CONSTRAINT selmem_postings_pkey PRIMARY KEY (chunk_id, term);
