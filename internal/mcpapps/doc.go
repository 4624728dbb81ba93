// Package mcpapps holds selmem's side of the MCP Apps extension
// (io.modelcontextprotocol/ui, SEP-1865): the identifiers and MIME type the
// extension specifies, the ui:// addresses of artifact views, whether the
// client of a request declared the extension, and the view document with
// its small host bridge.
//
// It does not read artifacts or data (package refresh does) nor register
// tools or resources (packages tools and resources do).
package mcpapps
