// Package embedder provides selmem's memstore.Embedder implementations: the
// built-in offline embedder (the default: hashed words and n-grams beside
// GloVe word vectors) and a client for any
// OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama, vLLM, ...).
//
// It owns turning text into L2-normalised vectors and nothing else: it does
// not chunk files, store vectors, decide when to re-embed (the index records
// an embedder's ID and Dim for that) or read configuration and environment
// variables (callers pass the API key in).
package embedder
