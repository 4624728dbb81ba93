package embedder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/selmem/selmem/memstore"
)

// OpenAI defaults.
const (
	DefaultBatchSize  = 64
	DefaultTimeout    = 30 * time.Second
	DefaultMaxRetries = 3
)

// Backoff bounds between retries.
const (
	backoffBase = 500 * time.Millisecond
	backoffMax  = 30 * time.Second
)

// maxErrorBody bounds how much of an error response is quoted in an error.
const maxErrorBody = 512

// OpenAIConfig configures an OpenAI-compatible embeddings client.
type OpenAIConfig struct {
	// BaseURL is the server root without /v1, e.g. "https://api.openai.com"
	// or "http://localhost:11434" for Ollama. Required.
	BaseURL string
	// Model is the embedding model name sent with every request. Required.
	Model string
	// Dim is the model's vector length; every returned vector is checked
	// against it. Required.
	Dim int
	// APIKey is sent as a bearer token when not empty. The caller reads it
	// from the environment variable named in its configuration; it never
	// appears in errors.
	APIKey string
	// BatchSize is the maximum number of texts per request;
	// 0 means DefaultBatchSize.
	BatchSize int
	// Timeout bounds each HTTP request; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a request failing with 429, a 5xx status
	// or a network error is retried; 0 means DefaultMaxRetries, a negative
	// value disables retries.
	MaxRetries int
	// HTTPClient sends the requests; nil means a client with Timeout.
	HTTPClient *http.Client
}

// OpenAI embeds texts with POST {BaseURL}/v1/embeddings, the API that
// OpenAI, Ollama, vLLM and others serve. Requests are batched, retried with
// exponential backoff and jitter (honouring Retry-After), and the vectors are
// ordered by their "index" and L2-normalised. It is safe for concurrent use.
type OpenAI struct {
	cfg     OpenAIConfig
	url     string
	client  *http.Client
	backoff time.Duration // first retry delay, doubled per attempt
}

var _ memstore.Embedder = (*OpenAI)(nil)

// NewOpenAI validates cfg, fills its defaults and returns the client.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	switch {
	case cfg.BaseURL == "":
		return nil, fmt.Errorf("openai embedder: BaseURL is required: %w", memstore.ErrInvalid)
	case !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://"):
		return nil, fmt.Errorf("openai embedder: BaseURL %q must start with http:// or https://: %w", cfg.BaseURL, memstore.ErrInvalid)
	case cfg.Model == "":
		return nil, fmt.Errorf("openai embedder: Model is required: %w", memstore.ErrInvalid)
	case cfg.Dim <= 0:
		return nil, fmt.Errorf("openai embedder: Dim must be positive, got %d: %w", cfg.Dim, memstore.ErrInvalid)
	case cfg.BatchSize < 0:
		return nil, fmt.Errorf("openai embedder: BatchSize must not be negative, got %d: %w", cfg.BatchSize, memstore.ErrInvalid)
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: cfg.Timeout}
	}
	return &OpenAI{
		cfg:     cfg,
		url:     strings.TrimRight(cfg.BaseURL, "/") + "/v1/embeddings",
		client:  client,
		backoff: backoffBase,
	}, nil
}

// ID returns "openai:" + model + ":" + dim.
func (o *OpenAI) ID() string { return "openai:" + o.cfg.Model + ":" + strconv.Itoa(o.cfg.Dim) }

// Dim returns the configured dimension.
func (o *OpenAI) Dim() int { return o.cfg.Dim }

