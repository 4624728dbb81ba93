package egress

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Policy is a compiled Config: the address check, the HTTP client and the
// named credentials and connections. It is safe for concurrent use.
type Policy struct {
	cfg      Config
	allowed  []allowed
	resolver *net.Resolver
	adhoc    map[string]bool // credentials added by WithCredentials, not configured
}

// New compiles c. It fails with c.Validate's error when c is invalid.
func New(c Config) (*Policy, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p := &Policy{cfg: c, resolver: net.DefaultResolver}
	for _, h := range c.AllowedHosts {
		a, _ := parseAllowed(h) // validated
		p.allowed = append(p.allowed, a)
	}
	return p, nil
}

// Deny is the policy with nothing allowed: the zero Config.
func Deny() *Policy {
	p, _ := New(Config{})
	return p
}

// WithAllowed returns a copy of p whose AllowedHosts also hold hosts. The
// command line uses it for the host its user names, who is the principal.
func (p *Policy) WithAllowed(hosts ...string) (*Policy, error) {
	c := p.cfg
	c.AllowedHosts = append(append([]string(nil), c.AllowedHosts...), hosts...)
	return New(c)
}

// WithCredentials returns a copy of p that also defines creds: ad-hoc
// credentials, such as the command line's --header, whose errors do not
// point at the configuration.
func (p *Policy) WithCredentials(creds map[string]Credential) (*Policy, error) {
	c := p.cfg
	c.Credentials = maps.Clone(p.cfg.Credentials)
	if c.Credentials == nil {
		c.Credentials = map[string]Credential{}
	}
	maps.Copy(c.Credentials, creds)
	q, err := New(c)
	if err != nil {
		return nil, err
	}
	q.adhoc = map[string]bool{}
	for k := range creds {
		q.adhoc[k] = true
	}
	return q, nil
}

// RefusedError is a target the policy refuses.
type RefusedError struct {
	Target string // the host as the caller gave it
	Reason string // e.g. "is a loopback address"
	Key    string // the setting that would allow it
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused: %s %s; allow it with %s if it is meant to be reached", e.Target, e.Reason, e.Key)
}

// Hint says what to do about it.
func (e *RefusedError) Hint() string {
	return "Only the operator can allow it: ask the user to add the host to " + e.Key + "."
}

// metadataNames are cloud metadata service host names.
var metadataNames = map[string]bool{
	"metadata.google.internal":   true,
	"metadata.goog":              true,
	"metadata":                   true,
	"instance-data":              true,
	"instance-data.ec2.internal": true,
}

// metadataAddrs are cloud metadata service addresses.
var metadataAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true, // AWS, GCP, Azure, OpenStack, …
	netip.MustParseAddr("169.254.170.2"):   true, // AWS ECS task metadata
	netip.MustParseAddr("fd00:ec2::254"):   true, // AWS IPv6
	netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
	netip.MustParseAddr("168.63.129.16"):   true, // Azure wire server
}

// denied are the ranges refused by default, with what to call them; the
// first match names the reason.
var denied = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified (\"this network\") address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a reserved address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("255.255.255.255/32"), "the broadcast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("::/128"), "an unspecified address"},
	{netip.MustParsePrefix("::1/128"), "a loopback address"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "a private (site-local) address"},
	{netip.MustParsePrefix("fc00::/7"), "a private (unique local) address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
	{netip.MustParsePrefix("100::/64"), "a reserved address"},
}

// embedded are IPv6 forms that carry an IPv4 address in their last 32 bits
// (or, for 6to4, bits 16-47), which is checked too.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	v4compat   = netip.MustParsePrefix("::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
)

// classify returns why a is refused by default, or "" when it is public.
func classify(a netip.Addr) string {
	a = a.WithZone("")
	if metadataAddrs[a] || metadataAddrs[a.Unmap()] {
		return "is a cloud metadata address"
	}
	if a.Is4In6() {
		if r := classify(a.Unmap()); r != "" {
			return r + " (IPv4-mapped)"
		}
		return ""
	}
	for _, d := range denied {
		if d.prefix.Contains(a) {
			return "is " + d.what
		}
	}
	if a.Is6() {
		b := a.As16()
		var v4 netip.Addr
		switch {
		case nat64.Contains(a), nat64Local.Contains(a), v4compat.Contains(a):
			v4 = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case sixToFour.Contains(a):
			v4 = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		}
		if v4.IsValid() {
			if r := classify(v4); r != "" {
				return r + " (embedded in IPv6)"
			}
		}
	}
	return ""
}

