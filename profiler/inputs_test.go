package profiler

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/selmem/selmem/internal/egress"
)

func TestProfile_BadInput(t *testing.T) {
	big := "id,blob\n1,\"" + strings.Repeat("x", 50<<20) + "\"\n2,small\n"
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i * 7919 % 256)
	}
	cases := []struct {
		name, content string
		wantErr       string // substring; "" means a profile
		wantWarn      string
	}{
		{"empty", "", "empty", ""},
		{"header only", "a,b,c\n", "", "no data rows"},
		{"malformed quotes", "a,b\n1,\"x\"y\n2,\"unterminated\n", "", "malformed quotes"},
		{"ragged rows", "a,b,c\n1,2\n1,2,3,4\n5,6,7\n", "", "fewer fields"},
		{"invalid utf-8 late", "a,b\n" + strings.Repeat("x,y\n", 20000) + "\xff\xfe,z\n", "", "invalid UTF-8"},
		{"50 MB field", big, "", "truncated"},
		{"binary garbage", string(garbage), "binary", ""},
		{"utf-16", "\xff\xfea\x00,\x00b\x00", "UTF-16", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, "in.csv", tc.content)
			tp, err := Profile(context.Background(), FileSource{Path: p}, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got := strings.Join(tp.Warnings, "; "); !strings.Contains(got, tc.wantWarn) {
				t.Errorf("warnings %q, want %q", got, tc.wantWarn)
			}
			_ = tp.Markdown(0)
		})
	}
}

func TestFileSource_Formats(t *testing.T) {
	tp := profileFile(t, "testdata/json-lines.jsonl")
	if got, want := strings.Join(colNames(tp), ","), "id,user.name,user.age,tags,extra"; got != want {
		t.Errorf("json columns = %s, want %s", got, want)
	}
	if got, want := col(tp, "extra").Nulls, int64(1); got != want {
		t.Errorf("extra nulls = %d, want %d", got, want)
	}
	tp = profileFile(t, "testdata/array.json")
	if got, want := col(tp, "ts").Type, TypeDateTime; got != want {
		t.Errorf("ts type = %s, want %s", got, want)
	}
	if _, err := Profile(context.Background(), FileSource{Path: "testdata/nope.csv"}, nil); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing file err = %v", err)
	}
}

