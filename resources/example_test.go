package resources_test

import (
	"fmt"
	"strings"

	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/resources"
)

func ExampleCompose() {
	ws := resources.Workspace{
		Name:  "sales",
		Title: "Sales analytics",
		Task:  &resources.Item{Name: "task", URI: resources.ResourceURI("sales", resources.KindTask), Text: "- Revenue is net of refunds."},
		Schemas: []resources.Item{{
			Name: "orders",
			URI:  resources.SchemaURI("sales", "orders"),
			Text: "# orders\n1200 rows × 3 columns; csv; key: order_id\n\n" + strings.Repeat("- column: integer; unique\n", 40),
		}},
	}
	text, omitted := resources.Compose(ws, 100, profiler.Tokens)
	fmt.Print(text)
	fmt.Println(omitted)
	// Output:
	// # Workspace sales: Sales analytics
	//
	// ## Task specifications
	//
	// - Revenue is net of refunds.
	//
	// ## Data schemas
	//
	// Profiles shortened to headlines; read a profile in full from its URI.
	//
	// - orders: 1200 rows × 3 columns; csv; key: order_id (memory://workspaces/sales/schemas/orders)
	//
	// ## Left out
	//
	// To fit the 100-token budget, this context leaves out:
	//
	// - the full data schema profiles (1): read each from the URI after its headline
	// [memory://workspaces/sales/schemas/orders]
}
