// Package indextest is the contract suite every memstore.Index backend
// passes: ranking (exact, typo and partial-word queries), filters, validity,
// Replace and DeletePath semantics, state, reciprocal rank fusion, hostile
// query text, concurrency, deterministic ordering, the access filter and
// the absence of any trace of unreadable chunks in results (Run); and the git
// mirror over the backend: commits made outside selmem reconciled, a full
// rebuild after an embedder and dimension change (RunStore).
//
// It owns the expectations, not any backend: backends call Run and RunStore from their own
// tests with a constructor of fresh, empty indexes. Chunks and query vectors
// come from embedder.Builtin, so the suite needs no network.
package indextest