// allowedAddr reports whether an AllowedHosts entry names the address a
// (or its unmapped form) at port.
func (p *Policy) allowedAddr(a netip.Addr, port int) bool {
	a = a.WithZone("")
	for _, e := range p.allowed {
		if e.name == "" && (e.port == 0 || e.port == port) && (e.prefix.Contains(a) || e.prefix.Contains(a.Unmap())) {
			return true
		}
	}
	return false
}

// allowedName reports whether an AllowedHosts entry names host at port.
func (p *Policy) allowedName(host string, port int) bool {
	for _, e := range p.allowed {
		if e.name != "" && e.name == host && (e.port == 0 || e.port == port) {
			return true
		}
	}
	return false
}

func (p *Policy) refuse(target, reason string) *RefusedError {
	return &RefusedError{Target: target, Reason: reason, Key: p.cfg.key("allowed_hosts")}
}

// canonicalHost lower-cases host, drops brackets and a trailing dot.
func canonicalHost(host string) string {
	host = strings.TrimPrefix(strings.TrimSuffix(host, "]"), "[")
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// literal returns the address host spells, in standard or legacy form
// (inet_aton: 0x7f.1, 2130706433, 0177.0.0.1), if it spells one.
func literal(host string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true
	}
	return parseLegacyIPv4(host)
}

// parseLegacyIPv4 parses the inet_aton forms browsers and C resolvers
// accept: one to four parts, each decimal, octal (leading 0) or hex (0x),
// the last part filling the remaining bytes.
func parseLegacyIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 || s == "" {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, part := range parts {
		if part == "" {
			return netip.Addr{}, false
		}
		base, digits := 10, part
		switch {
		case strings.HasPrefix(part, "0x") || strings.HasPrefix(part, "0X"):
			base, digits = 16, part[2:]
			if digits == "" {
				digits = "0"
			}
		case len(part) > 1 && part[0] == '0':
			base, digits = 8, part[1:]
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (24 - 8*i)
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// Precheck decides what it can about host:port without the network: a
// metadata name or an address literal (in any spelling) that is refused.
// It returns the literal's address when host is one.
func (p *Policy) Precheck(host string, port int) (netip.Addr, error) {
	h := canonicalHost(host)
	if p.allowedName(h, port) {
		return netip.Addr{}, nil
	}
	if metadataNames[h] {
		return netip.Addr{}, p.refuse(host, "is a cloud metadata host")
	}
	a, ok := literal(h)
	if !ok {
		return netip.Addr{}, nil
	}
	if r := classify(a); r != "" && !p.allowedAddr(a, port) {
		return a, p.refuse(host, r)
	}
	return a, nil
}

// ResolveError is a host name that does not resolve.
type ResolveError struct{ Host string }

func (e *ResolveError) Error() string {
	return fmt.Sprintf("the host %s cannot be resolved; check the URL", e.Host)
}

// Resolve returns the addresses to dial for host:port, each checked: a
// name an AllowedHosts entry names resolves to any address; any other name
// is refused when any of its addresses is.
func (p *Policy) Resolve(ctx context.Context, host string, port int) ([]netip.Addr, error) {
	a, err := p.Precheck(host, port)
	if err != nil {
		return nil, err
	}
	if a.IsValid() {
		return []netip.Addr{a}, nil
	}
	h := canonicalHost(host)
	addrs, err := p.resolver.LookupNetIP(ctx, "ip", h)
	if err != nil || len(addrs) == 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &ResolveError{Host: host}
	}
	if p.allowedName(h, port) {
		return addrs, nil
	}
	for _, a := range addrs {
		if r := classify(a); r != "" && !p.allowedAddr(a, port) {
			// The address itself is not told: it would map the
			// internal network for the caller.
			return nil, p.refuse(host, "resolves to "+strings.TrimPrefix(r, "is "))
		}
	}
	return addrs, nil
}
