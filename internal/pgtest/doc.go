// Package pgtest runs throwaway PostgreSQL clusters with pgvector for tests.
//
// It owns the life of a test cluster: initdb into a temporary directory,
// start on a free loopback port with its own socket directory and
// durability switched off, one fresh database (with the vector extension)
// per caller, Stop and Restart for outage tests, and removal afterwards.
// Server output goes to a log file whose tail is printed when a test fails.
//
// It does not install PostgreSQL or pgvector (scripts/install-pgvector.sh
// does), and it knows nothing of selmem's schema: migrations belong to
// memstore/pgindex.
//
// When the server binaries or pgvector are missing, tests are skipped with
// a message saying how to install them; with CI=true in the environment
// they fail instead, so CI cannot silently skip the Postgres backend.
//
// A package using the shared cluster calls Main from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// Without it, Start falls back to one cluster per test (slower but still
// cleaned up).
//
// The cluster is found at $SELMEM_PG_BIN (a directory holding initdb,
// pg_ctl and pg_config), else /usr/lib/postgresql/15/bin. When the test
// process runs as root the server runs as the postgres user, since
// PostgreSQL refuses to run as root.
package pgtest