func TestSQLSource_SQLite(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "db.sqlite")
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, price REAL, at TEXT)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20000; i++ {
		if _, err := tx.Exec(`INSERT INTO t VALUES(?,?,?,?)`, i, fmt.Sprintf("n%d", i%40), float64(i)/3, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	tp, err := Profile(context.Background(), SQLSource{Driver: "sqlite", DSN: dsn, Query: "SELECT * FROM t", Name: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tp.Rows, int64(20000); got != want {
		t.Errorf("rows = %d, want %d", got, want)
	}
	if got, want := col(tp, "price").Type, TypeDecimal; got != want {
		t.Errorf("price type = %s, want %s", got, want)
	}
	if got, want := col(tp, "at").Type, TypeEmpty; got != want {
		t.Errorf("at type = %s, want %s", got, want)
	}
	if got, want := strings.Join(tp.CandidateKeys, ","), "id"; got != want {
		t.Errorf("keys = %s, want %s", got, want)
	}
	_, err = Profile(context.Background(), SQLSource{Driver: "postgres", DSN: "postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=1", Query: "SELECT 1"}, nil)
	if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "connecting to the database failed") {
		t.Errorf("postgres error leaks or is nil: %v", err)
	}
}

func TestRESTSource(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/items":
			if r.Header.Get("Authorization") != "Bearer tok" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			fmt.Fprint(w, `{"data":{"items":[{"id":1,"kind":"a","at":{"z":1,"b":2}},{"id":2,"kind":"b"},{"id":3,"kind":"a"}]}}`)
		case "/big":
			fmt.Fprint(w, "["+strings.Repeat(`{"x":1},`, 10000)+`{"x":1}]`)
		case "/slow":
			time.Sleep(2 * time.Second)
			fmt.Fprint(w, "[]")
		}
	}))
	defer srv.Close()
	t.Setenv("TEST_API_TOKEN", "tok")
	// The test server is on loopback, which only an allowed_hosts entry
	// lets through.
	policy, err := egress.New(egress.Config{AllowedHosts: []string{"127.0.0.1"}, Credentials: map[string]egress.Credential{
		"api":   {Env: "TEST_API_TOKEN", Hosts: []string{srv.Listener.Addr().String()}, Prefix: "Bearer ", AllowHTTP: true},
		"unset": {Env: "NOPE_UNSET_VAR", Hosts: []string{"127.0.0.1"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := Profile(context.Background(), RESTSource{URL: srv.URL + "/items", RecordsPath: "data.items", Policy: policy, Credentials: []string{"api"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tp.Rows, int64(3); got != want {
		t.Errorf("rows = %d, want %d", got, want)
	}
	if got, want := strings.Join(colNames(tp), ","), "id,kind,at.z,at.b"; got != want {
		t.Errorf("columns %s, want %s (source order)", got, want)
	}
	for _, tc := range []struct {
		name string
		src  RESTSource
		want string
	}{
		{"size limit", RESTSource{URL: srv.URL + "/big", MaxBytes: 1000, Policy: policy}, "size limit"},
		{"timeout", RESTSource{URL: srv.URL + "/slow", Timeout: 200 * time.Millisecond, Policy: policy}, "within"},
		{"missing env", RESTSource{URL: srv.URL + "/items", Policy: policy, Credentials: []string{"unset"}}, "NOPE_UNSET_VAR"},
		{"bad path", RESTSource{URL: srv.URL + "/items", RecordsPath: "data.rows", Policy: policy, Credentials: []string{"api"}}, "no key"},
		// Before package egress the profiler fetched loopback URLs.
		{"loopback by default", RESTSource{URL: srv.URL + "/items"}, "refused: 127.0.0.1 is a loopback address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Profile(context.Background(), tc.src, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "Bearer tok") {
				t.Errorf("error leaks secret: %v", err)
			}
		})
	}
}

func FuzzSniffCSV(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "x;y\r\n\"q\"\"\";3\r\n", "\xef\xbb\xbfa\tb\n", "", "\"\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "f.csv")
		os.WriteFile(p, data, 0o644)
		tp, err := Profile(context.Background(), FileSource{Path: p}, &Options{Workers: 2})
		if err == nil {
			_ = tp.Markdown(200)
		}
	})
}

func FuzzClassify(f *testing.F) {
	for _, s := range [][2]string{{"12", "12"}, {"-0.5e3", "7"}, {"2024-01-02", "2024-01-02"}, {"01/02/2024", "13/02/2024"},
		{"true", "true"}, {"N/A", "N/A"}, {"007", "007"}, {"1.2.3", "1.2.3"}, {"9:30", "9:30:15"},
		{"2024-01-02 10:00", "2024-01-02 10:00:05"}, {"1.2.2024 10:00", "1.2.2024 10:00:05"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		c := newColAcc("x", 10)
		c.add(a)
		c.add(b)
		c.add(a)
		cp := c.finish(false)
		if cp.Count+cp.Nulls+cp.Empty != 3 {
			t.Fatalf("counts do not add up for %q, %q: %+v", a, b, cp)
		}
		if d := cp.Dates; d != nil && len(d.Min) == len(d.Max) && d.Min > d.Max {
			t.Fatalf("%q, %q: dates %s..%s", a, b, d.Min, d.Max)
		}
	})
}

// BenchmarkProfileCSV profiles a generated CSV of 30 mixed columns
// (PROFILER_BENCH_MB, default 200; or the file PROFILER_BENCH_CSV) end to
// end and reports MB/s, MB per CPU-second and peak RSS.
func BenchmarkProfileCSV(b *testing.B) {
	mb := 200
	if v := os.Getenv("PROFILER_BENCH_MB"); v != "" {
		fmt.Sscan(v, &mb)
	}
	path := os.Getenv("PROFILER_BENCH_CSV") // an existing file, to skip generating one
	if path == "" {
		path = filepath.Join(b.TempDir(), "bench.csv")
		writeBenchCSV(b, path, int64(mb)<<20)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	runtime.GC()
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		if _, err := Profile(context.Background(), FileSource{Path: path}, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// CPU time (user+sys of the whole process) is what the machine spent,
	// whatever else competes for the cores; wall MB/s is ns/op.
	if cpu := (cpuTime() - cpu0).Seconds(); cpu > 0 {
		b.ReportMetric(float64(st.Size())*float64(b.N)/(1<<20)/cpu, "MB/cpu-s")
	}
	b.ReportMetric(float64(peakRSS())/(1<<20), "peakRSS-MB")
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
}

func writeBenchCSV(b *testing.B, path string, size int64) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var sb strings.Builder
	for c := range 30 {
		if c > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "c%d", c)
	}
	sb.WriteByte('\n')
	var written int64
	for i := 0; written < size; i++ {
		for c := range 30 {
			if c > 0 {
				sb.WriteByte(',')
			}
			x := uint64(i)*2654435761 + uint64(c)*40503
			switch c % 6 {
			case 0:
				fmt.Fprintf(&sb, "%d", i)
			case 1:
				fmt.Fprintf(&sb, "%d.%02d", x%100000, x%100)
			case 2:
				sb.WriteString([]string{"alpha", "beta", "gamma", "delta", "NA"}[x%5])
			case 3:
				fmt.Fprintf(&sb, "2024-%02d-%02d", 1+x%12, 1+x%28)
			case 4:
				fmt.Fprintf(&sb, "user%d@example.com", x%50000)
			case 5:
				fmt.Fprintf(&sb, "%d", x%1000)
			}
		}
		sb.WriteByte('\n')
		if sb.Len() > 1<<20 {
			n, _ := f.WriteString(sb.String())
			written += int64(n)
			sb.Reset()
		}
	}
	f.WriteString(sb.String())
}

// cpuTime is the user+sys time the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, "VmHWM:"), "kB")), &kb)
			return kb << 10
		}
	}
	return 0
}

