package profiler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/selmem/selmem/internal/egress"
)

// RESTSource GETs a URL returning JSON and profiles the records found at
// RecordsPath (dot-separated, e.g. "data.items"; empty means the document
// itself, which must be an array or an object holding one array).
//
// The request and its redirects go through Policy: non-public addresses
// are refused unless allowed, and credentials are attached only to the
// hosts they are bound to.
//
// The response is read whole, within Timeout, and refused beyond
// MaxBytes; its records are then read one at a time in place, as a JSON
// file's are, values cut at DefaultMaxFieldBytes. A profile holds the
// response beside its batches, whatever the number of values in it.
type RESTSource struct {
	URL         string
	RecordsPath string
	// Policy is the outbound policy; nil is egress.Deny().
	Policy *egress.Policy
	// Credentials name the Policy's credentials to attach.
	Credentials []string
	Timeout     time.Duration // default 30s
	MaxBytes    int64         // default 64 MiB
}

// Open implements Source.
func (s RESTSource) Open(ctx context.Context) (RecordReader, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	maxBytes := s.MaxBytes
	if maxBytes <= 0 {
		maxBytes = 64 << 20
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return nil, errors.New("profiler: the URL is not valid")
	}
	req.Header.Set("Accept", "application/json")
	policy := s.Policy
	if policy == nil {
		policy = egress.Deny()
	}
	client, err := policy.HTTPClient(&egress.HTTPOptions{Credentials: s.Credentials})
	if err != nil {
		return nil, fmt.Errorf("profiler: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		err = egress.Explain(err)
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("profiler: %s did not answer within %s; raise the timeout or check the endpoint", req.URL.Host, timeout)
		}
		return nil, fmt.Errorf("profiler: GET %s: %w", req.URL.Host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("profiler: GET %s returned HTTP %d; check the URL and credentials", req.URL.Host, resp.StatusCode)
	}
	tooLarge := fmt.Errorf("profiler: response from %s exceeds the size limit of %d bytes; raise MaxBytes or narrow the query", req.URL.Host, maxBytes)
	if resp.ContentLength > maxBytes {
		return nil, tooLarge
	}
	body, err := readBody(resp, maxBytes)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return nil, fmt.Errorf("profiler: %s did not finish answering within %s; raise the timeout or check the endpoint", req.URL.Host, timeout)
		}
		return nil, fmt.Errorf("profiler: reading the response from %s failed", req.URL.Host)
	}
	if int64(len(body)) > maxBytes {
		return nil, tooLarge
	}
	doc, err := firstValue(body)
	if err != nil {
		return nil, fmt.Errorf("profiler: response from %s is not valid JSON: %w", req.URL.Host, err)
	}
	items, err := recordsAt(doc, s.RecordsPath)
	if err != nil {
		return nil, err
	}
	name := strings.Trim(req.URL.Path, "/")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if name == "" {
		name = req.URL.Host
	}
	jr := newRawJSONReader(items, DefaultMaxFieldBytes)
	return &jsonSource{baseReader: baseReader{name: name, format: "rest-json", total: int64(len(body))}, jsonReader: jr}, nil
}

// readBody reads a response's body, up to one byte more than maxBytes.
// A body of announced length is read into one buffer of that length;
// another into blocks of at most bodyBlock bytes, then copied into one
// buffer: twice the body at most, where a buffer grown by appending
// (io.ReadAll) allocates several times it.
func readBody(resp *http.Response, maxBytes int64) ([]byte, error) {
	if n := resp.ContentLength; n > 0 && n <= maxBytes {
		body := make([]byte, n)
		_, err := io.ReadFull(resp.Body, body)
		return body, err
	}
	r := io.LimitReader(resp.Body, maxBytes+1)
	var blocks [][]byte
	size, next := 0, 64<<10
	for {
		b := make([]byte, next)
		n := 0
		var err error
		for n < len(b) && err == nil {
			var m int
			m, err = r.Read(b[n:])
			n += m
		}
		blocks, size = append(blocks, b[:n]), size+n
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		next = min(2*next, bodyBlock)
	}
	if len(blocks) == 1 {
		return blocks[0], nil
	}
	body := make([]byte, 0, size)
	for _, b := range blocks {
		body = append(body, b...)
	}
	return body, nil
}

// bodyBlock is the largest block readBody reads a body of unknown
// length in.
const bodyBlock = 1 << 20

// firstValue returns the JSON value body starts with, checked to be
// valid; what follows it is ignored, as a json.Decoder would.
func firstValue(body []byte) ([]byte, error) {
	i := skipSpace(body, 0)
	if i == len(body) {
		return nil, errors.New("unexpected end of JSON input")
	}
	doc := body[i:valueEnd(body, i)]
	if !json.Valid(doc) {
		// Unmarshal checks the syntax before it decodes anything.
		err := json.Unmarshal(doc, new(struct{}))
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, err
	}
	return doc, nil
}

// recordsAt returns the array of records in the JSON document doc (valid
// JSON) at path: dot-separated keys, the last of equal keys counting as
// when decoded; empty means doc itself, which must be an array or an
// object of one array member. The array is a part of doc, not a copy.
func recordsAt(doc []byte, path string) ([]byte, error) {
	cur := doc
	if path != "" {
		for _, part := range strings.Split(path, ".") {
			if cur[0] != '{' {
				return nil, fmt.Errorf("profiler: records path %q: %q is not inside an object", path, part)
			}
			var found []byte
			var keys someKeys
			for k, v := range members(cur) {
				key := stringText(k)
				if key == part {
					found = v
				}
				keys.add(key)
			}
			if found == nil {
				return nil, fmt.Errorf("profiler: records path %q: no key %q (keys here: %s)", path, part, keys)
			}
			cur = found
		}
	}
	switch cur[0] {
	case '[':
		return cur, nil
	case '{':
		if path == "" {
			var array []byte
			var arrays someKeys
			for k, v := range members(cur) {
				if v[0] == '[' {
					array = v
					arrays.add(stringText(k))
				}
			}
			if arrays.n == 1 {
				return array, nil
			}
			return nil, fmt.Errorf("profiler: the response is an object; set the records path to the array of records (candidates: %s)", arrays)
		}
	}
	return nil, fmt.Errorf("profiler: records path %q does not lead to an array", path)
}

// maxNamed is how many keys an error message names: a response can hold
// an object of a million keys, and the message goes back to the model.
const maxNamed = 20

// someKeys gathers the keys an error message names: the first maxNamed
// in sorted order, and how many there are in all (each key as often as
// the object has it).
type someKeys struct {
	first []string // sorted, distinct
	n     int
}

func (s *someKeys) add(key string) {
	s.n++
	i, found := slices.BinarySearch(s.first, key)
	if found || i >= maxNamed {
		return
	}
	if len(s.first) == maxNamed {
		s.first = s.first[:maxNamed-1]
	}
	s.first = slices.Insert(s.first, i, strings.Clone(key))
}

// String lists the keys: the first maxNamed, and how many more there are.
func (s someKeys) String() string {
	if s.n <= maxNamed {
		return strings.Join(s.first, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(s.first, ", "), s.n-len(s.first))
}

var _ Source = RESTSource{}
