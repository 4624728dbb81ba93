package profiler_test

import (
	"context"
	"fmt"

	"github.com/selmem/selmem/profiler"
)

func ExampleProfile() {
	tp, err := profiler.Profile(context.Background(), profiler.FileSource{Path: "testdata/csv/small.csv"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tp.Rows, len(tp.Columns), tp.CandidateKeys)
	for _, c := range tp.Columns {
		fmt.Println(c.Name, c.Type)
	}
	// Output:
	// 3 4 [id name when]
	// id integer
	// name categorical
	// amount decimal
	// when date
}
