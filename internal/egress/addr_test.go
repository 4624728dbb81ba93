package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want string // substring of the reason; "" is public
	}{
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback address (IPv4-mapped)"},
		{"::ffff:7f00:1", "loopback address (IPv4-mapped)"},
		{"64:ff9b::7f00:1", "loopback address (embedded in IPv6)"},
		{"64:ff9b::a00:1", "private"},
		{"::127.0.0.1", "loopback"},
		{"2002:7f00:1::1", "loopback address (embedded in IPv6)"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "unique local"},
		{"fd12:3456::1", "unique local"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"169.254.1.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"240.0.0.1", "reserved"},
		{"169.254.169.254", "metadata"},
		{"::ffff:169.254.169.254", "metadata"},
		{"fd00:ec2::254", "metadata"},
		{"168.63.129.16", "metadata"},
		{"100.100.100.200", "metadata"},
		{"8.8.8.8", ""},
		{"172.32.0.1", ""},
		{"2606:4700::1111", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""},
		// The IANA special-purpose blocks that are not globally
		// reachable, at both ends, and their public neighbours.
		{"192.0.0.1", "IETF protocol assignment"},
		{"192.0.2.0", "documentation (TEST-NET-1)"},
		{"192.0.2.255", "documentation (TEST-NET-1)"},
		{"192.0.3.0", ""},
		{"198.51.100.0", "documentation (TEST-NET-2)"},
		{"198.51.100.255", "documentation (TEST-NET-2)"},
		{"198.51.101.0", ""},
		{"203.0.113.0", "documentation (TEST-NET-3)"},
		{"203.0.113.255", "documentation (TEST-NET-3)"},
		{"203.0.112.255", ""},
		{"192.88.99.0", "6to4 relay anycast"},
		{"192.88.99.255", "6to4 relay anycast"},
		{"192.88.100.0", ""},
		{"198.18.0.0", "benchmarking"},
		{"198.19.255.255", "benchmarking"},
		{"198.20.0.0", ""},
		{"100.64.0.0", "carrier-grade NAT"},
		{"100.127.255.255", "carrier-grade NAT"},
		{"100.128.0.0", ""},
		{"0.1.2.3", "\"this network\""},
		{"240.0.0.0", "reserved"},
		{"255.255.255.254", "reserved"},
		{"239.255.255.255", "multicast"},
		{"2001:db8::", "documentation"},
		{"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"},
		{"2001:db9::1", ""},
		{"3fff::1", "documentation"},
		{"3fff:fff:ffff::1", "documentation"},
		{"3fff:1000::1", ""},
		{"2001::1", "IETF protocol assignment"},          // Teredo
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "IETF"}, // Teredo
		{"2001:2::1", "IETF protocol assignment"},        // benchmarking
		{"2001:1ff:ffff::1", "IETF protocol assignment"},
		{"2001:200::1", ""},
		{"100::1", "discard-only"},
		{"100:0:0:1::1", "dummy"},
		{"5f00::1", "segment routing"},
		{"64:ff9b:1::808:808", "local-use NAT64"},
		{"64:ff9b:1:a00:1::", "local-use NAT64"}, // 10.0.0.1 under a /64 prefix
		{"fec0::1", "site-local"},
		{"ff05::2", "multicast"},
		{"4000::1", "outside IPv6 global unicast"},
		{"::ffff:0:a00:1", "outside IPv6 global unicast"}, // IPv4-translated (SIIT)
		{"64:ff9b:2::1", "outside IPv6 global unicast"},
		{"2002:c000:201::1", "TEST-NET-1) address (embedded in IPv6)"},
		{"2002:c0a8:101::1", "private address (embedded in IPv6)"},
		{"2002:808:808::1", ""},
		{"::ffff:192.0.2.2", "TEST-NET-1) address (IPv4-mapped)"},
		{"::ffff:c000:202", "TEST-NET-1) address (IPv4-mapped)"},
		{"2a00:1450:4001::1", ""},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			got := classify(netip.MustParseAddr(tc.addr))
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("classify(%s) = %q, want %q", tc.addr, got, tc.want)
			}
		})
	}
}

