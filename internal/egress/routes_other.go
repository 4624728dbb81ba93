//go:build !linux

package egress

import "net/netip"

// routedToSelf reports false: outside Linux, this machine's own addresses
// are those of its interfaces alone.
func routedToSelf(netip.Addr) (bool, error) { return false, nil }
