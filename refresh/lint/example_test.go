package lint_test

import (
	"encoding/json"
	"fmt"

	"github.com/selmem/selmem/refresh/lint"
)

func ExampleProgram() {
	var snap lint.Snapshot
	_ = json.Unmarshal([]byte(`{"columns":[{"name":"region","type":"text"},{"name":"amount","type":"number"}],
		"records":[{"region":"EMEA","amount":1520.5},{"region":"APAC","amount":830.25}],"rows":2}`), &snap)
	files := map[string]string{
		"index.html": `<!doctype html>
<h1>Sales by region</h1>
<p id="total">2,350.75</p>
<script type="application/json" id="selmem-data"></script>
<script src="app.js"></script>`,
		"app.js": `var BAR_WIDTH = 1520.5; // layout, not data
document.getElementById("insight").textContent = "EMEA leads";`,
	}
	for _, f := range lint.Program(files, snap) {
		fmt.Println(f)
	}
	// Output:
	// app.js:2: category: category value "EMEA" of column "region" is written into the program; read it from the injected data
	// index.html:3: aggregate: number "2,350.75" equals the total of column "amount"; compute it from the injected data so it changes when the data does
}