// TestProfile_MaxColumns: a source of MaxColumns columns is profiled, one
// with more is refused, whatever its format, and JSON records whose keys
// all differ are refused before their columns are built.
func TestProfile_MaxColumns(t *testing.T) {
	dir := t.TempDir()
	names := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("c%d", i)
		}
		return out
	}
	csvFile := func(n int) Source {
		p := filepath.Join(dir, fmt.Sprintf("wide%d.csv", n))
		row := strings.Repeat("1,", n-1) + "1\n"
		if err := os.WriteFile(p, []byte(strings.Join(names(n), ",")+"\n"+row+row), 0o644); err != nil {
			t.Fatal(err)
		}
		return FileSource{Path: p}
	}
	jsonFile := func(n int) Source {
		var recs []string
		for _, k := range names(n) {
			recs = append(recs, fmt.Sprintf(`{%q: 1}`, k))
		}
		p := filepath.Join(dir, fmt.Sprintf("keys%d.json", n))
		if err := os.WriteFile(p, []byte("["+strings.Join(recs, ",")+"]"), 0o644); err != nil {
			t.Fatal(err)
		}
		return FileSource{Path: p}
	}
	sqlQuery := func(n int) Source {
		var cols []string
		for i, name := range names(n) {
			cols = append(cols, fmt.Sprintf("%d AS %s", i, name))
		}
		db := filepath.Join(dir, "empty.db")
		return SQLSource{Driver: "sqlite", DSN: db, Query: "SELECT " + strings.Join(cols, ", ")}
	}
	if err := os.WriteFile(filepath.Join(dir, "empty.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		src  func(int) Source
	}{{"csv", csvFile}, {"json records", jsonFile}, {"sql", sqlQuery}} {
		t.Run(tt.name, func(t *testing.T) {
			tp, err := Profile(context.Background(), tt.src(MaxColumns), nil)
			if err != nil || len(tp.Columns) != MaxColumns {
				t.Fatalf("%d columns: %v", MaxColumns, err)
			}
			_, err = Profile(context.Background(), tt.src(MaxColumns+1), nil)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d columns", MaxColumns)) {
				t.Errorf("%d columns: %v, want a refusal naming the cap", MaxColumns+1, err)
			}
		})
	}
}

// TestRecordsAt_Messages: a records path that leads nowhere names the keys
// where it stopped, at most maxNamed of them, however large the object.
func TestRecordsAt_Messages(t *testing.T) {
	object := func(n int, v any) map[string]any {
		m := map[string]any{}
		for i := range n {
			m[fmt.Sprintf("k%02d", i)] = v
		}
		return m
	}
	tests := []struct {
		name, path string
		doc        any
		want       string
	}{
		{"few keys", "data", object(3, 1), "no key \"data\" (keys here: k00, k01, k02)"},
		{"many keys", "data", object(maxNamed+5, 1), "k19 and 5 more)"},
		{"many arrays", "", object(maxNamed+1, []any{}), "(candidates: k00, k01, "},
		{"many arrays, counted", "", object(maxNamed+1, []any{}), "k19 and 1 more)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := json.Marshal(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			_, err = recordsAt(doc, tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("recordsAt: %v, want it to hold %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), fmt.Sprintf("k%02d", maxNamed)) {
				t.Errorf("recordsAt names more than %d keys: %v", maxNamed, err)
			}
		})
	}
}

