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
	// interfaceAddrs lists this machine's addresses; nil is
	// net.InterfaceAddrs. toSelf reports whether the kernel delivers
	// packets for an address to the machine itself; nil is
	// routedToSelf. Tests set them to check the logic on a machine whose
	// own addresses are all refused anyway.
	interfaceAddrs func() ([]net.Addr, error)
	toSelf         func(netip.Addr) (bool, error)
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

// reserved are the ranges refused by default that net/netip has no
// predicate for, with what to call them: the blocks of the IANA IPv4 and
// IPv6 special-purpose registries that are not globally reachable. The
// first match names the reason.
var reserved = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified (\"this network\") address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved (IETF protocol assignment) address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation (TEST-NET-1) address"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a reserved (6to4 relay anycast) address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a reserved (benchmarking) address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation (TEST-NET-2) address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation (TEST-NET-3) address"},
	{netip.MustParsePrefix("255.255.255.255/32"), "the broadcast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("fec0::/10"), "a private (site-local) address"},
	// The local-use NAT64 prefix: where the IPv4 address sits in it depends
	// on the operator's prefix length, so it cannot be checked.
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a reserved (local-use NAT64) address"},
	{netip.MustParsePrefix("100::/64"), "a reserved (discard-only) address"},
	{netip.MustParsePrefix("100:0:0:1::/64"), "a reserved (dummy) address"},
	// Teredo (2001::/32, which embeds an obfuscated IPv4 address),
	// benchmarking (2001:2::/48) and ORCHID. The block is refused whole:
	// its few globally reachable sub-blocks (protocol anycasts, AMT,
	// AS112) serve no data source.
	{netip.MustParsePrefix("2001::/23"), "a reserved (IETF protocol assignment) address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("3fff::/20"), "a documentation address"},
	{netip.MustParsePrefix("5f00::/16"), "a reserved (segment routing) address"},
}

// globalUnicast6 is the only IPv6 space assigned for global unicast; what
// lies outside it (and is not an IPv4 embedding checked as such) is
// reserved.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// IPv6 forms that carry an IPv4 address, which is checked too.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	v4compat  = netip.MustParsePrefix("::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 returns the IPv4 address the IPv6 address a carries: in its
// last 32 bits for the well-known NAT64 prefix and the deprecated
// IPv4-compatible form, in bits 16-47 for 6to4. IPv4-mapped addresses are
// not embeddings but IPv4 addresses: Unmap them.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() || a.Is4In6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case nat64.Contains(a), v4compat.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// classify returns why a is refused by default, or "" when it is public.
// An IPv4 address gets the same verdict in every IPv6 spelling: mapped,
// IPv4-compatible, NAT64 and 6to4.
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
	switch {
	case a.IsUnspecified():
		return "is an unspecified address"
	case a.IsLoopback():
		return "is a loopback address"
	case a.IsLinkLocalUnicast():
		return "is a link-local address"
	case a.IsMulticast():
		return "is a multicast address"
	case a.IsPrivate() && a.Is4():
		return "is a private address"
	case a.IsPrivate():
		return "is a private (unique local) address"
	}
	for _, d := range reserved {
		if d.prefix.Contains(a) {
			return "is " + d.what
		}
	}
	if v4, ok := embeddedIPv4(a); ok {
		if r := classify(v4); r != "" {
			return r + " (embedded in IPv6)"
		}
		return ""
	}
	if a.Is6() && !globalUnicast6.Contains(a) {
		return "is a reserved address (outside IPv6 global unicast, 2000::/3)"
	}
	return ""
}

// ownAddrs tells this machine's own addresses.
type ownAddrs struct {
	addrs map[netip.Addr]bool // the interfaces' addresses, IPv4 unmapped
	// toSelf reports whether the kernel delivers a packet for an address
	// to this machine itself.
	toSelf func(netip.Addr) (bool, error)
}

// localAddrs returns the addresses assigned to this machine's interfaces,
// and asks the kernel about the others (routedToSelf). It reads them
// afresh on every call: interfaces, addresses and routes change (DHCP,
// IPv6 temporary addresses, VPNs), and the read costs tens of
// microseconds, less than the connection it guards.
func (p *Policy) localAddrs() (ownAddrs, error) {
	list := p.interfaceAddrs
	if list == nil {
		list = net.InterfaceAddrs
	}
	own := ownAddrs{toSelf: p.toSelf}
	if own.toSelf == nil {
		own.toSelf = routedToSelf
	}
	addrs, err := list()
	if err != nil {
		return ownAddrs{}, err
	}
	own.addrs = make(map[netip.Addr]bool, len(addrs))
	for _, a := range addrs {
		var ip net.IP
		switch a := a.(type) {
		case *net.IPNet:
			ip = a.IP
		case *net.IPAddr:
			ip = a.IP
		}
		if x, ok := netip.AddrFromSlice(ip); ok {
			own.addrs[x.Unmap()] = true
		}
	}
	return own, nil
}

// holds reports whether a is one of own's addresses or routed to the
// machine itself.
func (own ownAddrs) holds(a netip.Addr) (bool, error) {
	if own.addrs[a] {
		return true, nil
	}
	return own.toSelf(a)
}

// isLocal reports whether a, or the IPv4 address it spells or embeds, is
// one of own.
func isLocal(a netip.Addr, own ownAddrs) (bool, error) {
	a = a.WithZone("").Unmap()
	if mine, err := own.holds(a); mine || err != nil {
		return mine, err
	}
	if v4, ok := embeddedIPv4(a); ok {
		return own.holds(v4)
	}
	return false, nil
}

// refusal returns why the policy refuses to dial addrs, the addresses of
// one target, at port, or "" when every one may be dialled: an address
// that AllowedHosts does not name may be neither refused by default
// (classify) nor one of this machine's own, which would reach services
// listening on all interfaces. The interfaces are read at most once per
// call, and only when a public address needs the check; when they, or
// the kernel's route to an address, cannot be read, the address is
// refused.
func (p *Policy) refusal(addrs []netip.Addr, port int) string {
	var public []netip.Addr
	for _, a := range addrs {
		if p.allowedAddr(a, port) {
			continue
		}
		if r := classify(a); r != "" {
			return r
		}
		public = append(public, a)
	}
	if len(public) == 0 {
		return ""
	}
	local, err := p.localAddrs()
	if err != nil {
		return "could not be told apart from this machine's own addresses (its network interfaces cannot be read)"
	}
	for _, a := range public {
		mine, err := isLocal(a, local)
		if err != nil {
			return "could not be told apart from this machine's own addresses (its routes cannot be read)"
		}
		if mine {
			return "is an address of this machine"
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

// Precheck decides what it can about host:port without resolving it: a
// metadata name or an address literal (in any spelling) that is refused,
// this machine's own addresses included. It returns the literal's address
// when host is one.
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
	if r := p.refusal([]netip.Addr{a}, port); r != "" {
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
// is refused when any of its addresses is. Callers resolve for every
// connection attempt and dial only what it returns, so a name that
// rebinds, or an interface address that appears, is checked as it is then.
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
	if r := p.refusal(addrs, port); r != "" {
		// The address itself is not told: it would map the internal
		// network for the caller.
		if rest, ok := strings.CutPrefix(r, "is "); ok {
			return nil, p.refuse(host, "resolves to "+rest)
		}
		return nil, p.refuse(host, "resolves to an address that "+r)
	}
	return addrs, nil
}
