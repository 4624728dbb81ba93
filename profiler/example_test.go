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
	// id code
	// name categorical
	// amount decimal
	// when date
}

// A column of emails keeps its counts, shapes and domains; its values
// are withheld, and sample rows show a mask.
func ExampleSensitive() {
	tp, err := profiler.Profile(context.Background(), profiler.FileSource{Path: "testdata/pii/customers.csv"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range tp.Columns[:3] {
		if s := c.Sensitive; s != nil {
			fmt.Println(c.Name, s.Class, s.Share, len(s.Domains))
		}
	}
	fmt.Println(tp.Samples[0][2])
	// Output:
	// name name 1 0
	// email email 1 4
	// <email>
}