// TestProfile_LineEndings: a CSV profiles the same whatever ends its
// lines: LF, CRLF, or the bare CR of Excel's "CSV (Macintosh)".
func TestProfile_LineEndings(t *testing.T) {
	lines := []string{"name,qty,note", "apple,3,\"red, round\"", "pear,5,green", "plum,7,", "fig,11,\"soft\""}
	for _, tc := range []struct{ name, eol string }{
		{"LF", "\n"},
		{"CRLF", "\r\n"},
		{"CR", "\r"},
	} {
		for _, trailing := range []bool{true, false} {
			body := strings.Join(lines, tc.eol)
			if trailing {
				body += tc.eol
			}
			tp := profileFile(t, writeTemp(t, "t.csv", body))
			if got := strings.Join(colNames(tp), ","); got != "name,qty,note" || tp.Rows != 4 {
				t.Errorf("%s (trailing %v): columns %s, %d rows; want name,qty,note and 4", tc.name, trailing, got, tp.Rows)
				continue
			}
			if c := col(tp, "qty"); c.Type != TypeInteger {
				t.Errorf("%s (trailing %v): qty is %s, want integer", tc.name, trailing, c.Type)
			}
			if c := col(tp, "note"); c.Empty != 1 || c.Nulls != 0 {
				t.Errorf("%s (trailing %v): note has %d empty, %d nulls; want 1 and 0", tc.name, trailing, c.Empty, c.Nulls)
			}
		}
	}
}

// TestSniffCSV_Preamble: a title or notes above a table, as spreadsheets
// export them, are skipped; a table's own first rows never are.
func TestSniffCSV_Preamble(t *testing.T) {
	table := "region,units,price\nnorth,3,1.50\nsouth,5,2.25\neast,7,3.00\n"
	for _, tc := range []struct {
		name, csv string
		preamble  int
		header    bool
	}{
		{"no preamble", table, 0, true},
		{"a title", "Sales report\n" + table, 1, true},
		{"a padded title and a blank row", "Sales report,,\n,,\n" + table, 2, true},
		{"notes", "# exported from the shop\nGenerated: 2026-12-01\n" + table, 2, true},
		{"a title above a headerless table", "Sales 2026\nnorth,3,1.50\nsouth,5,2.25\n", 1, false},
		{"a header of one named column", "name,,\nann,3,1.50\nbob,5,2.25\n", 0, false},
		{"a one-word title", "Sales\n" + table, 1, true},
		{"a one-word title above a headerless table", "Sales\nnorth,3,1.50\nsouth,5,2.25\n", 1, false},
		{"one column", "name\nann\nbob\ncy\n", 0, true},
		{"a number above the table is data", "42\n" + table, 0, false},
		{"more lines above than a title takes", strings.Repeat("note\n", 11) + table, 0, false},
		{"nothing after the title", "Sales report\nregion,units\n", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, sn, err := sniffCSV(strings.NewReader(tc.csv), false)
			if err != nil {
				t.Fatal(err)
			}
			if sn.Preamble != tc.preamble || sn.Header != tc.header && tc.preamble > 0 {
				t.Errorf("preamble %d, header %v; want %d, %v", sn.Preamble, sn.Header, tc.preamble, tc.header)
			}
		})
	}

	tp := profileFile(t, writeTemp(t, "report.csv", "Sales report,,\n,,\n"+table))
	if got := strings.Join(colNames(tp), ","); got != "region,units,price" || tp.Rows != 3 || col(tp, "units").Type != TypeInteger {
		t.Errorf("columns %s, %d rows, units %s; want region,units,price, 3 rows, integer", got, tp.Rows, col(tp, "units").Type)
	}
	if !slices.ContainsFunc(tp.Warnings, func(w string) bool { return strings.Contains(w, "skipped 2 line(s) above the table") }) {
		t.Errorf("warnings %q do not name the skipped lines", tp.Warnings)
	}
}