// Embed returns one L2-normalised vector per text, in order, sending at most
// BatchSize texts per request.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for batch := range slices.Chunk(texts, o.cfg.BatchSize) {
		vecs, err := o.embedBatch(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("openai embedder %s: texts %d-%d of %d: %w",
				o.cfg.Model, len(out), len(out)+len(batch)-1, len(texts), err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embedRequest is the body of POST /v1/embeddings.
type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

// embedResponse is the part of the response used.
type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

// statusError is a non-2xx response.
type statusError struct {
	code       int
	body       string
	retryAfter time.Duration // from Retry-After, -1 when absent
}

func (e *statusError) Error() string {
	if e.body == "" {
		return fmt.Sprintf("HTTP %d", e.code)
	}
	return fmt.Sprintf("HTTP %d: %s", e.code, e.body)
}

// retryable reports whether the status is worth retrying.
func (e *statusError) retryable() bool {
	return e.code == http.StatusTooManyRequests || e.code >= 500
}

// embedBatch sends one request, retrying transient failures.
func (o *OpenAI) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embedRequest{Model: o.cfg.Model, Input: texts})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	for attempt := 0; ; attempt++ {
		vecs, err := o.post(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		delay, ok := o.retryDelay(err, attempt)
		if !ok || attempt >= o.cfg.MaxRetries {
			if attempt > 0 {
				return nil, fmt.Errorf("after %d attempts: %w", attempt+1, err)
			}
			return nil, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// retryDelay decides whether err is transient and how long to wait before
// attempt+1: Retry-After when the server sent one, otherwise exponential
// backoff with full jitter.
func (o *OpenAI) retryDelay(err error, attempt int) (time.Duration, bool) {
	var se *statusError
	if errors.As(err, &se) {
		if !se.retryable() {
			return 0, false
		}
		if se.retryAfter >= 0 {
			return min(se.retryAfter, backoffMax), true
		}
	} else if errors.Is(err, errInvalidResponse) {
		return 0, false
	}
	d := min(o.backoff<<attempt, backoffMax)
	return d/2 + rand.N(d/2+1), true
}

// errInvalidResponse marks a 2xx response that cannot be used; not retried.
var errInvalidResponse = errors.New("invalid response")

// post sends one request and decodes its vectors.
func (o *OpenAI) post(ctx context.Context, body []byte, n int) ([][]float32, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if o.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, o.redact(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, &statusError{
			code:       resp.StatusCode,
			body:       o.redactString(strings.TrimSpace(string(msg))),
			retryAfter: parseRetryAfter(resp.Header.Get("Retry-After")),
		}
	}
	var er embedResponse
	if err := json.NewDecoder(resp.Body).Decode(&er); err != nil {
		return nil, fmt.Errorf("%w: decode: %w", errInvalidResponse, o.redact(err))
	}
	return o.vectors(er, n)
}

// vectors checks a response for n inputs and returns its vectors ordered by
// index and L2-normalised.
func (o *OpenAI) vectors(er embedResponse, n int) ([][]float32, error) {
	if len(er.Data) != n {
		return nil, fmt.Errorf("%w: %d embeddings for %d inputs", errInvalidResponse, len(er.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range er.Data {
		switch {
		case d.Index < 0 || d.Index >= n || out[d.Index] != nil:
			return nil, fmt.Errorf("%w: bad or repeated index %d", errInvalidResponse, d.Index)
		case len(d.Embedding) != o.cfg.Dim:
			return nil, fmt.Errorf("%w: embedding %d has %d dimensions, configured Dim is %d",
				errInvalidResponse, d.Index, len(d.Embedding), o.cfg.Dim)
		}
		out[d.Index] = normalize(d.Embedding)
	}
	return out, nil
}

// normalize returns v scaled to unit length as float32; a zero vector stays
// zero.
func normalize(v []float64) []float32 {
	out := make([]float32, len(v))
	normalizeInto(out, v)
	return out
}

// normalizeInto sets dst, as long as v, to v scaled to unit length and
// reports whether v is not the zero vector, which leaves dst unchanged.
func normalizeInto(dst []float32, v []float64) bool {
	var s float64
	for _, x := range v {
		s += x * x
	}
	if s == 0 {
		return false
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range v {
		dst[i] = float32(x * inv)
	}
	return true
}

// parseRetryAfter reads delay-seconds or an HTTP date; -1 when absent or
// unparseable.
func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return -1
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return -1
}

// redact removes the API key from err's message, keeping errors.Is working
// for context errors.
func (o *OpenAI) redact(err error) error {
	if o.cfg.APIKey == "" || !strings.Contains(err.Error(), o.cfg.APIKey) {
		return err
	}
	return errors.New(o.redactString(err.Error()))
}

// redactString replaces the API key in s.
func (o *OpenAI) redactString(s string) string {
	if o.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, o.cfg.APIKey, "[redacted]")
}
