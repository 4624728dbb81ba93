package profiler

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/selmem/selmem/internal/pgtest"
)

// TestSQLSource_Postgres profiles a query against the test harness's
// Postgres: rows stream through the pgx driver, types come from the values.
func TestSQLSource_Postgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, stmt := range []string{
		`CREATE TABLE orders (id bigint PRIMARY KEY, customer_id int NOT NULL, region text, amount numeric(10,2), placed date)`,
		`INSERT INTO orders SELECT g, 1 + g % 500, (ARRAY['EMEA','AMER','APAC'])[1 + g % 3],
			round((g % 997) * 1.37, 2), DATE '2026-01-01' + (g % 300)
			FROM generate_series(1, 30000) g`,
		`UPDATE orders SET region = NULL WHERE id % 1000 = 0`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	tp, err := Profile(ctx, SQLSource{Driver: "postgres", DSN: dsn, Query: "SELECT * FROM orders ORDER BY id", Name: "orders"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tp.Rows, int64(30000); got != want {
		t.Errorf("rows = %d, want %d", got, want)
	}
	tests := []struct {
		column string
		typ    string
		nulls  int64
	}{
		{"id", TypeCode, 0},
		{"customer_id", TypeCode, 0},
		{"region", TypeCategorical, 30},
		{"amount", TypeDecimal, 0},
		{"placed", TypeDate, 0},
	}
	for _, tt := range tests {
		c := col(tp, tt.column)
		if c == nil {
			t.Fatalf("no column %s", tt.column)
		}
		if c.Type != tt.typ || c.Nulls != tt.nulls {
			t.Errorf("%s: type %s, nulls %d; want %s, %d", tt.column, c.Type, c.Nulls, tt.typ, tt.nulls)
		}
	}
	if got := strings.Join(tp.CandidateKeys, ","); got != "id" {
		t.Errorf("candidate keys %q, want id", got)
	}
	if md := tp.Markdown(DefaultBudget(len(tp.Columns))); !strings.Contains(md, "EMEA") {
		t.Errorf("rendering lacks the region catalog:\n%s", md)
	}
}