func TestParseGrouped(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1,234.5", 1234.5, true},
		{"-12,000.00", -12000, true},
		{"+1,234,567", 1234567, true},
		{"999,999,999.999", 999999999.999, true},
		{"1,234", 0, false},      // also a decimal comma: left to parseDecComma
		{"1,23.5", 0, false},     // a group of two
		{"1234,567.5", 0, false}, // a first group of four
		{"0,123.5", 0, false},    // a first group of 0
		{"1,234.", 0, false},     // no fraction after the point
		{"1,234.5.6", 0, false},
		{"1,,234.5", 0, false},
		{"1,234.5e3", 0, false},
		{",234.5", 0, false},
		{"-", 0, false},
		{"1'234.50", 1234.5, true},
		{"-12’000", -12000, true},
		{"1 234", 1234, true}, // a space is never a decimal separator
		{"1\u00a0234\u00a0567.5", 1234567.5, true},
		{"+1\u202f000", 1000, true},
		{"1'234 567", 0, false},     // two separators
		{"555 123 4567", 0, false},  // a phone number: a last group of four
		{"020 7946 0958", 0, false}, // likewise, and a first group of 0
		{"1 23", 0, false},
		{"1 234,5", 0, false}, // a decimal comma: parseDecComma's
	} {
		got, ok := parseGrouped(tc.in)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("parseGrouped(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestProfile_ThousandsSeparators: numbers written with ',', an
// apostrophe (Swiss) or a space of any width (French, SI) between groups
// of thousands are numbers, integers when none has a fraction. A value
// such as 1,500 reads as 1500 beside values only grouping explains
// (1,234,567 or 1,234.5), in its column or in the file's others
// (TestProfile_FileDecimalMark). Digits in groups that are not
// thousands, such as a phone number's, stay text.
func TestProfile_ThousandsSeparators(t *testing.T) {
	csv := "amount,count,mixed,short,counts,swiss,spaced,spaced_counts,phone\n" +
		"\"1,234.50\",\"1,234,567\",\"1,500.25\",\"1,500\",\"406,055\",1'234.50,1 234.50,1 234 567,555 123 4567\n" +
		"\"12,000.00\",\"2,000,000\",17.5,\"2,250\",89,12'000.00,12\u00a0000.00,2 000,555 987 6543\n" +
		"999.99,999,\"3,000,000\",\"3,125\",\"4,623,519\",999.99,999.99,999,555 111 2222\n" +
		"\"-3,000.25\",\"10,000,000\",-4,\"4,375\",\"1,000\",-3\u2019000.25,-3\u202f000.25,10\u202f000\u202f000,555 333 4444\n"
	tp := profileFile(t, writeTemp(t, "t.csv", csv))
	for _, tc := range []struct {
		col, typ, format string
		min, max         float64
	}{
		{"amount", TypeDecimal, formatGrouped, -3000.25, 12000},
		{"count", TypeInteger, formatGrouped, 999, 10000000},
		{"mixed", TypeDecimal, formatGrouped, -4, 3000000},
		{"short", TypeInteger, formatGrouped, 1500, 4375},
		{"counts", TypeInteger, formatGrouped, 89, 4623519},
		{"swiss", TypeDecimal, formatGrouped, -3000.25, 12000},
		{"spaced", TypeDecimal, formatGrouped, -3000.25, 12000},
		{"spaced_counts", TypeInteger, formatGrouped, 999, 10000000},
	} {
		c := col(tp, tc.col)
		if c.Type != tc.typ || c.Format != tc.format || c.Numeric == nil || c.Numeric.Min != tc.min || c.Numeric.Max != tc.max {
			t.Errorf("%s: %s %q %+v; want %s %q, %v..%v", tc.col, c.Type, c.Format, c.Numeric, tc.typ, tc.format, tc.min, tc.max)
		}
	}
	if c := col(tp, "counts"); c.Numeric != nil {
		mean := (406055 + 89 + 4623519 + 1000) / 4.0
		if c.Numeric.Mean != mean || len(c.Numeric.Quantiles) == 0 || c.Numeric.Quantiles[len(c.Numeric.Quantiles)-1].V < 406055 {
			t.Errorf("counts: mean %v, quantiles %v; want mean %v and 1,234-style values read as thousands", c.Numeric.Mean, c.Numeric.Quantiles, mean)
		}
	}
	if c := col(tp, "phone"); c.Numeric != nil || c.Format != "" {
		t.Errorf("phone: %s %q %+v; want no number", c.Type, c.Format, c.Numeric)
	}
}

// TestProfile_FileDecimalMark: a column of values such as 1,500 alone,
// which either convention explains, is read as the rest of the file
// writes its numbers: thousands beside 3.5, a decimal comma beside 3,5,
// and a decimal comma, with its warning, when nothing tells.
func TestProfile_FileDecimalMark(t *testing.T) {
	const warn = "every value has three digits after the comma: ',' may be a thousands separator"
	for _, tc := range []struct {
		name, csv   string
		typ, format string
		min, max    float64
		warned      bool
	}{
		{"point elsewhere", "price,qty\n3.5,\"1,500\"\n12.25,\"2,250\"\n", TypeInteger, formatGrouped, 1500, 2250, false},
		{"point in the column", "qty\n3.5\n\"1,500\"\n\"2,250\"\n", TypeDecimal, formatGrouped, 3.5, 2250, false},
		{"comma elsewhere", "price,qty\n\"3,5\",\"1,500\"\n\"12,25\",\"2,250\"\n", TypeDecimal, formatDecComma, 1.5, 2.25, true},
		{"both elsewhere", "a,b,qty\n3.5,\"3,5\",\"1,500\"\n1.5,\"1,5\",\"2,250\"\n", TypeDecimal, formatDecComma, 1.5, 2.25, true},
		{"nothing tells", "id,qty\n1,\"1,500\"\n2,\"2,250\"\n", TypeDecimal, formatDecComma, 1.5, 2.25, true},
		{"point in text", "note,qty\nversion 3.5 or so,\"1,500\"\nsee 2.1,\"2,250\"\n", TypeDecimal, formatDecComma, 1.5, 2.25, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := col(profileFile(t, writeTemp(t, "t.csv", tc.csv)), "qty")
			if c.Type != tc.typ || c.Format != tc.format || c.Numeric == nil || c.Numeric.Min != tc.min || c.Numeric.Max != tc.max {
				t.Fatalf("qty: %s %q %+v; want %s %q, %v..%v", c.Type, c.Format, c.Numeric, tc.typ, tc.format, tc.min, tc.max)
			}
			if got := slices.Contains(c.Warnings, warn); got != tc.warned {
				t.Errorf("warnings %q; want the three-digit warning: %v", c.Warnings, tc.warned)
			}
		})
	}
}

// TestProfile_ThousandsSeparatorsSketched: past the exact counter, the
// quantile sketch of the thousands reading is seeded and kept like the
// other, also when its first 1,234-style value comes after the overflow.
func TestProfile_ThousandsSeparatorsSketched(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("v\n")
	var vals []float64
	for i := range 12000 { // distinct decimals: the counter overflows
		fmt.Fprintf(&sb, "%d.5\n", i)
		vals = append(vals, float64(i)+0.5)
	}
	for i := 12000; i < 30000; i++ { // 732,000 … 1,829,939
		v := i * 61
		fmt.Fprintf(&sb, "\"%s\"\n", grouped(v))
		vals = append(vals, float64(v))
	}
	tp := profileFile(t, writeTemp(t, "t.csv", sb.String()))
	c := col(tp, "v")
	if c.Type != TypeDecimal || c.Format != formatGrouped || c.Numeric == nil {
		t.Fatalf("v: %s %q; want decimal %q", c.Type, c.Format, formatGrouped)
	}
	slices.Sort(vals)
	var sum float64
	for _, v := range vals {
		sum += v
	}
	if n := c.Numeric; n.Min != 0.5 || n.Max != vals[len(vals)-1] || math.Abs(n.Mean-sum/float64(len(vals))) > 1e-6*n.Mean || n.QuantilesExact {
		t.Errorf("v: min %v max %v mean %v exact %v; want 0.5, %v, %v, sketched", n.Min, n.Max, n.Mean, n.QuantilesExact, vals[len(vals)-1], sum/float64(len(vals)))
	}
	for _, q := range c.Numeric.Quantiles {
		want := vals[int(q.Q*float64(len(vals)-1))]
		if math.Abs(q.V-want) > 0.02*want {
			t.Errorf("v: quantile %v = %v, want about %v", q.Q, q.V, want)
		}
	}
}

// grouped writes v with ',' between groups of thousands.
func grouped(v int) string {
	s := strconv.Itoa(v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func TestNumberUnit(t *testing.T) {
	for _, tc := range []struct{ in, num, unit string }{
		{"$1.50", "1.50", "$"},
		{"-$1.50", "-1.50", "$"},
		{"$-1.50", "-1.50", "$"},
		{"€1.234,50", "1.234,50", "€"},
		{"1.234,50 €", "1.234,50", "€"},
		{"12,50\u00a0$", "12,50", "$"},
		{"12%", "12", "%"},
		{"+7,5 %", "+7,5", "%"},
		{"£12", "12", "£"},
		{"%", "", ""},
		{"$", "", ""},
		{"12", "", ""},
		{"USD 12", "", ""},
	} {
		num, u := numberUnit(tc.in)
		if num != tc.num || units[u] != tc.unit {
			t.Errorf("numberUnit(%q) = %q, %q; want %q, %q", tc.in, num, units[u], tc.num, tc.unit)
		}
	}
}

// TestProfile_Units: numbers written with a currency or percent sign are
// numbers in that unit; signs on only some numbers are a warning; a sign
// on what is not a number leaves it text.
func TestProfile_Units(t *testing.T) {
	csv := "price,rate,eur,some,label\n" +
		"\"$1,234.50\",12%,\"1.234,50 €\",5,$abc\n" +
		"$20.00,7.5%,\"3,50 €\",$6,$def\n" +
		"-$3.00,100%,\"12,25 €\",7,$ghi\n"
	tp := profileFile(t, writeTemp(t, "t.csv", csv))
	for _, tc := range []struct {
		col, typ, format, unit string
		min, max               float64
	}{
		{"price", TypeDecimal, formatGrouped, "$", -3, 1234.5},
		{"rate", TypeDecimal, "", "%", 7.5, 100},
		{"eur", TypeDecimal, formatDecComma, "€", 3.5, 1234.5},
		{"some", TypeInteger, "", "", 5, 7},
	} {
		c := col(tp, tc.col)
		if c.Type != tc.typ || c.Format != tc.format || c.Unit != tc.unit || c.Numeric == nil || c.Numeric.Min != tc.min || c.Numeric.Max != tc.max {
			t.Errorf("%s: %s %q in %q, %+v; want %s %q in %q, %v..%v", tc.col, c.Type, c.Format, c.Unit, c.Numeric, tc.typ, tc.format, tc.unit, tc.min, tc.max)
		}
	}
	if w := col(tp, "some").Warnings; !slices.ContainsFunc(w, func(s string) bool { return strings.Contains(s, "of 3 numbers, 1 with $") }) {
		t.Errorf("some: warnings %q, want one naming the number written with $", w)
	}
	if c := col(tp, "label"); c.Numeric != nil || c.Unit != "" || c.Lengths == nil || c.Lengths.Min != 4 || c.Lengths.Max != 4 {
		t.Errorf("label: %s in %q, lengths %+v; want text of 4 characters", c.Type, c.Unit, c.Lengths)
	}
	if md := tp.Markdown(0); !strings.Contains(md, "price: decimal with thousands separators in $") || !strings.Contains(md, "rate: decimal in %") {
		t.Errorf("markdown does not name the units:\n%s", md)
	}
}

// TestProfile_MonthNameDates: dates written with English month names are
// dates in their layout; May, both a name and its abbreviation, parses
// under either spelling; names that start like months stay text.
func TestProfile_MonthNameDates(t *testing.T) {
	csv := "short,long,dayfirst,onlymay,person\n" +
		"\"Dec 3, 2026\",\"December 3, 2026\",3 Dec 2026,\"May 1, 2026\",Maria Lopez\n" +
		"\"May 27, 2025\",\"May 27, 2025\",27 May 2025,\"May 9, 2025\",Mark Chen\n" +
		"\"Jan 15, 2024\",\"January 15, 2024\",15 Jan 2024,\"May 30, 2024\",May Ito\n"
	tp := profileFile(t, writeTemp(t, "t.csv", csv))
	for _, tc := range []struct{ col, format, min, max string }{
		{"short", "Mon D, YYYY", "2024-01-15", "2026-12-03"},
		{"long", "Month D, YYYY", "2024-01-15", "2026-12-03"},
		{"dayfirst", "D Mon YYYY", "2024-01-15", "2026-12-03"},
		{"onlymay", "Mon D, YYYY", "2024-05-30", "2026-05-01"},
	} {
		c := col(tp, tc.col)
		if c.Type != TypeDate || c.Format != tc.format || c.Dates == nil || c.Dates.Min != tc.min || c.Dates.Max != tc.max || len(c.Warnings) > 0 {
			t.Errorf("%s: %s %q %+v %q; want date %q %s..%s, no warnings", tc.col, c.Type, c.Format, c.Dates, c.Warnings, tc.format, tc.min, tc.max)
		}
	}
	if c := col(tp, "person"); c.Type == TypeDate || c.Dates != nil {
		t.Errorf("person: %s, want text", c.Type)
	}
}

// TestProfile_ParenthesisNegatives: an accountant's (1,234.50) is a
// negative number, named in a warning; parentheses around what is not a
// number leave it text.
func TestProfile_ParenthesisNegatives(t *testing.T) {
	csv := "balance,note\n\"(1,234.50)\",(see memo)\n\"2,000.00\",(2026-12-03)\n($3.25),ok\n"
	tp := profileFile(t, writeTemp(t, "t.csv", csv))
	c := col(tp, "balance")
	if c.Type != TypeDecimal || c.Unit != "" || c.Numeric == nil || c.Numeric.Min != -1234.5 || c.Numeric.Max != 2000 || c.Numeric.Negatives != 2 {
		t.Errorf("balance: %s in %q %+v; want decimal -1234.5..2000 with 2 negatives", c.Type, c.Unit, c.Numeric)
	}
	if !slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, "2 negative numbers are written in parentheses") }) {
		t.Errorf("balance: warnings %q, want one naming the parentheses", c.Warnings)
	}
	if n := col(tp, "note"); n.Numeric != nil || n.Dates != nil {
		t.Errorf("note: %s, want text", n.Type)
	}
}

