package memstore

import (
	"context"
	"time"

	"github.com/selmem/selmem/memstore/access"
)

// Scopes of a memory path, derived from its first path element.
const (
	ScopeOrg       = "org"       // org/...
	ScopeUser      = "user"      // users/<user>/...
	ScopeWorkspace = "workspace" // workspaces/<ws>/...
	ScopeOther     = "other"     // anything else under /memories
)

// RRFK is the reciprocal rank fusion constant every backend uses:
// score = sum over rankings of 1/(RRFK + rank), rank starting at 1.
const RRFK = 60

// Chunk is one indexed piece of a memory file: a markdown section, or a whole
// YAML/JSON file. Path and Seq identify it; upserts are keyed by them.
type Chunk struct {
	Path       string    // virtual path, e.g. /memories/workspaces/sales/task.md
	Seq        int       // chunk number within the file, from 0
	Workspace  string    // workspace name, or "" outside workspaces/
	Scope      string    // one of the Scope constants
	Type       string    // front-matter type, or derived from the path (task, output, tool, schema, note, ...)
	Heading    string    // heading path joined with " › ", "" before the first heading
	StartLine  int       // 1-indexed first line of the chunk in the file
	EndLine    int       // 1-indexed last line, inclusive
	Context    string    // "workspace › file › heading" prefix, indexed with Text
	Text       string    // the chunk's text
	Source     string    // provenance from front matter (user_confirmed, inferred, ...)
	Confidence float64   // front-matter confidence, 0 when absent
	ValidFrom  time.Time // zero when absent
	InvalidAt  time.Time // zero when absent
	ExpiresAt  time.Time // zero when absent
	Commit     string    // commit the chunk was indexed from
	Embedding  []float32 // embedding of Context + "\n" + Text; len == the index's dimension
}

// Valid reports whether the chunk is in force at now: not invalidated and not
// expired at or before now.
func (c *Chunk) Valid(now time.Time) bool {
	if !c.InvalidAt.IsZero() && !c.InvalidAt.After(now) {
		return false
	}
	if !c.ExpiresAt.IsZero() && !c.ExpiresAt.After(now) {
		return false
	}
	return true
}

// Query is a hybrid search request. Text drives full-text ranking, Vector the
// semantic ranking; either may be empty. Filters apply to both rankings.
//
// Filter is what the searching principal may read. Backends apply it
// inside their queries, to every step that picks chunks or terms (the
// candidates of both rankings, neighbours, which query words count as
// known, typo expansion), before ranking and limit, so that nothing a
// principal cannot read shows in the hits, their number or their order
// beyond what global term statistics imply. The zero Filter is the safe
// one: it lets through only chunks outside workspaces/ and users/ (org
// and other paths). Set Filter.All for an unrestricted search; the store
// always sets the filter from the context's principal.
type Query struct {
	Text           string
	Vector         []float32
	Workspace      string   // "" for all
	Scope          string   // "" for all
	Types          []string // empty for all
	IncludeInvalid bool     // include invalidated and expired chunks
	Now            time.Time
	Limit          int // number of fused hits to return; backends treat <= 0 as 10
	Candidates     int // depth of each ranking before fusion; <= 0 means max(50, 4*Limit)
	// MinSimilarity is the relevance floor: a chunk the full-text
	// ranking does not hold (no term of Text, of its typo variants or of
	// its related or associated terms) is a hit only when its vector
	// similarity to Vector is at least this. A query the memory knows
	// nothing of thus has hits only where its vector finds them.
	MinSimilarity float64
	// Spelled maps the words of Text that are spelled right (a dictionary
	// holds them: Thesaurus.Spellings) to the terms of their other
	// spellings ("colour" for "color"). A spelled word means itself, and
	// the indexed words one edit from it are other words: backends take it
	// for a typo only of the edit variants (EditVariants) of it whose terms
	// are listed, never of the terms one edit from its stem
	// (TypoStemVariants). Other words of at least four letters are typos
	// of either.
	Spelled map[string][]string
	// Related maps words of Text to the terms of words of like meaning
	// (Thesaurus.Related): for a word no chunk the principal may read
	// holds, backends search those the memory holds instead, at
	// Ranking.RelatedWeight, so a question in other words than the
	// memory's ("course" for "classes") still meets it. A word the memory
	// holds is never widened.
	Related map[string][]string
	// Associated maps words of Text to the terms of words used in like
	// contexts (Associations.Associated). Like Related, they stand in for
	// a word no chunk the principal may read holds, at
	// Ranking.AssociatedWeight, but weaker: backends search them only
	// when the query has a term that is neither related nor associated
	// (its own words' or their typo variants'), so that they refine a
	// query the memory knows and never make one it does not know match.
	Associated map[string][]string
	Filter     access.Filter // what the principal may read; the zero value: org and other paths only
}

