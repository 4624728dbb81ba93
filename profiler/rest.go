package profiler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"
)

// RESTSource GETs a URL returning JSON and profiles the records found at
// RecordsPath (dot-separated, e.g. "data.items"; empty means the document
// itself, which must be an array or an object holding one array).
type RESTSource struct {
	URL         string
	RecordsPath string
	// Headers maps a header name to the NAME of an environment variable
	// holding its value, so secrets stay out of configuration.
	Headers  map[string]string
	Timeout  time.Duration // default 30s
	MaxBytes int64         // default 64 MiB
	Client   *http.Client  // optional
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
		return nil, fmt.Errorf("profiler: invalid URL: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	names := make([]string, 0, len(s.Headers))
	for h := range s.Headers {
		names = append(names, h)
	}
	sort.Strings(names)
	for _, h := range names {
		env := s.Headers[h]
		v, ok := os.LookupEnv(env)
		if !ok || v == "" {
			return nil, fmt.Errorf("profiler: header %s needs environment variable %s, which is not set", h, env)
		}
		req.Header.Set(h, v)
	}
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("profiler: %s did not answer within %s; raise the timeout or check the endpoint", req.URL.Host, timeout)
		}
		return nil, fmt.Errorf("profiler: GET %s failed: %w", req.URL.Host, stripURL(err))
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
		return nil, fmt.Errorf("profiler: reading response: %w", stripURL(err))
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
				sort.Strings(keys)
				return nil, fmt.Errorf("profiler: records path %q: no key %q (keys here: %s)", path, part, strings.Join(keys, ", "))
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
			sort.Strings(arrays)
			return nil, fmt.Errorf("profiler: the response is an object; set the records path to the array of records (candidates: %s)", strings.Join(arrays, ", "))
		}
	}
	return nil, fmt.Errorf("profiler: records path %q does not lead to an array", path)
}

// stripURL drops the URL (which may carry query secrets) from url.Error.
func stripURL(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

var _ Source = RESTSource{}
