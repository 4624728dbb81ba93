package memstore

// FailWorkingWrites makes a store opened with o ask fail before it writes
// each working file: an error fails the write, as a full disk does.
func FailWorkingWrites(o *Options, fail func(path string) error) { o.failWorking = fail }

// FailRefFlushes makes a store opened with o ask fail before it flushes
// the directory of a ref it moved: an error fails the flush.
func FailRefFlushes(o *Options, fail func(dir string) error) { o.failFlush = fail }

// FailObjectWrites makes a store opened with o ask fail before it writes
// each new git object, its own or one fetched: an error fails the write.
func FailObjectWrites(o *Options, fail func() error) { o.failObject = fail }