// Hit is one fused search result. Embedding is not filled in.
type Hit struct {
	Chunk
	Score      float64 // weighted reciprocal rank fusion score (see Ranking)
	TextRank   int     // 1-based rank in the full-text ranking, 0 if absent
	VectorRank int     // 1-based rank in the vector ranking, 0 if absent
}

// IndexState records what an index mirrors: the last commit fully applied and
// the embedder its vectors came from.
type IndexState struct {
	Commit   string // "" when nothing has been indexed
	Embedder string // Embedder.ID()
	Dim      int    // Embedder.Dim()
}

// Index is a derived, rebuildable view of the memory repository used for
// hybrid search. Implementations must be safe for concurrent use.
type Index interface {
	// Replace makes chunks the complete set of chunks stored for path
	// (an empty slice removes the path), atomically.
	Replace(ctx context.Context, path string, chunks []Chunk) error
	// DeletePath removes every chunk of path and of paths below it when path
	// names a directory (prefix + "/").
	DeletePath(ctx context.Context, path string) error
	// Search runs full-text and vector rankings with the query's filters and
	// fuses them as Ranking says, best first, leaving out chunks below the
	// query's relevance floor.
	Search(ctx context.Context, q Query) ([]Hit, error)
	// State returns the recorded state; the zero IndexState when none.
	State(ctx context.Context) (IndexState, error)
	// SetState records st after a batch of changes has been applied.
	SetState(ctx context.Context, st IndexState) error
	// Reset deletes every chunk and records st (used for full rebuilds,
	// including a change of embedder dimension).
	Reset(ctx context.Context, st IndexState) error
	// Close releases the index's resources.
	Close() error
}

// MemoryBinder is an index that can hold several memories apart (pgindex
// keeps each in its own Postgres schema). Open calls BindMemory with the
// store's ID before it first uses the index.
type MemoryBinder interface {
	// BindMemory ties the index to the memory id; an index already bound
	// to another memory refuses.
	BindMemory(id string) error
}

// SharedIndex is an Index that several replicas of one memory share (one
// Postgres namespace written by every replica). Exclusive runs fn while no
// other process runs Exclusive on the same memory, so that reading the
// index state and applying the changes up to a commit is one step: the
// mirror applies each commit's changes once, whichever replica gets there
// first, and never rebuilds because another replica is ahead. Writes with
// a remote take their turns in it too (a fetch and a push run inside it),
// so that replicas racing for the remote's branch each get to write.
type SharedIndex interface {
	Index
	// Exclusive runs fn while no other process's Exclusive on the same
	// memory runs; fn's own calls may use the index normally.
	Exclusive(ctx context.Context, fn func(ctx context.Context) error) error
}

// ChangeFeed carries notifications of new commits between the replicas of
// one memory (Postgres NOTIFY/LISTEN in team set-ups).
type ChangeFeed interface {
	// Publish tells every subscriber that the memory reached commit.
	Publish(ctx context.Context, commit string) error
	// Subscribe calls fn for every notification until ctx is done, and
	// only then returns. fn("") means "notifications may have been
	// missed; check".
	Subscribe(ctx context.Context, fn func(commit string)) error
}

// BatchIndex is an Index that replaces the chunks of many paths in one
// call, much faster than a Replace per path. The mirror writes each batch
// of files it indexes through ReplaceMany when the index has it.
type BatchIndex interface {
	Index
	// ReplaceMany is Replace for every path of files, atomically.
	ReplaceMany(ctx context.Context, files map[string][]Chunk) error
}

// BulkIndex is an Index whose search structures are faster to build once
// over a loaded corpus than to keep up to date while loading it. A full
// rebuild drops them before loading and builds them after, also when the
// load fails, so that whatever was loaded stays searchable.
type BulkIndex interface {
	Index
	// DropSearchIndexes removes the search structures; searches still
	// work, more slowly. It is idempotent.
	DropSearchIndexes(ctx context.Context) error
	// BuildSearchIndexes builds the missing search structures.
	BuildSearchIndexes(ctx context.Context) error
}

// SimilarityFloorer is an Embedder that knows the vector similarity below
// which its vectors are unrelated: the default relevance floor of searches
// with its vectors (Query.MinSimilarity).
type SimilarityFloorer interface {
	SimilarityFloor() float64
}

// Embedder turns text into fixed-length, L2-normalised vectors.
type Embedder interface {
	// ID names the model and its version; a change triggers re-embedding.
	ID() string
	// Dim is the length of every vector Embed returns.
	Dim() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
