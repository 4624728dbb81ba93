package memstore

// FailWorkingWrites makes a store opened with o ask fail before it writes
// each working file: an error fails the write, as a full disk does.
func FailWorkingWrites(o *Options, fail func(path string) error) { o.failWorking = fail }
