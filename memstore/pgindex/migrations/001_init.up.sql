-- 001_init: the chunks table with its full-text column and indexes, and
-- the index state.
-- The embedding column and its HNSW index are created by pgindex itself,
-- because their dimension comes from the configured embedder.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE selmem_chunks (
	id          bigserial PRIMARY KEY,
	path        text NOT NULL,
	seq         integer NOT NULL,
	workspace   text NOT NULL DEFAULT '',
	scope       text NOT NULL DEFAULT '',
	type        text NOT NULL DEFAULT '',
	heading     text NOT NULL DEFAULT '',
	start_line  integer NOT NULL DEFAULT 0,
	end_line    integer NOT NULL DEFAULT 0,
	context     text NOT NULL DEFAULT '',
	body        text NOT NULL DEFAULT '',
	tsv         tsvector GENERATED ALWAYS AS (
		setweight(to_tsvector('english', heading), 'A') ||
		setweight(to_tsvector('english', context), 'B') ||
		setweight(to_tsvector('english', body), 'C')
	) STORED,
	valid_from  timestamptz,
	invalid_at  timestamptz,
	expires_at  timestamptz,
	source      text NOT NULL DEFAULT '',
	confidence  double precision NOT NULL DEFAULT 0,
	commit      text NOT NULL DEFAULT '',
	CONSTRAINT selmem_chunks_path_seq_key UNIQUE (path, seq)
);

CREATE INDEX selmem_chunks_tsv_idx ON selmem_chunks USING gin (tsv);
CREATE INDEX selmem_chunks_workspace_idx ON selmem_chunks (workspace);
CREATE INDEX selmem_chunks_scope_idx ON selmem_chunks (scope);
CREATE INDEX selmem_chunks_type_idx ON selmem_chunks (type);
CREATE INDEX selmem_chunks_path_prefix_idx ON selmem_chunks (path text_pattern_ops);

-- One row (id = 1) recording what the index mirrors.
CREATE TABLE selmem_index_state (
	id        integer PRIMARY KEY CHECK (id = 1),
	commit    text NOT NULL DEFAULT '',
	embedder  text NOT NULL DEFAULT '',
	dim       integer NOT NULL DEFAULT 0,
	updated_at timestamptz NOT NULL DEFAULT now()
);

