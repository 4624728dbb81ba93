package refresh

import "sync"

// viewCacheEntries is how many snapshots the view cache holds.
const viewCacheEntries = 4

// viewCache keeps, for the last few snapshots, their data by column and
// its encodings for views, so that a view after a refresh neither reads
// nor parses nor encodes the snapshot again.
type viewCache struct {
	max int64 // the view cap: larger data is kept only for an aggregate

	mu      sync.Mutex
	entries []*viewEntry // oldest first
}

type viewEntry struct {
	sha     string
	size    int64 // of the snapshot's text
	frame   *Frame
	encoded map[string]Columnar // by aggregate ("" for the data itself)
	aggs    map[string]*aggregated
}

// aggregated is an aggregate of a snapshot as views show it.
type aggregated struct {
	info     AggregateInfo
	records  []byte // Frame.JSON
	columnar Columnar
}

// keep caches the data of snapshot sha (size bytes) when a view may show
// it: within the cap, or with an aggregate declared. Data within the cap
// is encoded by column at once: the refresh runs it while it commits, so
// the view after the refresh finds it ready.
func (c *viewCache) keep(sha string, size int64, frame func() *Frame, settings *ViewSettings) {
	if size > c.max && (settings == nil || settings.Aggregate == nil || size > MaxAggregateBytes) {
		return
	}
	f := frame()
	e := &viewEntry{sha: sha, size: size, frame: f, encoded: map[string]Columnar{}, aggs: map[string]*aggregated{}}
	if size <= c.max {
		e.encoded[""] = f.Columnar(nil)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(e)
}

// size returns the size of snapshot sha's text, when its data is cached.
func (c *viewCache) size(sha string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.get(sha); e != nil {
		return e.size, true
	}
	return 0, false
}

// put adds e, dropping the oldest entry beyond the limit. Callers hold mu.
func (c *viewCache) put(e *viewEntry) {
	for i, old := range c.entries {
		if old.sha == e.sha {
			c.entries = append(c.entries[:i], c.entries[i+1:]...)
			break
		}
	}
	c.entries = append(c.entries, e)
	if len(c.entries) > viewCacheEntries {
		c.entries = c.entries[1:]
	}
}

func (c *viewCache) get(sha string) *viewEntry {
	for _, e := range c.entries {
		if e.sha == sha {
			return e
		}
	}
	return nil
}

// frame returns snapshot sha's data by column, decoding data (the
// snapshot) when it is not cached.
func (c *viewCache) frame(sha string, data []byte) (*Frame, error) {
	c.mu.Lock()
	e := c.get(sha)
	c.mu.Unlock()
	if e != nil {
		return e.frame, nil
	}
	f, err := DecodeFrame(data)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.get(sha); e != nil {
		return e.frame, nil
	}
	c.put(&viewEntry{sha: sha, size: int64(len(data)), frame: f, encoded: map[string]Columnar{}, aggs: map[string]*aggregated{}})
	return f, nil
}

// encoded returns the columnar encoding of snapshot sha's data (key "")
// or of an aggregate of it (key names the aggregate), computing it once.
func (c *viewCache) encoded(sha, key string, frame func() (*Frame, error), extra map[string][]byte) (Columnar, error) {
	c.mu.Lock()
	if e := c.get(sha); e != nil {
		if b, ok := e.encoded[key]; ok {
			c.mu.Unlock()
			return b, nil
		}
	}
	c.mu.Unlock()
	f, err := frame()
	if err != nil {
		return Columnar{}, err
	}
	b := f.Columnar(extra)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.get(sha); e != nil {
		e.encoded[key] = b
	}
	return b, nil
}

// aggregate returns aggregate a of snapshot sha's data, computing it once.
func (c *viewCache) aggregate(sha string, a *Aggregate, frame func() (*Frame, error)) (*aggregated, error) {
	key := string(aggregateJSON(AggregateInfo{Aggregate: *a}))
	c.mu.Lock()
	if e := c.get(sha); e != nil && e.aggs[key] != nil {
		out := e.aggs[key]
		c.mu.Unlock()
		return out, nil
	}
	c.mu.Unlock()
	f, err := frame()
	if err != nil {
		return nil, err
	}
	out, info, err := a.Apply(f)
	if err != nil {
		return nil, err
	}
	extra := map[string][]byte{"aggregate": aggregateJSON(info)}
	res := &aggregated{info: info, records: out.JSON(extra), columnar: out.Columnar(extra)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.get(sha); e != nil {
		e.aggs[key] = res
	}
	return res, nil
}
