package schemas

import "testing"

func TestSQLDriver(t *testing.T) {
	for _, tc := range []struct{ dsn, driver, ref string }{
		{"postgres://u:pw@db.internal:5432/sales?sslmode=disable&password=x", "postgres", "sql:postgres://db.internal:5432/sales"},
		{"host=db user=u password=pw dbname=sales", "postgres", "sql:postgres"},
		{"/data/shop.db", "sqlite", "sql:sqlite:shop.db"},
		{"file:/data/shop.db?mode=ro", "sqlite", "sql:sqlite:shop.db"},
	} {
		driver, ref := sqlDriver(tc.dsn)
		if driver != tc.driver || ref != tc.ref {
			t.Errorf("sqlDriver(%q) = %s, %s; want %s, %s", tc.dsn, driver, ref, tc.driver, tc.ref)
		}
	}
}
