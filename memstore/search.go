package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/kljensen/snowball/english"

	"github.com/selmem/selmem/internal/textcut"
)

// MaxSearchLimit caps the number of hits one search returns.
const MaxSearchLimit = 100

// MaxSearchTypes caps the item types one search may name. Postgres
// compares each chunk's type with every one of them.
const MaxSearchTypes = 16

// MaxQueryWords is how many distinct words of a query count (stop words
// aside); the words after them are ignored. Each word costs the index a
// lookup of its typo variants and stand-ins, so without a bound a pasted
// document of 50,000 words kept a core busy for seconds.
const MaxQueryWords = 32

// A query is read only so far: its first maxQueryBytes bytes, and of
// them its first maxQueryTokens words, stop words and repeats included.
// Without these bounds a query of a few words repeated to the 4 MiB body
// cap took seconds of CPU to tokenise, embed and rank.
const (
	maxQueryBytes  = 64 << 10
	maxQueryTokens = 8 * MaxQueryWords
)

// SearchRequest is a hybrid search over the memory.
type SearchRequest struct {
	Query          string   // its first MaxQueryWords distinct words count, within its first 256 words
	Workspace      string   // "" for all
	Scope          string   // "", org, user, workspace or other
	Types          []string // empty for all
	IncludeInvalid bool     // include invalidated and expired items
	Limit          int      // 1..MaxSearchLimit; 0 means 10
}

// SearchResult is the outcome of a search.
type SearchResult struct {
	Hits []Hit
	// Degraded is empty when the primary index answered; otherwise it says
	// why the hits come from the local fallback index.
	Degraded string
}

// Search embeds the query and runs it against the primary index: full text
// and vectors fused as Ranking says, without the chunks below the relevance
// floor, so a query that matches nothing finds nothing. When the primary index is
// unreachable and a fallback is configured, the fallback answers and the
// result says so. Hits carry virtual paths. Only what the context's
// principal may read is searched (ReadableFilter): the index filters
// inside its query, before ranking and limit.
func (s *Store) Search(ctx context.Context, req SearchRequest) (_ SearchResult, err error) {
	if len(s.mirrors) == 0 {
		return SearchResult{}, errNoIndex
	}
	q := firstWords(strings.TrimSpace(req.Query))
	if q == "" {
		return SearchResult{}, &Error{Kind: ErrInvalid, Msg: "Error: query is empty.", Hint: "Give a few words describing what to find."}
	}
	if req.Limit == 0 {
		req.Limit = 10
	}
	if req.Limit < 1 || req.Limit > MaxSearchLimit {
		return SearchResult{}, &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("Error: limit %d is out of range.", req.Limit),
			Hint: fmt.Sprintf("Use a limit between 1 and %d.", MaxSearchLimit)}
	}
	switch req.Scope {
	case "", ScopeOrg, ScopeUser, ScopeWorkspace, ScopeOther:
	default:
		return SearchResult{}, &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("Error: scope %q is not known.", req.Scope),
			Hint: "Use one of org, user, workspace, other, or leave it out."}
	}
	if len(req.Types) > MaxSearchTypes {
		return SearchResult{}, &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("Error: %d types given; a search takes at most %d.", len(req.Types), MaxSearchTypes),
			Hint: "Name the few item types to search, e.g. task, schema, tool, output, note."}
	}
	// What the principal may read, applied inside the index's query.
	filter, err := s.ReadableFilter(ctx)
	if err != nil {
		return SearchResult{}, fmt.Errorf("search: %w", err)
	}
	// A search is observed from here: embedding the query is part of it.
	var res SearchResult
	if o := s.opts.Observer; o != nil {
		start := time.Now()
		defer func() {
			o.Searched(SearchEvent{Duration: time.Since(start), Fallback: res.Degraded != "", Err: err})
		}()
	}
	vecs, err := s.opts.Embedder.Embed(ctx, []string{q})
	if err != nil {
		return SearchResult{}, fmt.Errorf("embed query: %w", err)
	}
	query := Query{
		Text:           q,
		Vector:         vecs[0],
		Workspace:      req.Workspace,
		Scope:          req.Scope,
		Types:          req.Types,
		IncludeInvalid: req.IncludeInvalid,
		Now:            s.now(),
		Limit:          req.Limit,
		MinSimilarity:  s.opts.MinSimilarity,
		Filter:         filter,
	}
	if s.opts.Thesaurus != nil {
		query.Spelled = spelled(s.opts.Thesaurus, q)
		query.Related = related(s.opts.Thesaurus.Related, q)
	}
	if s.opts.Associations != nil {
		query.Associated = related(s.opts.Associations.Associated, q)
	}
	if f, ok := s.opts.Embedder.(SimilarityFloorer); ok && query.MinSimilarity == 0 {
		query.MinSimilarity = f.SimilarityFloor()
	}
	// The principal's open drafts replace the published versions of the
	// files they change (draftsearch.go).
	drafts, changed, err := s.draftSearchPaths(ctx, query)
	if err != nil {
		return SearchResult{}, err
	}
	if len(drafts) > 0 {
		query.Limit = draftDepth(req.Limit, changed)
	}
	for i, m := range s.mirrors {
		level, err := s.catchUp(ctx, m)
		if err != nil {
			// A lagging index still answers, for what the head still
			// holds; the next write or search retries the catch-up.
			s.log.Warn("index catch-up failed", logKeyIndex, i, logKeyErr, err)
		}
		res.Hits, err = m.idx.Search(ctx, query)
		if err == nil && !level {
			res.Hits, err = s.heldAtHead(res.Hits)
		}
		if err == nil && len(drafts) > 0 {
			draftQuery := query
			draftQuery.Limit = req.Limit
			res.Hits, err = s.searchDrafts(ctx, draftQuery, res.Hits, drafts, changed)
		}
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil || i == len(s.mirrors)-1 {
			break
		}
		s.log.Warn("primary index failed; searching the local fallback", logKeyErr, err)
		res.Degraded = "The primary search index is unavailable; these results come from the local fallback index, which holds the same memory."
	}
	return SearchResult{}, fmt.Errorf("search: %w", err)
}

