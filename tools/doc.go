// Package tools owns selmem's MCP tools: one typed handler per tool over
// memstore, argument validation, and the error texts a model reads. It
// does not own transports, configuration or resources (package server and
// package resources), and holds no memory semantics of its own: those live
// in memstore.
package tools
