package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// anyIPChild marks the run of TestLocalRoutes_AnyIP inside its network
// namespace.
const anyIPChild = "SELMEM_EGRESS_ANYIP_CHILD"

// TestLocalRoutes_AnyIP: in a network namespace of its own, a public
// prefix is routed to the machine itself (ip route add local 9.9.9.0/24
// dev lo), on no interface. A server listening on all interfaces answers
// its addresses; the policy reads the route from the kernel and refuses
// them, to Resolve and to DialContext.
func TestLocalRoutes_AnyIP(t *testing.T) {
	if os.Getenv(anyIPChild) == "1" {
		testAnyIPInNamespace(t)
		return
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI runs as root: a network namespace needs it")
		}
		t.Skip("needs root for a network namespace of its own (unshare --net)")
	}
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing: make test-deps installs it as root", tool)
			}
			t.Skipf("%s is missing (util-linux, iproute2)", tool)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--net", "sh", "-c",
		`ip link set lo up && ip route add local 9.9.9.0/24 dev lo && exec "$0" -test.run '^TestLocalRoutes_AnyIP$' -test.v`, exe)
	cmd.Env = append(os.Environ(), anyIPChild+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestLocalRoutes_AnyIP") {
		t.Fatalf("in a network namespace: %v\n%s", err, out)
	}
}

func testAnyIPInNamespace(t *testing.T) {
	for _, tc := range []struct {
		addr string
		mine bool
	}{
		{"9.9.9.77", true},
		{"9.9.9.0", true},
		{"9.9.10.1", false}, // no route at all
		{"127.0.0.1", true},
		{"::1", true},
		{"2001:db8::1", false},
	} {
		mine, err := routedToSelf(netip.MustParseAddr(tc.addr))
		if err != nil || mine != tc.mine {
			t.Errorf("routedToSelf(%s) = %v, %v; want %v", tc.addr, mine, err, tc.mine)
		}
	}

	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	target := net.JoinHostPort("9.9.9.77", strconv.Itoa(port))
	c, err := net.Dial("tcp", target)
	if err != nil {
		t.Fatalf("the routed address does not reach this machine's server: %v", err)
	}
	c.Close()

	p := Deny()
	var re *RefusedError
	if _, err := p.Resolve(context.Background(), "9.9.9.77", port); !errors.As(err, &re) || !strings.Contains(err.Error(), "an address of this machine") {
		t.Errorf("Resolve(9.9.9.77) = %v, want it refused as this machine's", err)
	}
	if c, err := p.DialContext(context.Background(), "tcp", target); err == nil {
		c.Close()
		t.Errorf("DialContext(%s) reached this machine's server", target)
	}
}