// TestClassify_IPv4Forms: an IPv4 address gets the same verdict, for the
// same reason, in every IPv6 form that carries it: IPv4-mapped,
// IPv4-compatible, NAT64 (64:ff9b::/96) and 6to4.
func TestClassify_IPv4Forms(t *testing.T) {
	samples := []string{"8.8.8.8", "1.1.1.1", "192.0.3.1", "198.51.101.1", "203.0.114.1", "192.88.100.1", "198.20.0.1", "100.128.0.1",
		"127.0.0.1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "169.254.1.1", "224.0.0.1", "255.255.255.255", "0.0.0.0"}
	for _, d := range reserved {
		if d.prefix.Addr().Is4() {
			samples = append(samples, d.prefix.Addr().String())
		}
	}
	for _, s := range samples {
		v4 := netip.MustParseAddr(s)
		b := v4.As4()
		forms := map[string]netip.Addr{
			"mapped": netip.AddrFrom16(v4.As16()),
			"nat64":  netip.AddrFrom16([16]byte{0, 0x64, 0xff, 0x9b, 12: b[0], b[1], b[2], b[3]}),
			"6to4":   netip.AddrFrom16([16]byte{0x20, 0x02, b[0], b[1], b[2], b[3], 15: 1}),
		}
		if v4.Compare(netip.MustParseAddr("0.0.0.1")) > 0 { // :: and ::1 are themselves
			forms["compat"] = netip.AddrFrom16([16]byte{12: b[0], b[1], b[2], b[3]})
		}
		want := classify(v4)
		for name, a := range forms {
			got := classify(a)
			if want == "" && got != "" || want != "" && !strings.HasPrefix(got, want) {
				t.Errorf("classify(%s, %s of %s) = %q, want %q", a, name, s, got, want)
			}
		}
	}
}

// TestClassify_Reserved: every block of the reserved table is refused,
// in its first address and in the address after it.
func TestClassify_Reserved(t *testing.T) {
	for _, d := range reserved {
		for _, a := range []netip.Addr{d.prefix.Addr(), d.prefix.Addr().Next()} {
			if !d.prefix.Contains(a) {
				continue // a /32
			}
			if got := classify(a); got == "" {
				t.Errorf("classify(%s) in %s is public, want %q", a, d.prefix, d.what)
			}
		}
	}
}

func TestParseLegacyIPv4(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" is not an address
	}{
		{"0x7f.1", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0x7F.0.0.0x1", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"10.0x10.1", "10.16.0.1"},
		{"example.com", ""},
		{"1.2.3.4.5", ""},
		{"256.1.1.1", ""},
		{"1.2.3.256", ""},
		{"4294967296", ""},
		{"08.0.0.1", ""},
		{"", ""},
		{"1..2", ""},
	} {
		a, ok := parseLegacyIPv4(tc.in)
		if got := map[bool]string{true: a.String(), false: ""}[ok]; got != tc.want {
			t.Errorf("parseLegacyIPv4(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPolicy_Resolve(t *testing.T) {
	ctx := context.Background()
	deny := Deny()
	allow, err := New(Config{Key: "profile", AllowedHosts: []string{"127.0.0.1:8080", "10.0.0.0/8", "::1", "metadata.google.internal", "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		p      *Policy
		host   string
		port   int
		refuse string // substring of the refusal; "" is allowed
	}{
		{"loopback", deny, "127.0.0.1", 80, "127.0.0.1 is a loopback address"},
		{"loopback v6", deny, "::1", 80, "is a loopback address"},
		{"bracketed", deny, "[::1]", 80, "is a loopback address"},
		{"hex", deny, "0x7f.1", 80, "0x7f.1 is a loopback address"},
		{"decimal", deny, "2130706433", 80, "loopback"},
		{"octal", deny, "0177.0.0.1", 80, "loopback"},
		{"mapped", deny, "::ffff:127.0.0.1", 80, "loopback"},
		{"localhost", deny, "localhost", 80, "localhost resolves to a loopback address"},
		{"localhost dot", deny, "LOCALHOST.", 80, "resolves to a loopback address"},
		{"metadata name", deny, "metadata.google.internal", 80, "cloud metadata host"},
		{"metadata ip", deny, "169.254.169.254", 80, "cloud metadata address"},
		{"private", deny, "10.1.2.3", 5432, "private"},
		{"public", deny, "8.8.8.8", 443, ""},
		{"allowed with port", allow, "127.0.0.1", 8080, ""},
		{"allowed other port", allow, "127.0.0.1", 8081, "loopback"},
		{"allowed cidr", allow, "10.9.9.9", 1, ""},
		{"allowed v6", allow, "[::1]", 9, ""},
		{"allowed name", allow, "localhost", 1234, ""},
		{"allowed metadata name", allow, "metadata.google.internal", 80, ""},
		{"still refused", allow, "192.168.0.1", 80, "private"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.p.Resolve(ctx, tc.host, tc.port)
			var re *RefusedError
			switch {
			case tc.refuse == "" && errors.As(err, &re):
				t.Errorf("Resolve(%s:%d) refused: %v", tc.host, tc.port, err)
			case tc.refuse != "" && (!errors.As(err, &re) || !strings.Contains(err.Error(), tc.refuse)):
				t.Errorf("Resolve(%s:%d) = %v, want a refusal mentioning %q", tc.host, tc.port, err, tc.refuse)
			}
			if re != nil && !strings.Contains(err.Error(), "allowed_hosts") {
				t.Errorf("refusal does not name the setting: %v", err)
			}
		})
	}
}

func TestConfig_Validate(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want string // "" is valid
	}{
		{"zero", Config{}, ""},
		{"good", Config{Key: "profile", AllowedHosts: []string{"db.internal", "localhost:8080", "10.0.0.0/8", "[::1]:9000", "::1", "127.0.0.1:1"},
			Credentials: map[string]Credential{"sales": {Env: "SALES_TOKEN", Hosts: []string{"api.example.com", "api.example.com:8443"}, Prefix: "Bearer "}},
			Connections: map[string]Connection{"wh": {Driver: "postgres", DSNEnv: "WH_DSN"}, "shop": {Driver: "sqlite", Path: "/data/shop.db"}}}, ""},
		{"bad cidr", Config{Key: "profile", AllowedHosts: []string{"10.0.0.0/33"}}, "profile.allowed_hosts[0]"},
		{"bad port", Config{Key: "profile", AllowedHosts: []string{"ok", "host:99999"}}, "profile.allowed_hosts[1]"},
		{"url", Config{Key: "profile", AllowedHosts: []string{"http://x/"}}, "profile.allowed_hosts[0]"},
		{"cred env", Config{Key: "profile", Credentials: map[string]Credential{"s": {Env: "a b", Hosts: []string{"h"}}}}, "profile.credentials.s.env"},
		{"cred hosts", Config{Key: "profile", Credentials: map[string]Credential{"s": {Env: "A"}}}, "profile.credentials.s.hosts"},
		{"cred header", Config{Key: "profile", Credentials: map[string]Credential{"s": {Env: "A", Hosts: []string{"h"}, Header: "X Y"}}}, "profile.credentials.s.header"},
		{"cred name", Config{Key: "profile", Credentials: map[string]Credential{"S.x": {Env: "A", Hosts: []string{"h"}}}}, "profile.credentials.S.x"},
		{"conn driver", Config{Key: "profile", Connections: map[string]Connection{"c": {Driver: "mysql"}}}, "profile.connections.c.driver"},
		{"conn dsn_env", Config{Key: "profile", Connections: map[string]Connection{"c": {Driver: "postgres"}}}, "profile.connections.c.dsn_env"},
		{"conn path", Config{Key: "profile", Connections: map[string]Connection{"c": {Driver: "sqlite", Path: "rel.db"}}}, "profile.connections.c.path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want+":")) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzPrecheck feeds host spellings, alone and inside URLs, to the address
// check: a host that spells a loopback, private or otherwise refused
// address in any form must be refused, and nothing may panic.
func FuzzPrecheck(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "0x7f.1", "2130706433", "0177.1", "[::1]", "::ffff:127.0.0.1", "64:ff9b::7f00:1",
		"example.com", "10.0.0.1", "fe80::1%25eth0", "169.254.169.254", "0", "1.2.3.4.5", "0x", "00", "metadata.google.internal."} {
		f.Add(s)
	}
	p := Deny()
	f.Fuzz(func(t *testing.T, host string) {
		a, err := p.Precheck(host, 80)
		if lit, ok := literal(canonicalHost(host)); ok {
			if classify(lit) != "" && err == nil {
				t.Fatalf("Precheck(%q) allowed %s, which is %s", host, lit, classify(lit))
			}
			if err == nil && a != lit {
				t.Fatalf("Precheck(%q) = %s, want %s", host, a, lit)
			}
		}
		// Inside a URL, the host the client would dial gets the same
		// decision: a refused literal stays refused.
		if u, err := url.Parse("http://" + host + "/"); err == nil {
			if lit, ok := literal(canonicalHost(u.Hostname())); ok && classify(lit) != "" {
				if _, err := p.Precheck(u.Hostname(), urlPort(u)); err == nil {
					t.Fatalf("Precheck(%q from URL %q) allowed %s", u.Hostname(), u, lit)
				}
			}
		}
		_, _, _ = parseHostPort(host)
		_, _ = parseAllowed(host)
	})
}

// fakeResolver returns a resolver that asks an in-process DNS server
// instead of the system's. The n-th A (and AAAA) query for a name gets the
// IPv4 (IPv6) addresses of zone[name][n], the last entry repeating: a
// name with several entries rebinds from one lookup to the next. Other
// names do not exist.
func fakeResolver(tb testing.TB, zone map[string][][]netip.Addr) *net.Resolver {
	tb.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { pc.Close() })
	var (
		mu      sync.Mutex
		queries = map[dnsmessage.Question]int{}
	)
	answer := func(q dnsmessage.Question) (addrs []netip.Addr, ok bool) {
		entries, ok := zone[strings.TrimSuffix(strings.ToLower(q.Name.String()), ".")]
		if !ok {
			return nil, false
		}
		mu.Lock()
		n := min(queries[q], len(entries)-1)
		queries[q]++
		mu.Unlock()
		for _, a := range entries[n] {
			if a.Is4() == (q.Type == dnsmessage.TypeA) {
				addrs = append(addrs, a)
			}
		}
		return addrs, true
	}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			addrs, ok := answer(q)
			rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
			if !ok {
				rh.RCode = dnsmessage.RCodeNameError
			}
			b := dnsmessage.NewBuilder(nil, rh)
			_ = b.StartQuestions()
			_ = b.Question(q)
			_ = b.StartAnswers()
			for _, a := range addrs {
				hdr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
				if a.Is4() {
					_ = b.AResource(hdr, dnsmessage.AResource{A: a.As4()})
				} else {
					_ = b.AAAAResource(hdr, dnsmessage.AAAAResource{AAAA: a.As16()})
				}
			}
			msg, err := b.Finish()
			if err != nil {
				continue
			}
			_, _ = pc.WriteTo(msg, from)
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// addrs parses addresses for a fakeResolver zone.
func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

// ifaceAddrs is what net.InterfaceAddrs returns for ss on Linux.
func ifaceAddrs(ss ...string) []net.Addr {
	var out []net.Addr
	for _, s := range ss {
		ip := net.ParseIP(s)
		bits := 8 * len(ip.To16())
		if ip.To4() != nil {
			ip, bits = ip.To4(), 32
		}
		out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits/2, bits)})
	}
	return out
}

// TestPolicy_Resolve_OwnAddress: an address this machine's interfaces
// hold is refused like a loopback one, however it is spelled and whether
// it is given or a name resolves to it, unless allowed_hosts names it.
// The machine's own addresses are injected: they are public here, so only
// this check refuses them. Before, http://OWN-IP:8765/ reached a service
// listening on all interfaces.
func TestPolicy_Resolve_OwnAddress(t *testing.T) {
	ctx := context.Background()
	own := ifaceAddrs("127.0.0.1", "::1", "8.8.4.4", "2606:4700::1", "fe80::1")
	// Prefixes routed to the machine itself, on no interface (AnyIP).
	routed := []netip.Prefix{netip.MustParsePrefix("9.9.9.0/24"), netip.MustParsePrefix("2a00:1450::/64")}
	resolver := fakeResolver(t, map[string][][]netip.Addr{
		"public.test": {addrs("8.8.8.8", "2606:4700::2")},
		"own.test":    {addrs("8.8.4.4")},
		"own6.test":   {addrs("2606:4700::1")},
		"mixed.test":  {addrs("8.8.8.8", "8.8.4.4")},
		"nat64.test":  {addrs("64:ff9b::808:404")},
		"mapped.test": {addrs("::ffff:8.8.4.4")},
	})
	policy := func(allowed ...string) *Policy {
		t.Helper()
		p, err := New(Config{Key: "profile", AllowedHosts: allowed})
		if err != nil {
			t.Fatal(err)
		}
		p.resolver = resolver
		p.interfaceAddrs = func() ([]net.Addr, error) { return own, nil }
		p.toSelf = func(a netip.Addr) (bool, error) {
			return slices.ContainsFunc(routed, func(p netip.Prefix) bool { return p.Contains(a) }), nil
		}
		return p
	}
	deny := policy()
	allow := policy("8.8.4.4:8765", "2606:4700::/32", "own.test", "9.9.9.9")
	const mine = "an address of this machine"
	for _, tc := range []struct {
		name   string
		p      *Policy
		host   string
		port   int
		refuse string // substring of the refusal; "" is allowed
	}{
		{"own", deny, "8.8.4.4", 8765, "refused: 8.8.4.4 is " + mine + "; allow it with profile.allowed_hosts"},
		{"own mapped", deny, "::ffff:8.8.4.4", 8765, mine},
		{"own mapped hex", deny, "[::ffff:808:404]", 8765, mine},
		{"own decimal", deny, "134743044", 8765, mine},
		{"own hex", deny, "0x8.0x8.0x4.0x4", 8765, mine},
		{"own nat64", deny, "64:ff9b::808:404", 8765, mine},
		{"own 6to4", deny, "2002:808:404::1", 8765, mine},
		{"own compat", deny, "::808:404", 8765, mine},
		{"own v6", deny, "[2606:4700::1]", 443, mine},
		{"own loopback", deny, "127.0.0.1", 80, "loopback"},
		{"own link-local", deny, "fe80::1", 80, "link-local"},
		{"routed", deny, "9.9.9.77", 80, "refused: 9.9.9.77 is " + mine},
		{"routed mapped", deny, "::ffff:9.9.9.77", 80, mine},
		{"routed nat64", deny, "64:ff9b::909:94d", 80, mine},
		{"routed v6", deny, "[2a00:1450::5]", 443, mine},
		{"next to routed", deny, "9.9.10.1", 80, ""},
		{"next to routed v6", deny, "[2a00:1450:0:1::5]", 443, ""},
		{"routed allowed", allow, "9.9.9.9", 80, ""},
		{"routed not allowed", allow, "9.9.9.10", 80, mine},
		{"other", deny, "8.8.8.8", 8765, ""},
		{"other v6", deny, "2606:4700::2", 443, ""},
		{"name", deny, "own.test", 80, "refused: own.test resolves to " + mine},
		{"name v6", deny, "own6.test", 80, "resolves to " + mine},
		{"name one of several", deny, "mixed.test", 80, "resolves to " + mine},
		{"name nat64", deny, "nat64.test", 80, "resolves to " + mine},
		{"name mapped", deny, "mapped.test", 80, "resolves to " + mine},
		{"public name", deny, "public.test", 80, ""},
		{"allowed with port", allow, "8.8.4.4", 8765, ""},
		{"allowed mapped", allow, "::ffff:8.8.4.4", 8765, ""},
		{"allowed other port", allow, "8.8.4.4", 8766, mine},
		{"allowed cidr", allow, "2606:4700::1", 443, ""},
		{"allowed name", allow, "own.test", 1, ""},
		{"allowed address of a name", allow, "mixed.test", 8765, ""},
		{"allowed address other port", allow, "mixed.test", 8766, "resolves to " + mine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.p.Resolve(ctx, tc.host, tc.port)
			var re *RefusedError
			switch {
			case tc.refuse == "" && err != nil:
				t.Errorf("Resolve(%s:%d) = %v, want it allowed", tc.host, tc.port, err)
			case tc.refuse != "" && (!errors.As(err, &re) || !strings.Contains(err.Error(), tc.refuse)):
				t.Errorf("Resolve(%s:%d) = %v, want a refusal mentioning %q", tc.host, tc.port, err, tc.refuse)
			}
		})
	}
}

// TestPolicy_Resolve_OwnAddressChanges: the check is made again on every
// resolution, against the addresses the name and the interfaces have
// then: a name that rebinds to this machine, or an address the machine
// takes, is refused from then on; one it gives up is allowed again. When
// the interfaces cannot be read, an address not allowed is refused.
func TestPolicy_Resolve_OwnAddressChanges(t *testing.T) {
	ctx := context.Background()
	p, err := New(Config{Key: "profile", AllowedHosts: []string{"8.8.8.8:443"}})
	if err != nil {
		t.Fatal(err)
	}
	p.resolver = fakeResolver(t, map[string][][]netip.Addr{
		"rebind.test": {addrs("1.1.1.1"), addrs("8.8.4.4")},
	})
	var (
		own    = ifaceAddrs("127.0.0.1", "8.8.4.4")
		ifaces = own
		ifErr  error
	)
	p.interfaceAddrs = func() ([]net.Addr, error) { return ifaces, ifErr }
	var routesErr error
	p.toSelf = func(netip.Addr) (bool, error) { return false, routesErr }
	for _, tc := range []struct {
		name   string
		ifaces []net.Addr
		ifErr  error
		host   string
		port   int
		refuse string // substring of the refusal; "" is allowed
	}{
		{"rebind first answer", own, nil, "rebind.test", 80, ""},
		{"rebind second answer", own, nil, "rebind.test", 80, "rebind.test resolves to an address of this machine"},
		{"not yet taken", ifaceAddrs("127.0.0.1"), nil, "8.8.8.4", 80, ""},
		{"taken", ifaceAddrs("127.0.0.1", "8.8.8.4"), nil, "8.8.8.4", 80, "8.8.8.4 is an address of this machine"},
		{"given up", ifaceAddrs("127.0.0.1"), nil, "8.8.8.4", 80, ""},
		{"unreadable", nil, errors.New("netlink: permission denied"), "1.1.1.1", 80, "1.1.1.1 could not be told apart from this machine's own addresses"},
		{"unreadable name", nil, errors.New("netlink: permission denied"), "rebind.test", 80, "rebind.test resolves to an address that could not be told apart"},
		{"unreadable refused anyway", nil, errors.New("netlink: permission denied"), "10.0.0.1", 80, "private"},
		{"unreadable allowed", nil, errors.New("netlink: permission denied"), "8.8.8.8", 443, ""},
	} {
		ifaces, ifErr = tc.ifaces, tc.ifErr
		_, err := p.Resolve(ctx, tc.host, tc.port)
		var re *RefusedError
		switch {
		case tc.refuse == "" && err != nil:
			t.Errorf("%s: Resolve(%s:%d) = %v, want it allowed", tc.name, tc.host, tc.port, err)
		case tc.refuse != "" && (!errors.As(err, &re) || !strings.Contains(err.Error(), tc.refuse)):
			t.Errorf("%s: Resolve(%s:%d) = %v, want a refusal mentioning %q", tc.name, tc.host, tc.port, err, tc.refuse)
		}
	}
	// Routes that cannot be read refuse an address not allowed, as
	// interfaces that cannot be read do.
	ifaces, ifErr, routesErr = own, nil, errors.New("netlink: permission denied")
	const want = "1.1.1.1 could not be told apart from this machine's own addresses (its routes cannot be read)"
	if _, err := p.Resolve(ctx, "1.1.1.1", 80); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("unreadable routes: Resolve(1.1.1.1:80) = %v, want a refusal mentioning %q", err, want)
	}
}

// TestPolicy_OwnAddress_Interfaces: on the machine the test runs on, the
// policy reads every address its interfaces hold, and refuses each of
// them (for whatever reason comes first) in its plain and IPv4-mapped
// spelling.
func TestPolicy_OwnAddress_Interfaces(t *testing.T) {
	list, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	p := Deny()
	local, err := p.localAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		n, ok := a.(*net.IPNet)
		if !ok {
			t.Errorf("net.InterfaceAddrs gave a %T, which the policy ignores", a)
			continue
		}
		ip, _ := netip.AddrFromSlice(n.IP)
		ip = ip.Unmap()
		if !local.addrs[ip] {
			t.Errorf("localAddrs() lacks %s", ip)
		}
		hosts := []string{ip.String()}
		if ip.Is4() {
			hosts = append(hosts, netip.AddrFrom16(ip.As16()).String())
		}
		for _, h := range hosts {
			if _, err := p.Resolve(context.Background(), h, 8765); err == nil {
				t.Errorf("Resolve(%s) allowed this machine's own address", h)
			}
		}
	}
}
