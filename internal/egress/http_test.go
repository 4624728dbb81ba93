package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/selmem/selmem/internal/egress/egresstest"
)

func get(t *testing.T, c *http.Client, url string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return Explain(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil
}

// TestHTTPClient_DefaultDeny: with the default policy no loopback target
// is reached, however it is spelled, and the refusal names the setting.
// Before package egress, the profiler's client fetched every one of them.
func TestHTTPClient_DefaultDeny(t *testing.T) {
	target := egresstest.NewRecorder(t, nil)
	port := target.Port()
	redirect := egresstest.NewRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+port+"/secret", http.StatusFound)
	})
	// The redirecting server itself is allowed; where it points is not.
	p, err := New(Config{Key: "profile", AllowedHosts: []string{"127.0.0.1:" + redirect.Port()}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.HTTPClient(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, url, want string }{
		{"ipv4", "http://127.0.0.1:" + port + "/", "refused: 127.0.0.1 is a loopback address; allow it with profile.allowed_hosts"},
		{"localhost", "http://localhost:" + port + "/", "refused: localhost resolves to a loopback address"},
		{"ipv6", "http://[::1]:" + port + "/", "refused: ::1 is a loopback address"},
		{"hex", "http://0x7f.1:" + port + "/", "refused: 0x7f.1 is a loopback address"},
		{"decimal", "http://2130706433:" + port + "/", "refused: 2130706433 is a loopback address"},
		{"octal", "http://0177.0.0.1:" + port + "/", "is a loopback address"},
		{"mapped", "http://[::ffff:127.0.0.1]:" + port + "/", "is a loopback address (IPv4-mapped)"},
		{"unspecified", "http://0.0.0.0:" + port + "/", "unspecified"},
		{"metadata", "http://169.254.169.254/latest/meta-data/", "cloud metadata address"},
		{"metadata name", "http://metadata.google.internal/computeMetadata/v1/", "cloud metadata host"},
		{"redirect", redirect.URL + "/go", "refused: the redirect to 127.0.0.1 is a loopback address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := get(t, c, tc.url)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("GET %s: %v, want %q", tc.url, err, tc.want)
			}
		})
	}
	if n := len(target.Requests()); n != 0 {
		t.Errorf("the loopback target received %d requests, want none", n)
	}
}

// TestHTTPClient_Allowed: allowed_hosts lets the named target through, and
// an allowed target that does not answer gives no detail about why.
func TestHTTPClient_Allowed(t *testing.T) {
	target := egresstest.NewRecorder(t, nil)
	for _, allow := range []string{"127.0.0.1", "127.0.0.1:" + target.Port(), "127.0.0.0/8"} {
		p, err := New(Config{AllowedHosts: []string{allow}})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := p.HTTPClient(nil)
		if err := get(t, c, target.URL); err != nil {
			t.Errorf("allowed %s: %v", allow, err)
		}
	}
	// A closed port on an allowed host: "failed", not "refused".
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	p, _ := New(Config{AllowedHosts: []string{"127.0.0.1"}})
	c, _ := p.HTTPClient(nil)
	err = get(t, c, "http://"+closed+"/")
	var ce *ConnectError
	if !errors.As(err, &ce) || strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "reset") {
		t.Errorf("closed port: %v, want a ConnectError without the network's reason", err)
	}
}

// TestHTTPClient_Redirects: redirects are capped.
func TestHTTPClient_Redirects(t *testing.T) {
	var loop *egresstest.Recorder
	loop = egresstest.NewRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, loop.URL+"/again", http.StatusFound)
	})
	p, _ := New(Config{AllowedHosts: []string{"127.0.0.1"}})
	c, _ := p.HTTPClient(nil)
	if err := get(t, c, loop.URL); err == nil || !strings.Contains(err.Error(), "stopped after 5 redirects") {
		t.Errorf("redirect loop: %v", err)
	}
	if n := len(loop.Requests()); n != MaxRedirects+1 {
		t.Errorf("%d requests, want %d", n, MaxRedirects+1)
	}
}