// TestProfile_TimesOfDay: times of day are of type time, printed as times,
// not as a date in year 0; hours and minutes alone (9:30) are times too,
// and a column mixing them with seconds is read with seconds, as are
// timestamps; a ratio that only looks like a time now and then stays
// text.
func TestProfile_TimesOfDay(t *testing.T) {
	csv := "t,hm,mixed,stamp,dotted,ratio\n" +
		"10:00:00,10:00,10:00,2024-01-01 10:00,1.2.2024 10:00,3:1\n" +
		"08:30:15,9:30,9:30:15,2024-01-01 09:30:15,1.2.2024 09:30:15,12:40\n" +
		"23:59:59,23:59,23:59,2024-01-02 23:59,2.2.2024 23:59,1:2\n"
	tp := profileFile(t, writeTemp(t, "t.csv", csv))
	for _, tc := range []struct{ col, typ, format, min, max string }{
		{"t", TypeTime, "HH:mm:ss", "08:30:15", "23:59:59"},
		{"hm", TypeTime, "HH:mm", "09:30", "23:59"},
		{"mixed", TypeTime, "HH:mm:ss", "09:30:15", "23:59:00"},
		{"stamp", TypeDateTime, "YYYY-MM-DD HH:mm:ss", "2024-01-01 09:30:15", "2024-01-02 23:59:00"},
		{"dotted", TypeDateTime, "DD.MM.YYYY HH:mm:ss", "2024-02-01 09:30:15", "2024-02-02 23:59:00"},
	} {
		c := col(tp, tc.col)
		if c.Type != tc.typ || c.Format != tc.format || c.Dates == nil || c.Dates.Min != tc.min || c.Dates.Max != tc.max || len(c.Warnings) > 0 {
			t.Errorf("%s: %s %q %+v %q; want %s %q %s..%s, no warning", tc.col, c.Type, c.Format, c.Dates, c.Warnings, tc.typ, tc.format, tc.min, tc.max)
		}
	}
	if c := col(tp, "ratio"); c.Dates != nil {
		t.Errorf("ratio: %s %q, want text", c.Type, c.Format)
	}
}

