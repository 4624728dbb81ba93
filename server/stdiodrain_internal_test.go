package server

import (
	"bytes"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// TestDrainingReader_Lines checks, however the input is split into
// reads, which lines count as requests awaiting an answer, which are
// refused as no JSON-RPC message MCP admits, and that the others are
// passed on unchanged, a last line without its newline included.
func TestDrainingReader_Lines(t *testing.T) {
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"ping"}`,
		`{"jsonrpc":"2.0","id":2.0,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":4,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
		`not json`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`, // no newline
	}, "\n")
	wantPending := []string{`"a"`, `1`, `3`}
	wantRefused := []string{
		"id must be a string or an integer",
		"id must be a string or an integer",
		"batches are not supported: send one JSON-RPC message per request",
	}
	wantOut := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
		`not json`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	}, "\n") + "\n"
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
			var refused []string
			d := &drainingReader{r: r, pending: p, timeout: time.Millisecond,
				refuse: func(reason string) { refused = append(refused, reason) }}
			out, err := io.ReadAll(iotest.OneByteReader(d))
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != wantOut {
				t.Errorf("passed on\n%s\nwant\n%s", out, wantOut)
			}
			if got := slices.Sorted(maps.Keys(p.ids)); !slices.Equal(got, wantPending) {
				t.Errorf("pending %q, want %q", got, wantPending)
			}
			if !slices.Equal(refused, wantRefused) {
				t.Errorf("refused %q, want %q", refused, wantRefused)
			}
		})
	}
}

// TestDrainingReader_EOFAfterAnswers checks that the end of the input
// comes after the data read with it, and, once every request is answered,
// without waiting (the timeout here would outlast the test).
func TestDrainingReader_EOFAfterAnswers(t *testing.T) {
	p := newPendingRequests()
	d := &drainingReader{r: iotest.DataErrReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")), pending: p, timeout: time.Hour}
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

// FuzzDrainingReader checks that every line of any input is either passed
// on unchanged, in order, or refused, whatever the size of the reads.
func FuzzDrainingReader(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"+`[1]`+"\n"+`{"id":true}`), uint8(3))
	f.Add([]byte("\n\n{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"x\"}\nnot json"), uint8(1))
	f.Fuzz(func(t *testing.T, input []byte, step uint8) {
		var r io.Reader = bytes.NewReader(input)
		if step%2 == 1 {
			r = iotest.OneByteReader(r)
		}
		refused := 0
		d := &drainingReader{r: r, pending: newPendingRequests(), timeout: time.Millisecond,
			refuse: func(string) { refused++ }}
		out, err := io.ReadAll(d)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(input, []byte("\n"))
		if len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		} else {
			lines[len(lines)-1] = append(lines[len(lines)-1], '\n')
		}
		var want []byte
		for _, l := range lines {
			if invalidMessage(l) == "" {
				want = append(want, l...)
			}
		}
		if !bytes.Equal(out, want) {
			t.Errorf("passed on %q, want %q", out, want)
		}
		if passed := bytes.Count(out, []byte("\n")); passed+refused != len(lines) {
			t.Errorf("%d lines passed on and %d refused of %d", passed, refused, len(lines))
		}
	})
}
