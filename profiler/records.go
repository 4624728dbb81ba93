package profiler

// NewRecordsReader reads records that are already JSON-decoded, for a
// caller that holds them in memory (a connector's decoded response). Each
// record should be a map[string]any; nested objects are flattened one
// level with dotted names, deeper values and arrays become JSON text, as
// for a JSON file. A record that is not an object becomes a row with one
// column, value, and a warning. Numbers decoded as json.Number keep their
// exact text. name and format are reported by Info.
func NewRecordsReader(name, format string, records []any) RecordReader {
	return &jsonSource{
		baseReader: baseReader{name: name, format: format},
		jsonReader: newSliceJSONReader(records),
	}
}
