package gate_test

import (
	"errors"
	"fmt"

	"github.com/selmem/selmem/memstore/gate"
)

func ExamplePath() {
	lim := gate.DefaultLimits()
	for _, p := range []string{"/memories", "/memories/workspaces/sales/task.md", "/memories/../etc/passwd", "/memories/%2e%2e/etc"} {
		rel, err := gate.Path(p, lim)
		if err != nil {
			var rej *gate.Rejection
			errors.As(err, &rej)
			fmt.Printf("%s: rejected (%s): %s\n", p, rej.Rule, rej.Msg)
			continue
		}
		fmt.Printf("%s: %q\n", p, rel)
	}
	// Output:
	// /memories: ""
	// /memories/workspaces/sales/task.md: "workspaces/sales/task.md"
	// /memories/../etc/passwd: rejected (path): Path element 1 is ".."; paths cannot leave or walk back up the memory directory.
	// /memories/%2e%2e/etc: rejected (path): The path contains a percent escape such as %2e; virtual paths are not URL-encoded.
}

func ExampleContent() {
	lim := gate.DefaultLimits()
	ok := []byte("---\ntype: task_rule\nsource: user_confirmed\nconfidence: 0.9\n---\n- Totals exclude VAT.\n")
	fmt.Println(gate.Content("workspaces/sales/task.md", ok, lim))

	leaky := []byte("kind: postgres\nhost: db.internal\npassword: hunter2Q9x\n")
	err := gate.Content("workspaces/sales/tools/db.yaml", leaky, lim)
	var rej *gate.Rejection
	if errors.As(err, &rej) {
		fmt.Println(rej.Rule, rej.Line)
		fmt.Println(rej.Msg)
	}
	// Output:
	// <nil>
	// secret 3
	// Line 3 holds what looks like a literal secret assigned to password.
}
