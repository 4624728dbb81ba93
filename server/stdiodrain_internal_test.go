package server

import (
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// TestDrainingReader_Requests checks which lines count as requests
// awaiting an answer, however the input is split into reads.
func TestDrainingReader_Requests(t *testing.T) {
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"ping"}`,
		`{"jsonrpc":"2.0","id":2.0,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
		`not json`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`, // no newline: never read
	}, "\n")
	want := []string{`"a"`, `1`, `2`}
	for _, name := range []string{"whole", "byte by byte", "half"} {
		t.Run(name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(input)
			switch name {
			case "byte by byte":
				r = iotest.OneByteReader(r)
			case "half":
				r = iotest.HalfReader(r)
			}
			p := newPendingRequests()
			d := &drainingReader{r: r, pending: p, timeout: time.Millisecond}
			if _, err := io.ReadAll(d); err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(p.ids)); !slices.Equal(got, want) {
				t.Errorf("pending %q, want %q", got, want)
			}
		})
	}
}

// TestDrainingReader_EOFAfterAnswers checks that the end of the input
// comes after the data read with it, and, once every request is answered,
// without waiting (the timeout here would outlast the test).
func TestDrainingReader_EOFAfterAnswers(t *testing.T) {
	p := newPendingRequests()
	d := &drainingReader{r: iotest.DataErrReader(strings.NewReader(`{"id":1,"method":"ping"}` + "\n")), pending: p, timeout: time.Hour}
	buf := make([]byte, 100)
	n, err := d.Read(buf)
	if n == 0 || err != nil {
		t.Fatalf("first Read = %d, %v; want the data and no error", n, err)
	}
	p.done(`1`)
	if n, err := d.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("Read after the answer = %d, %v; want 0, EOF", n, err)
	}
	if n, err := d.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("Read after EOF = %d, %v; want 0, EOF", n, err)
	}
}
