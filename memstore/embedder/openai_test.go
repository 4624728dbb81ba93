package embedder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
)

const testKey = "sk-test-SECRET-0123456789"

// fakeServer is an OpenAI-compatible embeddings endpoint. Each request is
// answered by respond, given the 0-based request number; the default reply
// embeds text i as a dim-length vector (i+1, 0, ..., 0) scaled by 3, in
// reverse order to check sorting by index.
type fakeServer struct {
	t       *testing.T
	dim     int
	respond func(n int, w http.ResponseWriter, req embedRequest) bool // true when it wrote a reply

	mu      sync.Mutex
	batches [][]string
	auth    []string
}

func newFakeServer(t *testing.T, dim int) (*fakeServer, *httptest.Server) {
	t.Helper()
	f := &fakeServer{t: t, dim: dim}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var req embedRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	n := len(f.batches)
	f.batches = append(f.batches, req.Input)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	if f.respond != nil && f.respond(n, w, req) {
		return
	}
	writeEmbeddings(w, req.Input, f.dim)
}

// writeEmbeddings answers with vector (3*(k+1), 0, ...) for the text
// "t<k>", in reverse order.
func writeEmbeddings(w http.ResponseWriter, input []string, dim int) {
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	var data []datum
	for i := len(input) - 1; i >= 0; i-- {
		var k int
		fmt.Sscanf(input[i], "t%d", &k)
		v := make([]float64, dim)
		v[k%dim] = 3
		data = append(data, datum{"embedding", i, v})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

// newTestClient returns a client for srv with fast retries.
func newTestClient(t *testing.T, srv *httptest.Server, cfg OpenAIConfig) *OpenAI {
	t.Helper()
	cfg.BaseURL = srv.URL + "/"
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	cfg.APIKey = testKey
	o, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	o.backoff = time.Millisecond
	return o
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("t%d", i)
	}
	return out
}

func TestNewOpenAI_Invalid(t *testing.T) {
	tests := []struct {
		name string
		cfg  OpenAIConfig
		want string
	}{
		{"no base URL", OpenAIConfig{Model: "m", Dim: 8}, "BaseURL is required"},
		{"bad scheme", OpenAIConfig{BaseURL: "localhost:11434", Model: "m", Dim: 8}, "must start with http"},
		{"no model", OpenAIConfig{BaseURL: "http://x", Dim: 8}, "Model is required"},
		{"no dim", OpenAIConfig{BaseURL: "http://x", Model: "m"}, "Dim must be positive"},
		{"negative batch", OpenAIConfig{BaseURL: "http://x", Model: "m", Dim: 8, BatchSize: -1}, "BatchSize"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewOpenAI(tt.cfg)
			if !errors.Is(err, memstore.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewOpenAI() error = %v, want ErrInvalid mentioning %q", err, tt.want)
			}
		})
	}
}

func TestOpenAI_ID(t *testing.T) {
	o, err := NewOpenAI(OpenAIConfig{BaseURL: "http://localhost:11434", Model: "nomic-embed-text", Dim: 768})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.ID(), "openai:nomic-embed-text:768"; got != want {
		t.Errorf("ID() = %q, want %q", got, want)
	}
	if got, want := o.Dim(), 768; got != want {
		t.Errorf("Dim() = %d, want %d", got, want)
	}
}

func TestOpenAI_Batching(t *testing.T) {
	tests := []struct {
		name      string
		n, batch  int
		wantSizes []int
	}{
		{"none", 0, 4, nil},
		{"one batch", 3, 4, []int{3}},
		{"exact batches", 8, 4, []int{4, 4}},
		{"remainder", 10, 4, []int{4, 4, 2}},
		{"default batch size", 70, 0, []int{64, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeServer(t, 16)
			o := newTestClient(t, srv, OpenAIConfig{Dim: 16, BatchSize: tt.batch})
			vecs, err := o.Embed(context.Background(), texts(tt.n))
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			var sizes []int
			for _, b := range f.batches {
				sizes = append(sizes, len(b))
			}
			if diff := cmp.Diff(tt.wantSizes, sizes); diff != "" {
				t.Errorf("batch sizes (-want +got):\n%s", diff)
			}
			if got, want := len(vecs), tt.n; got != want {
				t.Fatalf("got %d vectors, want %d", got, want)
			}
			for i, v := range vecs {
				// Ordered by index and normalised: text i is the unit vector e_i.
				want := make([]float32, 16)
				want[i%16] = 1
				if diff := cmp.Diff(want, v); diff != "" {
					t.Errorf("vector %d (-want +got):\n%s", i, diff)
				}
			}
			for _, a := range f.auth {
				if got, want := a, "Bearer "+testKey; got != want {
					t.Errorf("Authorization = %q, want %q", got, want)
				}
			}
		})
	}
}

