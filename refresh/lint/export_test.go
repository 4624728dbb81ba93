package lint

// Helpers of the internal tests, for the external ones.
var (
	SalesV1 = salesV1
	Dump    = dump
)
