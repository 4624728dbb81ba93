package profiler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
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
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return nil, fmt.Errorf("profiler: %s did not finish answering within %s; raise the timeout or check the endpoint", req.URL.Host, timeout)
		}
		return nil, fmt.Errorf("profiler: reading the response from %s failed", req.URL.Host)
	}
	if int64(len(body)) > maxBytes {
		return nil, fmt.Errorf("profiler: response from %s exceeds the size limit of %d bytes; raise MaxBytes or narrow the query", req.URL.Host, maxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("profiler: response from %s is not valid JSON: %w", req.URL.Host, err)
	}
	items, err := recordsAt(doc, s.RecordsPath)
	if err != nil {
		return nil, err
	}
	jr := newSliceJSONReader(items)
	if raws, ok := rawRecords(body, s.RecordsPath); ok && len(raws) == len(items) {
		jr = newRawJSONReader(raws)
	}
	name := strings.Trim(req.URL.Path, "/")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if name == "" {
		name = req.URL.Host
	}
	return &jsonSource{baseReader: baseReader{name: name, format: "rest-json", total: int64(len(body))}, jsonReader: jr}, nil
}

func recordsAt(doc any, path string) ([]any, error) {
	cur := doc
	if path != "" {
		for _, part := range strings.Split(path, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("profiler: records path %q: %q is not inside an object", path, part)
			}
			cur, ok = m[part]
			if !ok {
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				return nil, fmt.Errorf("profiler: records path %q: no key %q (keys here: %s)", path, part, someNames(keys))
			}
		}
	}
	switch v := cur.(type) {
	case []any:
		return v, nil
	case map[string]any:
		if path == "" {
			var arrays []string
			for k, x := range v {
				if _, ok := x.([]any); ok {
					arrays = append(arrays, k)
				}
			}
			if len(arrays) == 1 {
				return v[arrays[0]].([]any), nil
			}
			return nil, fmt.Errorf("profiler: the response is an object; set the records path to the array of records (candidates: %s)", someNames(arrays))
		}
	}
	return nil, fmt.Errorf("profiler: records path %q does not lead to an array", path)
}

// maxNamed is how many keys an error message names: a response can hold
// an object of a million keys, and the message goes back to the model.
const maxNamed = 20

// someNames returns the first maxNamed of names in order, joined, and how
// many more there are.
func someNames(names []string) string {
	sort.Strings(names)
	if len(names) <= maxNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamed], ", "), len(names)-maxNamed)
}

// rawRecords finds the records as recordsAt does, but keeps each one as
// raw JSON so its members keep their order.
func rawRecords(body []byte, path string) ([]json.RawMessage, bool) {
	var cur json.RawMessage = body
	if path != "" {
		for _, part := range strings.Split(path, ".") {
			var m map[string]json.RawMessage
			if json.Unmarshal(cur, &m) != nil {
				return nil, false
			}
			var ok bool
			if cur, ok = m[part]; !ok {
				return nil, false
			}
		}
	}
	var arr []json.RawMessage
	if json.Unmarshal(cur, &arr) == nil {
		return arr, true
	}
	var m map[string]json.RawMessage
	if path != "" || json.Unmarshal(cur, &m) != nil {
		return nil, false
	}
	found := false
	for _, v := range m {
		if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '[' {
			if found {
				return nil, false
			}
			found = json.Unmarshal(v, &arr) == nil
		}
	}
	return arr, found
}

var _ Source = RESTSource{}