// TestHTTPClient_Credentials: a credential goes to its hosts only, on
// every hop: it is removed on a redirect to another host, and a request
// to a host it is not bound to never carries it. Before package egress,
// a model mapped any header to any SELMEM_PROFILE_* variable and sent it
// to a URL of its choice.
func TestHTTPClient_Credentials(t *testing.T) {
	const secret = "s3cret-token"
	env := map[string]string{"SALES_TOKEN": secret}
	attacker := egresstest.NewRecorder(t, nil)
	api := egresstest.NewRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, attacker.URL+"/stolen", http.StatusFound)
			return
		}
		fmt.Fprint(w, "[]")
	})
	p, err := New(Config{
		Key:          "profile",
		AllowedHosts: []string{"127.0.0.1"},
		Credentials: map[string]Credential{
			"sales": {Env: "SALES_TOKEN", Hosts: []string{"127.0.0.1:" + api.Port()}, Prefix: "Bearer ", AllowHTTP: true},
			"tls":   {Env: "SALES_TOKEN", Hosts: []string{"127.0.0.1:" + api.Port()}},
			"unset": {Env: "NOPE", Hosts: []string{"x"}},
		},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.HTTPClient(&HTTPOptions{Credentials: []string{"sales"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := get(t, c, api.URL+"/items"); err != nil {
		t.Fatal(err)
	}
	if got := api.Requests()[0].Get("Authorization"); got != "Bearer "+secret {
		t.Errorf("bound host got Authorization %q", got)
	}
	if err := get(t, c, attacker.URL+"/direct"); err != nil {
		t.Fatal(err)
	}
	if err := get(t, c, api.URL+"/away"); err != nil {
		t.Fatal(err)
	}
	if got := len(attacker.Requests()); got != 2 {
		t.Fatalf("attacker got %d requests, want 2", got)
	}
	for _, h := range attacker.Requests() {
		for k, v := range h {
			if strings.Contains(strings.Join(v, ","), secret) {
				t.Errorf("attacker received the secret in %s", k)
			}
		}
	}
	// An https-only credential is not sent over http.
	c, _ = p.HTTPClient(&HTTPOptions{Credentials: []string{"tls"}})
	before := len(api.Requests())
	if err := get(t, c, api.URL+"/items"); err != nil {
		t.Fatal(err)
	}
	if got := api.Requests()[before].Get("Authorization"); got != "" {
		t.Errorf("https-only credential sent over http: %q", got)
	}
	for name, want := range map[string]string{
		"nope":  `credential "nope" is not configured (configured: sales, tls, unset)`,
		"unset": "environment variable NOPE is not set",
	} {
		if _, err := p.HTTPClient(&HTTPOptions{Credentials: []string{name}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("credential %s: %v, want %q", name, err, want)
		}
	}
}

// TestHTTPClient_OwnAddress: a service listening on all interfaces is not
// reached through any address of this machine, in any spelling, unless
// allowed_hosts names it. Before, http://[::ffff:OWN-IP]:8765/ reached it
// on a machine whose own address looked public. (Here the addresses may
// be refused for another reason first; TestPolicy_Resolve_OwnAddress
// checks the own-address refusal itself.)
func TestHTTPClient_OwnAddress(t *testing.T) {
	var (
		mu       sync.Mutex
		received int
	)
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		received++
		mu.Unlock()
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(l.Addr().String())
	list, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Deny().HTTPClient(nil)
	if err != nil {
		t.Fatal(err)
	}
	var own []netip.Addr
	for _, a := range list {
		if n, ok := a.(*net.IPNet); ok {
			ip, _ := netip.AddrFromSlice(n.IP)
			own = append(own, ip.Unmap())
		}
	}
	for _, ip := range own {
		urls := []string{"http://" + net.JoinHostPort(ip.String(), port) + "/"}
		if ip.Is4() {
			urls = append(urls, "http://"+net.JoinHostPort(netip.AddrFrom16(ip.As16()).String(), port)+"/")
		}
		for _, u := range urls {
			var re *RefusedError
			if err := get(t, c, u); !errors.As(err, &re) {
				t.Errorf("GET %s: %v, want a refusal", u, err)
			}
		}
	}
	mu.Lock()
	n := received
	mu.Unlock()
	if n != 0 {
		t.Errorf("the service received %d requests, want none", n)
	}
	// The same addresses reach it when allowed: the refusals above are
	// the policy's, not an unreachable listener's.
	for _, ip := range own {
		if !ip.Is4() {
			continue // IPv6 may be disabled for sockets
		}
		p, err := New(Config{AllowedHosts: []string{ip.String() + ":" + port}})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := p.HTTPClient(nil)
		if err := get(t, c, "http://"+net.JoinHostPort(ip.String(), port)+"/"); err != nil {
			t.Errorf("allowed %s: %v", ip, err)
		}
	}
}