// TestProfile_SpaceGroups: a French or Swiss export writes thousands
// apart with a space, a no-break or a narrow no-break space before its
// decimal comma; such values are decimal-comma numbers.
func TestProfile_SpaceGroups(t *testing.T) {
	csv := "montant;note\n\"1 234,50\";a\n\"12\u00a0000,00\";b\n999,99;c\n\"-3\u202f000,25\";d\n"
	tp := profileFile(t, writeTemp(t, "t.csv", csv))
	c := col(tp, "montant")
	if c.Type != TypeDecimal || c.Format != formatDecComma || c.Numeric == nil || c.Numeric.Min != -3000.25 || c.Numeric.Max != 12000 {
		t.Errorf("montant: %s %q %+v; want decimal %q, -3000.25..12000", c.Type, c.Format, c.Numeric, formatDecComma)
	}
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1 234,50", 1234.5, true},
		{"12\u00a0000,00", 12000, true},
		{"-3\u202f000,25", -3000.25, true},
		{"1 234 567,5", 1234567.5, true},
		{"1 2,5", 0, false},
		{"1.234 567,5", 0, false},
		{"1 234", 0, false},
	} {
		f, _, ok := parseDecComma(tc.in)
		if ok != tc.ok || ok && f != tc.want {
			t.Errorf("parseDecComma(%q) = %v, %v; want %v, %v", tc.in, f, ok, tc.want, tc.ok)
		}
	}
}