// firstWords returns text unchanged when it is at most maxQueryBytes
// long and has at most maxQueryTokens words, of which at most
// MaxQueryWords distinct ones that are not stop words; otherwise the words
// of its first maxQueryBytes bytes up to the last of the first
// maxQueryTokens words and of the first MaxQueryWords distinct ones,
// joined by spaces. The embedder and the index then see the same words.
func firstWords(text string) string {
	cut := len(text) > maxQueryBytes
	text = textcut.Prefix(text, maxQueryBytes)
	var sb strings.Builder
	var distinct []string
	words, full := 0, false
	Words(text, func(w string) {
		if full {
			return
		}
		if words == maxQueryTokens {
			full = true
			return
		}
		if !english.IsStopWord(w) && !slices.Contains(distinct, w) {
			if len(distinct) == MaxQueryWords {
				full = true
				return
			}
			distinct = append(distinct, w)
		}
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(w)
		words++
	})
	if !full && !cut {
		return text
	}
	return sb.String()
}

// Thesaurus is a dictionary of words and of words of like meaning.
// Search tells the index which of a query's words are spelled right, and
// their other spellings (Query.Spelled), so that a real word is not taken
// for a typo of another ("raise" for "rain"), only of its other spellings
// ("favorite" for "favourite"); and the words of like meaning of each
// (Query.Related), which stand in for a word the memory does not hold, so
// a query in other words than the memory's ("when is a client gone" for
// "a customer is lost") still finds what the memory holds, while the
// words the memory holds rank as before.
type Thesaurus interface {
	// Spellings reports whether word, or the base form of an inflection
	// of it, is in the dictionary, and returns its other spellings.
	Spellings(word string) (others []string, known bool)
	// Related returns words of like meaning to word, or nil.
	Related(word string) []string
}

// spelled returns the full-text words of text that th knows, with the
// terms of their other spellings (Query.Spelled).
func spelled(th Thesaurus, text string) map[string][]string {
	out := map[string][]string{}
	TermWords(text, func(word, _ string) {
		if _, done := out[word]; done {
			return
		}
		others, ok := th.Spellings(word)
		if !ok {
			return
		}
		terms := []string{}
		for _, o := range others {
			TermWords(o, func(_, term string) {
				if !slices.Contains(terms, term) {
					terms = append(terms, term)
				}
			})
		}
		out[word] = terms
	})
	return out
}

// Associations relate words to the words used in like contexts: "trip"
// to "visit", "research" to "study", but also "red" to "purple". They
// find more than a thesaurus's words of like meaning, and are wrong more
// often, so they stand in for a query word the memory does not hold only
// beside a word it does (Query.Associated).
type Associations interface {
	// Associated returns the words used in like contexts to word, the
	// closest first, or nil.
	Associated(word string) []string
}

// maxRelated caps the related words added for one query word, so a word
// of many senses does not swamp the others.
const maxRelated = 8

// related returns the terms of the words relate returns for each
// full-text word of text (Query.Related, Query.Associated), at most
// maxRelated words for one word.
func related(relate func(word string) []string, text string) map[string][]string {
	out := map[string][]string{}
	TermWords(text, func(word, term string) {
		if _, done := out[word]; done {
			return
		}
		var terms []string
		n := 0
		for _, r := range relate(word) {
			if n == maxRelated {
				break
			}
			n++
			TermWords(r, func(_, t string) {
				if t != term && !slices.Contains(terms, t) {
					terms = append(terms, t)
				}
			})
		}
		if terms != nil {
			out[word] = terms
		}
	})
	return out
}

// catchUp reconciles a mirror that may lag behind HEAD, or whose index
// another process reset or moved (mirror.current), before it answers, so
// an index that comes back after an outage, or that a killed reindex left
// part empty, serves current memory.
func (s *Store) catchUp(ctx context.Context, m *mirror) (level bool, err error) {
	current, level := m.current(ctx)
	if current {
		return level, nil
	}
	err = s.locked(ctx, func() error {
		if current, level = m.current(ctx); current {
			return nil
		}
		m.setAt(plumbing.ZeroHash)
		if err := m.sync(ctx, nil); err != nil {
			return err
		}
		_, level = m.current(ctx)
		return nil
	})
	return level && err == nil, err
}

