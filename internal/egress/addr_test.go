package egress

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
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
	} {
		t.Run(tc.addr, func(t *testing.T) {
			got := classify(netip.MustParseAddr(tc.addr))
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("classify(%s) = %q, want %q", tc.addr, got, tc.want)
			}
		})
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
