package scaffold_test

import (
	"fmt"
	"sort"

	"github.com/selmem/selmem/refresh/scaffold"
)

func ExampleDashboard() {
	cols := []scaffold.Column{
		{Name: "order_id", Type: scaffold.TypeText},
		{Name: "region", Type: scaffold.TypeText},
		{Name: "amount", Type: scaffold.TypeNumber},
	}
	files, err := scaffold.Dashboard("Weekly sales", cols)
	if err != nil {
		fmt.Println(err)
		return
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Println(names)
	fmt.Printf("%+v\n", scaffold.Choose(cols))
	// Output:
	// [app.js index.html style.css]
	// {Category:region Measure:amount}
}