// heldAtHead keeps the hits whose file the head holds as the index read it:
// the same blob at the head as at the chunk's commit. An index that is not
// level with the head (its catch-up failed, or another replica moved a
// shared index ahead) would otherwise serve what the head no longer holds
// there: a file deleted, rewritten, or moved where the principal may not
// follow it, or one written after a role was taken away. The principal's
// filter was read at the head, so a hit kept is one it may read there.
func (s *Store) heldAtHead(hits []Hit) ([]Hit, error) {
	if len(hits) == 0 {
		return hits, nil
	}
	head, err := s.git.headCommit()
	if err != nil {
		return nil, err
	}
	w := treeWalker{store: s.git.repo.Storer, trees: map[plumbing.Hash][]byte{}}
	roots := map[string]plumbing.Hash{} // chunk commit -> its tree; zero when unknown here
	var out []Hit
	for _, h := range hits {
		parts := strings.Split(strings.TrimPrefix(h.Path, Root+"/"), "/")
		now, err := w.entryAt(head.TreeHash, parts)
		if err != nil {
			return nil, err
		}
		root, seen := roots[h.Commit]
		if !seen {
			if c, err := object.GetCommit(s.git.repo.Storer, plumbing.NewHash(h.Commit)); err == nil {
				root = c.TreeHash
			}
			roots[h.Commit] = root
		}
		if now.IsZero() || root.IsZero() {
			continue
		}
		if then, err := w.entryAt(root, parts); err != nil {
			return nil, err
		} else if then == now {
			out = append(out, h)
		}
	}
	return out, nil
}

// Snippet returns up to maxRunes of text around the first word of query
// that occurs in it (case-insensitively), on one line, with "…" marking cuts.
// Only the part of query a search reads counts (see MaxQueryWords).
func Snippet(text, query string, maxRunes int) string {
	return snippet(text, snippetWords(query), maxRunes)
}

// snippetWords returns the distinct lower-cased words of the part of query
// a search reads, for snippet: at most maxQueryTokens, however long query.
func snippetWords(query string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(firstWords(query)), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// snippet is Snippet with the query's words.
func snippet(text string, words []string, maxRunes int) string {
	flat := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(flat) <= maxRunes {
		return flat
	}
	lower := strings.ToLower(flat)
	at := -1
	for _, w := range words {
		if i := strings.Index(lower, w); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	runes := []rune(flat)
	start := 0
	if at > 0 {
		start = max(utf8.RuneCountInString(flat[:at])-maxRunes/4, 0)
	}
	end := min(start+maxRunes, len(runes))
	start = max(end-maxRunes, 0)
	out := string(runes[start:end])
	if start > 0 {
		out = "…" + out
	}
	if end < len(runes) {
		out += "…"
	}
	return out
}

// snippetRunes is the length of the snippets in search results.
const snippetRunes = 240

// Found is a search hit as shown to people and models.
type Found struct {
	Path      string  `json:"path"`
	Heading   string  `json:"heading,omitempty"`
	StartLine int     `json:"start_line"`
	EndLine   int     `json:"end_line"`
	Snippet   string  `json:"snippet"`
	Score     float64 `json:"score"`
	Type      string  `json:"type,omitempty"`
	Workspace string  `json:"workspace,omitempty"`
	Source    string  `json:"source,omitempty"`
	Valid     bool    `json:"valid"`
}

// Results turns hits into Found rows with snippets for query, judging
// validity at now.
func Results(hits []Hit, query string, now time.Time) []Found {
	words := snippetWords(query)
	out := make([]Found, len(hits))
	for i, h := range hits {
		out[i] = Found{
			Path: h.Path, Heading: h.Heading, StartLine: h.StartLine, EndLine: h.EndLine,
			Snippet: snippet(h.Text, words, snippetRunes), Score: h.Score,
			Type: h.Type, Workspace: h.Workspace, Source: h.Source, Valid: h.Valid(now),
		}
	}
	return out
}

// FormatResults renders rows as compact text: one header line per hit
// (path:lines, heading, type, provenance) and its snippet.
func FormatResults(rows []Found) string {
	if len(rows) == 0 {
		return "No memory matched the query: no section holds any of its words (allowing for typos) or comes close in meaning. " +
			"Try other words, or widen the filters.\n"
	}
	var b strings.Builder
	for i, r := range rows {
		fmt.Fprintf(&b, "%d. %s:%d-%d", i+1, r.Path, r.StartLine, r.EndLine)
		if r.Heading != "" {
			fmt.Fprintf(&b, " § %s", r.Heading)
		}
		meta := []string{r.Type}
		if r.Source != "" {
			meta = append(meta, r.Source)
		}
		if !r.Valid {
			meta = append(meta, "no longer valid")
		}
		fmt.Fprintf(&b, " (%s)\n   %s\n", strings.Join(meta, ", "), r.Snippet)
	}
	return b.String()
}
