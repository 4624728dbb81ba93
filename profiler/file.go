package profiler

import (
	"fmt"
	"strconv"
	"strings"
)

// SchemaFile renders the complete schemas/<source>.md file: YAML front
// matter (type, source, confidence, connector, rows, fingerprint) and the
// budgeted markdown profile. connector is a reference such as
// "tools/warehouse.yaml" or "file:orders.csv" — never a credential.
func (p *TableProfile) SchemaFile(connector string, budget int) string {
	var b strings.Builder
	b.WriteString("---\n")
	b.WriteString("type: schema\n")
	b.WriteString("source: trusted_tool_result\n")
	b.WriteString("confidence: 1\n")
	fmt.Fprintf(&b, "connector: %s\n", yamlScalar(connector))
	fmt.Fprintf(&b, "rows: %d\n", p.Rows)
	fmt.Fprintf(&b, "fingerprint: %s\n", yamlScalar(p.Fingerprint))
	b.WriteString("---\n")
	b.WriteString(p.Markdown(budget))
	return b.String()
}

func yamlScalar(s string) string {
	if s == "" || strings.ContainsAny(s, ":#{}[],&*!|>'\"%@`\n") || strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	return s
}