func TestOpenAI_Retry(t *testing.T) {
	tests := []struct {
		name         string
		failures     int    // requests answered with status before succeeding
		status       int    // failure status
		retryAfter   string // Retry-After header of failures
		maxRetries   int
		wantRequests int
		wantErr      string // "" for success
	}{
		{"500 then success", 1, 500, "", 0, 2, ""},
		{"503 twice then success", 2, 503, "", 0, 3, ""},
		{"429 with Retry-After", 1, 429, "0", 0, 2, ""},
		{"400 not retried", 1, 400, "", 0, 1, "HTTP 400"},
		{"401 not retried", 1, 401, "", 0, 1, "HTTP 401"},
		{"retries exhausted", 10, 502, "", 2, 3, "after 3 attempts: HTTP 502"},
		{"retries disabled", 1, 500, "", -1, 1, "HTTP 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeServer(t, 4)
			f.respond = func(n int, w http.ResponseWriter, _ embedRequest) bool {
				if n >= tt.failures {
					return false
				}
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				// A server echoing the key must not leak it into errors.
				http.Error(w, `{"error":"bad things, key `+testKey+`"}`, tt.status)
				return true
			}
			o := newTestClient(t, srv, OpenAIConfig{Dim: 4, MaxRetries: tt.maxRetries})
			vecs, err := o.Embed(context.Background(), texts(2))
			if got, want := len(f.batches), tt.wantRequests; got != want {
				t.Errorf("%d requests, want %d", got, want)
			}
			if tt.wantErr == "" {
				if err != nil || len(vecs) != 2 {
					t.Fatalf("Embed = %d vectors, %v; want 2, nil", len(vecs), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Embed error = %v, want it to contain %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error leaks the API key: %v", err)
			}
		})
	}
}

func TestOpenAI_InvalidResponses(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string
	}{
		{"dimension mismatch", `{"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]}]}`, "has 3 dimensions, configured Dim is 4"},
		{"too few", `{"data":[{"index":0,"embedding":[1,2,3,4]}]}`, "1 embeddings for 2 inputs"},
		{"repeated index", `{"data":[{"index":0,"embedding":[1,2,3,4]},{"index":0,"embedding":[1,2,3,4]}]}`, "bad or repeated index 0"},
		{"index out of range", `{"data":[{"index":0,"embedding":[1,2,3,4]},{"index":2,"embedding":[1,2,3,4]}]}`, "bad or repeated index 2"},
		{"not JSON", `<html>`, "decode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeServer(t, 4)
			f.respond = func(_ int, w http.ResponseWriter, _ embedRequest) bool {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, tt.body)
				return true
			}
			o := newTestClient(t, srv, OpenAIConfig{Dim: 4})
			_, err := o.Embed(context.Background(), texts(2))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Embed error = %v, want it to contain %q", err, tt.wantErr)
			}
			if got, want := len(f.batches), 1; got != want {
				t.Errorf("%d requests, want %d (invalid responses are not retried)", got, want)
			}
		})
	}
}

func TestOpenAI_ContextCanceled(t *testing.T) {
	f, srv := newFakeServer(t, 4)
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	f.respond = func(_ int, w http.ResponseWriter, _ embedRequest) bool {
		started <- struct{}{}
		<-release
		return false
	}
	defer close(release)
	o := newTestClient(t, srv, OpenAIConfig{Dim: 4})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	begin := time.Now()
	_, err := o.Embed(ctx, texts(1))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Embed error = %v, want context.Canceled", err)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("Embed returned after %v, want promptly after cancel", d)
	}
	if got, want := len(f.batches), 1; got != want {
		t.Errorf("%d requests, want %d (cancellation is not retried)", got, want)
	}
}

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", -1},
		{"0", 0},
		{"7", 7 * time.Second},
		{"soon", -1},
		{"Wed, 21 Oct 2015 07:28:00 GMT", 0}, // in the past
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	got := normalize([]float64{3, 4})
	if math.Abs(float64(got[0])-0.6) > 1e-7 || math.Abs(float64(got[1])-0.8) > 1e-7 {
		t.Errorf("normalize(3,4) = %v, want [0.6 0.8]", got)
	}
}
